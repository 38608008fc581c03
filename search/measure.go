package search

import (
	"context"
	"fmt"
	"time"
)

// LeafCost is what the leaves of one Generate call cost.
type LeafCost struct {
	Strategy        string
	Leaves          int
	GeneratedTokens int64
	Wall            time.Duration
}

// TokensPerLeaf is the generated tokens per leaf.
func (c LeafCost) TokensPerLeaf() float64 { return float64(c.GeneratedTokens) / float64(c.Leaves) }

// WallPerLeaf is the wall time per leaf.
func (c LeafCost) WallPerLeaf() time.Duration { return c.Wall / time.Duration(c.Leaves) }

// String reports the cost per leaf.
func (c LeafCost) String() string {
	return fmt.Sprintf("%s: %d leaves, %.1f generated tokens/leaf, %v/leaf", c.Strategy, c.Leaves, c.TokensPerLeaf(), c.WallPerLeaf())
}

// MeasureLeafCost runs st on req once and reports the generated tokens and
// the wall time per leaf, over all groups of the request.
func MeasureLeafCost(ctx context.Context, st Strategy, req Request) (LeafCost, error) {
	start := time.Now()
	groups, err := st.Generate(ctx, req)
	if err != nil {
		return LeafCost{}, fmt.Errorf("measure leaf cost: %w", err)
	}
	c := LeafCost{Strategy: st.Name(), Wall: time.Since(start)}
	for _, g := range groups {
		c.Leaves += len(g.Leaves())
		c.GeneratedTokens += g.Usage.GeneratedTokens
	}
	if c.Leaves == 0 {
		return c, fmt.Errorf("measure leaf cost: %s made no leaves", st.Name())
	}
	return c, nil
}
