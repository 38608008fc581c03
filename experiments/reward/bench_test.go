package reward

import (
	"math/rand/v2"
	"testing"

	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/cputime"
)

// BenchmarkScoreTiny scores 64 demonstrations of "add" (3 digits, about 23
// tokens each) with a tiny-size reward model: the model term of one RL
// step's rewards.
func BenchmarkScoreTiny(b *testing.B) {
	m, tk := tinyBench(b)
	seqs := make([][]int, 64)
	for i := range seqs {
		p, err := tk.Prompt(task.Train, 1, i)
		if err != nil {
			b.Fatal(err)
		}
		if seqs[i], err = m.Encode(p.Text, p.Demo); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		if _, err := m.ScoreTokens(seqs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(seqs))/b.Elapsed().Seconds(), "responses/s")
}

// BenchmarkSelectionScores scores the 12 candidates of each of 16 "add"
// prompts (192 responses of mixed lengths) with a tiny-size reward model, as
// `rollout ttc --reward-model` does at N = 12: one response a forward (the
// way ttc scored before) against SelectionScores' batched forwards.
func BenchmarkSelectionScores(b *testing.B) {
	m, tk := tinyBench(b)
	rng := rand.New(rand.NewPCG(1, 2))
	var prompts []task.Prompt
	var responses []string
	for i := range 16 {
		p, err := tk.Prompt(task.Eval, 1, i)
		if err != nil {
			b.Fatal(err)
		}
		for j := range 12 {
			r := p.Demo
			switch j % 3 {
			case 1:
				r = tk.FlawedDemo(p, rng)
			case 2:
				r = r[:len(r)/2]
			}
			prompts, responses = append(prompts, p), append(responses, r)
		}
	}
	for _, bc := range []struct {
		name  string
		score func() error
	}{
		{"one_at_a_time", func() error {
			for i, r := range responses {
				if _, err := m.Scores([]Pair{{prompts[i].Text, r}}); err != nil {
					return err
				}
			}
			return nil
		}},
		{"batched", func() error {
			_, err := m.SelectionScores(prompts, responses)
			return err
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cpu0 := cputime.Process()
			for range b.N {
				if err := bc.score(); err != nil {
					b.Fatal(err)
				}
			}
			n := float64(b.N * len(responses))
			b.ReportMetric(n/b.Elapsed().Seconds(), "responses/s")
			// Per second of CPU time: steadier than wall time on a shared machine.
			if cpu := cputime.Process() - cpu0; cpu > 0 {
				b.ReportMetric(n/cpu.Seconds(), "responses/cpu-s")
			}
		})
	}
}

// tinyBench is the benchmarks' reward model, of tiny size with random
// weights, and their task, add with its default parameters.
func tinyBench(b *testing.B) (*Model, task.Task) {
	b.Helper()
	cfg, err := policy.Size("tiny")
	if err != nil {
		b.Fatal(err)
	}
	tk, err := task.New("add", nil)
	if err != nil {
		b.Fatal(err)
	}
	return modelOf(b, cfg, 1), tk
}
