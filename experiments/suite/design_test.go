package suite

import (
	"bytes"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/rollout-rl/rollout/experiments/design"
	"github.com/rollout-rl/rollout/tracking"
	"github.com/rollout-rl/rollout/tracking/report/stats"
)

// outcomesOf evaluates report r on the store's experiment econ_x.
func outcomesOf(t *testing.T, st *tracking.Store, r Report) []Outcome {
	t.Helper()
	exp, runs, err := experimentOf(st, r)
	if err != nil {
		t.Fatal(err)
	}
	outs, _, _, err := evaluateReport(st, r, exp, runs, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	return outs
}

// gains whose paired test against 0 has p ≈ 0.045 (t ≈ 2.89, 4 df).
var borderline = []float64{0.05, 0.01, 0.04, 0.00, 0.04}

func TestConfirmatoryAndExploratory(t *testing.T) {
	declared := Check{Name: "gain", Variant: "v", Metric: "eval/acc", At: "final", Want: Higher, PilotSD: 0.02}
	other := Check{Variant: "v", Metric: "eval/acc", At: "step:1", Want: Higher}
	r := Report{Name: "x", Checks: []Check{other}}
	d := design.Default()
	d.Checks = []Check{declared}

	// Declared before the runs: confirmatory; the report's undeclared
	// check is exploratory and does not decide the verdict.
	st := fakeDesigned(t, []float64{0.05, 0.06, 0.04, 0.05, 0.05}, &d, time.Time{})
	outs := outcomesOf(t, st, r)
	if len(outs) != 2 || outs[0].ID() != "gain" || outs[0].Exploratory || !outs[1].Exploratory || outs[1].Why != "not declared in the recorded design" {
		t.Fatalf("outcomes %+v", outs)
	}
	if v, exploratory := overall(outs); v != Holds || exploratory {
		t.Errorf("verdict %s (exploratory %v), want a confirmatory holds", v, exploratory)
	}
	// Planned MDE: (t.975,4 + t.8,4)·0.02/√5.
	if want := (2.776445105 + 0.940964650) * 0.02 / math.Sqrt(5); math.Abs(outs[0].PlannedMDE-want) > 1e-7 || !math.IsNaN(outs[1].PlannedMDE) {
		t.Errorf("planned MDEs %v, %v; want %v and none", outs[0].PlannedMDE, outs[1].PlannedMDE, want)
	}
	var buf bytes.Buffer
	if _, err := Render(&buf, st, r, t.TempDir(), Meta{}); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{"**Verdict: holds.**", "| gain | confirmatory, primary |", "before its first run", "`v eval/acc step:1` is exploratory: not declared in the recorded design.", "Evaluation the checks read: `eval/acc`: greedy accuracy"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}

	// The same design recorded after the runs began: exploratory.
	late := fakeDesigned(t, []float64{0.05, 0.06, 0.04, 0.05, 0.05}, &d, time.Unix(0, 0))
	outs = outcomesOf(t, late, r)
	if !outs[0].Exploratory || !strings.Contains(outs[0].Why, "after its runs began (1970-01-01 00:00:00Z)") {
		t.Errorf("a check declared after its runs: %+v", outs[0])
	}
	if v, exploratory := overall(outs); v != Holds || !exploratory {
		t.Errorf("verdict %s (exploratory %v), want an exploratory holds", v, exploratory)
	}
	// No design at all: exploratory.
	outs = outcomesOf(t, fakeStore(t, []float64{0.05, 0.06, 0.04, 0.05, 0.05}), Report{Name: "x", Checks: []Check{declared}})
	if !outs[0].Exploratory || outs[0].Why != "no design was recorded before the runs" {
		t.Errorf("no design: %+v", outs[0])
	}
}

// Holm's correction over the primary family turns two borderline checks
// (p ≈ 0.045 each) inconclusive; without it, or for a secondary check,
// they hold.
func TestHolmOverThePrimaryFamily(t *testing.T) {
	final := Check{Name: "final", Variant: "v", Metric: "eval/acc", At: "final", Want: Higher}
	mid := Check{Name: "mid", Variant: "v", Metric: "eval/acc", At: "step:1", Want: Higher}
	for _, tc := range []struct {
		name       string
		correction design.Correction
		family     design.Family
		want       Verdict
		corrected  bool
	}{
		{"holm", design.Holm, design.Primary, Inconclusive, true},
		{"none", design.None, design.Primary, Holds, false},
		{"secondary", design.Holm, design.Secondary, Holds, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := design.Default()
			d.Correction = tc.correction
			m := mid
			m.Family = tc.family
			d.Checks = []Check{final, m}
			outs := outcomesOf(t, fakeDesigned(t, borderline, &d, time.Time{}), Report{Name: "x"})
			if p := outs[0].PHolds; !(p > 0.025 && p < 0.05) {
				t.Fatalf("p = %v, want a borderline p", p)
			}
			if outs[0].Verdict != tc.want || outs[0].Corrected != tc.corrected {
				t.Errorf("final: %s (corrected %v, p %.3g, adjusted %.3g), want %s", outs[0].Verdict, outs[0].Corrected, outs[0].PHolds, outs[0].AdjP, tc.want)
			}
			if tc.corrected && math.Abs(outs[0].AdjP-2*outs[0].PHolds) > 1e-12 {
				t.Errorf("Holm p %v, want 2 × %v", outs[0].AdjP, outs[0].PHolds)
			}
		})
	}
}

