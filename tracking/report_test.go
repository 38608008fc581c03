package tracking

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/tracking/stats"
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
// has three steps: v−10 at 100 tokens, v+100 at 200, v at 300.
func reportStore(t testing.TB) *Store {
	s, _ := newStore(t, Options{NoSync: true})
	if err := s.PutExperiment(Experiment{Name: "cmp", Variants: []string{"flat", "tree", "other", "solo"}}); err != nil {
		t.Fatal(err)
	}
	add := func(variant string, seed int64, v float64) {
		id := fmt.Sprintf("%s-%d", variant, seed)
		addRun(t, s, "cmp", id, variant, seed)
		for i, x := range []float64{v - 10, v + 100, v} {
			if err := s.CommitStep(id, StepRecord{Step: i, Tokens: int64(100 * (i + 1)), Metrics: map[string]float64{"reward/mean": x, "other": 1}}); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.EndRun(id, StatusFinished, ""); err != nil {
			t.Fatal(err)
		}
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
		{"step:7", 0.75},
		{"tokens:250", 100.75},
		{"tokens:300", 0.75},
	}
	for _, tc := range tests {
		t.Run(tc.at, func(t *testing.T) {
			at, err := ParseAt(tc.at)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := s.Report("cmp", ReportOptions{Metrics: []string{"reward/mean"}, At: at})
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

func near(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

func TestReportOptions(t *testing.T) {
	s := reportStore(t)
	rep, err := s.Report("cmp", ReportOptions{Baseline: "tree", Metrics: []string{"reward/mean", "missing/metric"}, At: At{Kind: AtStep, Step: 9}})
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
	// Default metrics: reward/mean is recorded.
	rep, err = s.Report("cmp", ReportOptions{})
	if err != nil || len(rep.Metrics) != 1 || rep.Metrics[0] != "reward/mean" {
		t.Errorf("default metrics %v %v", rep, err)
	}
	errs := []struct {
		exp  string
		opts ReportOptions
		want string
	}{
		{"nope", ReportOptions{}, `experiment "nope": not found`},
		{"cmp", ReportOptions{Baseline: "ghost"}, `baseline variant "ghost"`},
		{"cmp", ReportOptions{Metrics: []string{"reward/mena"}}, `recorded metric "reward/mena" (recorded: other, reward/mean)`},
	}
	for _, e := range errs {
		if _, err := s.Report(e.exp, e.opts); err == nil || !strings.Contains(err.Error(), e.want) {
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

func TestReportTokensMissingUnfinished(t *testing.T) {
	s, _ := newStore(t, Options{NoSync: true})
	s.PutExperiment(Experiment{Name: "e"})
	for i, finish := range []bool{true, false} {
		id := fmt.Sprint("r", i)
		addRun(t, s, "e", id, "v", int64(i))
		s.CommitStep(id, StepRecord{Step: 0, Tokens: 100, Metrics: map[string]float64{"m": float64(i)}})
		if finish {
			s.EndRun(id, StatusFinished, "")
		}
	}
	rep, err := s.Report("e", ReportOptions{At: At{Kind: AtTokens, Tokens: 1000}})
	if err != nil {
		t.Fatal(err)
	}
	// The finished run used its budget and counts; the running one has not
	// reached 1000 tokens yet and is missing.
	if c := rep.Rows[0].Cells[0]; c.Summary.N != 1 || c.Missing != 1 || c.Values[0] != 0 || rep.Rows[0].Unfinished != 1 {
		t.Errorf("row %+v", rep.Rows[0])
	}
	var buf bytes.Buffer
	rep.Write(&buf, FormatTable)
	if !strings.Contains(buf.String(), "2 (1 unfinished)") || !strings.Contains(buf.String(), "[1 missing]") {
		t.Errorf("table does not flag the unfinished run:\n%s", buf.String())
	}
}

func TestReportRender(t *testing.T) {
	s := reportStore(t)
	rep, err := s.Report("cmp", ReportOptions{Metrics: []string{"reward/mean"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []ReportFormat{FormatTable, FormatMarkdown, FormatCSV, FormatJSON} {
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
	if _, err := ParseReportFormat("html"); err == nil {
		t.Error("html accepted")
	}
}

func TestValueAt(t *testing.T) {
	ser := Series{Steps: []int{2, 4, 6}, Tokens: []int64{10, 20, 30}, Values: []float64{3, 1, 2}}
	running := Run{Status: StatusRunning, Tokens: 30}
	finished := Run{Status: StatusFinished, Tokens: 30}
	tests := []struct {
		name     string
		at       At
		run      Run
		minimize bool
		want     float64
		ok       bool
	}{
		{"final", At{Kind: AtFinal}, running, false, 2, true},
		{"best max", At{Kind: AtBest}, running, false, 3, true},
		{"best min", At{Kind: AtBest}, running, true, 1, true},
		{"step exact", At{Kind: AtStep, Step: 4}, running, false, 1, true},
		{"step between", At{Kind: AtStep, Step: 5}, running, false, 1, true},
		{"step before first", At{Kind: AtStep, Step: 1}, running, false, 0, false},
		{"tokens between", At{Kind: AtTokens, Tokens: 25}, running, false, 1, true},
		{"tokens not reached, running", At{Kind: AtTokens, Tokens: 99}, running, false, 0, false},
		{"tokens not reached, finished", At{Kind: AtTokens, Tokens: 99}, finished, false, 2, true},
		{"tokens before first", At{Kind: AtTokens, Tokens: 5}, running, false, 0, false},
	}
	for _, tc := range tests {
		got, ok := valueAt(&ser, tc.run, tc.at, tc.minimize)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: got %v %v, want %v %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	var o ReportOptions
	for metric, want := range map[string]bool{"actor/kl_ref": true, "loss": true, "timing_s/gen": true, "reward/mean": false, "eval/acc": false} {
		if o.minimize(metric) != want {
			t.Errorf("minimize(%q) = %v", metric, !want)
		}
	}
}
