package rl

import (
	"testing"

	"github.com/rollout-rl/rollout/experiments/task"
)

// An evaluation with eval.exclude_seeds is the evaluation, greedy and
// sampled parts alike, of the task with those seeds' eval prompts held out
// (task.Excluding); without them it is that of the task itself, the same
// task value.
func TestEvaluateHoldsOut(t *testing.T) {
	s := smallSetup(t, Config{Steps: 1, PromptsPerStep: 2})
	plain := EvalConfig{Every: 1, Prompts: 12, Samples: 3, K: 2}
	if tk, err := plain.Task(s.Task); err != nil || tk != s.Task {
		t.Fatalf("no seeds held out: task %v (%v), want the task itself", tk, err)
	}
	held := plain
	held.ExcludeSeeds, held.ExcludePrompts = []uint64{7, 8}, 12
	x, err := task.Excluding(s.Task, held.ExcludeSeeds, held.ExcludePrompts)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Evaluate(s.Policy, s.Tokenizer, s.Task, held, s.Sampling, 7)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Evaluate(s.Policy, s.Tokenizer, x, plain, s.Sampling, 7)
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Fatalf("eval.exclude_seeds: %+v, want that of the task holding them out %+v", got, want)
	}
	// Seed 7's own prompts are all held out: none is graded, greedy or
	// sampled; without eval.exclude_seeds all of them are.
	held7 := map[string]bool{}
	for i := range plain.Prompts {
		p, err := s.Task.Prompt(task.Eval, 7, i)
		if err != nil {
			t.Fatal(err)
		}
		held7[p.Text] = true
	}
	for _, tc := range []struct {
		cfg  EvalConfig
		want bool
	}{{plain, true}, {held, false}} {
		rec := &recording{Task: s.Task, graded: map[string]int{}}
		if _, err := Evaluate(s.Policy, s.Tokenizer, rec, tc.cfg, s.Sampling, 7); err != nil {
			t.Fatal(err)
		}
		for text := range held7 {
			if got := rec.graded[text] > 0; got != tc.want {
				t.Errorf("exclude_seeds %v: seed 7's prompt %q graded: %v", tc.cfg.ExcludeSeeds, text, got)
			}
		}
		if n := sum(rec.graded); n != plain.Prompts*(1+plain.Samples) {
			t.Errorf("exclude_seeds %v: %d responses graded, want %d", tc.cfg.ExcludeSeeds, n, plain.Prompts*(1+plain.Samples))
		}
	}
	bad := held
	bad.ExcludePrompts = 0
	if _, err := Evaluate(s.Policy, s.Tokenizer, s.Task, bad, s.Sampling, 7); err == nil {
		t.Fatal("eval.exclude_seeds without eval.exclude_prompts: no error")
	}
}

// recording is a task that counts the responses graded per prompt text.
type recording struct {
	task.Task
	graded map[string]int
}

func (r *recording) Verify(p task.Prompt, response string) task.Verdict {
	r.graded[p.Text]++
	return r.Task.Verify(p, response)
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}
