package reward

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/nlpodyssey/spago/ag"
	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"
	"github.com/nlpodyssey/spago/optimizers/adam"

	"github.com/rollout-rl/rollout/experiments/config/field"
	"github.com/rollout-rl/rollout/policy/team"
)

// TrainConfig is how a reward model is trained: Adam on the mean binary
// cross-entropy of shuffled mini-batches, with the global gradient norm
// (body and head together) clipped. The zero value of a field means its
// default (see Defaults).
type TrainConfig struct {
	Steps       int     `yaml:"steps" json:"steps"`                 // optimizer steps; default 1200
	BatchSize   int     `yaml:"batch_size" json:"batch_size"`       // examples per step; default 32
	LR          float64 `yaml:"lr" json:"lr"`                       // Adam step size of the body; default 1e-4
	HeadLR      float64 `yaml:"head_lr" json:"head_lr"`             // Adam step size of score.weight and score.bias; default 1e-3
	WeightDecay float64 `yaml:"weight_decay" json:"weight_decay"`   // AdamW's λ; default 0
	MaxGradNorm float64 `yaml:"max_grad_norm" json:"max_grad_norm"` // clip the global gradient norm to this; default 1
	Seed        uint64  `yaml:"seed" json:"seed"`                   // data order
}

// Defaults returns c with every zero field set to its default.
func (c TrainConfig) Defaults() TrainConfig {
	if c.Steps == 0 {
		c.Steps = 1200
	}
	if c.BatchSize == 0 {
		c.BatchSize = 32
	}
	if c.LR == 0 {
		c.LR = 1e-4
	}
	if c.HeadLR == 0 {
		c.HeadLR = 1e-3
	}
	if c.MaxGradNorm == 0 {
		c.MaxGradNorm = 1
	}
	return c
}

// Validate reports the first setting out of range as a *field.Error naming
// its key and value.
func (c TrainConfig) Validate() error {
	switch {
	case c.Steps < 0:
		return &field.Error{Key: "reward_model.train.steps", Value: c.Steps, Msg: "want ≥ 0"}
	case c.BatchSize < 1:
		return &field.Error{Key: "reward_model.train.batch_size", Value: c.BatchSize, Msg: "want ≥ 1"}
	case !(c.LR > 0) || math.IsInf(c.LR, 0):
		return &field.Error{Key: "reward_model.train.lr", Value: c.LR, Msg: "want > 0"}
	case !(c.HeadLR > 0) || math.IsInf(c.HeadLR, 0):
		return &field.Error{Key: "reward_model.train.head_lr", Value: c.HeadLR, Msg: "want > 0"}
	case !(c.WeightDecay >= 0) || math.IsInf(c.WeightDecay, 0):
		return &field.Error{Key: "reward_model.train.weight_decay", Value: c.WeightDecay, Msg: "want ≥ 0"}
	case !(c.MaxGradNorm > 0) || math.IsInf(c.MaxGradNorm, 0):
		return &field.Error{Key: "reward_model.train.max_grad_norm", Value: c.MaxGradNorm, Msg: "want > 0"}
	}
	return nil
}

// Step is the progress of one optimizer step.
type Step struct {
	Step, Steps int
	Loss        float64 // mean binary cross-entropy of the batch, in nats
	Accuracy    float64 // share of the batch on the right side of logit 0
	GradNorm    float64 // global gradient norm before clipping
}

// TrainResult sums up a training run.
type TrainResult struct {
	Loss     float64 // mean batch loss over the last 10% of steps
	Duration time.Duration
}

