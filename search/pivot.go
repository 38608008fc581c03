package search

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/rollout-rl/rollout/policy/portmath"
)

// Pivot is DEEP-GRPO's pivot resampling (deep dense exploration),
// registered as pivot: it samples N responses per prompt, then resamples
// K times from one deep pivot of each failed one (Prompt.Failed): K new
// continuations forked at the pivot, to the end. The pivot is a step's
// first token (Request.StepEnds) before the answer, never a response's
// first or last token, drawn with probability ∝ (t/T)^γ, t its index in
// the response and T the response's length, so γ > 0 favours deep pivots
// (γ = 0: uniform). The paper weighs depth by an estimate of the chance
// to recover from the prefix as well; this harness draws by depth alone.
// Leaves per prompt: at most N·(1 + K).
type Pivot struct {
	N, K  int
	Gamma float64
}

// DefaultPivot returns the defaults N, K = 4, 2; γ = 2.
func DefaultPivot() Pivot { return Pivot{N: 4, K: 2, Gamma: 2} }

// newPivot is pivot's constructor: keys n, k, gamma.
func newPivot(p *Params) (Strategy, error) {
	d := DefaultPivot()
	v := Pivot{N: p.Int("n", d.N), K: p.Int("k", d.K), Gamma: p.Float("gamma", d.Gamma)}
	return v, v.Validate()
}

// Name implements Strategy.
func (Pivot) Name() string { return "pivot" }

// Validate checks the parameters; an error is a *ParamError.
func (v Pivot) Validate() error {
	switch {
	case v.N < 1:
		return rangeError("pivot", "n", v.N, "want >= 1")
	case v.K < 1:
		return rangeError("pivot", "k", v.K, "want >= 1")
	case v.Gamma < 0:
		return &ParamError{Strategy: "pivot", Key: "gamma", Value: strconv.FormatFloat(v.Gamma, 'g', -1, 64),
			Msg: fmt.Sprintf("gamma = %g, want >= 0", v.Gamma)}
	}
	return nil
}

// Leaves implements Strategy: N responses and K resamples of each.
func (v Pivot) Leaves() int { return v.N * (1 + v.K) }

// MaxGroupTokens implements Strategy: N responses of maxTokens and N·K
// resamples forked after their chain's first token, so at most
// maxTokens−1 long.
func (v Pivot) MaxGroupTokens(maxTokens int) int64 {
	mt := int64(maxTokens)
	return int64(v.N)*mt + int64(v.N)*int64(v.K)*(mt-1)
}

// Generate implements Strategy.
func (v Pivot) Generate(ctx context.Context, req Request) ([]*Group, error) {
	if err := v.Validate(); err != nil {
		return nil, err
	}
	return generate(ctx, &req, v.Name(), func() planner { return &pivotPlan{cfg: v} })
}

// pivotPlan samples N chains, then resamples the failed ones once.
type pivotPlan struct {
	cfg  Pivot
	done bool
}

func (v *pivotPlan) start(g *groupRun) error {
	for i := 0; i < v.cfg.N; i++ {
		if _, err := g.spawn(nil, 0, 0, math.NaN()); err != nil {
			return err
		}
	}
	return nil
}

func (v *pivotPlan) afterStep(*groupRun) error { return nil }

// keep keeps the chains until the resampling round.
func (v *pivotPlan) keep(*path) bool { return !v.done }

func (v *pivotPlan) idle(g *groupRun) error {
	if v.done {
		return nil
	}
	v.done = true
	stream := ForkStream{Seed: g.req.Seed, Step: g.req.Step, PromptID: g.prompt.ID, StepEnds: g.req.StepEnds}
	for _, t := range g.group.Trees {
		chain := t.Root
		if f := g.prompt.Failed; f != nil && !f(chain.Response()) {
			continue
		}
		ps := stream.Positions(t, ScoreStepRandom, g.answerStart())
		if len(ps) == 0 {
			g.group.MissingForks += v.cfg.K
			continue
		}
		at := drawPivot(ps, float64(len(chain.Tokens)), v.cfg.Gamma, stream.Uniform(chain, -1))
		for k := 0; k < v.cfg.K; k++ {
			if _, err := g.spawn(chain, at.Index, 1, at.Score); err != nil {
				return err
			}
		}
	}
	return nil
}

// drawPivot draws a position with probability ∝ (t/T)^γ by inverting the
// cumulative weights at u ∈ [0, 1); the position's Score becomes its
// weight.
func drawPivot(ps []Position, T, gamma, u float64) Position {
	w := make([]float64, len(ps))
	total := 0.0
	for i, p := range ps {
		w[i] = pow(float64(p.Node.Start+p.Index)/T, gamma)
		total += w[i]
	}
	x := u * total
	for i, p := range ps {
		if x < w[i] || i == len(ps)-1 {
			p.Score = w[i] / total
			return p
		}
		x -= w[i]
	}
	return ps[len(ps)-1]
}

// pow returns x**gamma for x ≥ 0 and gamma ≥ 0 with the same bits on every
// CPU (math.Pow goes through math.Exp, whose assembly differs between
// amd64 and arm64).
func pow(x, gamma float64) float64 {
	switch {
	case gamma == 0:
		return 1
	case x == 0:
		return 0
	}
	return portmath.ExpAMD64(float64(gamma * portmath.Log(x)))
}
