package portmath

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestExpAMD64 checks ExpAMD64 bit for bit against math.Exp where that is
// the assembly it reproduces (amd64 with FMA), over the whole range,
// subnormal results and the special cases; elsewhere within 1 ulp of it.
func TestExpAMD64(t *testing.T) {
	exact := runtime.GOARCH == "amd64" && cpu.X86.HasAVX && cpu.X86.HasFMA
	r := rand.New(rand.NewPCG(3, 4))
	xs := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1e-300, -1e-300, 709.78, 709.79, 710, -708, -745, -745.2, -746, -1e10, -3e9, 88.7, -87.3,
		math.Inf(1), math.Inf(-1), math.NaN(), math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64}
	for range 200000 {
		xs = append(xs, r.NormFloat64()*30, (r.Float64()-0.5)*1500, r.NormFloat64()*1e-3)
	}
	for _, x := range xs {
		got, want := ExpAMD64(x), math.Exp(x)
		switch {
		case math.IsNaN(want):
			if !math.IsNaN(got) {
				t.Fatalf("ExpAMD64(%g) = %g, want NaN", x, got)
			}
		case exact:
			if math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("ExpAMD64(%g) = %g (%#x), math.Exp %g (%#x)", x, got, math.Float64bits(got), want, math.Float64bits(want))
			}
		case math.RoundToEven(x*math.Log2E) >= 1024 && !math.IsInf(x, 0):
			// The assembly's result is +Inf from k = round(x·log2 e) = 1024
			// on, below math.Exp's overflow.
			if !math.IsInf(got, 1) {
				t.Fatalf("ExpAMD64(%g) = %g, want +Inf as the amd64 assembly", x, got)
			}
		default:
			if got != want && math.Abs(got-want) > 2*(math.Nextafter(math.Abs(want), math.Inf(1))-math.Abs(want)) {
				t.Fatalf("ExpAMD64(%g) = %g, math.Exp %g: more than 2 ulp apart", x, got, want)
			}
		}
	}
	if !exact {
		t.Logf("math.Exp here is not the amd64 FMA assembly: compared within 2 ulp")
	}
}

// TestLogMatchesAMD64 checks the claim of the package documentation that
// Log has the bits of math.Log's amd64 assembly for positive normal x (run
// on amd64; elsewhere math.Log is another computation).
func TestLogMatchesAMD64(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("math.Log is the amd64 assembly only on amd64")
	}
	r := rand.New(rand.NewPCG(5, 6))
	xs := []float64{1, 2, 0.5, math.Sqrt2 / 2, math.Nextafter(math.Sqrt2/2, 0), math.MaxFloat64, 0x1p-1022, math.E}
	for range 200000 {
		xs = append(xs, math.Exp(r.NormFloat64()*100), r.Float64()*4, 1+r.NormFloat64()*1e-6)
	}
	for _, x := range xs {
		if got, want := Log(x), math.Log(x); math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("Log(%g) = %g (%#x), math.Log %g (%#x)", x, got, math.Float64bits(got), want, math.Float64bits(want))
		}
	}
}
