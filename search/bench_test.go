package search_test

import (
	"context"
	"testing"

	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/cputime"
	"github.com/rollout-rl/rollout/policy/policytest"
	"github.com/rollout-rl/rollout/search"
)

// FlatVsTree16 are the two strategies of the speed comparison: 16 leaves
// per prompt each.
var FlatVsTree16 = []search.Strategy{
	search.Flat{N: 16},
	search.EntropyTree{M: 4, N: 3, L: 1, T: 1, Score: search.ScoreEntropy}, // 4·(1+1·3·1) = 16
}

// BenchFlatVsTree runs flat N=16 against entropy_tree with 16 leaves on
// fresh samplers from newSampler and reports generated tokens per leaf
// ("tokens/leaf"), wall time per leaf ("ns/leaf") and per generated token
// ("ns/token"), and the process's CPU time per generated token
// ("cpu-ns/token": steadier than wall time when other processes share the
// machine; it counts both cores of a split pass). It is generic over the
// policy so the same comparison runs on the real transformer:
//
//	search_test.BenchFlatVsTree(b, func() policy.Sampler { ... }, req)
//
// req supplies prompts, EOS, max length and sampling; its Sampler is
// replaced.
func BenchFlatVsTree(b *testing.B, newSampler func() policy.Sampler, req search.Request) {
	for _, st := range FlatVsTree16 {
		b.Run(st.Name(), func(b *testing.B) {
			var tokens, leaves int64
			var wall float64
			cpu0 := cputime.Process()
			for i := 0; i < b.N; i++ {
				r := req
				r.Sampler = newSampler()
				r.Seed = uint64(i)
				c, err := search.MeasureLeafCost(context.Background(), st, r)
				if err != nil {
					b.Fatal(err)
				}
				tokens += c.GeneratedTokens
				leaves += int64(c.Leaves)
				wall += float64(c.Wall.Nanoseconds())
			}
			b.ReportMetric(float64(tokens)/float64(leaves), "tokens/leaf")
			b.ReportMetric(wall/float64(leaves), "ns/leaf")
			b.ReportMetric(wall/float64(tokens), "ns/token")
			if cpu := cputime.Process() - cpu0; cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(tokens), "cpu-ns/token")
			}
		})
	}
}

// busyDist is hashDist with a fixed amount of arithmetic per call, so that
// the test policy's wall time follows the positions it computes.
func busyDist() policytest.Dist {
	d := hashDist(0.05, 0.2)
	return func(tokens []int) []float64 {
		x := 1.0
		for i := 0; i < 2000; i++ {
			x = x*1.0000001 + 1e-9
		}
		p := d(tokens)
		p[0] += x * 1e-12
		return p
	}
}

func BenchmarkFlatVsTree(b *testing.B) {
	req := request(nil, prompts(8), 48)
	BenchFlatVsTree(b, func() policy.Sampler {
		s, err := policytest.New(vocab, busyDist())
		if err != nil {
			b.Fatal(err)
		}
		return s
	}, req)
}
