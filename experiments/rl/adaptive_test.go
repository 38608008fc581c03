package rl

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/search"
)

func TestAdaptiveForks(t *testing.T) {
	for _, tc := range []struct {
		kMax  int
		c     passCount
		wantK int
		wantP float64
	}{
		{4, passCount{}, 4, 0.5},                     // never seen: p̂ ½, all forks
		{4, passCount{Solved: 5, Tried: 10}, 4, 0.5}, // mid-range
		{4, passCount{Solved: 9, Tried: 10}, 3, 10.0 / 12},
		{4, passCount{Solved: 0, Tried: 10}, 2, 1.0 / 12}, // ⌈4·4·(1/12)(11/12)⌉ = ⌈1.22⌉
		{4, passCount{Solved: 0, Tried: 1000}, 1, 1.0 / 1002},
		{0, passCount{}, 0, 0.5},
	} {
		k, p := adaptiveForks(tc.kMax, tc.c)
		if k != tc.wantK || math.Abs(p-tc.wantP) > 1e-12 {
			t.Errorf("K_max %d, %+v: K̂ %d, p̂ %v; want %d, %v", tc.kMax, tc.c, k, p, tc.wantK, tc.wantP)
		}
	}
}

// A prompt's fork cap bounds an entropy tree's fork positions per tree
// and round.
func TestLimitForks(t *testing.T) {
	s := smallSetup(t, Config{Steps: 1})
	s.Strategy = search.EntropyTree{M: 2, N: 3, L: 1, T: 1, Score: search.ScoreRandom}
	prompts, err := s.Prompts(task.Train, []int{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, forks := range [][]int{nil, {0, 1, 2}} {
		groups, _, err := s.rollouts(context.Background(), 0, prompts, []int{0, 1, 2}, nil, forks)
		if err != nil {
			t.Fatal(err)
		}
		for i, sg := range groups {
			want := 3 * 2
			if forks != nil {
				want = forks[i] * 2
			}
			if f := sg.Group.Forks() + sg.Group.MissingForks; f != want {
				t.Errorf("cap %v, prompt %d: %d forks made or missing, want %d", forks, i, f, want)
			}
		}
	}
}

// rollout.adaptive runs with a strategy with a fork budget, sets its
// metrics, resumes exactly from a snapshot, and is refused without one.
func TestAdaptiveRun(t *testing.T) {
	setup := func() Setup {
		s := smallSetup(t, Config{Steps: 3, PromptsPerStep: 2, FilterGroups: false, LR: 1e-3})
		s.Strategy = search.EntropyTree{M: 2, N: 2, L: 1, T: 1, Score: search.ScoreEntropy}
		s.Adaptive = true
		return s
	}
	loop, err := New(setup())
	if err != nil {
		t.Fatal(err)
	}
	var all []map[string]float64
	for i := 0; i < 3; i++ {
		res, err := loop.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, res.Metrics)
	}
	if all[0]["adaptive/forks_mean"] != 2 || all[0]["adaptive/pass_rate_mean"] != 0.5 {
		t.Errorf("first step (no prompt seen): %v forks, p̂ %v; want 2 and 0.5", all[0]["adaptive/forks_mean"], all[0]["adaptive/pass_rate_mean"])
	}
	if len(loop.adaptive.passes) == 0 {
		t.Error("no pass counts kept")
	}

	first, _ := New(setup())
	for i := 0; i < 2; i++ {
		if _, err := first.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := first.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	second, _ := New(setup())
	if err := second.Restore(snap); err != nil {
		t.Fatal(err)
	}
	res, err := second.Step(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"adaptive/forks_mean", "adaptive/pass_rate_mean", "tree/forks", "reward/mean"} {
		if res.Metrics[k] != all[2][k] {
			t.Errorf("resumed step 3 %s = %v, uninterrupted %v", k, res.Metrics[k], all[2][k])
		}
	}

	flat := setup()
	flat.Strategy = search.Flat{N: 4}
	if _, err := New(flat); err == nil || !strings.Contains(err.Error(), "rollout.adaptive") {
		t.Errorf("adaptive flat: %v", err)
	}
}

// A request carries the task's step ends and a verifier for the
// strategies that resample failed responses.
func TestRequestStepsAndFailed(t *testing.T) {
	s := smallSetup(t, Config{Steps: 1})
	prompts, err := s.Prompts(task.Train, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	req, err := s.Request(0, prompts, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	space, _ := s.Tokenizer.Encode(" ")
	if len(req.StepEnds) != 1 || req.StepEnds[0] != space[0] {
		t.Errorf("add's step ends %v, want the space %v", req.StepEnds, space)
	}
	p := prompts[0]
	right, err := s.Tokenizer.Encode(p.Demo)
	if err != nil {
		t.Fatal(err)
	}
	wrong, _ := s.Tokenizer.Encode("1=1")
	if f := req.Prompts[0].Failed; f == nil || f(right) || !f(wrong) {
		t.Errorf("Failed of %q: the demo %q fails or %q passes", p.Text, p.Demo, "1=1")
	}
}