// A check on a premise the test bed does not meet, and any check on wall
// time, is not testable here; a report of such checks alone says so.
func TestNotTestableHere(t *testing.T) {
	d := design.Default()
	d.Premises = []design.Premise{{Name: "big", Text: "a model large enough to reason"}}
	d.Checks = []Check{
		{Name: "acc", Variant: "v", Metric: "eval/acc", At: "final", Want: Higher, Premise: "big"},
		{Name: "gen", Variant: "v", Metric: "timing_s/gen", At: "mean", Want: Lower},
	}
	st := fakeDesigned(t, []float64{0.05, 0.06, 0.04, 0.05, 0.05}, &d, time.Time{})
	outs := outcomesOf(t, st, Report{Name: "x"})
	if outs[0].Verdict != Holds || outs[1].Verdict != NotTestable || !strings.Contains(outs[1].Premise, "interleaved_wall_time") {
		t.Fatalf("premise met, wall time: %+v", outs)
	}
	if v, _ := overall(outs); v != Holds {
		t.Errorf("verdict %s, want holds from the testable check", v)
	}
	// The report states that this test bed does not meet the premise.
	r := Report{Name: "x", Premises: []design.Premise{{Name: "big", Text: "a model large enough to reason", Unmet: "a tiny model"}}}
	outs = outcomesOf(t, st, r)
	if outs[0].Verdict != NotTestable || !strings.Contains(outs[0].Premise, "big (a model large enough to reason) is not met: a tiny model") {
		t.Fatalf("premise unmet: %+v", outs[0])
	}
	if v, _ := overall(outs); v != NotTestable {
		t.Errorf("verdict %s, want not testable here", v)
	}
	var buf bytes.Buffer
	if _, err := Render(&buf, st, r, t.TempDir(), Meta{}); err != nil {
		t.Fatal(err)
	}
	if md := buf.String(); !strings.Contains(md, "**Verdict: not testable here.** This test bed cannot answer the claim: big") || !strings.Contains(md, "**not met here**: a tiny model") {
		t.Errorf("report:\n%s", md)
	}
}

