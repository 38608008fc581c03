package rl

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/experiments/reward"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/search"
)

// flopsLoop returns a loop of the strategy with the FLOPs limits set, and
// one group's worst case.
func flopsLoop(t *testing.T, strategy string, params map[string]string, train Config, total, every func(b flopsBound) int64) (*Loop, flopsBound) {
	t.Helper()
	s := smallSetup(t, train)
	s.Train.TreePacking = train.TreePacking
	s.Strategy, _ = search.NewStrategy(strategy, params)
	s.Train.TotalFLOPs = 1 << 62 // a probe, for the bound
	probe, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	b := probe.flopsMax
	s.Train.TotalFLOPs, s.EvalEveryFLOPs = total(b), every(b)
	loop, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	return loop, b
}

// train.total_flops is never exceeded, whatever the strategy, filtering,
// stale reuse or packing: every step's budget/total_flops is its sampling,
// scoring and update FLOPs and they add up to FLOPsCum; the run ends when
// no further group fits, with what is left (less than one group's worst
// case and the updates set aside for buffered groups) recorded at the last
// step only as budget/unspent_flops.
func TestTotalFLOPsExact(t *testing.T) {
	for _, sc := range tokenStrategies {
		for _, tc := range []struct {
			filter    bool
			staleness int
			packed    bool
		}{{false, 0, true}, {true, 0, false}, {true, 1, true}, {false, 2, false}} {
			name := fmt.Sprintf("%s filter=%v staleness=%d packed=%v", sc.name, tc.filter, tc.staleness, tc.packed)
			train := Config{Steps: 1000, PromptsPerStep: 3, FilterGroups: tc.filter, MaxResampleRounds: 2, MaxStaleness: tc.staleness, TreePacking: tc.packed}
			loop, b := flopsLoop(t, sc.name, sc.params, train, func(b flopsBound) int64 {
				return 5*b.total(tc.staleness) + b.total(tc.staleness)/2 // a few steps; the last ones cannot draw 3 prompts
			}, func(flopsBound) int64 { return 0 })
			total := loop.s.Train.TotalFLOPs
			steps := runAll(t, loop)
			cum := loop.FLOPsCum()
			// What a run may leave: one group's worst case and the updates
			// ahead of at most staleness steps of kept groups.
			slack := b.total(tc.staleness) + int64(tc.staleness*3*tc.staleness)*b.update
			if cum > total || total-cum >= slack {
				t.Errorf("%s: %d FLOPs spent of %d, want ≤ and within %d", name, cum, total, slack)
			}
			var sum float64
			for i, res := range steps {
				m := res.Metrics
				if got, want := m["budget/total_flops"], m["budget/flops"]+m["budget/score_flops"]+m["budget/train_flops"]; got != want || got == 0 {
					t.Errorf("%s: step %d: budget/total_flops %v, want sampling + scoring + update %v", name, res.Step, got, want)
				}
				sum += m["budget/total_flops"]
				if m["budget/total_flops_cum"] != sum || sum > float64(total) {
					t.Errorf("%s: step %d: budget/total_flops_cum %v, steps sum to %v (budget %d)", name, res.Step, m["budget/total_flops_cum"], sum, total)
				}
				u, ok := m["budget/unspent_flops"]
				if last := i == len(steps)-1; ok != last || (last && u != float64(total-cum)) {
					t.Errorf("%s: step %d of %d: budget/unspent_flops %v (recorded %v), want %d at the last step only", name, i+1, len(steps), u, ok, total-cum)
				}
			}
			if len(steps) < 2 {
				t.Errorf("%s: %d steps: the budget should take a few", name, len(steps))
			}
		}
	}
	s := smallSetup(t, Config{Steps: 1000})
	s.Train.TotalFLOPs = 1000
	if _, err := New(s); err == nil || !strings.Contains(err.Error(), "train.total_flops = 1000") {
		t.Errorf("total_flops below one group: %v, want an error naming it", err)
	}
	s.Train.TotalFLOPs, s.EvalEveryFLOPs = 0, 1000
	if _, err := New(s); err == nil || !strings.Contains(err.Error(), "eval.every_flops = 1000") {
		t.Errorf("every_flops below one group: %v, want an error naming it", err)
	}
}

