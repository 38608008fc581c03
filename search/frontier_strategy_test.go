package search_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/search"
)

const stepEnd = 5 // the step-end token of the sampling tests

// stepRequest is request with token 5 ending a step.
func stepRequest(t testing.TB, ps []search.Prompt, maxTokens int) search.Request {
	req := request(newSampler(t, hashDist(0.3, 0.2)), ps, maxTokens)
	req.StepEnds = []int{stepEnd}
	return req
}

// atStepStart reports whether a branch's first token begins a step.
func atStepStart(n *search.Node) bool {
	return n.ForkAt > 0 && n.Parent.Tokens[n.ForkAt-1] == stepEnd
}

func TestStepScores(t *testing.T) {
	root := &search.Node{Tokens: []int{1, 9, 2, 3, 9, 4, 5}, Entropies: []float32{0.1, 0.2, 0.3, 0.6, 0.9, 1.0, 0.5}}
	child := &search.Node{Parent: root, ForkAt: 2, Tokens: []int{7, 9, 8}, Entropies: []float32{1, 2, 3}}
	g := search.NewGroup([]int{0}, "tree_grpo", []*search.Node{root, child})
	stream := search.ForkStream{Seed: 1, StepEnds: []int{9}}
	type pos struct {
		node, index int
		score       float64
	}
	positions := func(s search.ForkStream, score search.ForkScore) []pos {
		var out []pos
		for _, p := range s.Positions(g.Trees[0], score, nil) {
			out = append(out, pos{p.Node.ID, p.Index, p.Score})
		}
		return out
	}
	// Step starts: root 2 (after 9; forked already) and 5; the child's 2
	// is its last token.
	want := []pos{{0, 5, (1.0 + 0.5) / 2}}
	got := positions(stream, search.ScoreStepEntropy)
	if len(got) != len(want) {
		t.Fatalf("step_entropy positions %v, want %v", got, want)
	}
	for i := range want {
		if got[i].node != want[i].node || got[i].index != want[i].index || math.Abs(got[i].score-want[i].score) > 1e-6 {
			t.Errorf("step_entropy positions %v, want %v", got, want)
		}
	}
	rnd := positions(stream, search.ScoreStepRandom)
	if len(rnd) != 1 || rnd[0].index != 5 || rnd[0].score < 0 || rnd[0].score >= 1 {
		t.Errorf("step_random positions %v, want a uniform at root 5", rnd)
	}
	// Without step ends every token is a step: step_entropy is entropy.
	plain := positions(search.ForkStream{}, search.ScoreStepEntropy)
	ent := positions(search.ForkStream{}, search.ScoreEntropy)
	if !slices.Equal(plain, ent) || len(plain) != 4+1 {
		t.Errorf("without step ends: step_entropy %v, entropy %v (want equal, 5 positions)", plain, ent)
	}
	// A branch's first token follows its parent's token before the fork.
	if !stream.StepStart(child, 0) || stream.StepStart(child, 1) || !stream.StepStart(child, 2) || !stream.StepStart(root, 0) {
		t.Error("StepStart across the fork")
	}
	if st := stream.StepEnd(root, 2); st != 5 {
		t.Errorf("StepEnd(root, 2) = %d, want 5", st)
	}
}

// checkFrontierGroup checks what every group of a step-level strategy
// must satisfy: at most its stated leaves and bound, branches at a step's
// first token, no response cut short.
func checkFrontierGroup(t *testing.T, st search.Strategy, g *search.Group, maxTokens int, budget int64) {
	t.Helper()
	bound, err := search.MaxGroupTokens(st, maxTokens, budget)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Leaves()) > st.Leaves() || g.Usage.GeneratedTokens > bound || g.Strategy != st.Name() {
		t.Fatalf("%s: %d leaves, %d tokens; stated %d leaves, bound %d", st.Name(), len(g.Leaves()), g.Usage.GeneratedTokens, st.Leaves(), bound)
	}
	for _, n := range g.Leaves() {
		if n.Parent != nil && !atStepStart(n) {
			t.Fatalf("%s: node %d forked at %d, not a step's first token (parent %v)", st.Name(), n.ID, n.ForkAt, n.Parent.Tokens)
		}
		switch {
		case n.Finish == search.FinishEOS && n.Tokens[len(n.Tokens)-1] == eos:
		case n.Finish == search.FinishLength && n.Start+len(n.Tokens) == maxTokens:
		default:
			t.Fatalf("%s: node %d cut short", st.Name(), n.ID)
		}
	}
}

