package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// fma32 and fma32Portable must be the correctly rounded a·b+c on every input class: random
// values of every magnitude, products that cancel c, results that are
// float32 halfway points after the float64 rounding, and subnormal results.
func TestFMA32(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	check := func(a, b, c float32) {
		t.Helper()
		want := fma32Exact(a, b, c)
		for name, f := range map[string]func(a, b, c float32) float32{"fma32": fma32, "fma32Portable": fma32Portable} {
			got := f(a, b, c)
			if got != got && want != want {
				continue // NaN payloads are not specified
			}
			if math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("%s(%g, %g, %g) = %g (%#x), want %g (%#x)", name, a, b, c, got, math.Float32bits(got), want, math.Float32bits(want))
			}
		}
	}
	for range 50000 {
		a := math.Float32frombits(r.Uint32())
		b := math.Float32frombits(r.Uint32())
		c := math.Float32frombits(r.Uint32())
		check(a, b, c)
		// Small exponents: cancellation and subnormal results.
		check(float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64()))
		x := float32(r.NormFloat64()) * 0x1p-70
		y := float32(r.NormFloat64()) * 0x1p-70
		check(x, y, float32(r.NormFloat64())*0x1p-140)
		// a·b close to −c.
		check(x*0x1p70, y*0x1p70, -(x*0x1p70)*(y*0x1p70))
	}
	// Double-rounding cases: a·b = 1 + 2⁻²⁴ + 2⁻⁴⁷-ish, c tiny of either sign.
	for _, tc := range [][3]float32{
		{1 + 0x1p-23, 1 + 0x1p-23, 0x1p-80},
		{1 + 0x1p-12, 1 + 0x1p-12, -0x1p-80},
		{1 + 0x1p-12, 1 + 0x1p-12, 0x1p-80},
		{1 + 0x1p-12, 1 - 0x1p-12, 0x1p-24 + 0x1p-70},
		{0x1p-75, 0x1p-75, 0x1p-149},
		{0x1p-75 * 3, 0x1p-75, -0x1p-149},
		{0x1p-60, 0x1p-90, 0x1p-149},
		{float32(math.Inf(1)), 0, 1},
		{float32(math.NaN()), 1, 1},
		{math.MaxFloat32, 2, -math.MaxFloat32},
	} {
		check(tc[0], tc[1], tc[2])
		check(-tc[0], tc[1], -tc[2])
	}
}
