package task

import (
	"strings"
	"testing"
)

// An Excluding task's eval prompts are disjoint from the held-out ones
// (the first n eval prompts of the excluded seeds, drawn here from the
// plain task), equal to the plain task's wherever those were not held
// out, and the train split is the plain task's.
func TestExcludingDisjoint(t *testing.T) {
	excluded := []uint64{1, 2, 3, 4, 5}
	for _, tc := range []struct {
		name   string
		params any
		n      int
	}{
		// Two-digit addition: about 1,000 eval problems, of which 500
		// draws hold out about 400 (the recipe's case).
		{"add", AddParams{Digits: 2, Scratchpad: true}, 100},
		{"add", AddParams{Digits: 1, Scratchpad: true}, 2},
		{"countdown", nil, 20},
		{"path", nil, 10},
		{"chain", nil, 10},
	} {
		plain, err := New(tc.name, tc.params)
		if err != nil {
			t.Fatal(err)
		}
		x, err := Excluding(plain, excluded, tc.n)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		held := map[string]bool{}
		for _, s := range excluded {
			for i := range tc.n {
				p, err := plain.Prompt(Eval, s, i)
				if err != nil {
					t.Fatal(err)
				}
				held[p.Text] = true
			}
		}
		replaced := 0
		for _, seed := range []uint64{1, 101, 102, 7777} {
			for i := range 100 {
				got, err := x.Prompt(Eval, seed, i)
				if err != nil {
					t.Fatalf("%s: seed %d, prompt %d: %v", tc.name, seed, i, err)
				}
				if held[got.Text] {
					t.Fatalf("%s: seed %d, eval prompt %d %q is held out", tc.name, seed, i, got.Text)
				}
				if SplitOf(got.Text) != Eval {
					t.Fatalf("%s: seed %d, eval prompt %d %q is not in the eval split", tc.name, seed, i, got.Text)
				}
				if v := x.Verify(got, got.Demo); v.Reward != 1 {
					t.Fatalf("%s: the demo of %q gets %v", tc.name, got.Text, v)
				}
				want, _ := plain.Prompt(Eval, seed, i)
				if !held[want.Text] && got.Text != want.Text {
					t.Fatalf("%s: seed %d, eval prompt %d is %q, want the plain task's %q (not held out)", tc.name, seed, i, got.Text, want.Text)
				}
				if held[want.Text] {
					replaced++
				}
				again, _ := x.Prompt(Eval, seed, i)
				if again.Text != got.Text {
					t.Fatalf("%s: seed %d, eval prompt %d: %q, then %q", tc.name, seed, i, got.Text, again.Text)
				}
				tr, _ := x.Prompt(Train, seed, i)
				ptr, _ := plain.Prompt(Train, seed, i)
				if tr.Text != ptr.Text {
					t.Fatalf("%s: train prompt %d: %q, want the plain task's %q", tc.name, i, tr.Text, ptr.Text)
				}
			}
		}
		// Seed 1's first n prompts are held out, so there is something
		// to replace.
		if replaced < tc.n {
			t.Errorf("%s: %d prompts replaced, want at least the %d of seed 1", tc.name, replaced, tc.n)
		}
		if StepEnds(x) != StepEnds(plain) || x.Name() != plain.Name() || x.MaxResponseLen() != plain.MaxResponseLen() {
			t.Errorf("%s: the wrapper changes the task's step ends, name or limits", tc.name)
		}
	}
}

// Bad arguments, and a task whose eval split the held-out prompts
// exhaust, are errors that say so.
func TestExcludingErrors(t *testing.T) {
	one, err := New("add", AddParams{Digits: 1, Scratchpad: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		seeds []uint64
		n     int
		want  string
	}{
		{nil, 10, "task add: exclude eval prompts: no seeds"},
		{[]uint64{1}, 0, "task add: exclude eval prompts: 0 prompts per seed, want ≥ 1"},
		{[]uint64{1, 2, 1}, 5, "seed 1 is listed twice"},
	} {
		if _, err := Excluding(one, tc.seeds, tc.n); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Excluding(%v, %d): %v, want %q", tc.seeds, tc.n, err, tc.want)
		}
	}
	// One-digit addition has about a dozen eval problems: 200 draws of
	// 10 seeds hold out every one.
	var seeds []uint64
	for s := range uint64(10) {
		seeds = append(seeds, s+1)
	}
	x, err := Excluding(one, seeds, 200)
	if err != nil {
		t.Fatal(err)
	}
	_, err = x.Prompt(Eval, 500, 0)
	if want := "task add: eval prompt 0 at seed 500: all 64 draws are among the"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("exhausted eval split: %v, want %q", err, want)
	}
}
