package search_test

import (
	"testing"

	"github.com/rollout-rl/rollout/search"
)

// No group costs more than MaxGroupTokens, with and without a per-prompt
// budget and early ends; the bounds are the documented sums.
func TestMaxGroupTokens(t *testing.T) {
	const maxTokens = 12
	for _, st := range []search.Strategy{
		search.Flat{N: 5},
		search.EntropyTree{M: 2, N: 2, L: 2, T: 2, Score: search.ScoreEntropy},
		search.SegmentTree{S: 3, B: 2, W: 6},
		search.SegmentTree{S: 1, B: 3, W: 7},
	} {
		for _, budget := range []int64{0, 30} {
			bound, err := search.MaxGroupTokens(st, maxTokens, budget)
			if err != nil {
				t.Fatal(err)
			}
			for seed := uint64(0); seed < 10; seed++ {
				for _, eosWeight := range []float64{0, 0.5} {
					req := request(newSampler(t, hashDist(eosWeight, 0)), prompts(3), maxTokens)
					req.Seed, req.Budget, req.AnswerStart = seed, budget, nil
					for _, g := range generate(t, st, req) {
						if g.Usage.GeneratedTokens > bound {
							t.Errorf("%s budget %d seed %d: %d tokens, bound %d", st.Name(), budget, seed, g.Usage.GeneratedTokens, bound)
						}
					}
				}
			}
		}
	}
	if n, _ := search.MaxGroupTokens(search.Flat{N: 5}, 12, 0); n != 60 {
		t.Errorf("flat: %d, want 60", n)
	}
	if n, _ := search.MaxGroupTokens(search.SegmentTree{S: 3, B: 2, W: 6}, 12, 0); n != 12+5*9 {
		t.Errorf("segment tree: %d, want %d", n, 12+5*9)
	}
	if n, _ := search.MaxGroupTokens(&search.EntropyTree{M: 2, N: 2, L: 2, T: 2}, 12, 50); n != 50 {
		t.Errorf("entropy tree under budget 50: %d, want 50", n)
	}
	if _, err := search.MaxGroupTokens(search.Flat{N: 1}, 0, 0); err == nil {
		t.Error("max_tokens 0: no error")
	}
}
