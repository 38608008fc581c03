package search

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/rollout-rl/rollout/policy"
)

// planner is the per-group policy of a strategy: which paths to start, and
// when.
type planner interface {
	// start starts the group's first paths.
	start(g *groupRun) error
	// afterStep runs after every step in which the group had live paths,
	// once finished paths have been retired.
	afterStep(g *groupRun) error
	// idle runs when the group has no live path; it may start new ones.
	// The group is done when none are live after it.
	idle(g *groupRun) error
	// keep reports whether the state of a finished path may still be
	// forked; states that may not are released at once.
	keep(p *path) bool
}

// path is one decoding state and the node it fills.
type path struct {
	node    *Node
	state   policy.State
	width   int // segment tree: share of the leaf width
	splitAt int // segment tree: response index of a split to carry out, 0: none
}

// groupRun is the generation state of one group.
type groupRun struct {
	req    *Request
	prompt Prompt
	group  *Group
	plan   planner
	root   policy.State // the prefilled prompt, until the roots are forked
	paths  []*path      // by node ID
	live   []*path      // live paths in node-ID order
	// committed is the generated tokens plus the remaining maximum length of
	// every live path: what the group may still cost at most.
	committed int64
	done      bool
}

// answerStart is the prompt's answer-start function, or the request's.
func (g *groupRun) answerStart() func([]int) int {
	if g.prompt.AnswerStart != nil {
		return g.prompt.AnswerStart
	}
	return g.req.AnswerStart
}

// generate runs every group of req through one batched Step per token.
func generate(ctx context.Context, req *Request, name string, newPlan func() planner) (groups []*Group, err error) {
	if err := req.validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	runs := make([]*groupRun, len(req.Prompts))
	defer func() {
		for _, g := range runs {
			if g != nil {
				g.release()
			}
		}
	}()
	if err := startRuns(req, name, newPlan, runs); err != nil {
		return nil, err
	}
	var (
		states []policy.State
		owners []*path
		out    []policy.Token
	)
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if states, owners, err = liveStates(runs, name, states[:0], owners[:0]); err != nil {
			return nil, err
		}
		if len(states) == 0 {
			break
		}
		out = slices.Grow(out[:0], len(states))[:len(states)]
		if err := req.Sampler.Step(states, req.Sampling, out); err != nil {
			return nil, fmt.Errorf("%s: step: %w", name, err)
		}
		appendTokens(req, owners, out)
		for i, g := range runs {
			if g.done || len(g.live) == 0 {
				continue
			}
			finished := g.retire()
			if err := g.plan.afterStep(g); err != nil {
				return nil, fmt.Errorf("%s: prompt %d: %w", name, i, err)
			}
			g.sweep(finished)
		}
	}
	groups = make([]*Group, len(runs))
	for i, g := range runs {
		g.account()
		groups[i] = g.group
	}
	return groups, nil
}

// startRuns prefills every prompt and starts its group's plan, filling runs.
func startRuns(req *Request, name string, newPlan func() planner, runs []*groupRun) error {
	roots, err := prefill(req)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	for i, p := range req.Prompts {
		runs[i] = &groupRun{
			req:    req,
			prompt: p,
			group: &Group{
				Prompt: append([]int(nil), p.Tokens...), PromptID: p.ID, Strategy: name,
				Usage: Usage{Budget: req.Budget, PrefillTokens: int64(len(p.Tokens))},
			},
			plan: newPlan(),
			root: roots[i],
		}
	}
	for i, g := range runs {
		if err := g.plan.start(g); err != nil {
			return fmt.Errorf("%s: prompt %d: %w", name, i, err)
		}
		// Roots are only started by start; their forks keep what they share.
		g.root.Release()
		g.root = nil
	}
	return nil
}

// liveStates appends the decoding state of every live path of every group
// to states (and the path to owners), first letting idle groups plan more
// paths and retiring groups that have none left.
func liveStates(runs []*groupRun, name string, states []policy.State, owners []*path) ([]policy.State, []*path, error) {
	for i, g := range runs {
		if g.done {
			continue
		}
		if len(g.live) == 0 {
			if err := g.plan.idle(g); err != nil {
				return nil, nil, fmt.Errorf("%s: prompt %d: %w", name, i, err)
			}
			if len(g.live) == 0 {
				g.done = true
				g.release()
				continue
			}
			g.sweep(g.paths)
		}
		for _, p := range g.live {
			states = append(states, p.state)
			owners = append(owners, p)
		}
	}
	return states, owners, nil
}

// appendTokens appends each path's sampled token to its node and marks the
// node finished at an end-of-sequence token or the length cap.
func appendTokens(req *Request, owners []*path, out []policy.Token) {
	for i, p := range owners {
		n, tok := p.node, out[i]
		n.Tokens = append(n.Tokens, tok.ID)
		n.LogProbs = append(n.LogProbs, tok.LogProb)
		n.Entropies = append(n.Entropies, tok.Entropy)
		switch {
		case slices.Contains(req.EOS, tok.ID):
			n.Finish = FinishEOS
		case n.Start+len(n.Tokens) >= req.MaxTokens:
			n.Finish = FinishLength
		}
	}
}

// BatchPrefiller is implemented by samplers that prefill several prompts
// in one forward pass (policy.Engine does); Generate uses it when present.
type BatchPrefiller interface {
	PrefillBatch(prompts [][]int, streams []policy.Stream) ([]policy.State, error)
}

