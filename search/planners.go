package search

import (
	"math"
	"sort"
)

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

// entropyPlan grows M trees by L fork iterations.
type entropyPlan struct {
	cfg  EntropyTree
	iter int
}

func (e *entropyPlan) start(g *groupRun) error {
	for i := 0; i < e.cfg.M; i++ {
		if _, err := g.spawn(nil, 0, 0, math.NaN()); err != nil {
			return err
		}
	}
	return nil
}

func (e *entropyPlan) afterStep(*groupRun) error { return nil }

// keep keeps finished states while fork iterations remain.
func (e *entropyPlan) keep(*path) bool { return e.iter < e.cfg.L }

// Position is a token position of a tree that may be forked.
type Position struct {
	Node  *Node   // the node holding the token
	Index int     // index in Node.Tokens
	Score float64 // the fork score
}

// EligiblePositions returns the positions of tree t that an entropy tree may
// fork at, scored by score (random scores come from the counter-based stream
// of (seed, step, promptID)), in node-ID then index order. answerStart may
// be nil.
func EligiblePositions(t *Tree, score ForkScore, answerStart func([]int) int, seed, step, promptID uint64) []Position {
	var out []Position
	for _, n := range t.Nodes {
		limit := len(n.Tokens) - 1 // never the last position
		if answerStart != nil {
			resp := n.Response()
			if a := answerStart(resp) - n.Start; a < limit {
				limit = a
			}
		}
		for i := 1; i < limit; i++ { // never a node's first token
			if forkedAt(n, i) {
				continue
			}
			var s float64
			switch score {
			case ScoreEntropy:
				s = float64(n.Entropies[i])
			case ScoreSurprisal:
				s = -float64(n.LogProbs[i])
			case ScoreRandom:
				s = uniform(seed, streamID(step, promptID, forkScoreTag), n.ID, i)
			}
			out = append(out, Position{Node: n, Index: i, Score: s})
		}
	}
	return out
}

func forkedAt(n *Node, i int) bool {
	for _, c := range n.Children {
		if c.ForkAt == i {
			return true
		}
	}
	return false
}

// TopPositions returns the n best positions by score (ties: lower node ID,
// then lower index first), best first.
func TopPositions(ps []Position, n int) []Position {
	ps = append([]Position(nil), ps...)
	sort.SliceStable(ps, func(a, b int) bool {
		if ps[a].Score != ps[b].Score {
			return ps[a].Score > ps[b].Score
		}
		if ps[a].Node.ID != ps[b].Node.ID {
			return ps[a].Node.ID < ps[b].Node.ID
		}
		return ps[a].Index < ps[b].Index
	})
	if len(ps) > n {
		ps = ps[:n]
	}
	return ps
}

func (e *entropyPlan) idle(g *groupRun) error {
	req := g.req
	// An iteration that starts nothing (no eligible position, no budget)
	// is still an iteration: go on to the next one.
	for e.iter < e.cfg.L && len(g.live) == 0 {
		e.iter++
		chosen := make([][]Position, len(g.group.Trees))
		for i, t := range g.group.Trees {
			ps := EligiblePositions(t, e.cfg.Score, g.answerStart(), req.Seed, req.Step, g.prompt.ID)
			chosen[i] = TopPositions(ps, e.cfg.N)
			g.group.MissingForks += e.cfg.N - len(chosen[i])
		}
		// Rank by rank across trees, so a tight budget spreads over the trees.
		for r := 0; r < e.cfg.N; r++ {
			for _, c := range chosen {
				if r >= len(c) {
					continue
				}
				for t := 0; t < e.cfg.T; t++ {
					if _, err := g.spawn(c[r].Node, c[r].Index, e.iter, c[r].Score); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
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
