package suite

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rollout-rl/rollout/experiments/design"
	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/tracking"
)

// interpolate follows the curve through the points in order of x, holds
// its ends beyond them and averages points at equal x.
func TestInterpolate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		xs, ys []float64
		x      float64
		want   float64
	}{
		{"between", []float64{10, 20}, []float64{0.2, 0.4}, 15, 0.3},
		{"unsorted", []float64{40, 10, 20}, []float64{0.6, 0.2, 0.4}, 30, 0.5},
		{"at a point", []float64{10, 20, 40}, []float64{0.2, 0.4, 0.6}, 20, 0.4},
		{"below the first", []float64{10, 20}, []float64{0.2, 0.4}, 5, 0.2},
		{"beyond the last", []float64{10, 20}, []float64{0.2, 0.4}, 50, 0.4},
		{"equal xs averaged", []float64{10, 10, 20}, []float64{0.1, 0.3, 0.4}, 15, 0.3},
		{"one point", []float64{10}, []float64{0.7}, 15, 0.7},
		{"none", nil, nil, 15, 0},
	} {
		if got := interpolate(tc.xs, tc.ys, tc.x); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: interpolate(%v, %v, %g) = %g, want %g", tc.name, tc.xs, tc.ys, tc.x, got, tc.want)
		}
	}
}

// handResults are hand-made measurements over seeds 1–5: flat majority
// at N = 1, 2 costs 10 and 20 tokens with accuracy 0.2 and 0.4; the
// reward model's best-of-2 is the seed's gain above best-of-1; a tree of
// 2 leaves costs 15 tokens with accuracy 0.35 (flat majority at 15
// tokens: 0.3).
func handResults(gains []float64) answerResults {
	r := answerResults{points: map[string]map[int64][]rl.TTCPoint{}}
	for _, pol := range []string{PolicyBase, PolicyRL} {
		r.points[pol] = map[int64][]rl.TTCPoint{}
		for i, g := range gains {
			r.points[pol][int64(i+1)] = []rl.TTCPoint{
				{Method: "majority", N: 1, Tokens: 10, Candidates: 1, Acc: 0.2},
				{Method: "best_of_n", N: 1, Tokens: 10, Candidates: 1, Acc: 0.2},
				{Method: "oracle", N: 1, Tokens: 10, Candidates: 1, Acc: 0.2},
				{Method: "majority", N: 2, Tokens: 20, Candidates: 2, Acc: 0.4},
				{Method: "best_of_n", N: 2, Tokens: 20, Candidates: 2, Acc: 0.2 + g, ScorerAUC: 0.25},
				{Method: "oracle", N: 2, Tokens: 20, Candidates: 2, Acc: 0.5},
				{Method: "tree_majority", N: 2, Tokens: 15, Candidates: 1.9, Acc: 0.35 + 0.001*float64(i)},
			}
		}
	}
	return r
}