// Train fits m to the examples (label: the verifier graded the response
// correct) in place. It is deterministic for a given model, data and
// config. onStep, if not nil, is called after every step; cancelling ctx
// stops training between steps with ctx's error.
func Train(ctx context.Context, m *Model, data []Example, cfg TrainConfig, onStep func(Step)) (*TrainResult, error) {
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("train reward model: no examples")
	}
	start := time.Now()
	seqs := make([][]int, len(data))
	labels := make([]bool, len(data))
	for i, ex := range data {
		ids, err := m.Encode(ex.Prompt, ex.Response)
		if err != nil {
			return nil, fmt.Errorf("train reward model: example %d: %w", i, err)
		}
		seqs[i], labels[i] = ids, ex.Label
	}
	opt := newOptimizer(m, cfg)
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x7e3a7d))
	order := rng.Perm(len(data))
	next := 0
	var tail []float64
	bs := min(cfg.BatchSize, len(data))
	batch := make([][]int, bs)
	batchLabels := make([]bool, bs)
	for step := 0; step < cfg.Steps; step++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for i := range batch {
			if next == len(order) {
				order, next = rng.Perm(len(data)), 0
			}
			batch[i], batchLabels[i] = seqs[order[next]], labels[order[next]]
			next++
		}
		loss, logits, err := m.Loss(batch, batchLabels)
		if err != nil {
			return nil, fmt.Errorf("train reward model step %d: %w", step, err)
		}
		l := float64(mat.Data[float32](loss.Value())[0])
		norm, err := opt.step(loss)
		if err != nil {
			return nil, fmt.Errorf("train reward model step %d: %w", step, err)
		}
		if step >= cfg.Steps-max(1, cfg.Steps/10) {
			tail = append(tail, l)
		}
		if onStep != nil {
			right := 0
			for i, z := range logits {
				if (z > 0) == batchLabels[i] {
					right++
				}
			}
			onStep(Step{Step: step + 1, Steps: cfg.Steps, Loss: l, Accuracy: float64(right) / float64(len(logits)), GradNorm: norm})
		}
	}
	res := &TrainResult{Duration: time.Since(start)}
	for _, l := range tail {
		res.Loss += l / float64(len(tail))
	}
	return res, nil
}

// optimizer is Adam over the body (one step size) and the head (another),
// with the gradient norm clipped over both. spago's
// optimizers.Optimizer.Optimize returns before its goroutines finish
// (v1.1.0), so parameters are updated here by adam.OptimizeParams.
type optimizer struct {
	cfg        TrainConfig
	team       *team.Team // the body model's (policy.Model.Team)
	body, head *adam.Adam
	params     []*nn.Param // body parameters, then the head's
	nBody      int
}

func newOptimizer(m *Model, cfg TrainConfig) *optimizer {
	mk := func(lr float64) *adam.Adam {
		return adam.New(adam.Config{StepSize: lr, Beta1: 0.9, Beta2: 0.999, Epsilon: 1e-8, Lambda: cfg.WeightDecay})
	}
	body := m.Body.Params()
	return &optimizer{cfg: cfg, team: m.Body.Team(), body: mk(cfg.LR), head: mk(cfg.HeadLR), params: append(body, m.Weight, m.Bias), nBody: len(body)}
}

// step back-propagates from the loss, clips, updates every parameter and
// clears the gradients; it returns the gradient norm before clipping.
func (o *optimizer) step(loss mat.Tensor) (float64, error) {
	defer o.zeroGrad()
	if err := ag.Backward(loss); err != nil {
		return 0, fmt.Errorf("backward: %w", err)
	}
	var ss float64 // in parameter order: deterministic
	for _, p := range o.params {
		if p.HasGrad() {
			for _, v := range mat.Data[float32](p.Grad()) {
				ss += float64(float64(v) * float64(v))
			}
		}
	}
	norm := math.Sqrt(ss)
	if math.IsNaN(norm) || math.IsInf(norm, 0) {
		return norm, fmt.Errorf("gradient norm is %v; update skipped", norm)
	}
	if norm > o.cfg.MaxGradNorm {
		scale := float32(o.cfg.MaxGradNorm / (norm + 1e-6))
		for _, p := range o.params {
			if p.HasGrad() {
				g := mat.Data[float32](p.Grad())
				for i := range g {
					g[i] *= scale
				}
			}
		}
	}
	errs := make([]error, len(o.params))
	// One chunk per parameter on the body's team: parameters are
	// independent, so which goroutine updates one never changes a bit.
	o.team.Run(o.team.Size(), len(o.params), func(_, i int) {
		p := o.params[i]
		if !p.HasGrad() {
			return
		}
		if i < o.nBody {
			errs[i] = o.body.OptimizeParams(p)
		} else {
			errs[i] = o.head.OptimizeParams(p)
		}
	})
	for i, err := range errs {
		if err != nil {
			return norm, fmt.Errorf("adam on parameter %d: %w", i, err)
		}
	}
	o.body.IncExample()
	o.head.IncExample()
	return norm, nil
}

func (o *optimizer) zeroGrad() {
	for _, p := range o.params {
		p.ZeroGrad()
	}
}
