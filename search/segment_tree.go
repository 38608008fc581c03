package search

import (
	"context"
	"math"
)

// SegmentTree (TreePO-like) decodes in segments of S tokens; after each
// segment every live path splits into B children (the path itself goes on
// as one of them) until the leaf width W is reached: forks happen only at
// multiples of S, a path splits at most once per boundary, and a group has
// W leaves when nothing ends early. A path holds a share of
// the width; it splits into min(B, share) paths, dividing its share. A path
// that finishes with a share above 1 hands the rest to the live paths of its
// prompt, round robin by node id. A path whose answer has begun no longer
// splits.
type SegmentTree struct {
	S, B, W int
}

// DefaultSegmentTree returns the defaults S, B, W = 8, 2, 8.
func DefaultSegmentTree() SegmentTree { return SegmentTree{S: 8, B: 2, W: 8} }

// newSegmentTree is segment_tree's constructor: keys s, b, w.
func newSegmentTree(p *Params) (Strategy, error) {
	d := DefaultSegmentTree()
	s := SegmentTree{S: p.Int("s", d.S), B: p.Int("b", d.B), W: p.Int("w", d.W)}
	return s, s.Validate()
}

// Name implements Strategy.
func (SegmentTree) Name() string { return "segment_tree" }

// Validate checks the parameters; an error is a *ParamError.
func (s SegmentTree) Validate() error {
	switch {
	case s.S < 1:
		return rangeError("segment_tree", "s", s.S, "want >= 1")
	case s.B < 2:
		return rangeError("segment_tree", "b", s.B, "want >= 2")
	case s.W < 1:
		return rangeError("segment_tree", "w", s.W, "want >= 1")
	}
	return nil
}

// Leaves implements Strategy: the width W.
func (s SegmentTree) Leaves() int { return s.W }

// MaxGroupTokens implements Strategy: at most W nodes (a node holds a
// share of the width), one root of maxTokens and W−1 branches forked at
// response index S or later.
func (s SegmentTree) MaxGroupTokens(maxTokens int) int64 {
	mt := int64(maxTokens)
	return mt + int64(s.W-1)*max(0, mt-int64(s.S))
}

// Generate implements Strategy.
func (s SegmentTree) Generate(ctx context.Context, req Request) ([]*Group, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return generate(ctx, &req, s.Name(), func() planner { return &segmentPlan{cfg: s} })
}

// segmentPlan splits live paths every S tokens.
//
// A split decided at a segment boundary b (the path has b response tokens,
// the last one not yet fed through the model) is carried out one step
// later, once the path's own step has fed token b−1: the children then fork
// at b without a pending token, so that token's forward pass is computed
// once for all of them. What they sample is the same either way.
type segmentPlan struct {
	cfg SegmentTree
	rr  int // round-robin cursor for handing over width
}

func (s *segmentPlan) start(g *groupRun) error {
	p, err := g.spawn(nil, 0, 0, math.NaN())
	if p != nil {
		p.width = s.cfg.W
	}
	return err
}

func (s *segmentPlan) idle(*groupRun) error { return nil }

// keep keeps a finished state until its decided split is carried out.
func (s *segmentPlan) keep(p *path) bool { return p.splitAt != 0 }

func (s *segmentPlan) afterStep(g *groupRun) error {
	// 1. Splits decided at the previous step, for paths live then.
	for _, p := range g.paths {
		if p.splitAt == 0 {
			continue
		}
		b := p.splitAt
		p.splitAt = 0
		if err := s.split(g, p, b); err != nil {
			return err
		}
	}
	// 2. Paths that finished hand their extra width over.
	for _, p := range g.paths {
		if p.node.Finish == "" || p.width <= 1 {
			continue
		}
		extra := p.width - 1
		p.width = 1
		if len(g.live) == 0 {
			g.group.MissingForks += extra
			continue
		}
		for ; extra > 0; extra-- {
			g.live[s.rr%len(g.live)].width++
			s.rr++
		}
	}
	// 3. Live paths at a boundary decide to split. A path made by a split
	// at this step starts at the boundary without a token of its own: it
	// is past that boundary already and must not split there again.
	for _, p := range g.live {
		n := p.node
		length := n.Start + len(n.Tokens)
		if p.width <= 1 || len(n.Tokens) == 0 || length%s.cfg.S != 0 {
			continue
		}
		if as := g.answerStart(); as != nil && as(n.Response()) < length {
			continue
		}
		p.splitAt = length
	}
	return nil
}

// split divides p's width among p and up to B−1 children forked at response
// index b.
func (s *segmentPlan) split(g *groupRun, p *path, b int) error {
	n := p.node
	k := min(s.cfg.B, p.width)
	shares := make([]int, k)
	for j := range shares {
		shares[j] = p.width / k
		if j < p.width%k {
			shares[j]++
		}
	}
	p.width = shares[0]
	for _, w := range shares[1:] {
		c, err := g.spawn(n, b-n.Start, b/s.cfg.S, math.NaN())
		if err != nil {
			return err
		}
		if c == nil {
			p.width += w // no budget: the path keeps the share
			continue
		}
		c.width = w
	}
	return nil
}