// Answer-time checks pair seeds: a consistent gain of the reward model
// holds, a loss does not, and a tree is compared with flat majority
// interpolated at its own tokens.
func TestAnswerOutcomes(t *testing.T) {
	r := handResults([]float64{0.05, 0.06, 0.04, 0.05, 0.05})
	o, err := r.outcome(AnswerCheck{Policy: PolicyRL, Method: "best_of_n", N: 2, Against: "best_of_n", AgainstN: 1, Want: Higher, Margin: 0.02})
	if err != nil || o.Verdict != Holds || math.Abs(o.Test.Diff-0.05) > 1e-9 || o.Test.N1 != 5 {
		t.Fatalf("gain: %+v %v, want +0.05 over 5 seeds, holds", o, err)
	}
	if o.Variant != "reward-model best-of-2" || o.Against != "reward-model best-of-1" || o.At != "answer time, after RL" {
		t.Errorf("names: %q against %q at %q", o.Variant, o.Against, o.At)
	}
	worse := handResults([]float64{-0.05, -0.06, -0.04, -0.05, -0.05})
	if o, err := worse.outcome(AnswerCheck{Policy: PolicyBase, Method: "best_of_n", N: 2, Against: "best_of_n", AgainstN: 1, Want: Higher, Margin: 0.02}); err != nil || o.Verdict != DoesNotHold {
		t.Errorf("loss: %+v %v, want does not hold", o, err)
	}
	o, err = r.outcome(AnswerCheck{Policy: PolicyBase, Method: "tree_majority", N: 2, Against: "majority", Want: NotWorse, Margin: 0.03})
	if err != nil || math.Abs(o.Test.Diff-0.052) > 1e-9 || o.Verdict != Holds || o.Against != "majority at the same tokens" {
		t.Fatalf("tree at matched tokens: %+v %v, want +0.052 (0.35..0.354 against 0.3), holds", o, err)
	}
	if _, err := r.outcome(AnswerCheck{Policy: PolicyRL, Method: "tree_best", N: 16, Against: "best_of_n", AgainstN: 1}); err == nil || !strings.Contains(err.Error(), "tree_best at N=16") {
		t.Errorf("missing rule: %v", err)
	}
}

// A report with an AnswerTime measures the base and final policy of every
// run of its variant, adds its checks to the verdict, and writes its
// tables, comparisons and plots; a missing measurer or a failed
// measurement is an error naming the run.
func TestRenderAnswerTime(t *testing.T) {
	st := fakeStore(t, []float64{0.05, 0.06, 0.04, 0.05, 0.05})
	gains := []float64{-0.05, -0.06, -0.04, -0.05, -0.05}
	hand := handResults(gains)
	var calls []string
	measure := func(run tracking.Run, policy string, spec Spec) (Measured, error) {
		calls = append(calls, run.ID+" "+policy)
		return Measured{Points: hand.points[policy][run.Seed], RewardModel: "rm (AUC 0.7)"}, nil
	}
	r := Report{Number: 9, Name: "x", Title: "X", Claim: "c", Source: "s", Design: "d",
		Checks: []Check{{Variant: "v", Metric: "eval/acc", At: "final", Want: Higher, Margin: 0.02}},
		AnswerTime: &AnswerTime{Variant: "v", Ns: []int{1, 2}, TreeLeaves: []int{2},
			Checks:  []AnswerCheck{{Policy: PolicyRL, Method: "best_of_n", N: 2, Against: "best_of_n", AgainstN: 1, Want: Higher, Margin: 0.02}},
			Compare: []AnswerCheck{{Policy: PolicyBase, Method: "tree_majority", N: 2, Against: "majority"}}},
		Minutes: 1}
	dir := t.TempDir()
	v, err := Write(st, r, dir, Meta{Command: "c", Commit: "abc", Machine: "m", Store: "s.db", Measure: measure})
	if err != nil || v != DoesNotHold {
		t.Fatalf("write: %v %v, want does not hold (the reward model's loss)", v, err)
	}
	if len(calls) != 10 || calls[0] != "v1 base" || calls[1] != "v1 rl" {
		t.Errorf("measured %v, want base and rl of v1 … v5", calls)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "x.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := string(raw)
	for _, want := range []string{
		"## At answer time: base policy", "## At answer time: after RL",
		"| reward-model best-of-2 | reward-model best-of-1 | answer accuracy | answer time, after RL | higher |",
		"| majority of N | 2 | 2 ± 0 | 20 ± 0 | 0.4 ± 0 | 0 paired | — |",
		"| reward-model best-of-N | 2 | 2 ± 0 | 20 ± 0 | 0.15000 ± 0.00878 | 9.35e-05 paired | 0.25 ± 0 |",
		"| reward-model best-of-N | 1 | 1 ± 0 | 10 ± 0 | 0.2 ± 0 | — | — |",
		"| tree, majority, 2 leaves | majority at the same tokens | answer time, base policy |",
		"Reward model: rm (AUC 0.7).", "(x_answer_time_rl.png)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	for _, f := range []string{"x_answer_time_base.png", "x_answer_time_rl.png"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("plot %s: %v", f, err)
		}
	}
	if _, err := Write(st, r, dir, Meta{}); err == nil || !strings.Contains(err.Error(), "no measurer") {
		t.Errorf("without a measurer: %v", err)
	}
	failing := func(run tracking.Run, policy string, spec Spec) (Measured, error) {
		return Measured{}, errors.New("no final policy")
	}
	if _, err := Write(st, r, dir, Meta{Measure: failing}); err == nil || !strings.Contains(err.Error(), "run v1 (v seed 1)") || !strings.Contains(err.Error(), "no final policy") {
		t.Errorf("failed measurement: %v", err)
	}
}

