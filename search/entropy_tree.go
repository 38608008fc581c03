package search

import (
	"context"
	"fmt"
	"math"
	"sort"
)

// EntropyTree (EPTree, TreeRL) samples M full responses per prompt, each the
// root of a tree, then L times: in each tree it scores every eligible
// position of every path, takes the top N distinct positions and samples T
// new continuations from each to the end. Leaves per prompt:
// M·(1 + L·N·T) when nothing limits them.
//
// Not eligible: the first token of a node (a root's first token too: a fork
// there would share nothing), positions at or after the answer start, the
// last position of a response, and positions already forked.
type EntropyTree struct {
	M, N, L, T int
	Score      ForkScore
	// As names the strategy ("entropy_tree" if empty).
	As string
}

// DefaultEntropyTree returns the defaults M, N, L, T = 6, 2, 1, 2 with the
// entropy score.
func DefaultEntropyTree() EntropyTree {
	return EntropyTree{M: 6, N: 2, L: 1, T: 2, Score: ScoreEntropy}
}

// newEntropyTree is entropy_tree's constructor: keys m, n, l, t, score.
func newEntropyTree(p *Params) (Strategy, error) {
	d := DefaultEntropyTree()
	e := EntropyTree{M: p.Int("m", d.M), N: p.Int("n", d.N), L: p.Int("l", d.L), T: p.Int("t", d.T),
		Score: ForkScore(p.String("score", string(d.Score)))}
	return e, e.Validate()
}

// newRandomTree is random_tree's constructor, the entropy tree with
// random fork scores: keys m, n, l, t.
func newRandomTree(p *Params) (Strategy, error) {
	d := DefaultEntropyTree()
	e := EntropyTree{M: p.Int("m", d.M), N: p.Int("n", d.N), L: p.Int("l", d.L), T: p.Int("t", d.T),
		Score: ScoreRandom, As: "random_tree"}
	return e, e.Validate()
}

// Name implements Strategy.
func (e EntropyTree) Name() string {
	if e.As != "" {
		return e.As
	}
	return "entropy_tree"
}

// Validate checks the parameters; an error is a *ParamError.
func (e EntropyTree) Validate() error {
	name := e.Name()
	switch {
	case e.M < 1:
		return rangeError(name, "m", e.M, "want >= 1")
	case e.N < 1:
		return rangeError(name, "n", e.N, "want >= 1")
	case e.L < 0:
		return rangeError(name, "l", e.L, "want >= 0")
	case e.T < 1:
		return rangeError(name, "t", e.T, "want >= 1")
	}
	if ok, want := validForkScore(e.Score); !ok {
		return &ParamError{Strategy: name, Key: "score", Value: string(e.Score),
			Msg: fmt.Sprintf("score = %q, %s", e.Score, want)}
	}
	return nil
}

// branches is the most branches a group has: M·L·N·T.
func (e EntropyTree) branches() int64 {
	return int64(e.M) * int64(e.L) * int64(e.N) * int64(e.T)
}

// Leaves implements Strategy: M roots and M·L·N·T branches.
func (e EntropyTree) Leaves() int { return e.M + int(e.branches()) }

// MaxGroupTokens implements Strategy: M roots of maxTokens and M·L·N·T
// branches, each forked after its parent's first token, so at most
// maxTokens−1 long.
func (e EntropyTree) MaxGroupTokens(maxTokens int) int64 {
	mt := int64(maxTokens)
	return int64(e.M)*mt + e.branches()*(mt-1)
}

// MaxForks implements ForkBudget: N.
func (e EntropyTree) MaxForks() int { return e.N }

// RemoteTree implements Remote: the tree itself.
func (e EntropyTree) RemoteTree() (EntropyTree, error) { return e, e.Validate() }

// Generate implements Strategy.
func (e EntropyTree) Generate(ctx context.Context, req Request) ([]*Group, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return generate(ctx, &req, e.Name(), func() planner { return &entropyPlan{cfg: e} })
}

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

func (e *entropyPlan) idle(g *groupRun) error {
	req := g.req
	// An iteration that starts nothing (no eligible position, no budget)
	// is still an iteration: go on to the next one.
	for e.iter < e.cfg.L && len(g.live) == 0 {
		e.iter++
		n := e.cfg.N
		if g.prompt.LimitForks {
			n = max(0, min(n, g.prompt.Forks))
		}
		chosen := make([][]Position, len(g.group.Trees))
		for i, t := range g.group.Trees {
			stream := ForkStream{Seed: req.Seed, Step: req.Step, PromptID: g.prompt.ID, StepEnds: req.StepEnds}
			ps := stream.Positions(t, e.cfg.Score, g.answerStart())
			chosen[i] = TopPositions(ps, n)
			g.group.MissingForks += n - len(chosen[i])
		}
		// Rank by rank across trees, so a tight budget spreads over the trees.
		for r := 0; r < n; r++ {
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

// Position is a token position of a tree that may be forked.
type Position struct {
	Node  *Node   // the node holding the token
	Index int     // index in Node.Tokens
	Score float64 // the fork score
}

// EligiblePositions returns the positions of tree t that an entropy tree may
// fork at, scored by score (random scores come from the counter-based stream
// of (seed, step, promptID)), in node-ID then index order. answerStart may
// be nil. A score that is not registered scores every position 0.
func EligiblePositions(t *Tree, score ForkScore, answerStart func([]int) int, seed, step, promptID uint64) []Position {
	return ForkStream{Seed: seed, Step: step, PromptID: promptID}.Positions(t, score, answerStart)
}

// Positions is EligiblePositions with the stream s, which carries the
// request's step ends for step-level scores. Positions scored −∞ are left
// out.
func (s ForkStream) Positions(t *Tree, score ForkScore, answerStart func([]int) int) []Position {
	scoreOf, _ := forkScores.lookup(string(score))
	stream := s
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
			if scoreOf != nil {
				if s = scoreOf(n, i, stream); math.IsInf(s, -1) {
					continue
				}
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
