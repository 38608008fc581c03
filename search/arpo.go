package search

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// ARPO is the entropy-based adaptive rollout of ARPO (Dong et al.,
// "Agentic Reinforced Policy Optimization", 2025), registered as arpo: it
// samples N responses per prompt (the initial samples), and while a
// response is generated, K tokens after the start of each step
// (Request.StepEnds) it measures the rise of entropy
//
//	ΔH = mean entropy of the step's first K tokens − mean entropy of the response's first K tokens
//
// and branches there with probability P = α + β·ΔH (clamped to [0, 1]):
// Z new continuations from the step's start, until the group holds its
// global rollout size of M responses. The draw is a counter-based uniform
// of (seed, step, prompt, node, position), so a group does not depend on
// the batch. The paper branches when P exceeds a threshold τ; the draw
// against P is the reading and keeps a low-entropy step a chance.
// Branches forked from a branch are decided the same way; a step whose K
// tokens the response does not reach is not decided, nor one at or after
// the answer start or at a node's first token.
type ARPO struct {
	M, N        int     // global rollout size, initial samples
	Alpha, Beta float64 // base probability, entropy weight
	K           int     // tokens over which a step's entropy is measured
	Z           int     // continuations per branching
}

// DefaultARPO returns this harness's defaults M, N = 8, 4; α, β = 0.2,
// 0.5; K = 2; Z = 1.
func DefaultARPO() ARPO { return ARPO{M: 8, N: 4, Alpha: 0.2, Beta: 0.5, K: 2, Z: 1} }

// newARPO is arpo's constructor: keys m, n, alpha, beta, k, z.
func newARPO(p *Params) (Strategy, error) {
	d := DefaultARPO()
	a := ARPO{M: p.Int("m", d.M), N: p.Int("n", d.N), Alpha: p.Float("alpha", d.Alpha), Beta: p.Float("beta", d.Beta),
		K: p.Int("k", d.K), Z: p.Int("z", d.Z)}
	return a, a.Validate()
}

// Name implements Strategy.
func (ARPO) Name() string { return "arpo" }

// Validate checks the parameters; an error is a *ParamError.
func (a ARPO) Validate() error {
	switch {
	case a.N < 1:
		return rangeError("arpo", "n", a.N, "want >= 1")
	case a.M < a.N:
		return rangeError("arpo", "m", a.M, fmt.Sprintf("want >= n = %d", a.N))
	case a.K < 1:
		return rangeError("arpo", "k", a.K, "want >= 1")
	case a.Z < 1:
		return rangeError("arpo", "z", a.Z, "want >= 1")
	case a.Alpha < 0 || a.Alpha > 1:
		return &ParamError{Strategy: "arpo", Key: "alpha", Value: strconv.FormatFloat(a.Alpha, 'g', -1, 64),
			Msg: fmt.Sprintf("alpha = %g, want a probability in [0, 1]", a.Alpha)}
	}
	return nil
}

// Leaves implements Strategy: the global rollout size M.
func (a ARPO) Leaves() int { return a.M }

// MaxGroupTokens implements Strategy: N responses of maxTokens and M−N
// branches forked after their parent's first token, so at most
// maxTokens−1 long.
func (a ARPO) MaxGroupTokens(maxTokens int) int64 {
	mt := int64(maxTokens)
	return int64(a.N)*mt + int64(a.M-a.N)*(mt-1)
}

// Generate implements Strategy.
func (a ARPO) Generate(ctx context.Context, req Request) ([]*Group, error) {
	if err := a.Validate(); err != nil {
		return nil, err
	}
	return generate(ctx, &req, a.Name(), func() planner { return &arpoPlan{cfg: a} })
}

// arpoPlan starts N responses and branches while they are generated.
type arpoPlan struct {
	cfg    ARPO
	leaves int
}

func (a *arpoPlan) start(g *groupRun) error {
	for i := 0; i < a.cfg.N; i++ {
		if _, err := g.spawn(nil, 0, 0, math.NaN()); err != nil {
			return err
		}
		a.leaves++
	}
	return nil
}

// afterStep decides the steps that began K tokens ago on every live path.
func (a *arpoPlan) afterStep(g *groupRun) error {
	stream := ForkStream{Seed: g.req.Seed, Step: g.req.Step, PromptID: g.prompt.ID, StepEnds: g.req.StepEnds}
	k := a.cfg.K
	for _, p := range slices.Clone(g.live) {
		if a.leaves >= a.cfg.M {
			return nil
		}
		n := p.node
		i := len(n.Tokens) - k // the step's first token, in n's tokens
		if i < 1 || !stream.StepStart(n, i) {
			continue
		}
		b := n.Start + i
		if as := g.answerStart(); as != nil && as(n.Response()) <= b {
			continue
		}
		h := n.ResponseEntropies()
		dH := meanOf(h[b:b+k]) - meanOf(h[:min(k, len(h))])
		prob := min(1, max(0, a.cfg.Alpha+float64(a.cfg.Beta*dH)))
		if stream.Uniform(n, i) >= prob {
			continue
		}
		for z := 0; z < a.cfg.Z && a.leaves < a.cfg.M; z++ {
			c, err := g.spawn(n, i, 1, prob)
			if err != nil {
				return err
			}
			if c == nil {
				break // no budget
			}
			a.leaves++
		}
	}
	return nil
}

func (a *arpoPlan) idle(*groupRun) error { return nil }
func (a *arpoPlan) keep(*path) bool      { return false }

func meanOf(xs []float32) float64 {
	s := 0.0
	for _, x := range xs {
		s += float64(x)
	}
	return s / float64(len(xs))
}
