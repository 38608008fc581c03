package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/tracking"
	"github.com/rollout-rl/rollout/tracking/report/stats"
)

// Student's sleep data (R's datasets::sleep), used as final values so the
// report's statistics can be checked against R's published t.test output.
var (
	sleepA = []float64{0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0}
	sleepB = []float64{1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4}
)

// reportStore builds experiment "cmp": variant flat (seeds 1–10, final
// values sleepA), tree (seeds 1–10, sleepB: paired with flat), other
// (seeds 11–20, sleepB: Welch against flat) and solo (one seed). Each run
// has three steps: v−10 at 100 tokens, v+100 at 200, v at 300; steps 1
// and 2 also record train_flops 2000 and 3000.
func reportStore(t testing.TB) *tracking.Store {
	s := newStore(t)
	if err := s.PutExperiment(tracking.Experiment{Name: "cmp", Variants: []string{"flat", "tree", "other", "solo"}}); err != nil {
		t.Fatal(err)
	}
	add := func(variant string, seed int64, v float64) {
		id := fmt.Sprintf("%s-%d", variant, seed)
		addRun(t, s, "cmp", id, variant, seed, "strategy: "+variant+"\n")
		for i, x := range []float64{v - 10, v + 100, v} {
			m := map[string]float64{"reward/mean": x, "other": 1}
			if i > 0 {
				m["train_flops"] = float64(1000 * (i + 1))
			}
			commit(t, s, id, i, int64(100*(i+1)), m)
		}
		finish(t, s, id)
	}
	for i := range sleepA {
		add("flat", int64(i+1), sleepA[i])
		add("tree", int64(i+1), sleepB[i])
		add("other", int64(i+11), sleepB[i])
	}
	add("solo", 1, 5)
	return s
}

func TestReportKnownNumbers(t *testing.T) {
	s := reportStore(t)
	const hw = 1.2797804 // R: t.test(sleepA): CI 0.75 ± 1.2797804
	tests := []struct {
		at       string
		flatMean float64
	}{
		{"final", 0.75},
		{"best", 100.75},
		{"step:0", -9.25},
		{"step:2", 0.75},
		{"tokens:100", -9.25},
		{"tokens:200", 100.75},
		{"tokens:300", 0.75},
		{"train_flops:0", -9.25},
		{"train_flops:2500", 100.75},
		{"train_flops:3k", 0.75},
	}
	for _, tc := range tests {
		t.Run(tc.at, func(t *testing.T) {
			at, err := ParseAt(tc.at)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := Build(s, "cmp", Options{Metrics: []string{"reward/mean"}, At: at, FLOPsMetric: "train_flops"})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Baseline != "flat" || len(rep.Rows) != 4 || rep.Rows[0].Variant != "flat" {
				t.Fatalf("rows %+v", rep.Rows)
			}
			flat := rep.Rows[0].Cells[0]
			if !near(flat.Summary.Mean, tc.flatMean, 1e-9) || !near(flat.Summary.HalfWidth, hw, 1e-7) || flat.Test != nil {
				t.Errorf("flat %+v", flat)
			}
			// R: t.test(sleepB, sleepA, paired = TRUE): t = 4.0621, df = 9, p = 0.002833.
			tree := rep.Rows[1].Cells[0]
			if tt := tree.Test; tt == nil || tt.Kind != stats.Paired || !near(tt.T, 4.0621, 5e-5) || tt.DF != 9 || !near(tt.P, 0.002833, 5e-4) {
				t.Errorf("tree test %+v", tree.Test)
			}
			// R: t.test(sleepB, sleepA): t = 1.8608, df = 17.776, p = 0.07939.
			other := rep.Rows[2].Cells[0]
			if tt := other.Test; tt == nil || tt.Kind != stats.Welch || !near(tt.T, 1.8608, 5e-5) || !near(tt.DF, 17.776, 5e-5) || !near(tt.P, 0.07939, 5e-4) {
				t.Errorf("other test %+v", other.Test)
			}
			solo := rep.Rows[3].Cells[0]
			if solo.Summary.N != 1 || solo.Summary.HasInterval || solo.Test != nil {
				t.Errorf("solo %+v", solo)
			}
		})
	}
}

