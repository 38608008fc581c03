package policy

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"
	"github.com/nlpodyssey/spago/optimizers/adam"
)

// TestAdamUpdateMatchesSpago checks that the one-pass update gives spago's
// Adam and AdamW bit for bit over several steps, gradients of very
// different scales (and zeros) included.
func TestAdamUpdateMatchesSpago(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  adam.Config
	}{
		{"adam", adam.Config{StepSize: 1e-3, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8}},
		{"adamw", adam.Config{StepSize: 3e-4, Beta1: 0.9, Beta2: 0.95, Epsilon: 1e-6, Lambda: 0.01}},
		{"odd betas", adam.Config{StepSize: 0.1, Beta1: 0.7, Beta2: 0.9, Epsilon: 1e-3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const n = 257
			rng := rand.New(rand.NewPCG(4, 5))
			init := make([]float32, n)
			for i := range init {
				init[i] = rng.Float32()*2 - 1
			}
			mk := func() *nn.Param {
				return nn.NewParam(mat.NewDense[float32](mat.WithShape(n), mat.WithBacking(append([]float32(nil), init...))))
			}
			ref, got := mk(), mk()
			refOpt, gotOpt := adam.New(tc.cfg), adam.New(tc.cfg)
			for step := 0; step < 5; step++ {
				g := make([]float32, n)
				for i := range g {
					switch i % 4 {
					case 0:
						g[i] = 0
					case 1:
						g[i] = rng.Float32() * 1e-6
					default:
						g[i] = float32(rng.NormFloat64() * math.Pow(10, float64(i%7-3)))
					}
				}
				ref.AccGrad(mat.NewDense[float32](mat.WithShape(n), mat.WithBacking(append([]float32(nil), g...))))
				got.AccGrad(mat.NewDense[float32](mat.WithShape(n), mat.WithBacking(append([]float32(nil), g...))))
				if err := refOpt.OptimizeParams(ref); err != nil {
					t.Fatal(err)
				}
				if err := adamUpdate(gotOpt, got); err != nil {
					t.Fatal(err)
				}
				refOpt.IncExample()
				gotOpt.IncExample()
				if got.HasGrad() {
					t.Fatalf("step %d: gradient not cleared", step)
				}
				rs, gs := ref.State.(*adam.State), got.State.(*adam.State)
				for _, c := range []struct {
					what     string
					ref, got []float32
				}{
					{"weights", mat.Data[float32](ref.Value()), mat.Data[float32](got.Value())},
					{"first moment", mat.Data[float32](rs.V), mat.Data[float32](gs.V)},
					{"second moment", mat.Data[float32](rs.M), mat.Data[float32](gs.M)},
				} {
					for i := range c.ref {
						if math.Float32bits(c.ref[i]) != math.Float32bits(c.got[i]) {
							t.Fatalf("step %d: %s[%d] = %v, spago %v", step, c.what, i, c.got[i], c.ref[i])
						}
					}
				}
			}
		})
	}
}

// TestAdamUpdateRejectsForeignState checks that a state of another type is
// an error, not a panic.
func TestAdamUpdateRejectsForeignState(t *testing.T) {
	p := nn.NewParam(mat.NewDense[float32](mat.WithShape(2), mat.WithBacking([]float32{1, 2})))
	p.AccGrad(mat.NewDense[float32](mat.WithShape(2), mat.WithBacking([]float32{1, 1})))
	p.State = "not adam"
	if err := adamUpdate(adam.New(adam.Config{StepSize: 1, Beta1: 0.9, Beta2: 0.9, Epsilon: 1e-8}), p); err == nil {
		t.Fatal("no error for a foreign state")
	}
}
