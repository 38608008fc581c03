package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRoPE checks RoPE against the Go loop bit for bit (half widths below,
// at and across the 16-lane groups, both directions, the values after the
// heads untouched), and that rotating back by −1 restores the input to
// within float32 rounding.
func TestRoPE(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, h := range []int{1, 3, 16, 17, 32, 40} {
		for _, heads := range []int{1, 4} {
			cos, sin := make([]float32, h), make([]float32, h)
			for i := range cos {
				a := rng.Float64() * 2 * math.Pi
				cos[i], sin[i] = float32(math.Cos(a)), float32(math.Sin(a))
			}
			x := make([]float32, 2*h*heads+5) // 5 values past the heads
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			for _, dir := range []float32{1, -1} {
				got, want := append([]float32(nil), x...), append([]float32(nil), x...)
				RoPE(got, heads, cos, sin, dir)
				ropeGo(want, heads, cos, sin, dir)
				for i := range got {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("half %d, %d heads, dir %v: [%d] = %v, Go loop %v", h, heads, dir, i, got[i], want[i])
					}
				}
				for i := 2 * h * heads; i < len(x); i++ {
					if got[i] != x[i] {
						t.Fatalf("half %d, %d heads: [%d] past the heads changed", h, heads, i)
					}
				}
				RoPE(got, heads, cos, sin, -dir)
				for i := range got {
					if math.Abs(float64(got[i]-x[i])) > 1e-5*(1+math.Abs(float64(x[i]))) {
						t.Fatalf("half %d, dir %v: [%d] = %v after rotating back, want %v", h, dir, i, got[i], x[i])
					}
				}
			}
		}
	}
}

// RoPE panics on inconsistent lengths rather than reading past x.
func TestRoPEPanicsOnShortInput(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic")
		}
	}()
	RoPE(make([]float32, 7), 2, make([]float32, 2), make([]float32, 2), 1)
}