// A point off the runs is an error that says which points would do: no
// clamping to a finished run's last value, no value between token marks.
func TestReportPointOffRuns(t *testing.T) {
	s := reportStore(t)
	tests := []struct {
		at   string
		want []string
	}{
		{"step:7", []string{"at step:7", "ended at step 2", "every finished run reaches step 2"}},
		{"tokens:250", []string{"at tokens:250", `metric "reward/mean"`, "has no row at 250 sampled tokens", "(and 30 more runs)", "token marks where every run has a row of reward/mean: 100, 200, 300"}},
		{"tokens:99999999", []string{"ended at 300 sampled tokens", "100, 200, 300"}},
		{"train_flops:1e9", []string{"ended at 3000 training FLOPs", "every finished run reaches 3000 training FLOPs"}},
	}
	for _, tc := range tests {
		at, err := ParseAt(tc.at)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Build(s, "cmp", Options{Metrics: []string{"reward/mean"}, At: at, FLOPsMetric: "train_flops"})
		for _, w := range tc.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %v, want it to contain %q", tc.at, err, w)
			}
		}
	}
	_, err := Build(s, "cmp", Options{At: At{Kind: AtTrainFLOPs, FLOPs: 10}, FLOPsMetric: "budget/train_flops_cum"})
	if err == nil || !strings.Contains(err.Error(), "recorded no budget/train_flops_cum") || !strings.Contains(err.Error(), "compare at tokens:T or step:N instead") {
		t.Errorf("absent FLOPs metric: %v", err)
	}
	if _, err := Build(s, "cmp", Options{At: At{Kind: AtTrainFLOPs, FLOPs: 10}}); err == nil {
		t.Error("train_flops without a FLOPs metric accepted")
	}
}

// Runs of one variant with different configs are never pooled.
func TestReportRefusesPooledConfigs(t *testing.T) {
	s := newStore(t)
	for i, cfg := range []string{"train: {total_tokens: 2000, lr: 1}\n", "train: {total_tokens: 2000, lr: 1}\n", "train: {lr: 1, total_tokens: 3000}\n"} {
		id := fmt.Sprint("r", i)
		addRun(t, s, "e", id, "flat", int64(i), cfg)
		commit(t, s, id, 0, 0, map[string]float64{"eval/acc": 0.5})
		finish(t, s, id)
	}
	want := `variant "flat" of experiment "e" has runs of different configs, which a report does not pool: train.total_tokens is 2000 in run r0 (seed 0) and 3000 in run r2 (seed 2); rerun`
	if _, err := Build(s, "e", Options{}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("report: %v, want %q", err, want)
	}
	if _, err := Curves(s, "e", PlotOptions{Metric: "eval/acc"}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("plot: %v, want %q", err, want)
	}
}

func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

