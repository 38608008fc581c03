package policy

import (
	"bytes"
	"encoding/gob"
	"fmt"
	"math"

	"github.com/nlpodyssey/spago/ag"
	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"
	"github.com/nlpodyssey/spago/optimizers/adam"
)

// TrainConfig is the optimizer's settings: Adam (AdamW when WeightDecay is
// set) with gradient clipping by global norm.
type TrainConfig struct {
	LR          float64 // step size; default 1e-3
	Beta1       float64 // default 0.9
	Beta2       float64 // default 0.999
	Eps         float64 // default 1e-8
	WeightDecay float64 // AdamW's λ; default 0
	MaxGradNorm float64 // clip the global gradient norm to this; 0: no clipping
}

// DefaultTrainConfig is Adam at 1e-3 with gradients clipped to norm 1.
var DefaultTrainConfig = TrainConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, MaxGradNorm: 1}

// Validate reports a setting out of range.
func (c TrainConfig) Validate() error {
	switch {
	case !(c.LR > 0):
		return fmt.Errorf("learning rate %g must be positive", c.LR)
	case c.Beta1 < 0 || c.Beta1 >= 1:
		return fmt.Errorf("adam beta1 %g must be in [0, 1)", c.Beta1)
	case c.Beta2 < 0 || c.Beta2 >= 1:
		return fmt.Errorf("adam beta2 %g must be in [0, 1)", c.Beta2)
	case !(c.Eps > 0):
		return fmt.Errorf("adam eps %g must be positive", c.Eps)
	case c.WeightDecay < 0:
		return fmt.Errorf("weight decay %g must not be negative", c.WeightDecay)
	case c.MaxGradNorm < 0:
		return fmt.Errorf("max grad norm %g must not be negative", c.MaxGradNorm)
	}
	return nil
}

// Trainer updates a model's parameters from the gradient of a loss with
// spago's Adam.
type Trainer struct {
	model  *Model
	cfg    TrainConfig
	adam   *adam.Adam
	params []*nn.Param
}

// NewTrainer returns a trainer for the model's parameters.
func NewTrainer(m *Model, cfg TrainConfig) (*Trainer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("trainer: %w", err)
	}
	a := adam.New(adam.Config{StepSize: cfg.LR, Beta1: cfg.Beta1, Beta2: cfg.Beta2, Epsilon: cfg.Eps, Lambda: cfg.WeightDecay})
	params := m.Params()
	return &Trainer{model: m, cfg: cfg, adam: a, params: params}, nil
}

// Step back-propagates from the scalar loss, clips the gradients to
// MaxGradNorm, applies one Adam update and clears the gradients. It
// returns the gradient norm before clipping.
func (t *Trainer) Step(loss mat.Tensor) (gradNorm float64, err error) {
	if err := ag.Backward(loss); err != nil {
		return 0, fmt.Errorf("backward: %w", err)
	}
	gradNorm = t.clip()
	if math.IsNaN(gradNorm) || math.IsInf(gradNorm, 0) {
		t.ZeroGrad()
		return gradNorm, fmt.Errorf("gradient norm is %v; update skipped", gradNorm)
	}
	// spago's optimizers.Optimizer returns before its goroutines finish
	// (v1.1.0), so the parameters are updated here, in parallel over a
	// fixed split, each by adamUpdate (spago's Adam, bit for bit, in one
	// pass).
	errs := make([]error, len(t.params))
	parallelFor(t.model.team, len(t.params), func(lo, hi int) {
		for i := lo; i < hi; i++ {
			if p := t.params[i]; p.HasGrad() {
				g := mat.Data[float32](p.Grad())
				if errs[i] = adamUpdate(t.adam, p); errs[i] == nil {
					// The cleared gradient is no one's any more: its buffer
					// serves the next step (see giveGrad).
					t.model.pool.put(g)
				}
			}
		}
	})
	for _, err := range errs {
		if err != nil {
			return gradNorm, fmt.Errorf("adam: %w", err)
		}
	}
	t.adam.IncExample()
	// The step's buffers are back in the pool: keep only what it used.
	t.model.pool.trim()
	return gradNorm, nil
}

// SetLR sets Adam's step size for the steps that follow (a schedule calls
// it before each step); the bias correction of the steps taken so far is
// kept.
func (t *Trainer) SetLR(lr float64) {
	t.cfg.LR = lr
	t.adam.StepSize = lr
	t.adam.TimeStep--
	t.adam.IncExample() // recomputes the bias-corrected step size
}

// LR returns Adam's current step size (SetLR).
func (t *Trainer) LR() float64 { return t.adam.StepSize }

// ZeroGrad clears every parameter's gradient.
func (t *Trainer) ZeroGrad() {
	for _, p := range t.params {
		p.ZeroGrad()
	}
}

