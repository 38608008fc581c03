package search_test

// The strategies on the real tiny transformer (random weights): the usage
// accounting against the engine's own counters and batch independence,
// run by go test, and the flat-vs-tree benchmark:
//
//	go test ./search -run XXX -bench Engine -benchtime 5x

import (
	"testing"

	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/search"
)

func BenchmarkEngineFlatVsTree(b *testing.B) {
	cfg, err := policy.Size("tiny")
	if err != nil {
		b.Fatal(err)
	}
	m, err := policy.NewModel(cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	var ps []search.Prompt
	for i := 0; i < 8; i++ {
		ps = append(ps, search.Prompt{Tokens: []int{policy.BOS, 5 + i, 6 + i, 7 + i}, ID: uint64(i)})
	}
	req := search.Request{
		Prompts: ps, Sampling: policy.DefaultSampling, EOS: []int{policy.EOS},
		MaxTokens: cfg.MaxSeq - 4, FLOPs: cfg.ForwardFLOPs,
	}
	// Each Generate gets a new engine over the previous one's KV caches,
	// as the RL loop's steps do, so what is timed is sampling, not the
	// first touch of fresh cache memory.
	var prev *policy.Engine
	BenchFlatVsTree(b, func() policy.Sampler {
		prev = policy.NewEngine(m, policy.WithCachesFrom(prev))
		return prev
	}, req)
}

// TestEngineCountsMatch checks the usage accounting against the engine's
// own counters, for every strategy.
func TestEngineCountsMatch(t *testing.T) {
	cfg, err := policy.Size("tiny")
	if err != nil {
		t.Fatal(err)
	}
	m, err := policy.NewModel(cfg, 2)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []search.Strategy{
		search.Flat{N: 4},
		search.EntropyTree{M: 2, N: 2, L: 2, T: 2, Score: search.ScoreEntropy},
		search.SegmentTree{S: 4, B: 2, W: 6},
	} {
		e := policy.NewEngine(m)
		req := search.Request{
			Prompts: []search.Prompt{{Tokens: []int{policy.BOS, 7, 8}, ID: 0}, {Tokens: []int{policy.BOS, 9}, ID: 1}},
			Sampler: e, Sampling: policy.DefaultSampling, EOS: []int{policy.EOS},
			MaxTokens: 24, Budget: 150, FLOPs: cfg.ForwardFLOPs,
		}
		groups := generate(t, st, req)
		var u search.Usage
		for _, g := range groups {
			u.GeneratedTokens += g.Usage.GeneratedTokens
			u.PrefillTokens += g.Usage.PrefillTokens
			u.DecodeTokens += g.Usage.DecodeTokens
			if g.Usage.GeneratedTokens > req.Budget {
				t.Errorf("%s: generated %d over budget %d", st.Name(), g.Usage.GeneratedTokens, req.Budget)
			}
		}
		c := e.Counters()
		if u.GeneratedTokens != c.SampledTokens || u.PrefillTokens != c.PrefillTokens || u.DecodeTokens != c.DecodeTokens {
			t.Errorf("%s: usage %d/%d/%d, engine counted %d/%d/%d", st.Name(),
				u.GeneratedTokens, u.PrefillTokens, u.DecodeTokens, c.SampledTokens, c.PrefillTokens, c.DecodeTokens)
		}
	}
}

// TestEngineBatchIndependent checks that a prompt's tree on the engine does
// not depend on the other prompts generated with it.
func TestEngineBatchIndependent(t *testing.T) {
	cfg, err := policy.Size("tiny")
	if err != nil {
		t.Fatal(err)
	}
	m, err := policy.NewModel(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	var ps []search.Prompt
	for i := 0; i < 5; i++ {
		ps = append(ps, search.Prompt{Tokens: []int{policy.BOS, 5 + i, 9}, ID: uint64(i)})
	}
	st := search.EntropyTree{M: 3, N: 2, L: 1, T: 2, Score: search.ScoreEntropy}
	run := func(ps []search.Prompt) []*search.Group {
		return generate(t, st, search.Request{
			Prompts: ps, Sampler: policy.NewEngine(m), Sampling: policy.DefaultSampling,
			EOS: []int{policy.EOS}, MaxTokens: 40, Seed: 5,
		})
	}
	all := run(ps)
	alone := run(ps[3:4])
	if groupsJSON(t, all[3:4]) != groupsJSON(t, alone) {
		t.Error("on the engine, a prompt's tree depends on the other prompts of the batch")
	}
}
