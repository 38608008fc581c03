package remote

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/rollout-rl/rollout/policy/openai"
	"github.com/rollout-rl/rollout/search"
)

// groupRun is the sampling state of one group.
type groupRun struct {
	s     *Sampler
	p     Prompt
	name  string
	nodes []*search.Node // in creation order: parents before children
	usage search.Usage
	// generated is the server's completion tokens so far.
	generated int64
	missing   int
}

// call is one request of a group: n completions forked off parent at index
// at of its tokens (a root when parent is nil).
type call struct {
	parent    *search.Node
	at        int
	iteration int
	score     float64 // NaN: none
	n         int
	seedA     int
	seedB     int
}

// group assembles the finished group.
func (g *groupRun) group() *search.Group {
	grp := search.NewGroup(g.p.Tokens, g.name, g.nodes)
	grp.PromptID = g.p.ID
	grp.MissingForks = g.missing
	g.usage.Budget = g.s.Budget
	g.usage.GeneratedTokens = g.generated
	grp.Usage = g.usage
	return grp
}

// reserve returns how many of n completions of at most need tokens each
// the budget left covers after reserved more tokens, counting the others
// as skipped.
func (g *groupRun) reserve(n int, need, reserved int64) int {
	if g.s.Budget == 0 {
		return n
	}
	left := g.s.Budget - g.generated - reserved
	k := int(min(int64(n), max(0, left/need)))
	g.usage.SkippedBranches += n - k
	return k
}

// roots starts the group with one request of n completions.
func (g *groupRun) roots(ctx context.Context, n int) error {
	k := g.reserve(n, int64(g.s.MaxTokens), 0)
	if k == 0 {
		return nil
	}
	return g.send(ctx, []call{{n: k, score: math.NaN()}})
}

// tree grows an entropy tree: M roots, then L fork iterations, each
// forking the N best eligible positions of every tree T times, rank by rank
// across trees so that a tight budget spreads over them.
func (g *groupRun) tree(ctx context.Context, e search.EntropyTree) error {
	if err := g.roots(ctx, e.M); err != nil {
		return err
	}
	for it := 1; it <= e.L; it++ {
		grp := g.group()
		chosen := make([][]search.Position, len(grp.Trees))
		for i, t := range grp.Trees {
			ps := search.EligiblePositions(t, e.Score, g.s.answerStart(g.p), g.s.Seed, g.s.Step, g.p.ID)
			chosen[i] = search.TopPositions(ps, e.N)
			g.missing += e.N - len(chosen[i])
		}
		var calls []call
		var reserved int64
		for r := 0; r < e.N; r++ {
			for _, c := range chosen {
				if r >= len(c) {
					continue
				}
				pos := c[r]
				need := int64(g.s.MaxTokens - (pos.Node.Start + pos.Index))
				k := g.reserve(e.T, need, reserved)
				if k == 0 {
					continue
				}
				reserved += int64(k) * need
				calls = append(calls, call{parent: pos.Node, at: pos.Index, iteration: it, score: pos.Score, n: k,
					seedA: it, seedB: pos.Node.ID<<20 | pos.Index})
			}
		}
		if err := g.send(ctx, calls); err != nil {
			return err
		}
	}
	return nil
}

// send makes the calls concurrently and adds their completions as nodes,
// in call order.
func (g *groupRun) send(ctx context.Context, calls []call) error {
	resps := make([]*openai.Response, len(calls))
	errs := make([]error, len(calls))
	var wg sync.WaitGroup
	for i := range calls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resps[i], errs[i] = g.s.Client.Complete(ctx, g.request(calls[i]))
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("%s: %w", g.describe(calls[i]), err)
		}
	}
	for i, c := range calls {
		if err := g.add(c, resps[i]); err != nil {
			return fmt.Errorf("%s: %s: %w", g.s.Client.URL(), g.describe(c), err)
		}
	}
	return nil
}

// describe names a call for an error message.
func (g *groupRun) describe(c call) string {
	if c.parent == nil {
		return fmt.Sprintf("roots (n = %d)", c.n)
	}
	return fmt.Sprintf("fork of node %d at token %d (n = %d)", c.parent.ID, c.at, c.n)
}

// request is the completions request of a call: the prompt followed by the
// parent's response up to the fork, as ids or as text.
func (g *groupRun) request(c call) openai.Request {
	s := g.s
	start := 0
	var prefix []int
	if c.parent != nil {
		start = c.parent.Start + c.at
		prefix = c.parent.Response()[:start]
	}
	topP := s.TopP
	if topP == 0 {
		topP = 1 // off, as in policy.Sampling
	}
	r := openai.Request{
		Model: s.Model, N: c.n, MaxTokens: s.MaxTokens - start,
		Temperature: s.Temperature, TopP: topP, Seed: s.seed(g.p.ID, c.seedA, c.seedB), HasSeed: true,
		Stop: s.Stop, Logprobs: s.topK(), TokenIDs: s.TokenIDs,
	}
	if s.PromptIDs {
		r.PromptIDs = append(append([]int(nil), g.p.Tokens...), prefix...)
	} else {
		r.Prompt = g.p.Text + s.Text(prefix)
	}
	return r
}

// add turns a call's completions into nodes and counts its usage. The
// server counts in usage.completion_tokens the end-of-sequence tokens it
// does not return (and tokens cut with a stop string); the nodes hold what
// it returns, and the difference is the group's Usage.UnheldTokens, so
// that generated tokens = held + unheld as in every record.
func (g *groupRun) add(c call, resp *openai.Response) error {
	start := 0
	if c.parent != nil {
		start = c.parent.Start + c.at
	}
	held := 0
	for i := range resp.Choices {
		ch := &resp.Choices[i]
		pc, err := g.s.parse(ch)
		if err != nil {
			return fmt.Errorf("choice %d: %w", i, err)
		}
		if start+len(pc.ids) > g.s.MaxTokens {
			return fmt.Errorf("choice %d: %d tokens after %d shared, more than max_tokens %d", i, len(pc.ids), start, g.s.MaxTokens)
		}
		n := &search.Node{Parent: c.parent, ForkAt: c.at, Iteration: c.iteration,
			Tokens: pc.ids, LogProbs: pc.logprobs, Entropies: pc.entropies, Finish: pc.finish}
		if !math.IsNaN(c.score) {
			n.ForkScore, n.HasForkScore = c.score, true
		}
		if c.parent != nil {
			n.Start = start
		}
		g.nodes = append(g.nodes, n)
		held += len(pc.ids)
	}
	u := resp.Usage
	if u.CompletionTokens < held {
		return fmt.Errorf("usage.completion_tokens %d, fewer than the %d tokens returned", u.CompletionTokens, held)
	}
	g.generated += int64(u.CompletionTokens)
	g.usage.UnheldTokens += int64(u.CompletionTokens - held)
	g.usage.PrefillTokens += int64(u.PromptTokens)
	g.usage.DecodeTokens += max(0, int64(u.CompletionTokens-len(resp.Choices)))
	return nil
}
