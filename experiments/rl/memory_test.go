package rl

import (
	"context"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/search"
)

// BenchmarkRunPeakHeap is a short run of treerl_headline's shape, as the
// runner makes it: long_add (4 to 6 digits, rewritten) on the tiny model
// at max_position_embeddings 160, EPTree (2, 1, 1, 3) with the tree
// advantage, 8 prompts a step, and an evaluation of 200 prompts (greedy,
// then 4 samples each) before the first step, after the second and after
// the fourth. Besides ns/op it reports peak-heap-MB, the highest live heap
// (as the garbage collector measured it after each cycle) during the run,
// which is what the process's resident memory follows (the heap may grow
// to twice the live heap between collections at the default GOGC; the
// loop collects after each update, when the update's buffers are
// dropped): a change that makes runs hold more memory shows here.
func BenchmarkRunPeakHeap(b *testing.B) {
	base, err := benchBase()
	if err != nil {
		b.Fatal(err)
	}
	weights, err := policy.EncodeWeights(base.Model)
	if err != nil {
		b.Fatal(err)
	}
	tk, err := task.New("long_add", task.LongAddParams{MinDigits: 4, MaxDigits: 6, Rewrite: true})
	if err != nil {
		b.Fatal(err)
	}
	var peak uint64
	b.ResetTimer() // the base policy's pretraining is not the run
	for range b.N {
		m, err := policy.DecodeWeights(base.Model.Config, weights)
		if err != nil {
			b.Fatal(err)
		}
		st, err := search.NewStrategy("entropy_tree", map[string]string{"m": "2", "n": "1", "l": "1", "t": "3"})
		if err != nil {
			b.Fatal(err)
		}
		train := DefaultConfig()
		train.Steps, train.PromptsPerStep, train.Advantage, train.LR = 4, 8, "tree", 1e-4
		loop, err := New(Setup{Task: tk, Tokenizer: base.Tokenizer, Policy: m, Strategy: st, Sampling: policy.DefaultSampling, Train: train, Seed: 1})
		if err != nil {
			b.Fatal(err)
		}
		watch := watchLiveHeap()
		var ev Evaluator
		for step := 0; step <= train.Steps; step++ {
			if step%2 == 0 {
				if _, err := ev.Evaluate(m, base.Tokenizer, tk, EvalConfig{Prompts: 200, Samples: 4, K: 4}, policy.DefaultSampling, 1); err != nil {
					b.Fatal(err)
				}
			}
			if step < train.Steps {
				if _, err := loop.Step(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		}
		peak = max(peak, watch())
	}
	b.ReportMetric(float64(peak)/1e6, "peak-heap-MB")
}

// watchLiveHeap samples the live heap every millisecond until the function
// it returns is called, which returns the highest sample.
func watchLiveHeap() (stop func() uint64) {
	done, result := make(chan struct{}), make(chan uint64)
	go func() {
		sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		var peak uint64
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			peak = max(peak, sample[0].Value.Uint64())
			select {
			case <-done:
				result <- peak
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		return <-result
	}
}
