package policy

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/rollout-rl/rollout/policy/cputime"
	"github.com/rollout-rl/rollout/policy/internal/kernel"
	"github.com/rollout-rl/rollout/policy/team"
)

// The benchmark workloads: W1 samples one sequence, W2 64 at once, from a
// 16-token prompt to the model's max length at temperature 1; W3 is one
// training step (forward, backward, Adam) on 64 sequences of max length.
// Each reports tokens/s (sampled tokens for W1 and W2, trained positions
// for W3). W1 and W2 run every size with the float32 engine ("tiny") and
// the int8 one ("tiny_int8"), so that the two compare in one run.

const benchPromptLen = 16

func benchModel(b *testing.B, size string) *Model {
	cfg, err := Size(size)
	if err != nil {
		b.Fatal(err)
	}
	m, err := NewModel(cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	return m
}

// benchSizes are the sub-benchmarks of W1 and W2: a model size, and
// whether the engine samples from the int8 copy.
var benchSizes = []struct {
	name, size string
	int8       bool
}{
	{"tiny", "tiny", false}, {"small", "small", false}, {"medium", "medium", false},
	{"tiny_int8", "tiny", true}, {"small_int8", "small", true}, {"medium_int8", "medium", true},
}

func benchRollout(b *testing.B, size string, int8 bool, batch int) {
	m := benchModel(b, size)
	var opts []EngineOption
	if int8 {
		opts = append(opts, WithInt8())
	}
	e := NewEngine(m, opts...)
	rng := rand.New(rand.NewPCG(1, 2))
	prompts := make([][]int, batch)
	streams := make([]Stream, batch)
	for i := range prompts {
		for j := 0; j < benchPromptLen; j++ {
			prompts[i] = append(prompts[i], 4+rng.IntN(m.Config.VocabSize-4))
		}
		streams[i] = Stream{Seed: 1, ID: uint64(i)}
	}
	newTokens := m.Config.MaxSeq - benchPromptLen
	out := make([]Token, batch)
	b.ResetTimer()
	cpu0 := cputime.Process()
	for it := 0; it < b.N; it++ {
		states, err := e.PrefillBatch(prompts, streams)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < newTokens; i++ {
			if err := e.Step(states, DefaultSampling, out); err != nil {
				b.Fatal(err)
			}
		}
		for _, s := range states {
			s.Release()
		}
	}
	tokens := float64(b.N * batch * newTokens)
	b.ReportMetric(tokens/b.Elapsed().Seconds(), "tok/s")
	// Per second of CPU time of the process (both cores when a pass is
	// split): less disturbed than wall time when other processes share the
	// machine.
	if cpu := cputime.Process() - cpu0; cpu > 0 {
		b.ReportMetric(tokens/cpu.Seconds(), "tok/cpu-s")
	}
}

func BenchmarkW1(b *testing.B) {
	for _, bs := range benchSizes {
		b.Run(bs.name, func(b *testing.B) { benchRollout(b, bs.size, bs.int8, 1) })
	}
}

func BenchmarkW2(b *testing.B) {
	for _, bs := range benchSizes {
		b.Run(bs.name, func(b *testing.B) { benchRollout(b, bs.size, bs.int8, 64) })
	}
}

// BenchmarkWeightBandwidth is the memory-bandwidth bound of W1 in float32:
// how fast one goroutine, and two each on half, stream a buffer the size of
// a model's float32 weights through the matrix-vector kernel (one input
// row times the buffer as rows of 256 weights, the loads of a decoding
// step's products), as GB/s and as the tokens per second of a decoding
// step that did nothing but read every weight once.
func BenchmarkWeightBandwidth(b *testing.B) {
	for _, size := range []string{"tiny", "small", "medium"} {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/%d", size, workers), func(b *testing.B) {
				cfg, err := Size(size)
				if err != nil {
					b.Fatal(err)
				}
				const k = 256
				rows := int(cfg.NumParams()) / k
				w := make([]float32, rows*k)
				for i := range w {
					w[i] = float32(i%7) / 7
				}
				x, y := make([]float32, k), make([]float32, rows)
				t := team.New(workers)
				defer t.Close()
				b.ResetTimer()
				for range b.N {
					t.Run(workers, workers, func(_, c int) {
						lo, hi := rows*c/workers, rows*(c+1)/workers
						kernel.MatMulNT(nil, y[lo:hi], x, w[lo*k:hi*k], 1, hi-lo, k, false)
					})
				}
				bytes := 4 * float64(len(w)) * float64(b.N)
				b.ReportMetric(bytes/b.Elapsed().Seconds()/1e9, "GB/s")
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tok/s")
			})
		}
	}
}

