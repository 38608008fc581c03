package search_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/policytest"
	"github.com/rollout-rl/rollout/search"
	"github.com/rollout-rl/rollout/search/record"
)

type pos struct{ node, index int }

// eligible re-derives, independently of the package, whether index i of n
// may be forked in iteration iter (only nodes and forks of earlier
// iterations exist then).
func eligible(n *search.Node, i, iter int) bool {
	if n.Iteration >= iter || i < 1 || i > len(n.Tokens)-2 {
		return false
	}
	if n.Start+i >= answerStart(n.Response()) {
		return false
	}
	for _, c := range n.Children {
		if c.Iteration < iter && c.ForkAt == i {
			return false
		}
	}
	return true
}

func score(n *search.Node, i int, s search.ForkScore) float64 {
	if s == search.ScoreSurprisal {
		return -float64(n.LogProbs[i])
	}
	return float64(n.Entropies[i])
}

// TestForkPositionsAreTopN checks that every iteration forks each tree at
// exactly the top-N eligible positions by the fork score, T times each, and
// never at an ineligible position.
func TestForkPositionsAreTopN(t *testing.T) {
	for _, sc := range []search.ForkScore{search.ScoreEntropy, search.ScoreSurprisal, search.ScoreRandom} {
		for _, cfg := range []search.EntropyTree{
			{M: 3, N: 2, L: 1, T: 2},
			{M: 2, N: 3, L: 3, T: 1},
			{M: 1, N: 4, L: 2, T: 3},
		} {
			cfg.Score = sc
			t.Run(fmt.Sprintf("%s/%+v", sc, cfg), func(t *testing.T) {
				s := newSampler(t, hashDist(0.3, 0.5))
				groups := generate(t, cfg, request(s, prompts(3), 14))
				forks := 0
				for _, g := range groups {
					for _, tree := range g.Trees {
						for iter := 1; iter <= cfg.L; iter++ {
							var cand []search.Position
							for _, n := range tree.Nodes {
								for i := range n.Tokens {
									if eligible(n, i, iter) {
										cand = append(cand, search.Position{Node: n, Index: i, Score: score(n, i, sc)})
									}
								}
							}
							got := map[pos]int{}
							for _, n := range tree.Nodes {
								if n.Iteration != iter {
									continue
								}
								if !eligible(n.Parent, n.ForkAt, iter) {
									t.Fatalf("iteration %d forked node %d at ineligible %d", iter, n.Parent.ID, n.ForkAt)
								}
								got[pos{n.Parent.ID, n.ForkAt}]++
								forks++
							}
							want := min(cfg.N, len(cand))
							if len(got) != want {
								t.Fatalf("iteration %d: %d fork positions, want %d (of %d eligible)", iter, len(got), want, len(cand))
							}
							for p, k := range got {
								if k != cfg.T {
									t.Errorf("position %v forked %d times, want T = %d", p, k, cfg.T)
								}
							}
							if sc == search.ScoreRandom {
								continue
							}
							sort.SliceStable(cand, func(a, b int) bool {
								if cand[a].Score != cand[b].Score {
									return cand[a].Score > cand[b].Score
								}
								if cand[a].Node.ID != cand[b].Node.ID {
									return cand[a].Node.ID < cand[b].Node.ID
								}
								return cand[a].Index < cand[b].Index
							})
							for _, p := range cand[:want] {
								if got[pos{p.Node.ID, p.Index}] == 0 {
									t.Errorf("iteration %d: top position %d@%d (score %v) not forked; got %v", iter, p.Node.ID, p.Index, p.Score, got)
								}
							}
						}
					}
				}
				if forks == 0 {
					t.Fatal("no forks at all")
				}
			})
		}
	}
}