func TestReportOptions(t *testing.T) {
	s := reportStore(t)
	rep, err := Build(s, "cmp", Options{Baseline: "tree", Metrics: []string{"reward/mean", "missing/metric"}, At: At{Kind: AtStep, Step: 2}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rows[0].Variant != "tree" || rep.Rows[1].Variant != "flat" {
		t.Errorf("baseline not first: %v, %v", rep.Rows[0].Variant, rep.Rows[1].Variant)
	}
	if c := rep.Rows[1].Cells[0]; c.Test == nil || !near(c.Test.T, -4.0621, 5e-5) {
		t.Errorf("flat against tree: %+v", c.Test)
	}
	if c := rep.Rows[1].Cells[1]; c.Summary.N != 0 || c.Missing != 10 || c.Test != nil {
		t.Errorf("missing metric: %+v", c)
	}
	// Default metrics come from the caller: those recorded, else all.
	rep, err = Build(s, "cmp", Options{DefaultMetrics: []string{"eval/acc", "reward/mean"}})
	if err != nil || len(rep.Metrics) != 1 || rep.Metrics[0] != "reward/mean" {
		t.Errorf("default metrics %v %v", rep, err)
	}
	rep, err = Build(s, "cmp", Options{})
	if err != nil || strings.Join(rep.Metrics, " ") != "other reward/mean train_flops" {
		t.Errorf("no default metrics: %v %v", rep.Metrics, err)
	}
	// The experiment's recorded baseline (the config's baseline:).
	if err := s.PutExperiment(tracking.Experiment{Name: "cmp", Baseline: "other"}); err != nil {
		t.Fatal(err)
	}
	if rep, err := Build(s, "cmp", Options{Metrics: []string{"reward/mean"}}); err != nil || rep.Baseline != "other" || rep.Rows[0].Variant != "other" {
		t.Errorf("recorded baseline: %v", err)
	}
	errs := []struct {
		exp  string
		opts Options
		want string
	}{
		{"nope", Options{}, `experiment "nope": not found`},
		{"cmp", Options{Baseline: "ghost"}, `baseline variant "ghost"`},
		{"cmp", Options{Metrics: []string{"reward/mena"}}, `recorded metric "reward/mena" (recorded: other, reward/mean, train_flops)`},
	}
	for _, e := range errs {
		if _, err := Build(s, e.exp, e.opts); err == nil || !strings.Contains(err.Error(), e.want) {
			t.Errorf("err %v, want %q", err, e.want)
		}
	}
}

func TestParseAt(t *testing.T) {
	tests := []struct {
		in   string
		want At
		err  bool
	}{
		{"final", At{Kind: AtFinal}, false},
		{"best", At{Kind: AtBest}, false},
		{"step:12", At{Kind: AtStep, Step: 12}, false},
		{"tokens:2M", At{Kind: AtTokens, Tokens: 2_000_000}, false},
		{"tokens:1.5k", At{Kind: AtTokens, Tokens: 1500}, false},
		{"tokens:500", At{Kind: AtTokens, Tokens: 500}, false},
		{"train_flops:3e12", At{Kind: AtTrainFLOPs, FLOPs: 3e12}, false},
		{"train_flops:2T", At{Kind: AtTrainFLOPs, FLOPs: 2e12}, false},
		{"train_flops:", At{}, true},
		{"flops:2e13", At{Kind: AtFLOPs, FLOPs: 2e13}, false},
		{"flops:20T", At{Kind: AtFLOPs, FLOPs: 2e13}, false},
		{"flops:", At{}, true},
		{"flops:-5", At{}, true},
		{"train_flops:-1", At{}, true},
		{"step:-1", At{}, true},
		{"step:", At{}, true},
		{"final:3", At{}, true},
		{"tokens:x", At{}, true},
		{"last", At{}, true},
	}
	for _, tc := range tests {
		got, err := ParseAt(tc.in)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("ParseAt(%q) = %+v, %v", tc.in, got, err)
		}
	}
}

// Every report says which axis it compares on.
func TestAxisLabels(t *testing.T) {
	s := reportStore(t)
	tests := []struct {
		at   At
		want string
	}{
		{At{}, "at the end of each run"},
		{At{Kind: AtBest}, "at each run's best value"},
		{At{Kind: AtStep, Step: 2}, "at step 2 (equal optimizer updates)"},
		{At{Kind: AtTokens, Tokens: 200}, "at 200 sampled tokens (evaluation mark)"},
		{At{Kind: AtTrainFLOPs, FLOPs: 2500}, "at 2500 training FLOPs (each run's last row at or below)"},
	}
	for _, tc := range tests {
		if got := tc.at.Axis(); got != tc.want {
			t.Errorf("%v: axis %q, want %q", tc.at, got, tc.want)
		}
		rep, err := Build(s, "cmp", Options{Metrics: []string{"reward/mean"}, At: tc.at, FLOPsMetric: "train_flops"})
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []Format{FormatTable, FormatMarkdown, FormatCSV, FormatJSON} {
			var buf bytes.Buffer
			if err := rep.Write(&buf, f); err != nil {
				t.Fatal(err)
			}
			want := tc.want
			switch f {
			case FormatTable, FormatMarkdown:
				want = "cmp " + tc.want + ": mean ± 95% t-interval"
			case FormatJSON:
				var v struct{ Axis string }
				if err := json.Unmarshal(buf.Bytes(), &v); err != nil || v.Axis != tc.want {
					t.Errorf("%v json: axis %q, %v", tc.at, v.Axis, err)
				}
			case FormatCSV:
				recs, err := csv.NewReader(&buf).ReadAll()
				if err != nil || recs[0][19] != "axis" || recs[1][19] != tc.want {
					t.Errorf("%v csv: %v, %v", tc.at, recs[:2], err)
				}
				continue
			}
			if !strings.Contains(buf.String(), want) {
				t.Errorf("%v %s: no %q in\n%s", tc.at, f, want, buf.String())
			}
		}
	}
}

func TestReportTokensUnfinished(t *testing.T) {
	s := newStore(t)
	s.PutExperiment(tracking.Experiment{Name: "e"})
	addRun(t, s, "e", "r0", "v", 0, "")
	commit(t, s, "r0", 0, 0, map[string]float64{"m": 0})
	commit(t, s, "r0", 1, 100, map[string]float64{"m": 1})
	finish(t, s, "r0")
	addRun(t, s, "e", "r1", "v", 1, "")
	commit(t, s, "r1", 0, 0, map[string]float64{"m": 5})
	rep, err := Build(s, "e", Options{At: At{Kind: AtTokens, Tokens: 100}})
	if err != nil {
		t.Fatal(err)
	}
	// The running run has not reached 100 tokens yet and is missing.
	if c := rep.Rows[0].Cells[0]; c.Summary.N != 1 || c.Missing != 1 || c.Values[0] != 1 || rep.Rows[0].Unfinished != 1 {
		t.Errorf("row %+v", rep.Rows[0])
	}
	var buf bytes.Buffer
	rep.Write(&buf, FormatTable)
	if !strings.Contains(buf.String(), "2 (1 unfinished)") || !strings.Contains(buf.String(), "[1 missing]") {
		t.Errorf("table does not flag the unfinished run:\n%s", buf.String())
	}
	// The finished run ended at 100 tokens: 1000 is beyond it.
	if _, err := Build(s, "e", Options{At: At{Kind: AtTokens, Tokens: 1000}}); err == nil || !strings.Contains(err.Error(), "run r0 (variant v, seed 0) ended at 100 sampled tokens; token marks where every run has a row of m: 0") {
		t.Errorf("beyond a finished run: %v", err)
	}
}

func TestReportRender(t *testing.T) {
	s := reportStore(t)
	rep, err := Build(s, "cmp", Options{Metrics: []string{"reward/mean"}, Minimize: lowerIsBetter})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Format{FormatTable, FormatMarkdown, FormatCSV, FormatJSON} {
		t.Run(string(f), func(t *testing.T) {
			var buf bytes.Buffer
			if err := rep.Write(&buf, f); err != nil {
				t.Fatal(err)
			}
			out := buf.String()
			switch f {
			case FormatTable, FormatMarkdown:
				for _, want := range []string{"reward/mean", "0.75 ± 1.28", "0.003 paired", "0.079 welch", "5 (n=1)", "baseline"} {
					if !strings.Contains(out, want) {
						t.Errorf("missing %q in\n%s", want, out)
					}
				}
				if f == FormatMarkdown && !strings.Contains(out, "|") {
					t.Errorf("no markdown table:\n%s", out)
				}
			case FormatCSV:
				recs, err := csv.NewReader(&buf).ReadAll()
				if err != nil || len(recs) != 5 || recs[1][2] != "flat" || recs[1][6] != "0.75" || recs[2][12] != "paired" {
					t.Errorf("csv %v %v", recs, err)
				}
			case FormatJSON:
				var v struct {
					Variants []struct {
						Variant string
						Metrics []struct {
							Mean *float64
							Test *struct {
								Kind string
								P    float64
							}
						}
					}
				}
				if err := json.Unmarshal(buf.Bytes(), &v); err != nil {
					t.Fatal(err)
				}
				if len(v.Variants) != 4 || *v.Variants[0].Metrics[0].Mean != 0.75 || v.Variants[1].Metrics[0].Test.Kind != "paired" {
					t.Errorf("json %s", out)
				}
			}
		})
	}
	if _, err := ParseFormat("html"); err == nil {
		t.Error("html accepted")
	}
}

func TestValueAt(t *testing.T) {
	ser := tracking.Series{Steps: []int{2, 4, 6}, Tokens: []int64{10, 20, 30}, Values: []float64{3, 1, 2}}
	flops := tracking.Series{Steps: []int{1, 2, 3, 4, 5, 6}, Values: []float64{100, 200, 300, 400, 500, 600}}
	running := tracking.Run{Status: tracking.StatusRunning, Tokens: 30, LastStep: 6}
	finished := tracking.Run{Status: tracking.StatusFinished, Tokens: 30, LastStep: 6}
	tests := []struct {
		name     string
		at       At
		run      tracking.Run
		noFLOPs  bool
		minimize bool
		want     float64
		ok       bool
		why      string
	}{
		{name: "final", at: At{Kind: AtFinal}, run: running, want: 2, ok: true},
		{name: "best max", at: At{Kind: AtBest}, run: running, want: 3, ok: true},
		{name: "best min", at: At{Kind: AtBest}, run: running, minimize: true, want: 1, ok: true},
		{name: "step exact", at: At{Kind: AtStep, Step: 4}, run: running, want: 1, ok: true},
		{name: "step between", at: At{Kind: AtStep, Step: 5}, run: running, want: 1, ok: true},
		{name: "step before first", at: At{Kind: AtStep, Step: 1}, run: running},
		{name: "step not reached, running", at: At{Kind: AtStep, Step: 9}, run: running},
		{name: "step beyond, finished", at: At{Kind: AtStep, Step: 9}, run: finished, why: "ended at step 6"},
		{name: "tokens exact", at: At{Kind: AtTokens, Tokens: 20}, run: running, want: 1, ok: true},
		{name: "tokens between", at: At{Kind: AtTokens, Tokens: 25}, run: finished, why: "has no row at 25 sampled tokens"},
		{name: "tokens not reached, running", at: At{Kind: AtTokens, Tokens: 99}, run: running},
		{name: "tokens beyond, finished", at: At{Kind: AtTokens, Tokens: 99}, run: finished, why: "ended at 30 sampled tokens"},
		{name: "tokens before first", at: At{Kind: AtTokens, Tokens: 5}, run: running, why: "has no row at 5 sampled tokens"},
		{name: "flops between", at: At{Kind: AtTrainFLOPs, FLOPs: 450}, run: finished, want: 1, ok: true},
		{name: "flops exact", at: At{Kind: AtTrainFLOPs, FLOPs: 600}, run: finished, want: 2, ok: true},
		{name: "flops before first row", at: At{Kind: AtTrainFLOPs, FLOPs: 150}, run: finished},
		{name: "flops not reached, running", at: At{Kind: AtTrainFLOPs, FLOPs: 700}, run: running},
		{name: "flops beyond, finished", at: At{Kind: AtTrainFLOPs, FLOPs: 700}, run: finished, why: "ended at 600 training FLOPs"},
		{name: "flops not recorded", at: At{Kind: AtTrainFLOPs, FLOPs: 1}, run: finished, noFLOPs: true, why: "recorded no training FLOPs"},
	}
	for _, tc := range tests {
		fl := &flops
		if tc.noFLOPs {
			fl = &tracking.Series{}
		}
		got, ok, why := valueAt(&ser, fl, tc.run, tc.at, tc.minimize)
		if got != tc.want || ok != tc.ok || why != tc.why {
			t.Errorf("%s: got %v %v %q, want %v %v %q", tc.name, got, ok, why, tc.want, tc.ok, tc.why)
		}
	}
}

// TestReportTokensAtMarks: a run evaluates at mark T once the tokens left
// before T cover no further group, so its row lies short of T; tokens:T
// takes the row whose mark metric is T, and the hint lists the marks.
func TestReportTokensAtMarks(t *testing.T) {
	s := newStore(t)
	s.PutExperiment(tracking.Experiment{Name: "e"})
	// Two runs reach mark 100 at different token counts (97 and 92) and
	// end at mark 200 (198, 195); reward is recorded at every step, the
	// accuracy only at marks.
	for i, cum := range [][]int64{{0, 50, 97, 150, 198}, {0, 60, 92, 140, 195}} {
		id := fmt.Sprintf("r%d", i)
		addRun(t, s, "e", id, "v", int64(i), "")
		for step, tok := range cum {
			m := map[string]float64{"reward": float64(10*i + step)}
			if mark, ok := map[int]float64{0: 0, 2: 100, 4: 200}[step]; ok {
				m["acc"], m["mark"] = float64(100*i+step), mark
			}
			commit(t, s, id, step, tok, m)
		}
		finish(t, s, id)
	}
	for _, tc := range []struct {
		at      int64
		metric  string
		want    []float64 // per run, seed order
		wantErr string
	}{
		{at: 0, metric: "acc", want: []float64{0, 100}},
		{at: 100, metric: "acc", want: []float64{2, 102}},
		{at: 200, metric: "acc", want: []float64{4, 104}},
		{at: 100, metric: "reward", want: []float64{2, 12}},
		{at: 97, metric: "acc", wantErr: "token marks where every run has a row of acc: 0, 100, 200"},
		{at: 150, metric: "reward", wantErr: "has no row at 150 sampled tokens"},
		{at: 300, metric: "acc", wantErr: "ended at 198 sampled tokens"},
	} {
		rep, err := Build(s, "e", Options{Metrics: []string{tc.metric}, At: At{Kind: AtTokens, Tokens: tc.at}, MarkMetric: "mark"})
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("tokens:%d %s: err %v, want %q", tc.at, tc.metric, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("tokens:%d %s: %v", tc.at, tc.metric, err)
			continue
		}
		if got := rep.Rows[0].Cells[0].Values; !slices.Equal(got, tc.want) {
			t.Errorf("tokens:%d %s = %v, want %v", tc.at, tc.metric, got, tc.want)
		}
	}
	// Without the mark metric only exact token counts match.
	if _, err := Build(s, "e", Options{Metrics: []string{"acc"}, At: At{Kind: AtTokens, Tokens: 100}}); err == nil {
		t.Error("tokens:100 without a mark metric: no error")
	}
}

// TestReportFLOPsAtMarks: flops:F takes each run's evaluation at total-FLOPs
// mark F (the row whose FLOPs-mark metric is F), on marks only: an F that
// is not a mark of every run is an error listing those that are.
func TestReportFLOPsAtMarks(t *testing.T) {
	s := newStore(t)
	s.PutExperiment(tracking.Experiment{Name: "e"})
	for i := range 2 {
		id := fmt.Sprintf("r%d", i)
		addRun(t, s, "e", id, "v", int64(i), "")
		for step := range 5 {
			m := map[string]float64{"reward": float64(10*i + step)}
			if mark, ok := map[int]float64{0: 0, 2: 1e12, 4: 2e12}[step]; ok {
				m["acc"], m["fmark"] = float64(100*i+step), mark
			}
			commit(t, s, id, step, int64(10*step), m)
		}
		finish(t, s, id)
	}
	for _, tc := range []struct {
		at      float64
		metric  string
		want    []float64 // per run, seed order
		wantErr string
	}{
		{at: 0, metric: "acc", want: []float64{0, 100}},
		{at: 1e12, metric: "acc", want: []float64{2, 102}},
		{at: 2e12, metric: "reward", want: []float64{4, 14}},
		{at: 1.5e12, metric: "acc", wantErr: "has no evaluation at 1.5e+12 FLOPs (and 1 more runs); FLOPs marks where every run has a row of acc: 0, 1000000000000, 2000000000000"},
		{at: 3e12, metric: "acc", wantErr: "has no evaluation at 3e+12 FLOPs"},
	} {
		rep, err := Build(s, "e", Options{Metrics: []string{tc.metric}, At: At{Kind: AtFLOPs, FLOPs: tc.at}, FLOPsMarkMetric: "fmark"})
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("flops:%g %s: err %v, want %q", tc.at, tc.metric, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("flops:%g %s: %v", tc.at, tc.metric, err)
			continue
		}
		if got := rep.Rows[0].Cells[0].Values; !slices.Equal(got, tc.want) {
			t.Errorf("flops:%g %s = %v, want %v", tc.at, tc.metric, got, tc.want)
		}
		if want := fmt.Sprintf("at %g total FLOPs (evaluation mark)", tc.at); rep.At.Axis() != want {
			t.Errorf("flops:%g: axis %q, want %q", tc.at, rep.At.Axis(), want)
		}
	}
	if _, err := Build(s, "e", Options{Metrics: []string{"acc"}, At: At{Kind: AtFLOPs, FLOPs: 1e12}}); err == nil {
		t.Error("flops:1e12 without a FLOPs-mark metric: no error")
	}
	if _, err := Build(s, "e", Options{Metrics: []string{"acc"}, At: At{Kind: AtFLOPs, FLOPs: 1e12}, FLOPsMarkMetric: "none"}); err == nil || !strings.Contains(err.Error(), "evaluated at no FLOPs marks") {
		t.Errorf("flops:1e12 on runs without marks: err %v", err)
	}
}
