package reward

import (
	"testing"

	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
)

// BenchmarkScoreTiny scores 64 demonstrations of "add" (3 digits, about 23
// tokens each) with a tiny-size reward model: the model term of one RL
// step's rewards.
func BenchmarkScoreTiny(b *testing.B) {
	cfg, err := policy.Size("tiny")
	if err != nil {
		b.Fatal(err)
	}
	base, err := policy.NewModel(cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	m, err := NewModel(base, policy.DefaultTokenizer())
	if err != nil {
		b.Fatal(err)
	}
	tk, err := task.New("add", nil)
	if err != nil {
		b.Fatal(err)
	}
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