// The same design on two base policies (two experiments): each one's
// verdict, then each check pooled with random effects beside each one's
// estimate.
func TestWriteVerdictsPools(t *testing.T) {
	st := fakeDesigned(t, []float64{0.05, 0.06, 0.04, 0.05, 0.05}, nil, time.Time{})
	d := design.Default()
	d.Checks = []Check{{Name: "gain", Variant: "v", Metric: "eval/acc", At: "final", Want: Higher}}
	fakeInto(t, st, "b0", []float64{0.05, 0.06, 0.04, 0.05, 0.05}, &d, time.Time{})
	fakeInto(t, st, "b1", []float64{0.01, 0.03, -0.01, 0.02, 0.00}, &d, time.Time{})
	var buf bytes.Buffer
	if err := WriteVerdicts(&buf, st, []string{"b0", "b1"}, Meta{}); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	for _, want := range []string{"## b0", "## b1", "**Verdict: holds.**", "## Pooled across `b0`, `b1`", "| gain | primary | +0.05 [", "Design `"} {
		if !strings.Contains(md, want) {
			t.Errorf("verdicts lack %q:\n%s", want, md)
		}
	}
	var outs [][]Outcome
	for _, name := range []string{"b0", "b1"} {
		exp, runs, err := finishedExperiment(st, name, Report{Name: name})
		if err != nil {
			t.Fatal(err)
		}
		o, _, _, err := evaluateReport(st, Report{Name: name}, exp, runs, Meta{})
		if err != nil {
			t.Fatal(err)
		}
		outs = append(outs, o)
	}
	pools, err := PoolChecks([]string{"b0", "b1"}, outs)
	if err != nil || len(pools) != 1 || pools[0].Err != nil {
		t.Fatalf("pools %+v, %v", pools, err)
	}
	want, _ := stats.DerSimonianLaird([]float64{outs[0][0].Test.Diff, outs[1][0].Test.Diff}, []float64{outs[0][0].Test.StdErr, outs[1][0].Test.StdErr}, 0.95)
	if got := pools[0].Pooled; got != want || !(got.Estimate > 0.01 && got.Estimate < 0.05) {
		t.Errorf("pooled %+v, want %+v between the two estimates", got, want)
	}
	if !strings.Contains(md, "**Pooled verdict: ") || !strings.Contains(md, " | primary | +0.05 [") {
		t.Errorf("verdicts lack the pooled verdict:\n%s", md)
	}
}