// BenchmarkDecodeBatch is W2 on the tiny model at batch sizes from 1 to
// 128: how the cost of a decoding step per token falls with the number of
// states it carries (batch 1, one state per step, is also where helpers
// that spin between passes cost the most CPU per token). A tree's steps carry fewer states than flat
// sampling's (its groups start from M roots and grow by forking), so this
// is what decides whether a tree token costs what a flat one does.
func BenchmarkDecodeBatch(b *testing.B) {
	for _, n := range []int{1, 4, 8, 16, 32, 64, 128} {
		b.Run(fmt.Sprintf("tiny_%d", n), func(b *testing.B) { benchRollout(b, "tiny", false, n) })
	}
}

// BenchmarkW3's sub-benchmarks: tiny and small train with the float32
// products, tiny_bf16 and small_bf16 with the BF16 ones
// (Model.SetBF16Training; float32 where the CPU lacks AVX512_BF16).
func BenchmarkW3(b *testing.B) {
	for _, bs := range []struct {
		name, size string
		bf16       bool
	}{{"tiny", "tiny", false}, {"small", "small", false}, {"tiny_bf16", "tiny", true}, {"small_bf16", "small", true}} {
		b.Run(bs.name, func(b *testing.B) {
			m := benchModel(b, bs.size)
			m.SetBF16Training(bs.bf16)
			tr, err := NewTrainer(m, TrainConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8})
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 3))
			seqs := make([][]int, 64)
			from := make([]int, 64)
			for i := range seqs {
				for j := 0; j < m.Config.MaxSeq; j++ {
					seqs[i] = append(seqs[i], rng.IntN(m.Config.VocabSize))
				}
				from[i] = 1
			}
			// FLOPs of a step: forward and backward, three times the
			// forward pass's matrix products (Batch.ForwardFLOPs: causal
			// attention over each position's context), the count the FLOP
			// bounds in results/performance.md divide.
			probe, err := m.NewBatch(seqs)
			if err != nil {
				b.Fatal(err)
			}
			stepFLOPs := 3 * float64(probe.ForwardFLOPs(m.Config))
			b.ResetTimer()
			cpu0 := cputime.Process()
			for it := 0; it < b.N; it++ {
				batch, err := m.NewBatch(seqs)
				if err != nil {
					b.Fatal(err)
				}
				loss, _, err := m.NLLLoss(batch, from)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := tr.Step(loss); err != nil {
					b.Fatal(err)
				}
			}
			tokens := float64(b.N * 64 * m.Config.MaxSeq)
			b.ReportMetric(tokens/b.Elapsed().Seconds(), "tok/s")
			b.ReportMetric(stepFLOPs*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			// Per second of CPU time (see benchRollout): a steadier figure
			// when other processes share the machine.
			if cpu := cputime.Process() - cpu0; cpu > 0 {
				b.ReportMetric(tokens/cpu.Seconds(), "tok/cpu-s")
				b.ReportMetric(stepFLOPs*float64(b.N)/cpu.Seconds()/1e9, "GFLOP/s-cpu")
			}
		})
	}
}

func Example() {
	cfg, _ := Size("tiny")
	m, _ := NewModel(cfg, 1)
	tok := DefaultTokenizer()
	prompt, _ := tok.EncodePrompt("12+34")
	e := NewEngine(m)
	root, _ := e.Prefill(prompt, Stream{Seed: 7})
	samples, _ := Generate(e, root, 3, DefaultSampling, 7, cfg.MaxSeq)
	fmt.Println(len(samples), "samples;", e.Counters().PrefillTokens, "prompt tokens")
	// Output: 3 samples; 7 prompt tokens
}