// TestTopPositionsIndependent checks TopPositions against a plain sort.
func TestTopPositionsIndependent(t *testing.T) {
	n := &search.Node{ID: 1}
	m := &search.Node{ID: 0}
	ps := []search.Position{{n, 3, 0.5}, {n, 1, 0.9}, {m, 7, 0.9}, {m, 2, 0.1}, {n, 2, 0.7}}
	got := search.TopPositions(ps, 3)
	want := "0@7 1@1 1@2"
	var s []string
	for _, p := range got {
		s = append(s, fmt.Sprintf("%d@%d", p.Node.ID, p.Index))
	}
	if strings.Join(s, " ") != want {
		t.Errorf("top 3 = %v, want %s", s, want)
	}
}

func TestLeavesPerPrompt(t *testing.T) {
	for _, cfg := range []search.EntropyTree{
		search.DefaultEntropyTree(),
		{M: 1, N: 1, L: 1, T: 1, Score: search.ScoreEntropy},
		{M: 2, N: 3, L: 2, T: 2, Score: search.ScoreSurprisal},
		{M: 4, N: 2, L: 0, T: 5, Score: search.ScoreEntropy},
		{M: 3, N: 2, L: 3, T: 1, Score: search.ScoreRandom},
	} {
		s := newSampler(t, hashDist(0, 0)) // no EOS, no answer: nothing limits
		groups := generate(t, cfg, request(s, prompts(2), 16))
		want := cfg.M * (1 + cfg.L*cfg.N*cfg.T)
		for _, g := range groups {
			if got := len(g.Leaves()); got != want || g.MissingForks != 0 {
				t.Errorf("%+v: %d leaves (missing forks %d), want M·(1+L·N·T) = %d", cfg, got, g.MissingForks, want)
			}
			if got := g.Branches(); got != want-cfg.M {
				t.Errorf("%+v: %d branches, want %d", cfg, got, want-cfg.M)
			}
			if got := g.Forks(); got != cfg.M*cfg.L*cfg.N {
				t.Errorf("%+v: %d forks, want %d", cfg, got, cfg.M*cfg.L*cfg.N)
			}
		}
	}
}

func TestFewerEligiblePositionsRecorded(t *testing.T) {
	// Responses of 4 tokens have 2 eligible positions (1 and 2); N = 5.
	s := newSampler(t, hashDist(0, 0))
	cfg := search.EntropyTree{M: 2, N: 5, L: 1, T: 1, Score: search.ScoreEntropy}
	g := generate(t, cfg, request(s, prompts(1), 4))[0]
	if g.Forks() != 4 || g.MissingForks != 6 {
		t.Errorf("forks %d, missing %d; want 4 and 6", g.Forks(), g.MissingForks)
	}
}

// TestCountsMatchPolicy checks that the usage of the groups adds up to what
// the policy itself counted, that a shared prefix is generated once, and
// that every state is released.
func TestCountsMatchPolicy(t *testing.T) {
	for _, st := range []search.Strategy{
		search.Flat{N: 5},
		search.DefaultEntropyTree(),
		search.EntropyTree{M: 2, N: 2, L: 3, T: 2, Score: search.ScoreRandom},
		search.SegmentTree{S: 3, B: 3, W: 7},
		search.DefaultSegmentTree(),
	} {
		t.Run(st.Name(), func(t *testing.T) {
			s := newSampler(t, hashDist(0.4, 0.4))
			groups := generate(t, st, request(s, prompts(4), 20))
			var u search.Usage
			shared := false
			for _, g := range groups {
				u.GeneratedTokens += g.Usage.GeneratedTokens
				u.PrefillTokens += g.Usage.PrefillTokens
				u.DecodeTokens += g.Usage.DecodeTokens
				own, full := 0, 0
				for _, n := range g.Leaves() {
					own += len(n.Tokens)
					full += len(n.Response())
				}
				if int64(own) != g.Usage.GeneratedTokens {
					t.Errorf("group %d: generated %d, node tokens %d", g.PromptID, g.Usage.GeneratedTokens, own)
				}
				shared = shared || full > own
			}
			c := s.Counters()
			if u.GeneratedTokens != c.SampledTokens || u.PrefillTokens != c.PrefillTokens || u.DecodeTokens != c.DecodeTokens {
				t.Errorf("usage generated/prefill/decode %d/%d/%d, policy counted %d/%d/%d",
					u.GeneratedTokens, u.PrefillTokens, u.DecodeTokens, c.SampledTokens, c.PrefillTokens, c.DecodeTokens)
			}
			if _, flat := st.(search.Flat); !flat && !shared {
				t.Error("no shared prefix in a tree strategy")
			}
			if s.Live() != 0 {
				t.Errorf("%d states not released", s.Live())
			}
		})
	}
}