func TestStepTree(t *testing.T) {
	st, err := search.NewStrategy("tree_grpo", map[string]string{"m": "3", "n": "2", "l": "2"})
	if err != nil {
		t.Fatal(err)
	}
	if st.Leaves() != 3*(1+2*2) || st.MaxGroupTokens(10) != 3*10+12*9 {
		t.Errorf("tree_grpo m=3 n=2 l=2: %d leaves, bound %d; want 15 and 138", st.Leaves(), st.MaxGroupTokens(10))
	}
	branches := 0
	for _, g := range generate(t, st, stepRequest(t, prompts(4), 24)) {
		checkFrontierGroup(t, st, g, 24, 0)
		for i, tr := range g.Trees {
			if len(tr.Nodes) > 1+2*2 {
				t.Errorf("tree %d has %d nodes, want <= 5", i, len(tr.Nodes))
			}
		}
		branches += g.Branches()
	}
	if branches == 0 {
		t.Error("no branch: the test tests nothing")
	}
}

func TestARPO(t *testing.T) {
	for _, tc := range []struct {
		params   map[string]string
		branches func(n int) bool // over 4 groups
	}{
		{map[string]string{"m": "6", "n": "2", "alpha": "0", "beta": "0"}, func(n int) bool { return n == 0 }},
		// every decided step branches: a group reaches m − n = 4 branches
		{map[string]string{"m": "6", "n": "2", "alpha": "1", "beta": "0", "z": "2"}, func(n int) bool { return n >= 3*4 }},
		{map[string]string{"m": "6", "n": "2", "alpha": "0.1", "beta": "2", "k": "3"}, func(n int) bool { return n > 0 }},
	} {
		st, err := search.NewStrategy("arpo", tc.params)
		if err != nil {
			t.Fatal(err)
		}
		a := st.(search.ARPO)
		branches := 0
		for _, g := range generate(t, st, stepRequest(t, prompts(4), 30)) {
			checkFrontierGroup(t, st, g, 30, 0)
			if len(g.Trees) != a.N {
				t.Errorf("%v: %d roots, want %d", tc.params, len(g.Trees), a.N)
			}
			for _, n := range g.Leaves() {
				if n.Parent == nil {
					continue
				}
				branches++
				// decided K tokens into the step, on the parent's own tokens
				if len(n.Parent.Tokens) < n.ForkAt+a.K || !n.HasForkScore || n.ForkScore < 0 || n.ForkScore > 1 {
					t.Errorf("%v: node %d forked at %d of %d parent tokens, probability %v", tc.params, n.ID, n.ForkAt, len(n.Parent.Tokens), n.ForkScore)
				}
			}
		}
		if !tc.branches(branches) {
			t.Errorf("%v: %d branches over 4 groups", tc.params, branches)
		}
	}
	for _, tc := range []struct{ params map[string]string }{
		{map[string]string{"m": "2", "n": "3"}}, {map[string]string{"alpha": "1.5"}}, {map[string]string{"beta": "x"}}, {map[string]string{"k": "0"}},
	} {
		if _, err := search.NewStrategy("arpo", tc.params); err == nil {
			t.Errorf("arpo %v: no error", tc.params)
		}
	}
}

