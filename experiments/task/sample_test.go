package task

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestSampleDemo checks the drawn demonstrations of the search tasks: each
// is graded correct and fits, and the first choice of the search is spread
// evenly over every valid first step (with limits that reject no draw, each
// draw's first step is uniform).
func TestSampleDemo(t *testing.T) {
	cd, err := NewCountdownSearch(CountdownSearchParams{Numbers: 3, MinNumber: 1, MaxNumber: 9, MinTarget: 10, MaxTarget: 60, MaxDeadEnds: 8, MaxResponse: 1000, NoPools: true})
	if err != nil {
		t.Fatal(err)
	}
	dag, err := NewDAGSearch(DAGSearchParams{Layers: 3, Width: 3, MaxDeadEnds: 8})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tk     Task
		prompt string
		first  func(demo string) string // the first choice of a demo
		steps  int                      // valid first steps
	}{
		// 1 9 6: 9+1 9*1 9-1 6+1 6*1 6-1 9+6 9*6 9-6 = 9 steps (no exact
		// quotient by more than 1); 45 is two steps away (6-1=5, 9*5).
		{cd, "1 9 6:45", func(d string) string { s, _, _ := strings.Cut(d, "="); return s }, 9},
		// a's successors b, c, d.
		{dag, "ab ac ad be ce df eg fg:a>g", func(d string) string { return d[:2] }, 3},
	} {
		p, err := c.tk.ParsePrompt(c.prompt)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		const draws = 1800
		counts := map[string]int{}
		for range draws {
			d := DemoFor(c.tk, p, rng)
			if v := c.tk.Verify(p, d); v.Reward != 1 || len(d) > c.tk.MaxResponseLen() {
				t.Fatalf("%s: drawn demo %q graded %+v", c.prompt, d, v)
			}
			counts[c.first(d)]++
		}
		if len(counts) != c.steps {
			t.Errorf("%s: first steps %v, want %d distinct", c.prompt, counts, c.steps)
		}
		want := draws / c.steps
		for s, n := range counts {
			if n < want*3/4 || n > want*5/4 {
				t.Errorf("%s: first step %q drawn %d times of %d, want about %d", c.prompt, s, n, draws, want)
			}
		}
	}
}

// TestDemoForFixed checks that a task without drawn demonstrations gets its
// prompt's demo and leaves the random stream untouched (pretraining of the
// other tasks draws the same batches as before).
func TestDemoForFixed(t *testing.T) {
	tk, _ := New("add", nil)
	p, err := tk.Prompt(Train, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	rng, fresh := rand.New(rand.NewPCG(3, 4)), rand.New(rand.NewPCG(3, 4))
	if d := DemoFor(tk, p, rng); d != p.Demo {
		t.Errorf("DemoFor = %q, want the prompt's demo %q", d, p.Demo)
	}
	if rng.Uint64() != fresh.Uint64() {
		t.Error("DemoFor drew from the random stream of a task without drawn demonstrations")
	}
}
