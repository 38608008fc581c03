package search

import (
	"context"
	"math"
)

// Flat samples N independent responses per prompt (GRPO's group).
type Flat struct {
	N int
}

// DefaultFlatN is the default group size of the flat strategy.
const DefaultFlatN = 8

// newFlat is the flat strategy's constructor: key n.
func newFlat(p *Params) (Strategy, error) {
	f := Flat{N: p.Int("n", DefaultFlatN)}
	return f, f.Validate()
}

// Name implements Strategy.
func (Flat) Name() string { return "flat" }

// Validate checks the parameters; an error is a *ParamError.
func (f Flat) Validate() error {
	if f.N < 1 {
		return rangeError("flat", "n", f.N, "want >= 1")
	}
	return nil
}

// Leaves implements Strategy: N.
func (f Flat) Leaves() int { return f.N }

// MaxGroupTokens implements Strategy: N responses of maxTokens.
func (f Flat) MaxGroupTokens(maxTokens int) int64 { return int64(f.N) * int64(maxTokens) }

// RemoteTree implements Remote: N roots, no fork.
func (f Flat) RemoteTree() (EntropyTree, error) {
	if err := f.Validate(); err != nil {
		return EntropyTree{}, err
	}
	return EntropyTree{M: f.N, N: 1, L: 0, T: 1, Score: ScoreEntropy, As: f.Name()}, nil
}

// Generate implements Strategy.
func (f Flat) Generate(ctx context.Context, req Request) ([]*Group, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	return generate(ctx, &req, f.Name(), func() planner { return &flatPlan{n: f.N} })
}

// flatPlan starts n independent responses.
type flatPlan struct{ n int }

func (f *flatPlan) start(g *groupRun) error {
	for i := 0; i < f.n; i++ {
		if _, err := g.spawn(nil, 0, 0, math.NaN()); err != nil {
			return err
		}
	}
	return nil
}

func (f *flatPlan) afterStep(*groupRun) error { return nil }
func (f *flatPlan) idle(*groupRun) error      { return nil }
func (f *flatPlan) keep(*path) bool           { return false }
