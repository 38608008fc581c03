package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestSiLUMulBackward checks the one-pass SwiGLU backward against the Go
// loop bit for bit (ragged lengths, large and tiny inputs), and against
// the derivative of SiLUMul in float64.
func TestSiLUMulBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for _, n := range []int{1, 15, 16, 17, 384, 1000} {
		gate, up, g := make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range gate {
			gate[i] = float32(rng.NormFloat64() * 4)
			up[i] = float32(rng.NormFloat64())
			g[i] = float32(rng.NormFloat64())
		}
		gate[0] = 100 // e^(−z) underflows
		if n > 1 {
			gate[1] = -100 // and overflows
		}
		gg, gu := make([]float32, n), make([]float32, n)
		wg, wu := make([]float32, n), make([]float32, n)
		SiLUMulBackward(gg, gu, gate, up, g)
		swigluBackwardGo(wg, wu, gate, up, g)
		for i := range gg {
			if math.Float32bits(gg[i]) != math.Float32bits(wg[i]) || math.Float32bits(gu[i]) != math.Float32bits(wu[i]) {
				t.Fatalf("n=%d [%d]: (%v, %v), Go loop (%v, %v)", n, i, gg[i], gu[i], wg[i], wu[i])
			}
			z, u, gi := float64(gate[i]), float64(up[i]), float64(g[i])
			s := 1 / (1 + math.Exp(-z))
			wantG, wantU := gi*u*s*(1+z*(1-s)), gi*z*s
			if math.Abs(float64(gg[i])-wantG) > 1e-5*(1+math.Abs(wantG)) || math.Abs(float64(gu[i])-wantU) > 1e-5*(1+math.Abs(wantU)) {
				t.Fatalf("n=%d [%d]: (%v, %v), float64 (%v, %v)", n, i, gg[i], gu[i], wantG, wantU)
			}
		}
	}
}
