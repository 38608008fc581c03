package rl

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/cputime"
	"github.com/rollout-rl/rollout/search"
)

// BenchmarkAsyncLoop is the loop's throughput, synchronous (k=0) and
// with asynchronous rollouts of staleness 1 and 2 (train.async), on the
// tiny model (random weights) with GRPO's flat groups of 8 on two-digit
// addition, 8 prompts a step, every group trained on: sampled tokens per
// second of wall time (tok/s) and per second of the process's CPU time
// (tok/cpu-s), over b.N steps, the first one's sampling, which nothing
// overlaps, included. The policy's team has GOMAXPROCS cores; the
// asynchronous loops give half to sampling and half to the updates.
func BenchmarkAsyncLoop(b *testing.B) {
	for _, k := range []int{0, 1, 2} {
		b.Run(fmt.Sprintf("k=%d", k), func(b *testing.B) {
			tk, err := task.New("add", task.AddParams{Digits: 2, Scratchpad: true})
			if err != nil {
				b.Fatal(err)
			}
			cfg, _ := policy.Size("tiny")
			m, err := policy.NewModel(cfg, 1)
			if err != nil {
				b.Fatal(err)
			}
			st, _ := search.NewStrategy("flat", map[string]string{"n": "8"})
			train := DefaultConfig()
			train.Steps, train.FilterGroups, train.Async = b.N, false, k
			loop, err := New(Setup{Task: tk, Tokenizer: policy.DefaultTokenizer(), Policy: m, Strategy: st, Sampling: policy.DefaultSampling, Train: train, Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			defer loop.Close()
			var tokens, overlap float64
			b.ResetTimer()
			start, cpu0 := time.Now(), cputime.Process()
			for !loop.Done() {
				res, err := loop.Step(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				tokens += res.Metrics["budget/tokens"]
				overlap += res.Metrics["timing_s/overlap"]
			}
			wall, cpu := time.Since(start), cputime.Process()-cpu0
			b.StopTimer()
			b.ReportMetric(tokens/wall.Seconds(), "tok/s")
			if cpu > 0 {
				b.ReportMetric(tokens/cpu.Seconds(), "tok/cpu-s")
			}
			b.ReportMetric(overlap/wall.Seconds(), "overlap/wall")
		})
	}
}
