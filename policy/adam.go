package policy

import (
	"fmt"
	"math"

	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"
	"github.com/nlpodyssey/spago/optimizers/adam"
)

// adamUpdate applies one step of spago's Adam (or AdamW when the config's
// Lambda is not zero) to p and clears its gradient, in one pass over the
// parameter instead of spago's nine passes and three allocations.
//
// The result is bit-identical to adam.(*Adam).OptimizeParams of spago
// v1.1.0: every operation is the same float32 operation on the same
// operands (the float64 hyper-parameters rounded to float32 as spago
// rounds them), each result rounded to float32 by an explicit conversion,
// which the Go specification forbids fusing. The state is the same
// *adam.State (moments V and M; the scratch buffers Buf1–3 are not used
// and left nil for a new state), so MarshalState is unchanged.
func adamUpdate(o *adam.Adam, p *nn.Param) error {
	grad := p.Grad()
	if grad == nil {
		return nil
	}
	if p.State == nil {
		shape := p.Shape()
		p.State = &adam.State{
			V: mat.NewDense[float32](mat.WithShape(shape...)),
			M: mat.NewDense[float32](mat.WithShape(shape...)),
		}
	}
	st, ok := p.State.(*adam.State)
	if !ok {
		return fmt.Errorf("adam: parameter state has type %T, want %T", p.State, &adam.State{})
	}
	w, g := mat.Data[float32](p.Value()), mat.Data[float32](grad)
	v, m := mat.Data[float32](st.V), mat.Data[float32](st.M)
	if len(g) != len(w) || len(v) != len(w) || len(m) != len(w) {
		return fmt.Errorf("adam: parameter of %d values has gradient %d and moments %d, %d", len(w), len(g), len(v), len(m))
	}
	adamKernel(w, g, v, m, adamCoefs{
		beta1: float32(o.Beta1), oneMinusBeta1: float32(1 - o.Beta1),
		beta2: float32(o.Beta2), oneMinusBeta2: float32(1 - o.Beta2),
		eps: float32(o.Epsilon), alpha: float32(o.Alpha),
		lambda: float32(o.Lambda), decay: o.Lambda != 0,
	})
	p.ZeroGrad()
	return nil
}

// adamCoefs are Adam's hyper-parameters rounded to float32 as spago rounds
// them.
type adamCoefs struct {
	beta1, oneMinusBeta1 float32
	beta2, oneMinusBeta2 float32
	eps, alpha, lambda   float32
	decay                bool // AdamW: add lambda·w to the update
}

// adamKernel updates w in place from the gradient g and the moments v
// (first) and m (second), all of one length, in spago's order of
// operations:
//
//	v = v·β1 + g·(1−β1)
//	m = m·β2 + (g·g)·(1−β2)
//	d = v / (√m + ε)              (+ λ·w for AdamW)
//	w = w − d·α
func adamKernel(w, g, v, m []float32, c adamCoefs) {
	g, v, m = g[:len(w)], v[:len(w)], m[:len(w)]
	for i, wi := range w {
		gi := g[i]
		vi := float32(float32(v[i]*c.beta1) + float32(gi*c.oneMinusBeta1))
		mi := float32(float32(m[i]*c.beta2) + float32(float32(gi*gi)*c.oneMinusBeta2))
		v[i], m[i] = vi, mi
		d := float32(vi / float32(float32(math.Sqrt(float64(mi)))+c.eps))
		if c.decay {
			d = float32(d + float32(wi*c.lambda))
		}
		w[i] = float32(wi - float32(d*c.alpha))
	}
}