// A check on the answer-time measurement declared in the design recorded
// before the runs is confirmatory, an undeclared one exploratory; a
// declared one the report does not measure is an error naming it.
func TestAnswerTimeDeclared(t *testing.T) {
	hand := handResults([]float64{0.05, 0.06, 0.04, 0.05, 0.05})
	measure := func(run tracking.Run, policy string, spec Spec) (Measured, error) {
		return Measured{Points: hand.points[policy][run.Seed]}, nil
	}
	rm := AnswerCheck{Name: "rm_gain", Policy: PolicyRL, Method: "best_of_n", N: 2, Against: "best_of_n", AgainstN: 1, Want: Higher, Margin: 0.02}
	tree := AnswerCheck{Policy: PolicyBase, Method: "tree_majority", N: 2, Against: "majority", Want: NotWorse, Margin: 0.03}
	r := Report{Name: "x", AnswerTime: &AnswerTime{Variant: "v", Ns: []int{1, 2}, TreeLeaves: []int{2}, Checks: []AnswerCheck{rm, tree}}}
	d := design.Default()
	d.Checks = []Check{{Name: "rm_gain", Variant: "reward-model best-of-2", Baseline: "reward-model best-of-1", Metric: design.AnswerMetric, At: "answer time, after RL", Want: Higher, Margin: 0.02}}
	st := fakeDesigned(t, []float64{0.05, 0.06, 0.04, 0.05, 0.05}, &d, time.Time{})
	exp, runs, err := experimentOf(st, r)
	if err != nil {
		t.Fatal(err)
	}
	outs, _, _, err := evaluateReport(st, r, exp, runs, Meta{Measure: measure})
	if err != nil {
		t.Fatal(err)
	}
	if len(outs) != 2 || outs[0].ID() != "rm_gain" || outs[0].Exploratory || outs[0].Verdict != Holds {
		t.Errorf("declared answer-time check: %+v", outs[0])
	}
	if !outs[1].Exploratory || outs[1].Why != "not declared in the recorded design" {
		t.Errorf("undeclared answer-time check: %+v", outs[1])
	}

	d.Checks[0].Margin = 0.05 // a check the report does not compute
	st = fakeDesigned(t, []float64{0.05, 0.06, 0.04, 0.05, 0.05}, &d, time.Time{})
	if exp, runs, err = experimentOf(st, r); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := evaluateReport(st, r, exp, runs, Meta{Measure: measure}); err == nil || !strings.Contains(err.Error(), "the design's check rm_gain") {
		t.Errorf("a declared answer-time check the report does not measure: %v", err)
	}
}