// clip scales the gradients so their global L2 norm is at most
// MaxGradNorm and returns the norm before scaling. The sum runs over the
// parameters in a fixed order, so it is deterministic.
func (t *Trainer) clip() float64 {
	var ss float64
	for _, p := range t.params {
		if p.HasGrad() {
			g := p.Grad()
			for _, v := range mat.Data[float32](g) {
				ss += float64(float64(v) * float64(v))
			}
		}
	}
	norm := math.Sqrt(ss)
	if t.cfg.MaxGradNorm > 0 && norm > t.cfg.MaxGradNorm {
		scale := float32(t.cfg.MaxGradNorm / (norm + 1e-6))
		for _, p := range t.params {
			if p.HasGrad() {
				g := p.Grad()
				for i, v := range mat.Data[float32](g) {
					mat.Data[float32](g)[i] = v * scale
				}
			}
		}
	}
	return norm
}

// optimizerState is what MarshalState saves: Adam's step and moments.
type optimizerState struct {
	TimeStep int
	V, M     [][]float32 // per parameter, in NamedParams order; nil before the first update
}

// MarshalState encodes the optimizer's state (Adam's step count and
// moments), so that a resumed run continues exactly.
func (t *Trainer) MarshalState() ([]byte, error) {
	s := optimizerState{TimeStep: t.adam.TimeStep}
	for _, p := range t.params {
		st, _ := p.State.(*adam.State)
		if st == nil {
			s.V, s.M = append(s.V, nil), append(s.M, nil)
			continue
		}
		s.V = append(s.V, append([]float32(nil), mat.Data[float32](st.V)...))
		s.M = append(s.M, append([]float32(nil), mat.Data[float32](st.M)...))
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(s); err != nil {
		return nil, fmt.Errorf("encode optimizer state: %w", err)
	}
	return buf.Bytes(), nil
}

// UnmarshalState restores a state written by MarshalState.
func (t *Trainer) UnmarshalState(b []byte) error {
	var s optimizerState
	if err := gob.NewDecoder(bytes.NewReader(b)).Decode(&s); err != nil {
		return fmt.Errorf("decode optimizer state: %w", err)
	}
	if len(s.V) != len(t.params) || len(s.M) != len(t.params) {
		return fmt.Errorf("optimizer state has %d parameters, model %d", len(s.V), len(t.params))
	}
	t.adam.TimeStep = s.TimeStep - 1
	t.adam.IncExample() // sets TimeStep and the bias-corrected step size
	for i, p := range t.params {
		if s.V[i] == nil {
			p.State = nil
			continue
		}
		if len(s.V[i]) != p.Size() || len(s.M[i]) != p.Size() {
			return fmt.Errorf("optimizer state of parameter %d has %d values, want %d", i, len(s.V[i]), p.Size())
		}
		shape := p.Shape()
		mk := func(v []float32) mat.Matrix {
			return mat.NewDense[float32](mat.WithShape(shape...), mat.WithBacking(append([]float32(nil), v...)))
		}
		p.State = &adam.State{V: mk(s.V[i]), M: mk(s.M[i]), Buf1: mk(make([]float32, p.Size())), Buf2: mk(make([]float32, p.Size())), Buf3: mk(make([]float32, p.Size()))}
	}
	return nil
}

// NLLLoss is the mean negative log-likelihood of the tokens of each
// sequence from position from[i] on (from[i] ≥ 1): the supervised loss on
// a demonstration's response when from[i] is where the response begins. It
// returns the differentiable loss and the number of tokens it averages.
// b must be padded (NewBatch).
func (m *Model) NLLLoss(b *Batch, from []int) (mat.Tensor, int, error) {
	if b.Packed() {
		return nil, 0, fmt.Errorf("nll loss: a packed batch (want NewBatch's layout)")
	}
	if len(from) != len(b.Seqs) {
		return nil, 0, fmt.Errorf("nll loss: %d start positions for %d sequences", len(from), len(b.Seqs))
	}
	targets := make([]int, b.Rows())
	for i := range targets {
		targets[i] = -1
	}
	n := 0
	for i, s := range b.Seqs {
		if from[i] < 1 || from[i] > len(s) {
			return nil, 0, fmt.Errorf("nll loss: sequence %d: start %d outside [1, %d]", i, from[i], len(s))
		}
		for t := from[i]; t < len(s); t++ {
			targets[b.Row(i, t-1)] = s[t]
			n++
		}
	}
	if n == 0 {
		return nil, 0, fmt.Errorf("nll loss: no target tokens")
	}
	lp := ag.NewOperator(&tokenLogProbs{logits: m.Logits(b), targets: targets, vocab: m.Config.VocabSize, invTemp: 1, flush: m.flush, pool: m.pool, team: m.team}).Run()
	w := make([]float32, b.Rows())
	for i, tgt := range targets {
		if tgt >= 0 {
			w[i] = -1 / float32(n)
		}
	}
	return ag.ReduceSum(ag.Prod(lp, dense(len(w), 1, w))), n, nil
}