func TestPivot(t *testing.T) {
	st, err := search.NewStrategy("pivot", map[string]string{"n": "5", "k": "3", "gamma": "1"})
	if err != nil {
		t.Fatal(err)
	}
	if st.Leaves() != 20 || st.MaxGroupTokens(10) != 50+15*9 {
		t.Errorf("pivot n=5 k=3: %d leaves, bound %d", st.Leaves(), st.MaxGroupTokens(10))
	}
	// A chain fails when it starts with an even token.
	failed := func(resp []int) bool { return resp[0]%2 == 0 }
	ps := prompts(4)
	for i := range ps {
		ps[i].Failed = failed
	}
	resampled, kept := 0, 0
	for _, g := range generate(t, st, stepRequest(t, ps, 24)) {
		checkFrontierGroup(t, st, g, 24, 0)
		for _, tr := range g.Trees {
			chain := tr.Root
			children := chain.Children
			switch {
			case !failed(chain.Response()) && len(children) > 0:
				t.Errorf("a correct chain was resampled")
			case failed(chain.Response()) && len(children) > 0:
				resampled++
				if len(children) != 3 {
					t.Errorf("a failed chain resampled %d times, want 3", len(children))
				}
				for _, c := range children {
					if c.ForkAt != children[0].ForkAt || len(c.Children) != 0 {
						t.Errorf("resamples not from one pivot")
					}
				}
			case !failed(chain.Response()):
				kept++
			}
		}
	}
	if resampled == 0 || kept == 0 {
		t.Errorf("%d chains resampled, %d correct: the test tests too little", resampled, kept)
	}
	// Without a verifier every chain counts as failed.
	for _, g := range generate(t, st, stepRequest(t, prompts(2), 24)) {
		for _, tr := range g.Trees {
			if len(tr.Nodes) == 1 && g.MissingForks == 0 {
				t.Errorf("a chain without a verifier was not resampled")
			}
		}
	}
}

// TestFrontierBudgetNeverExceeded is a property test over random
// parameters, step ends and budgets: a group of tree_grpo, arpo or pivot
// never exceeds the budget, its stated bound or its stated leaves, and no
// response is cut short.
func TestFrontierBudgetNeverExceeded(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	skipped := 0
	for trial := 0; trial < 60; trial++ {
		var st search.Strategy
		switch trial % 3 {
		case 0:
			st = search.StepTree{M: 1 + rng.IntN(4), N: 1 + rng.IntN(3), L: rng.IntN(3)}
		case 1:
			n := 1 + rng.IntN(4)
			st = search.ARPO{M: n + rng.IntN(8), N: n, Alpha: rng.Float64(), Beta: 2 * rng.Float64(), K: 1 + rng.IntN(3), Z: 1 + rng.IntN(3)}
		default:
			st = search.Pivot{N: 1 + rng.IntN(4), K: 1 + rng.IntN(4), Gamma: 3 * rng.Float64()}
		}
		maxTokens := 4 + rng.IntN(14)
		req := request(newSampler(t, hashDist(rng.Float64(), 0.3)), prompts(3), maxTokens)
		req.Seed = uint64(trial)
		req.StepEnds = []int{rng.IntN(vocab - 1)}
		if trial%5 == 0 {
			req.StepEnds = nil
		}
		if trial%4 != 0 {
			req.Budget = int64(maxTokens + rng.IntN(8*maxTokens))
		}
		for _, g := range generate(t, st, req) {
			if req.Budget > 0 && g.Usage.GeneratedTokens > req.Budget {
				t.Fatalf("%s %+v: generated %d > budget %d", st.Name(), st, g.Usage.GeneratedTokens, req.Budget)
			}
			for _, n := range g.Leaves() {
				if n.Parent != nil && req.StepEnds != nil && n.Parent.Tokens[n.ForkAt-1] != req.StepEnds[0] {
					t.Fatalf("%s: node %d not at a step start", st.Name(), n.ID)
				}
			}
			bound, _ := search.MaxGroupTokens(st, maxTokens, req.Budget)
			if len(g.Leaves()) > st.Leaves() || g.Usage.GeneratedTokens > bound || len(g.Leaves()) == 0 {
				t.Fatalf("%s %+v: %d leaves, %d tokens; stated %d leaves, bound %d", st.Name(), st, len(g.Leaves()), g.Usage.GeneratedTokens, st.Leaves(), bound)
			}
			skipped += g.Usage.SkippedBranches
		}
	}
	if skipped == 0 {
		t.Error("the budget never limited anything: the test tests nothing")
	}
}

