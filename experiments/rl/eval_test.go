package rl

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/nlpodyssey/spago/mat"
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