// A reward-model check resting on a premise measured by the reward
// model's within-prompt AUC is not testable here, naming the premise and
// the figure, when the AUC on the candidates its rule reranks is below
// the premise's minimum, and keeps its verdict, saying the premise is
// met, when it is not; a check on a rule that does not rank cannot meet
// it.
func TestAnswerTimeMeasuredPremise(t *testing.T) {
	gains := []float64{0.05, 0.06, 0.04, 0.05, 0.05}
	rm := AnswerCheck{Name: "rm_gain", Policy: PolicyRL, Method: "best_of_n", N: 2, Against: "best_of_n", AgainstN: 1, Want: Higher, Margin: 0.02, Premise: "ranks"}
	tree := AnswerCheck{Name: "tree_ranks", Policy: PolicyBase, Method: "tree_majority", N: 2, Against: "majority", Want: NotWorse, Margin: 0.03, Premise: "ranks"}
	r := Report{Name: "x", AnswerTime: &AnswerTime{Variant: "v", Ns: []int{1, 2}, TreeLeaves: []int{2}, Checks: []AnswerCheck{rm, tree}}}
	d := design.Default()
	d.Premises = []design.Premise{{Name: "ranks", Text: "a reward model that ranks", Measure: design.WithinPromptAUC, Min: 0.85}}
	d.Checks = []Check{
		{Name: "rm_gain", Variant: "reward-model best-of-2", Baseline: "reward-model best-of-1", Metric: design.AnswerMetric, At: "answer time, after RL", Want: Higher, Margin: 0.02, Premise: "ranks"},
		{Name: "tree_ranks", Variant: "tree, majority, 2 leaves", Baseline: "majority at the same tokens", Metric: design.AnswerMetric, At: "answer time, base policy", Want: NotWorse, Margin: 0.03, Premise: "ranks"},
	}
	evaluate := func(auc float64) []Outcome {
		t.Helper()
		hand := handResults(gains)
		for _, pts := range hand.points[PolicyRL] {
			for i := range pts {
				if pts[i].Method == "best_of_n" && pts[i].N == 2 {
					pts[i].ScorerAUC = auc
				}
			}
		}
		measure := func(run tracking.Run, policy string, spec Spec) (Measured, error) {
			return Measured{Points: hand.points[policy][run.Seed]}, nil
		}
		st := fakeDesigned(t, gains, &d, time.Time{})
		exp, runs, err := experimentOf(st, r)
		if err != nil {
			t.Fatal(err)
		}
		outs, _, _, err := evaluateReport(st, r, exp, runs, Meta{Measure: measure})
		if err != nil || len(outs) != 2 {
			t.Fatalf("outcomes %+v, %v", outs, err)
		}
		if outs[0].Exploratory || outs[1].Exploratory {
			t.Errorf("declared checks resting on a premise are exploratory: %+v", outs)
		}
		return outs
	}
	low := evaluate(0.8)
	if o := low[0]; o.Verdict != NotTestable || o.Corrected ||
		!strings.Contains(o.Premise, "ranks (a reward model that ranks) is not met: the reward model's within-prompt AUC on the candidates reward-model best-of-2 reranks (answer time, after RL) is 0.8 ± 0 over 5 seeds") ||
		!strings.Contains(o.Premise, "below the 0.85 it needs") {
		t.Errorf("AUC 0.8: %s, premise %q, want not testable naming the premise and the AUC", o.Verdict, o.Premise)
	}
	if o := low[1]; o.Verdict != NotTestable || !strings.Contains(o.Premise, "measures no within-prompt AUC for tree, majority, 2 leaves") {
		t.Errorf("a rule that does not rank: %s, premise %q", o.Verdict, o.Premise)
	}
	high := evaluate(0.9)
	if o := high[0]; o.Verdict != Holds || o.Premise != "" || !strings.Contains(o.PremiseMet, "ranks (a reward model that ranks) is met: the reward model's within-prompt AUC on the candidates reward-model best-of-2 reranks (answer time, after RL) is 0.9 ± 0 over 5 seeds (mean ± 95% t-interval), at least 0.85") {
		t.Errorf("AUC 0.9: %s, premise %q, met %q, want it to hold with the premise met", o.Verdict, o.Premise, o.PremiseMet)
	}
	var b strings.Builder
	writeChecks(&printer{w: &b}, high, "k1")
	if !strings.Contains(b.String(), "- `rm_gain` rests on a premise the measurement meets: ranks (") {
		t.Errorf("the checks' notes do not say the premise is met:\n%s", b.String())
	}
}