// prefill returns the prefilled state of every prompt of req.
func prefill(req *Request) ([]policy.State, error) {
	streams := make([]policy.Stream, len(req.Prompts))
	prompts := make([][]int, len(req.Prompts))
	for i, p := range req.Prompts {
		streams[i] = policy.Stream{Seed: req.Seed, ID: streamID(req.Step, p.ID, prefillBranch)}
		prompts[i] = p.Tokens
	}
	if b, ok := req.Sampler.(BatchPrefiller); ok {
		states, err := b.PrefillBatch(prompts, streams)
		if err != nil {
			return nil, fmt.Errorf("prefill: %w", err)
		}
		if len(states) != len(prompts) {
			for _, st := range states {
				st.Release()
			}
			return nil, fmt.Errorf("prefill: %d states for %d prompts", len(states), len(prompts))
		}
		return states, nil
	}
	states := make([]policy.State, len(prompts))
	for i := range prompts {
		st, err := req.Sampler.Prefill(prompts[i], streams[i])
		if err != nil {
			for _, done := range states[:i] {
				done.Release()
			}
			return nil, fmt.Errorf("prefill of prompt %d: %w", i, err)
		}
		states[i] = st
	}
	return states, nil
}

// remaining is the budget a new path may still reserve (-1: no limit).
func (g *groupRun) remaining() int64 {
	if g.req.Budget == 0 {
		return -1
	}
	return g.req.Budget - g.committed
}

// spawn starts a path for a new node forked off parent at index at of its
// tokens (a root, forked off the prefilled prompt, when parent is nil),
// with fork score score (NaN: none), if the budget covers its longest
// possible length. It returns nil (and
// counts a skipped branch) when it does not.
func (g *groupRun) spawn(parent *Node, at, iteration int, score float64) (*path, error) {
	start := 0
	if parent != nil {
		start = parent.Start + at
	}
	need := int64(g.req.MaxTokens - start)
	if rem := g.remaining(); rem >= 0 && need > rem {
		g.group.Usage.SkippedBranches++
		return nil, nil
	}
	from, pos := g.root, len(g.prompt.Tokens)
	if parent == nil && from == nil {
		return nil, errors.New("root started after the prompt state was released")
	}
	if parent != nil {
		from, pos = g.paths[parent.ID].state, len(g.prompt.Tokens)+start
	}
	tree := 0
	if parent != nil {
		tree = parent.Tree
	}
	n := g.group.newNode(parent, tree, at, iteration, score)
	st, err := from.Fork(pos, policy.Stream{Seed: g.req.Seed, ID: streamID(g.req.Step, g.prompt.ID, uint64(n.ID))})
	if err != nil {
		return nil, fmt.Errorf("fork of node %d at %d: %w", n.ID, pos, err)
	}
	p := &path{node: n, state: st}
	g.paths = append(g.paths, p)
	g.live = append(g.live, p)
	g.committed += need
	return p, nil
}

// retire accounts the step's tokens and drops finished paths from the live
// list, returning them; their states stay until sweep finds them unneeded.
func (g *groupRun) retire() (finished []*path) {
	live := g.live[:0]
	for _, p := range g.live {
		g.group.Usage.GeneratedTokens++
		if n := p.node; n.Finish != "" {
			g.recordAttention(p)
			// Return the unused part of the path's reservation.
			g.committed -= int64(g.req.MaxTokens - (n.Start + len(n.Tokens)))
			finished = append(finished, p)
			continue
		}
		live = append(live, p)
	}
	clear(g.live[len(live):])
	g.live = live
	return finished
}

// sweep releases the states of the finished paths among ps that the
// planner will not fork again.
func (g *groupRun) sweep(ps []*path) {
	for _, p := range ps {
		if p.state != nil && p.node.Finish != "" && !g.plan.keep(p) {
			p.state.Release()
			p.state = nil
		}
	}
}

// release releases every state of the group.
func (g *groupRun) release() {
	if g.root != nil {
		g.root.Release()
		g.root = nil
	}
	for _, p := range g.paths {
		if p.state != nil {
			p.state.Release()
			p.state = nil
		}
	}
}

// account computes the decode tokens and FLOPs of the finished group from
// its tree: the prompt is prefilled once; every sampled token but a node's
// first is preceded by the feed of the token before it at the same node. A
// node's first token needs no feed of its own: roots fork off the prefilled
// prompt and branches fork before their parent's last token, whose
// predecessor the parent has fed (search never forks at a pending token).
func (g *groupRun) account() {
	u := &g.group.Usage
	P := len(g.prompt.Tokens)
	flops := func(ctx int) int64 {
		if g.req.FLOPs == nil {
			return 0
		}
		return g.req.FLOPs(ctx)
	}
	for c := 1; c <= P; c++ {
		u.FLOPs += flops(c)
	}
	for _, n := range g.group.nodes {
		for i := 1; i < len(n.Tokens); i++ {
			// the feed of the token at response index n.Start+i-1
			u.DecodeTokens++
			u.FLOPs += flops(P + n.Start + i)
		}
	}
}

// Branch ids below are reserved for streams that are not a node's.
const (
	prefillBranch = ^uint64(0)
	forkScoreTag  = ^uint64(0) - 1
)

// streamID is the fixed hash of (step, prompt, branch) naming a stream.
func streamID(step, prompt, branch uint64) uint64 {
	h := mix64(step ^ 0x243f6a8885a308d3)
	h = mix64(h ^ prompt)
	return mix64(h ^ branch)
}

// uniform is a counter-based uniform number in [0, 1) of (seed, id, a, b).
func uniform(seed, id uint64, a, b int) float64 {
	h := mix64(seed ^ 0x13198a2e03707344)
	h = mix64(h ^ id)
	h = mix64(h ^ uint64(a))
	h = mix64(h ^ uint64(b))
	return float64(h>>11) / (1 << 53)
}

// mix64 is the SplitMix64 finaliser.
func mix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
