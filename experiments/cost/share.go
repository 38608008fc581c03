package cost

import (
	"fmt"
	"math"

	"github.com/rollout-rl/rollout/experiments/config"
	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
)

// GenerationShare is the share of a step's time that prefill and decode
// take, given each phase's time.
func GenerationShare(secs [NumPhases]float64) float64 {
	gen, all := 0.0, 0.0
	for p, s := range secs {
		all += s
		if Phase(p).Generation() {
			gen += s
		}
	}
	if all == 0 {
		return 0
	}
	return gen / all
}

// Roofline returns each phase's time on a machine of peak flops FLOP/s
// and bytes bytes/s: max(FLOPs/flops, Bytes/bytes), no overheads.
func Roofline(s Step, flops, bytes float64) [NumPhases]float64 {
	w := s.Work()
	var out [NumPhases]float64
	for p := range out {
		out[p] = max(w[p].FLOPs/flops, w[p].Bytes/bytes)
	}
	return out
}

// RooflineShare is generation's share of a step on a roofline machine of
// hardware balance FLOP/s ÷ bytes/s (its time units cancel).
func RooflineShare(s Step, balance float64) float64 {
	return GenerationShare(Roofline(s, balance, 1))
}

// CrossoverBalance returns the hardware balance (FLOP/s ÷ bytes/s) in
// [lo, hi] at which generation's roofline share of s reaches one half,
// by bisection on a log scale; ok is false when the share stays on one
// side of one half over the whole range (below returns which side).
func CrossoverBalance(s Step, lo, hi float64) (balance float64, ok, below bool) {
	fLo, fHi := RooflineShare(s, lo)-0.5, RooflineShare(s, hi)-0.5
	if fLo >= 0 {
		return lo, false, false
	}
	if fHi < 0 {
		return hi, false, true
	}
	for range 60 {
		mid := math.Sqrt(lo * hi)
		if RooflineShare(s, mid) < 0.5 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Sqrt(lo * hi), true, false
}

// Shapes beyond the reference sizes, for extrapolation: each about four
// to eight times the one before in parameters, the vocabulary the
// project's (64 tokens).
func Shapes() []NamedShape {
	var out []NamedShape
	for _, n := range []string{"tiny", "small", "medium"} {
		c, _ := policy.Size(n)
		out = append(out, NamedShape{n, c})
	}
	med, _ := policy.Size("medium")
	large := med
	large.Dim, large.Hidden, large.Layers, large.Heads, large.KVHeads = 1024, 3072, 16, 16, 16
	xl := med
	xl.Dim, xl.Hidden, xl.Layers, xl.Heads, xl.KVHeads = 2048, 6144, 24, 16, 16
	return append(out, NamedShape{"large*", large}, NamedShape{"xl*", xl})
}

// NamedShape is a model shape with the name tables give it.
type NamedShape struct {
	Name   string
	Config policy.Config
}

// StepOf returns the step of a config's variant: train.prompts_per_step
// prompts of the task's longest prompt (BOS and SEP included), each with
// the most responses its strategy makes (rl.MaxGroupLeaves), every
// response at the cap (rollout.max_tokens, else the task's longest
// response and EOS) — the worst case, as the FLOPs budget counts it — and
// the config's scoring passes, epochs and minibatches.
func StepOf(c config.Experiment) (Step, error) {
	mc, err := c.Model.Config()
	if err != nil {
		return Step{}, err
	}
	t, err := task.New(c.Task.Name, c.Task.Params)
	if err != nil {
		return Step{}, err
	}
	st, err := c.Rollout.NewStrategy()
	if err != nil {
		return Step{}, err
	}
	resp := c.Rollout.MaxTokens
	if resp == 0 {
		resp = t.MaxResponseLen() + 1
	}
	leaves, err := rl.MaxGroupLeaves(st, resp)
	if err != nil {
		return Step{}, fmt.Errorf("responses of strategy %s: %w", c.Rollout.Strategy, err)
	}
	s := Step{
		Model: mc, Prompts: c.Train.PromptsPerStep, Batch: c.Train.PromptsPerStep * int(leaves),
		PromptLen: t.MaxPromptLen() + 2, Response: resp, Train: c.Train,
	}
	return s, s.Validate()
}