// A pooled check is decided on its pooled interval, with Holm over the
// pooled confirmatory checks of the primary family; a check exploratory
// or not testable in any experiment is so pooled.
func TestDecidePools(t *testing.T) {
	each := func(diffs, ses []float64, mod func(*Outcome)) []Outcome {
		var outs []Outcome
		for i := range diffs {
			o := Outcome{Test: stats.TestResult{Diff: diffs[i], StdErr: ses[i]}, Verdict: Inconclusive}
			if mod != nil {
				mod(&o)
			}
			outs = append(outs, o)
		}
		return outs
	}
	pool := func(c Check, outs []Outcome) Pool {
		d, se := make([]float64, len(outs)), make([]float64, len(outs))
		for i, o := range outs {
			d[i], se[i] = o.Test.Diff, o.Test.StdErr
		}
		q, err := stats.DerSimonianLaird(d, se, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		return Pool{Check: c, Each: outs, Pooled: q}
	}
	higher := Check{Name: "a", Want: Higher}
	for _, tc := range []struct {
		name  string
		pools []Pool
		want  []Verdict
		holm  []bool
	}{
		// Each base alone is inconclusive (z ≈ 1.7); pooled over four,
		// z ≈ 3.4: holds, alone in its family.
		{"pooling decides", []Pool{pool(higher, each([]float64{0.03, 0.03, 0.03, 0.03}, []float64{0.0175, 0.0175, 0.0175, 0.0175}, nil))}, []Verdict{Holds}, []bool{false}},
		// Pooled z ≈ 2.1 (p ≈ 0.035): holds alone; Holm with a null
		// second primary check doubles it past 0.05.
		{"holm", []Pool{
			pool(higher, each([]float64{0.03, 0.03}, []float64{0.02, 0.02}, nil)),
			pool(Check{Name: "b", Want: Higher, Margin: 0.001}, each([]float64{-0.05, -0.05}, []float64{0.01, 0.01}, nil)),
		}, []Verdict{Inconclusive, DoesNotHold}, []bool{true, true}},
		{"secondary outside the family", []Pool{
			pool(higher, each([]float64{0.03, 0.03}, []float64{0.02, 0.02}, nil)),
			pool(Check{Name: "b", Want: Higher, Family: design.Secondary}, each([]float64{0, 0}, []float64{0.01, 0.01}, nil)),
		}, []Verdict{Holds, Inconclusive}, []bool{false, false}},
		{"exploratory in one", []Pool{pool(higher, each([]float64{0.05, 0.05}, []float64{0.01, 0.01}, func(o *Outcome) { o.Exploratory = true }))}, []Verdict{Holds}, []bool{false}},
		{"not testable in one", []Pool{pool(higher, each([]float64{0.05, 0.05}, []float64{0.01, 0.01}, func(o *Outcome) { o.Verdict = NotTestable }))}, []Verdict{NotTestable}, []bool{false}},
		{"not worse", []Pool{pool(Check{Name: "n", Want: NotWorse, Margin: 0.02}, each([]float64{0.0, 0.0, 0.0}, []float64{0.005, 0.005, 0.005}, nil))}, []Verdict{Holds}, []bool{false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			decidePools(tc.pools, 0.05)
			for i, pl := range tc.pools {
				if pl.Verdict != tc.want[i] || pl.Corrected != tc.holm[i] {
					t.Errorf("pool %d: %s (corrected %v, p %.3g, Holm %.3g), want %s (corrected %v)", i, pl.Verdict, pl.Corrected, pl.PHolds, pl.AdjP, tc.want[i], tc.holm[i])
				}
			}
		})
	}
	pools := []Pool{pool(higher, each([]float64{0.05, 0.05}, []float64{0.01, 0.01}, func(o *Outcome) { o.Exploratory = true }))}
	decidePools(pools, 0.05)
	if v, exploratory := pooledOverall(pools); v != Holds || !exploratory {
		t.Errorf("pooled overall %s exploratory %v, want holds (exploratory)", v, exploratory)
	}
}

// interleavedStore is fakeDesigned's experiment with every run begun
// before any ends (variants side by side in one sitting), and, when
// loads is set, the load recorded beside each.
func interleavedStore(t *testing.T, d *design.Design, loads bool) *tracking.Store {
	t.Helper()
	st := fakeDesigned(t, nil, d, time.Time{})
	configs := fakeConfigs(t)
	var ids []string
	for seed := int64(1); seed <= 5; seed++ {
		for _, variant := range []string{"base", "v"} {
			id := fmt.Sprintf("%s%d", variant, seed)
			if _, err := st.BeginRun(tracking.Run{ID: id, Experiment: "econ_x", Variant: variant, Seed: seed, Config: configs[variant]}); err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
	}
	for i, id := range ids {
		cost := 10.0 + float64(i/2)
		if strings.HasPrefix(id, "v") {
			cost--
		}
		if err := st.CommitStep(id, tracking.StepRecord{Step: 1, Metrics: map[string]float64{"timing_s/gen": cost}}); err != nil {
			t.Fatal(err)
		}
		if loads {
			for _, l := range []float64{1.5, 2.5} {
				if err := st.PutLoad(id, tracking.LoadSample{At: time.Now(), Event: "start", Load1: l, CPUs: 2}); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	for _, id := range ids {
		if err := st.EndRun(id, tracking.StatusFinished, ""); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// A check on wall time decides its verdict only when the variants ran side
// by side in one sitting with the load recorded beside every run.
func TestWallTimeInterleaved(t *testing.T) {
	d := design.Default()
	d.Checks = []Check{{Name: "gen", Variant: "v", Metric: "timing_s/gen", At: "mean", Want: Lower}}
	outs := outcomesOf(t, interleavedStore(t, &d, true), Report{Name: "x"})
	if outs[0].Verdict != Holds || outs[0].Load != "load average 1.50–2.50 on 2 CPUs beside these runs" {
		t.Errorf("interleaved with loads: %s, %q", outs[0].Verdict, outs[0].Load)
	}
	outs = outcomesOf(t, interleavedStore(t, &d, false), Report{Name: "x"})
	if outs[0].Verdict != NotTestable || !strings.Contains(outs[0].Premise, "no load was recorded beside run base1") {
		t.Errorf("interleaved without loads: %s, %q", outs[0].Verdict, outs[0].Premise)
	}
	outs = outcomesOf(t, fakeDesigned(t, []float64{0.05, 0.06, 0.04, 0.05, 0.05}, &d, time.Time{}), Report{Name: "x"})
	if outs[0].Verdict != NotTestable || !strings.Contains(outs[0].Premise, "the runs of v and base at seed 1 ran one after another") {
		t.Errorf("one after another: %s, %q", outs[0].Verdict, outs[0].Premise)
	}
}