// The step-level strategies are deterministic and independent of the
// batch, and their token counts agree with the policy's.
func TestFrontierDeterministicAndCounted(t *testing.T) {
	for _, st := range []search.Strategy{
		search.StepTree{M: 2, N: 2, L: 2},
		search.ARPO{M: 8, N: 2, Alpha: 0.3, Beta: 1, K: 2, Z: 2},
		search.Pivot{N: 3, K: 2, Gamma: 2},
	} {
		t.Run(st.Name(), func(t *testing.T) {
			run := func(ps []search.Prompt, seed uint64) ([]*search.Group, int64, int64) {
				req := stepRequest(t, ps, 20)
				req.Seed = seed
				s := newSampler(t, hashDist(0.3, 0.2))
				req.Sampler = s
				gs := generate(t, st, req)
				var gen, dec int64
				for _, g := range gs {
					gen += g.Usage.GeneratedTokens
					dec += g.Usage.DecodeTokens
				}
				c := s.Counters()
				if gen != c.SampledTokens || dec != c.DecodeTokens || s.Live() != 0 {
					t.Errorf("generated/decode %d/%d, policy counted %d/%d; %d states live", gen, dec, c.SampledTokens, c.DecodeTokens, s.Live())
				}
				return gs, gen, dec
			}
			all := prompts(4)
			a, _, _ := run(all, 1)
			b, _, _ := run(all, 1)
			if groupsJSON(t, a) != groupsJSON(t, b) {
				t.Error("same seed, different trees")
			}
			alone, _, _ := run([]search.Prompt{all[2]}, 1)
			if groupsJSON(t, alone) != groupsJSON(t, a[2:3]) {
				t.Error("a prompt's trees depend on the other prompts of the batch")
			}
			if c, _, _ := run(all, 2); groupsJSON(t, c) == groupsJSON(t, a) {
				t.Error("another seed, same trees")
			}
		})
	}
}

// The attention fork score on the real engine: every node records the
// attention its tokens received, forks happen at step starts, and each
// branch's score is the mean attention of the step it resamples, read
// from its parent. A sampler without attention makes no position
// eligible.
func TestAttentionScore(t *testing.T) {
	cfg := policy.Config{VocabSize: 12, Dim: 16, Hidden: 32, Layers: 2, Heads: 2, KVHeads: 2, MaxSeq: 32, NormEps: 1e-5, RopeTheta: 10000}
	m, err := policy.NewModel(cfg, 7)
	if err != nil {
		t.Fatal(err)
	}
	st := search.EntropyTree{M: 2, N: 2, L: 1, T: 1, Score: search.ScoreAttention}
	req := search.Request{
		Prompts: []search.Prompt{{Tokens: []int{1, 2, 3}, ID: 0}, {Tokens: []int{4, 5}, ID: 1}}, Sampler: policy.NewEngine(m),
		Sampling: policy.DefaultSampling, EOS: []int{11}, MaxTokens: 16, Seed: 5, StepEnds: []int{6, 7},
	}
	forks := 0
	stream := search.ForkStream{StepEnds: req.StepEnds}
	for _, g := range generate(t, st, req) {
		for _, n := range g.Nodes() {
			if len(n.Attention) != len(n.Tokens) || n.Attention[len(n.Tokens)-1] != 0 {
				t.Fatalf("node %d: attention %v for %d tokens", n.ID, n.Attention, len(n.Tokens))
			}
			if n.Parent == nil {
				continue
			}
			forks++
			p := n.Parent
			end := stream.StepEnd(p, n.ForkAt)
			want := 0.0
			for j := n.ForkAt; j < end; j++ {
				want += float64(p.Attention[j])
			}
			want /= float64(end - n.ForkAt)
			if !stream.StepStart(p, n.ForkAt) || math.Abs(n.ForkScore-want) > 1e-9 || want < 0 {
				t.Errorf("node %d forked at %d with score %v, want a step start and %v", n.ID, n.ForkAt, n.ForkScore, want)
			}
		}
	}
	if forks == 0 {
		t.Error("no fork: the test tests nothing")
	}
	req.Sampler = newSampler(t, hashDist(0.3, 0))
	for _, g := range generate(t, st, req) {
		if g.Branches() != 0 || g.MissingForks != 2*2 {
			t.Errorf("without attention: %d branches, %d missing forks; want 0 and 4", g.Branches(), g.MissingForks)
		}
	}
}
