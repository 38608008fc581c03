package rl

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/nlpodyssey/spago/mat"

	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/cputime"
)

// An Evaluator kept across evaluations gives, bit for bit, what a new one
// gives, when the policy's weights change in place between evaluations
// (by an RL step, then by drawing new weights).
func TestEvaluatorMatchesFreshEvaluations(t *testing.T) {
	s := smallSetup(t, Config{Steps: 1, PromptsPerStep: 2})
	loop, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	cfg := EvalConfig{Every: 1, Prompts: 12, Samples: 3, K: 2}
	var ev Evaluator
	var results []EvalResult
	for round := range 3 {
		switch round {
		case 1:
			if _, err := loop.Step(context.Background()); err != nil {
				t.Fatal(err)
			}
		case 2:
			rng := rand.New(rand.NewPCG(uint64(round), 1))
			for _, p := range s.Policy.NamedParams() {
				if len(p.Shape) == 2 {
					v := mat.Data[float32](p.Param.Value())
					for i := range v {
						v[i] = float32(0.3 * rng.NormFloat64())
					}
				}
			}
		}
		got, err := ev.Evaluate(s.Policy, s.Tokenizer, s.Task, cfg, s.Sampling, 7)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Evaluate(s.Policy, s.Tokenizer, s.Task, cfg, s.Sampling, 7)
		if err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Fatalf("evaluation %d: %+v with the kept evaluator, %+v with a new one", round, got, want)
		}
		results = append(results, got)
	}
	if results[2] == results[0] {
		t.Fatalf("new weights changed no metric (%+v): the test cannot see stale weights", results[0])
	}
}

// BenchmarkEvaluateTwice is two successive evaluations of a run, with a
// change of the weights between them (as an RL step makes): 200 long_add
// prompts (4 to 6 digits, rewritten), greedy and 4 samples each at
// temperature 1, on the tiny model at max_position_embeddings 160 (the
// shape of experiments/configs/treerl_headline.yaml) with random weights.
// "fresh" evaluates with Evaluate, a new engine and new caches each time;
// "evaluator" with one Evaluator, as the runner does. Besides ns/op (wall
// time of the two) it reports cpu-s/op, the process's CPU time (every
// core, the garbage collector and page faults included).
func BenchmarkEvaluateTwice(b *testing.B) {
	tk, err := task.New("long_add", task.LongAddParams{MinDigits: 4, MaxDigits: 6, Rewrite: true})
	if err != nil {
		b.Fatal(err)
	}
	c, err := policy.Size("tiny")
	if err != nil {
		b.Fatal(err)
	}
	c.MaxSeq = 160
	cfg := EvalConfig{Prompts: 200, Samples: 4, K: 4}
	for _, bc := range []struct {
		name  string
		reuse bool
	}{{"fresh", false}, {"evaluator", true}} {
		b.Run(bc.name, func(b *testing.B) {
			m, err := policy.NewModel(c, 1)
			if err != nil {
				b.Fatal(err)
			}
			head := mat.Data[float32](m.Head.Value())
			tok := policy.DefaultTokenizer()
			var ev Evaluator
			evaluate := func() {
				var err error
				if bc.reuse {
					_, err = ev.Evaluate(m, tok, tk, cfg, policy.DefaultSampling, 1)
				} else {
					_, err = Evaluate(m, tok, tk, cfg, policy.DefaultSampling, 1)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			evaluate() // the run's step-0 evaluation
			b.ReportAllocs()
			b.ResetTimer()
			cpu0 := cputime.Process()
			for range b.N {
				for range 2 {
					for i := range head {
						head[i] *= 1.0001 // an update of the weights
					}
					evaluate()
				}
			}
			if cpu := cputime.Process() - cpu0; cpu > 0 {
				b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
			}
		})
	}
}