// With eval.every_flops E, the steps stop at every multiple of E: no step
// goes past one, each is reached (reported in FLOPsMark) by the step after
// which no further group fits before it, once, in order, and the run's end
// at a multiple of E is a mark too.
func TestEvalFLOPsMarks(t *testing.T) {
	for _, sc := range tokenStrategies {
		train := Config{Steps: 1000, PromptsPerStep: 3, FilterGroups: false, TreePacking: true}
		var e int64
		loop, b := flopsLoop(t, sc.name, sc.params, train, func(b flopsBound) int64 {
			e = 4*b.mark() + 7
			return 3 * e
		}, func(flopsBound) int64 { return e })
		var marks []int64
		var cum int64
		for _, res := range runAll(t, loop) {
			after := cum + int64(res.Metrics["budget/total_flops"])
			next := (cum/e + 1) * e // the next mark not yet reached
			if len(marks) > 0 && marks[len(marks)-1] == next {
				next += e
			}
			if after > next {
				t.Errorf("%s: step %d goes from %d to %d FLOPs, past the mark %d", sc.name, res.Step, cum, after, next)
			}
			if res.FLOPsMark != 0 {
				if res.FLOPsMark != next || next-after >= b.mark() {
					t.Errorf("%s: step %d at %d FLOPs reached mark %d; want %d, within one group (%d)", sc.name, res.Step, after, res.FLOPsMark, next, b.mark())
				}
				marks = append(marks, res.FLOPsMark)
			} else if next-after < b.mark() {
				t.Errorf("%s: step %d at %d FLOPs: no group fits before %d, but no mark reached", sc.name, res.Step, after, next)
			}
			cum = after
		}
		if !slices.Equal(marks, []int64{e, 2 * e, 3 * e}) {
			t.Errorf("%s: marks %v, want %d, %d, %d", sc.name, marks, e, 2*e, 3*e)
		}
	}
}

// MaxGroupLeaves bounds the leaves of the strategies' groups, and is
// reached by a flat group.
func TestMaxGroupLeaves(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params map[string]string
		want   int64
	}{
		{"flat", map[string]string{"n": "4"}, 4},
		{"entropy_tree", map[string]string{"m": "6", "n": "2", "l": "1", "t": "2"}, 30},
		{"random_tree", map[string]string{"m": "2", "n": "1", "l": "2", "t": "3"}, 14},
		{"segment_tree", map[string]string{"s": "4", "b": "2", "w": "6"}, 6},
	} {
		st, err := search.NewStrategy(tc.name, tc.params)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := MaxGroupLeaves(st, 12); err != nil || got != tc.want {
			t.Errorf("%s %v: %d leaves (%v), want %d", tc.name, tc.params, got, err, tc.want)
		}
	}
}

// With a reward model in the mix, its scoring counts towards the budget:
// budget/score_flops is what it spent on the step's leaves, and the run
// still never exceeds train.total_flops.
func TestTotalFLOPsCountsScoring(t *testing.T) {
	s := smallSetup(t, Config{Steps: 1000, PromptsPerStep: 2, FilterGroups: false})
	body, err := policy.NewModel(s.Policy.Config, 4)
	if err != nil {
		t.Fatal(err)
	}
	rm, err := reward.NewModel(body, s.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	if s.Reward, err = reward.NewMixer(reward.Config{Verifier: 1, Model: 0.5}, s.Task, rm); err != nil {
		t.Fatal(err)
	}
	s.Train.TotalFLOPs = 1 << 62
	probe, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	if probe.flopsMax.score == 0 {
		t.Fatal("no scoring in a group's worst case")
	}
	s.Train.TotalFLOPs = 4*probe.flopsMax.total(0) + 5
	loop, err := New(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range runAll(t, loop) {
		var want int64
		for _, sg := range res.Groups {
			var ps []task.Prompt
			var texts []string
			for _, leaf := range sg.Group.Leaves() {
				ps, texts = append(ps, sg.Prompt), append(texts, s.Tokenizer.ResponseText(leaf.Response()))
			}
			want += s.Reward.ScoringFLOPs(ps, texts)
		}
		if got := res.Metrics["budget/score_flops"]; got != float64(want) || want == 0 {
			t.Errorf("step %d: budget/score_flops %v, want %d", res.Step, got, want)
		}
	}
	if loop.FLOPsCum() > s.Train.TotalFLOPs {
		t.Errorf("%d FLOPs spent of %d", loop.FLOPsCum(), s.Train.TotalFLOPs)
	}
}
