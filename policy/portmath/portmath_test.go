package portmath

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// Exp and Log stay within 2 ulp of the standard library's (each is within
// 1 ulp of the true value) and keep its
// special cases.
func TestExpLogClose(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	ulps := func(a, b float64) float64 {
		return math.Abs(a-b) / (math.Nextafter(math.Abs(b), math.Inf(1)) - math.Abs(b))
	}
	for range 100000 {
		x := r.NormFloat64() * 50
		if d := ulps(Exp(x), math.Exp(x)); d > 2 {
			t.Fatalf("Exp(%g) = %g, math.Exp %g: %.1f ulp", x, Exp(x), math.Exp(x), d)
		}
		y := math.Exp(r.NormFloat64() * 30)
		if d := ulps(Log(y), math.Log(y)); d > 2 {
			t.Fatalf("Log(%g) = %g, math.Log %g: %.1f ulp", y, Log(y), math.Log(y), d)
		}
	}
	for _, tc := range []struct{ got, want float64 }{
		{Exp(math.Inf(1)), math.Inf(1)}, {Exp(math.Inf(-1)), 0}, {Exp(0), 1}, {Exp(1000), math.Inf(1)},
		{Log(0), math.Inf(-1)}, {Log(1), 0}, {Log(math.Inf(1)), math.Inf(1)},
	} {
		if tc.got != tc.want {
			t.Errorf("got %g, want %g", tc.got, tc.want)
		}
	}
	if !math.IsNaN(Exp(math.NaN())) || !math.IsNaN(Log(-1)) {
		t.Error("NaN cases")
	}
}

func ExampleExp() {
	fmt.Printf("%.15f %.15f\n", Exp(1), Log(math.E))
	// Output: 2.718281828459045 1.000000000000000
}