func TestFLOPs(t *testing.T) {
	s := newSampler(t, hashDist(0, 0))
	req := request(s, []search.Prompt{{Tokens: []int{1, 2, 3}}}, 4)
	req.FLOPs = func(ctx int) int64 { return int64(ctx) }
	g := generate(t, search.Flat{N: 2}, req)[0]
	// prefill ctx 1+2+3; each response feeds 3 tokens at ctx 4, 5, 6.
	if g.Usage.FLOPs != 6+2*15 || g.Usage.DecodeTokens != 6 {
		t.Errorf("FLOPs %d, decode %d; want 36 and 6", g.Usage.FLOPs, g.Usage.DecodeTokens)
	}
	cfg, _ := policy.Size("tiny")
	tiny := cfg.ForwardFLOPs
	if got := tiny(64); got != 1851392 {
		t.Errorf("tiny forward at ctx 64 = %d, want 1,851,392 (2·860,160 + 4·4·128·64)", got)
	}
}

// TestBudgetNeverExceeded is a property test over random budgets and
// strategies: generated tokens never exceed the budget and no response is
// cut short of EOS or the maximum length.
func TestBudgetNeverExceeded(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	strategies := []search.Strategy{
		search.Flat{N: 6},
		search.DefaultEntropyTree(),
		search.EntropyTree{M: 3, N: 3, L: 2, T: 2, Score: search.ScoreSurprisal},
		search.SegmentTree{S: 2, B: 2, W: 8},
	}
	skipped := 0
	for trial := 0; trial < 60; trial++ {
		st := strategies[trial%len(strategies)]
		maxTokens := 4 + rng.IntN(12)
		s := newSampler(t, hashDist(rng.Float64(), 0.3))
		req := request(s, prompts(3), maxTokens)
		req.Seed = uint64(trial)
		req.Budget = int64(maxTokens + rng.IntN(8*maxTokens))
		for _, g := range generate(t, st, req) {
			if g.Usage.GeneratedTokens > req.Budget {
				t.Fatalf("%s: generated %d > budget %d", st.Name(), g.Usage.GeneratedTokens, req.Budget)
			}
			if len(g.Leaves()) == 0 {
				t.Fatalf("%s: budget %d >= max tokens but no response", st.Name(), req.Budget)
			}
			skipped += g.Usage.SkippedBranches
			for _, n := range g.Leaves() {
				switch {
				case n.Finish == search.FinishEOS && n.Tokens[len(n.Tokens)-1] == eos:
				case n.Finish == search.FinishLength && n.Start+len(n.Tokens) == maxTokens:
				default:
					t.Fatalf("%s: node %d cut short: finish %q, %d tokens from %d", st.Name(), n.ID, n.Finish, len(n.Tokens), n.Start)
				}
			}
		}
	}
	if skipped == 0 {
		t.Error("the budget never limited anything: the test tests nothing")
	}
}

