package task

import (
	"fmt"
	"math/rand/v2"
)

// maxRedraws bounds the draws for one eval prompt of an Excluding task
// before giving up: with half the eval split held out, the chance that 64
// draws all fall into it is 2⁻⁶⁴.
const maxRedraws = 64

// Excluding returns t with part of its eval split held out: every prompt
// text among the first n eval prompts of each of seeds (t.Prompt(Eval, s,
// i) for i < n), the prompts that runs at those seeds were evaluated on.
// Its eval prompt i at a seed is t's when that prompt is not held out, and
// otherwise the first of further draws for the same index (t's eval prompt
// i at seeds derived from the seed) that is not: its eval prompts are
// disjoint from the held-out ones and, wherever t's were not held out, the
// same, so an evaluation changes only where it would have repeated a
// held-out prompt. Its train split and everything else are t's. An index
// whose draws are all held out is an error (the task has too few eval
// problems outside the held-out ones). seeds must not be empty, nor list
// a seed twice, and n must be at least 1.
func Excluding(t Task, seeds []uint64, n int) (Task, error) {
	switch {
	case len(seeds) == 0:
		return nil, fmt.Errorf("task %s: exclude eval prompts: no seeds", t.Name())
	case n < 1:
		return nil, fmt.Errorf("task %s: exclude eval prompts: %d prompts per seed, want ≥ 1", t.Name(), n)
	}
	x := &excluding{Task: t, seeds: seeds, n: n, held: map[string]bool{}}
	for j, s := range seeds {
		for _, prev := range seeds[:j] {
			if prev == s {
				return nil, fmt.Errorf("task %s: exclude eval prompts: seed %d is listed twice", t.Name(), s)
			}
		}
		for i := range n {
			p, err := t.Prompt(Eval, s, i)
			if err != nil {
				return nil, fmt.Errorf("exclude eval prompts of seed %d: %w", s, err)
			}
			x.held[p.Text] = true
		}
	}
	return x, nil
}

// excluding is the task Excluding returns.
type excluding struct {
	Task
	seeds []uint64
	n     int
	held  map[string]bool // the held-out prompt texts
}

// Prompt returns the embedded task's prompt, redrawn while an eval prompt
// is held out.
func (x *excluding) Prompt(split Split, seed uint64, i int) (Prompt, error) {
	if split != Eval {
		return x.Task.Prompt(split, seed, i)
	}
	s := seed
	for a := range maxRedraws {
		p, err := x.Task.Prompt(Eval, s, i)
		if err != nil || !x.held[p.Text] {
			return p, err
		}
		s = mix64(seed ^ uint64(a+1)*0x9e3779b97f4a7c15)
	}
	return Prompt{}, fmt.Errorf("task %s: eval prompt %d at seed %d: all %d draws are among the %d prompts held out (the first %d eval prompts of seeds %v): too few eval problems are left",
		x.Name(), i, seed, maxRedraws, len(x.held), x.n, x.seeds)
}

// SampleDemo draws a demonstration as the embedded task does (DemoFor).
func (x *excluding) SampleDemo(p Prompt, rng *rand.Rand) string { return DemoFor(x.Task, p, rng) }

// StepEnds is the embedded task's (StepEnds).
func (x *excluding) StepEnds() string { return StepEnds(x.Task) }

// checkAlphabet is the embedded task's check (CheckAlphabet).
func (x *excluding) checkAlphabet(string) error { return CheckAlphabet(x.Task) }