func TestValidation(t *testing.T) {
	s := newSampler(t, hashDist(1, 1))
	ok := request(s, prompts(1), 8)
	cases := []struct {
		name string
		st   search.Strategy
		edit func(*search.Request)
		want string
	}{
		{"flat n", search.Flat{}, nil, "n = 0"},
		{"tree t", search.EntropyTree{M: 1, N: 1, L: 1, Score: search.ScoreEntropy}, nil, "t = 0"},
		{"tree n", search.EntropyTree{M: 1, L: 1, T: 1, Score: search.ScoreEntropy}, nil, "n = 0"},
		{"tree m", search.EntropyTree{N: 1, L: 1, T: 1, Score: search.ScoreEntropy}, nil, "m = 0"},
		{"tree l", search.EntropyTree{M: 1, N: 1, L: -1, T: 1, Score: search.ScoreEntropy}, nil, "l = -1"},
		{"tree score", search.EntropyTree{M: 1, N: 1, L: 1, T: 1, Score: "max"}, nil, `score = "max"`},
		{"segment b", search.SegmentTree{S: 2, B: 1, W: 4}, nil, "b = 1"},
		{"segment s", search.SegmentTree{S: 0, B: 2, W: 4}, nil, "s = 0"},
		{"budget", search.Flat{N: 2}, func(r *search.Request) { r.Budget = 7 }, "budget = 7 is smaller than one max-length response"},
		{"max tokens", search.Flat{N: 2}, func(r *search.Request) { r.MaxTokens = 0 }, "max_tokens = 0"},
		{"no sampler", search.Flat{N: 2}, func(r *search.Request) { r.Sampler = nil }, "sampler"},
		{"empty prompt", search.Flat{N: 2}, func(r *search.Request) { r.Prompts = []search.Prompt{{}} }, "prompt 0 is empty"},
		{"same ids", search.Flat{N: 2}, func(r *search.Request) { r.Prompts = []search.Prompt{{Tokens: []int{1}}, {Tokens: []int{2}}} }, "same id"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req := ok
			if tc.edit != nil {
				tc.edit(&req)
			}
			_, err := tc.st.Generate(context.Background(), req)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestNewStrategy(t *testing.T) {
	cases := []struct {
		name   string
		params map[string]string
		want   string // %+v of the strategy, or the error substring
		err    bool
	}{
		{"flat", nil, "{N:8}", false},
		{"flat", map[string]string{"n": "16"}, "{N:16}", false},
		{"entropy_tree", nil, "{M:6 N:2 L:1 T:2 Score:entropy As:}", false},
		{"entropy_tree", map[string]string{"score": "surprisal", "l": "2"}, "{M:6 N:2 L:2 T:2 Score:surprisal As:}", false},
		{"random_tree", map[string]string{"m": "4"}, "{M:4 N:2 L:1 T:2 Score:random As:random_tree}", false},
		{"segment_tree", map[string]string{"w": "16"}, "{S:8 B:2 W:16}", false},
		{"beam", nil, `unknown strategy "beam"`, true},
		{"flat", map[string]string{"m": "2"}, `flat: unknown parameter "m" (known: n)`, true},
		{"random_tree", map[string]string{"score": "entropy"}, `unknown parameter "score"`, true},
		{"entropy_tree", map[string]string{"t": "0"}, "entropy_tree: t = 0, want >= 1", true},
		{"entropy_tree", map[string]string{"t": "two"}, `t = "two" is not an integer`, true},
	}
	for _, tc := range cases {
		st, err := search.NewStrategy(tc.name, tc.params)
		switch {
		case tc.err && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s %v: error %v, want %q", tc.name, tc.params, err, tc.want)
		case !tc.err && err != nil:
			t.Errorf("%s %v: %v", tc.name, tc.params, err)
		case !tc.err && fmt.Sprintf("%+v", st) != tc.want:
			t.Errorf("%s %v = %+v, want %s", tc.name, tc.params, st, tc.want)
		case !tc.err && st.Name() != tc.name:
			t.Errorf("name %q, want %q", st.Name(), tc.name)
		}
	}
}

func groupsJSON(t *testing.T, gs []*search.Group) string {
	var b bytes.Buffer
	for _, g := range gs {
		if err := g.Record("", record.IDs).WriteJSON(&b); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// TestDeterministic checks that the same seed gives the same trees, whatever
// the other prompts of the batch, and another seed other trees.
func TestDeterministic(t *testing.T) {
	for _, st := range []search.Strategy{
		search.Flat{N: 4},
		search.EntropyTree{M: 2, N: 2, L: 2, T: 2, Score: search.ScoreRandom},
		search.SegmentTree{S: 3, B: 2, W: 6},
	} {
		t.Run(st.Name(), func(t *testing.T) {
			run := func(ps []search.Prompt, seed uint64) []*search.Group {
				req := request(newSampler(t, hashDist(0.5, 0.5)), ps, 16)
				req.Seed = seed
				return generate(t, st, req)
			}
			all := prompts(4)
			a := run(all, 1)
			b := run(all, 1)
			if groupsJSON(t, a) != groupsJSON(t, b) {
				t.Error("same seed, different trees")
			}
			alone := run([]search.Prompt{all[2]}, 1)
			if groupsJSON(t, alone) != groupsJSON(t, a[2:3]) {
				t.Error("a prompt's trees depend on the other prompts of the batch")
			}
			if groupsJSON(t, run(all, 2)) == groupsJSON(t, a) {
				t.Error("another seed, same trees")
			}
		})
	}
}

// TestOneBatchedStepPerToken checks that all groups advance together.
func TestOneBatchedStepPerToken(t *testing.T) {
	s := newSampler(t, hashDist(0, 0))
	generate(t, search.Flat{N: 3}, request(s, prompts(4), 5))
	if s.Steps() != 5 || s.MaxBatch() != 12 {
		t.Errorf("flat: %d steps of at most %d states, want 5 of 12", s.Steps(), s.MaxBatch())
	}
	s = newSampler(t, hashDist(0, 0))
	cfg := search.EntropyTree{M: 2, N: 1, L: 1, T: 1, Score: search.ScoreEntropy}
	generate(t, cfg, request(s, prompts(3), 6))
	// roots: 6 steps of 6 states; branches: at most 5 steps of 6 states.
	if s.MaxBatch() != 6 || s.Steps() > 11 {
		t.Errorf("entropy tree: %d steps of at most %d states, want <= 11 of 6", s.Steps(), s.MaxBatch())
	}
}

// TestFlatFollowsPolicy checks by a chi-square test that flat responses
// follow the policy's distribution over whole responses.
func TestFlatFollowsPolicy(t *testing.T) {
	// Vocabulary {0, 1, eos=2}; the second token depends on the first.
	dist := func(tokens []int) []float64 {
		switch tokens[len(tokens)-1] {
		case 0:
			return []float64{0.1, 0.6, 0.3}
		case 1:
			return []float64{0.5, 0.25, 0.25}
		}
		return []float64{0.5, 0.3, 0.2} // after the prompt
	}
	s, err := policytest.New(3, dist)
	if err != nil {
		t.Fatal(err)
	}
	req := search.Request{
		Prompts: []search.Prompt{{Tokens: []int{2}}}, Sampler: s, Sampling: policy.DefaultSampling,
		EOS: []int{2}, MaxTokens: 2, Seed: 9,
	}
	const n = 3000
	g := generate(t, search.Flat{N: n}, req)[0]
	want := map[string]float64{
		"[2]": 0.2, "[0 0]": 0.05, "[0 1]": 0.3, "[0 2]": 0.15, "[1 0]": 0.15, "[1 1]": 0.075, "[1 2]": 0.075,
	}
	counts := map[string]int{}
	for _, l := range g.Leaves() {
		counts[fmt.Sprint(l.Response())]++
	}
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	stat := 0.0
	for _, k := range keys {
		e := want[k] * n
		d := float64(counts[k]) - e
		stat += d * d / e
		delete(counts, k)
	}
	if len(counts) != 0 {
		t.Fatalf("impossible responses: %v", counts)
	}
	if p := (distuv.ChiSquared{K: float64(len(want) - 1)}).Survival(stat); p < 0.001 {
		t.Errorf("chi-square %v, p = %g", stat, p)
	}
}

// TestSegmentTree checks widths, fork positions and the width hand-over.
func TestSegmentTree(t *testing.T) {
	s := newSampler(t, hashDist(0, 0))
	g := generate(t, search.SegmentTree{S: 2, B: 2, W: 4}, request(s, prompts(1), 8))[0]
	if len(g.Leaves()) != 4 || g.Forks() != 3 {
		t.Errorf("%d leaves, %d forks; want 4 and 3", len(g.Leaves()), g.Forks())
	}
	for _, n := range g.Leaves() {
		if n.Parent != nil && (n.Start%2 != 0 || n.Iteration != n.Start/2) {
			t.Errorf("node %d starts at %d (iteration %d), want a multiple of S = 2", n.ID, n.Start, n.Iteration)
		}
	}
	// With early ends, width is conserved: leaves + width nobody could take.
	for seed := uint64(0); seed < 20; seed++ {
		s := newSampler(t, hashDist(0.6, 0.3))
		req := request(s, prompts(2), 12)
		req.Seed = seed
		cfg := search.SegmentTree{S: 2, B: 3, W: 9}
		for _, g := range generate(t, cfg, req) {
			if got := len(g.Leaves()) + g.MissingForks; got != cfg.W {
				t.Errorf("seed %d: %d leaves + %d lost width, want W = %d", seed, len(g.Leaves()), g.MissingForks, cfg.W)
			}
			checkSegmentForks(t, g, cfg)
			for _, n := range g.Leaves() {
				if prefix := n.Response()[:n.Start]; n.Parent != nil && answerStart(prefix) < len(prefix) {
					t.Errorf("seed %d: node %d split off after the answer began: %v", seed, n.ID, prefix)
				}
			}
		}
	}
}

// TestSegmentTreeShape checks, for several (S, B, W) with nothing ending
// early, that W leaves are made, that the number of paths at every response
// index is what splitting every share at every boundary gives, and the fork
// rules of checkSegmentForks.
func TestSegmentTreeShape(t *testing.T) {
	for _, cfg := range []search.SegmentTree{
		{S: 4, B: 2, W: 8}, {S: 2, B: 2, W: 4}, {S: 3, B: 3, W: 9}, {S: 2, B: 3, W: 7},
		{S: 4, B: 2, W: 5}, {S: 1, B: 2, W: 8}, {S: 5, B: 4, W: 6}, {S: 3, B: 2, W: 1},
	} {
		// widths[k] are the shares after k boundaries.
		widths := [][]int{{cfg.W}}
		for last := widths[0]; len(last) < cfg.W; last = widths[len(widths)-1] {
			var next []int
			for _, w := range last {
				k := min(cfg.B, w)
				for j := 0; j < k; j++ {
					next = append(next, w/k+btoi(j < w%k))
				}
			}
			widths = append(widths, next)
		}
		maxTokens := cfg.S*len(widths) + 2
		s := newSampler(t, hashDist(0, 0))
		for _, g := range generate(t, cfg, request(s, prompts(2), maxTokens)) {
			if len(g.Leaves()) != cfg.W || g.MissingForks != 0 {
				t.Errorf("%+v: %d leaves (%d lost width), want W = %d", cfg, len(g.Leaves()), g.MissingForks, cfg.W)
			}
			for i := 0; i < maxTokens; i++ {
				want := len(widths[min(i/cfg.S, len(widths)-1)])
				got := 0
				for _, n := range g.Nodes() {
					if n.Start <= i && i < n.Start+len(n.Tokens) {
						got++
					}
				}
				if got != want {
					t.Errorf("%+v: %d paths at response index %d, want %d", cfg, got, i, want)
				}
			}
			checkSegmentForks(t, g, cfg)
		}
	}
}

// checkSegmentForks checks that every branch of a segment-tree group forks
// at a positive multiple of S with Iteration = its boundary index, that a
// node has at most B−1 children at one position, and that along every
// response the fork points strictly increase: a path splits at most once per
// boundary.
func checkSegmentForks(t *testing.T, g *search.Group, cfg search.SegmentTree) {
	t.Helper()
	for _, n := range g.Nodes() {
		if n.Parent != nil && (n.Start <= 0 || n.Start%cfg.S != 0 || n.Iteration != n.Start/cfg.S) {
			t.Errorf("%+v: node %d forks at %d (iteration %d), want a positive multiple of S", cfg, n.ID, n.Start, n.Iteration)
		}
		at := map[int]int{}
		for _, c := range n.Children {
			if at[c.ForkAt]++; at[c.ForkAt] > cfg.B-1 {
				t.Errorf("%+v: node %d has %d children at %d, want at most B-1", cfg, n.ID, at[c.ForkAt], c.ForkAt)
			}
		}
		for m := n; m.Parent != nil; m = m.Parent {
			if m.Start <= m.Parent.Start {
				t.Errorf("%+v: node %d forks at %d off node %d that forked at %d: two splits at one boundary", cfg, m.ID, m.Start, m.Parent.ID, m.Parent.Start)
			}
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestCancel(t *testing.T) {
	s := newSampler(t, hashDist(0, 0))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := (search.Flat{N: 2}).Generate(ctx, request(s, prompts(2), 8)); err == nil {
		t.Error("cancelled context: no error")
	}
	if s.Live() != 0 {
		t.Errorf("%d states not released after cancel", s.Live())
	}
}

// plainSampler hides the optional PrefillBatch of the sampler it wraps.
type plainSampler struct{ policy.Sampler }

func TestPrefillPathsAgree(t *testing.T) {
	st := search.EntropyTree{M: 2, N: 2, L: 1, T: 2, Score: search.ScoreEntropy}
	batched := newSampler(t, hashDist(0.3, 0.3))
	single := newSampler(t, hashDist(0.3, 0.3))
	a := generate(t, st, request(batched, prompts(3), 10))
	b := generate(t, st, request(plainSampler{single}, prompts(3), 10))
	if groupsJSON(t, a) != groupsJSON(t, b) {
		t.Error("batched and one-by-one prefill give different trees")
	}
	if batched.Counters() != single.Counters() || single.Live() != 0 {
		t.Errorf("counters %+v vs %+v, %d states live", batched.Counters(), single.Counters(), single.Live())
	}
}

// liveWatcher records, at every Step, how many states are alive beyond the
// ones being stepped.
type liveWatcher struct {
	*policytest.Sampler
	idle []int
}

func (w *liveWatcher) Step(states []policy.State, cfg policy.Sampling, out []policy.Token) error {
	w.idle = append(w.idle, w.Live()-len(states))
	return w.Sampler.Step(states, cfg, out)
}

// TestStatesReleasedEarly checks that finished states that will not be
// forked again are released at once, not at the end of the group.
func TestStatesReleasedEarly(t *testing.T) {
	w := &liveWatcher{Sampler: newSampler(t, hashDist(0.5, 0))}
	generate(t, search.Flat{N: 4}, request(w, prompts(3), 12))
	for i, n := range w.idle {
		if n != 0 {
			t.Fatalf("flat, step %d: %d idle states alive", i, n)
		}
	}
	w = &liveWatcher{Sampler: newSampler(t, hashDist(0, 0))}
	generate(t, search.EntropyTree{M: 2, N: 1, L: 1, T: 1, Score: search.ScoreEntropy}, request(w, prompts(1), 6))
	// 6 steps for the roots, then the branches: their parents are released.
	if len(w.idle) < 7 || w.idle[len(w.idle)-1] != 0 {
		t.Errorf("entropy tree: idle states per step %v, want 0 in the last iteration", w.idle)
	}
}
