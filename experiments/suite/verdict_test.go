package suite

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/rollout-rl/rollout/experiments/design"
	"github.com/rollout-rl/rollout/tracking/report/stats"
)

// outcome is a decided check of variant v against base on eval/acc at the
// end, with the 95% interval [lo, hi].
func outcome(name string, want Direction, margin, lo, hi float64, v Verdict) Outcome {
	return Outcome{
		Check:   Check{Name: name, Variant: "v", Metric: "eval/acc", At: "final", Want: want, Margin: margin},
		Against: "base",
		Test:    stats.TestResult{Diff: (lo + hi) / 2, Lo: lo, Hi: hi},
		MDE:     0.04,
		Verdict: v,
	}
}

// A verdict's sentence names the checks that make it and says what their
// intervals exclude: an effect as large as the claim's, or any effect in
// the claimed direction; checks that do not decide it are not named.
func TestVerdictSentence(t *testing.T) {
	secondary := outcome("side", Higher, 0.03, -0.02, 0.01, DoesNotHold)
	secondary.Family = design.Secondary
	for _, tc := range []struct {
		name    string
		verdict Verdict
		outs    []Outcome
		want    []string
		not     []string
	}{
		{"short of the effect", DoesNotHold,
			[]Outcome{outcome("gain", Higher, 0.03, -0.01, 0.02, DoesNotHold), secondary},
			[]string{"A check that decides it does not hold: `gain` (v against base, eval/acc at final): its 95% interval [-0.01, +0.02] lies wholly below 0.03, the check's margin (the smallest difference that matters): a gain that large is excluded, a smaller one is not."},
			[]string{"`side`"}},
		{"the other side", DoesNotHold,
			[]Outcome{outcome("gain", Higher, 0.03, -0.04, -0.01, DoesNotHold), outcome("cut", Lower, 0, 0.01, 0.02, DoesNotHold)},
			[]string{"2 checks that decide it do not hold: ", "[-0.04, -0.01] lies wholly below 0: lower, not higher", "`cut` (v against base, eval/acc at final): its 95% interval [+0.01, +0.02] lies wholly above 0: higher, not lower"},
			nil},
		{"worse within the margin", DoesNotHold,
			[]Outcome{outcome("keeps", NotWorse, 0.05, -0.053, -0.003, DoesNotHold)},
			[]string{"lies wholly below 0: worse, though not shown to be worse by more than the margin (0.05)"},
			nil},
		{"worse past the margin", DoesNotHold,
			[]Outcome{outcome("keeps", NotWorse, 0.05, -0.09, -0.06, DoesNotHold)},
			[]string{"lies wholly below −0.05: worse by more than the margin"},
			nil},
		{"holds in direction only", Holds,
			[]Outcome{outcome("gain", Higher, 0.03, 0.001, 0.02, Holds), outcome("big", Higher, 0.03, 0.04, 0.06, Holds)},
			[]string{"Every check that decides it holds", "`gain` (v against base, eval/acc at final) holds in direction only: its 95% interval [+0.001, +0.02] lies wholly between 0 and 0.03"},
			[]string{"`big`"}},
		{"below the effect of interest, above the margin", Holds,
			[]Outcome{func() Outcome {
				o := outcome("gain", Higher, 0.02, 0.025, 0.04, Holds)
				o.Effect = 0.05
				return o
			}()},
			[]string{"holds in direction only: its 95% interval [+0.025, +0.04] lies wholly between 0 and 0.05, the smallest effect of interest"},
			nil},
		{"inconclusive names each check", Inconclusive,
			[]Outcome{outcome("claim", Higher, 0, -0.01, 0.02, Inconclusive), func() Outcome {
				o := outcome("advantage", Higher, 0, -0.02, 0.01, Inconclusive)
				o.Against = "tree_grpo"
				return o
			}()},
			[]string{"The design cannot decide: `claim` (v against base, eval/acc at final; achieved MDE 0.04)", "`advantage` (v against tree_grpo, eval/acc at final; achieved MDE 0.04)"},
			nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := verdictSentence(tc.verdict, tc.outs)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("sentence lacks %q:\n%s", w, got)
				}
			}
			for _, n := range tc.not {
				if strings.Contains(got, n) {
					t.Errorf("sentence names %q, which does not decide it:\n%s", n, got)
				}
			}
		})
	}
}

// tableShapes checks that every markdown table of md has as many cells in
// its delimiter row and in each body row as in its header.
func tableShapes(t *testing.T, md string) {
	t.Helper()
	cells := func(line string) int { return strings.Count(strings.ReplaceAll(line, `\|`, ""), "|") - 1 }
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "|") || (i > 0 && strings.HasPrefix(lines[i-1], "|")) {
			continue
		}
		header := cells(lines[i])
		for j := i + 1; j < len(lines) && strings.HasPrefix(lines[j], "|"); j++ {
			if n := cells(lines[j]); n != header {
				t.Errorf("line %d has %d cells, its table's header (line %d) %d:\n%s\n%s", j+1, n, i+1, header, lines[i], lines[j])
			}
		}
	}
}

// The pooled table is a well-formed markdown table, its p is the test
// that decides "holds" (as in each experiment's table), and its verdict
// names the check that makes it.
func TestWritePoolsTable(t *testing.T) {
	st := fakeDesigned(t, nil, nil, time.Time{})
	d := design.Default()
	d.Checks = []Check{
		{Name: "gain", Variant: "v", Metric: "eval/acc", At: "final", Want: Higher},
		{Name: "loss", Variant: "v", Metric: "eval/acc", At: "final", Want: Lower},
	}
	fakeInto(t, st, "b0", []float64{0.05, 0.06, 0.04, 0.05, 0.05}, &d, time.Time{})
	fakeInto(t, st, "b1", []float64{0.04, 0.05, 0.03, 0.05, 0.04}, &d, time.Time{})
	var buf bytes.Buffer
	if err := WriteVerdicts(&buf, st, []string{"b0", "b1"}, Meta{}); err != nil {
		t.Fatal(err)
	}
	md := buf.String()
	tableShapes(t, md)
	pooled := md[strings.Index(md, "## Pooled across"):]
	for _, want := range []string{
		"**Pooled verdict: does not hold.** A check that decides it does not hold: `loss` (v against base, eval/acc at final): its 95% interval [+",
		"t₀.₉₇₅ = 12.71",
	} {
		if !strings.Contains(pooled, want) {
			t.Errorf("pooled section lacks %q:\n%s", want, pooled)
		}
	}
	// "loss" claims lower and its estimate is higher: the test that decides
	// "holds" has p 1, whatever the test of the estimate against 0 gives.
	for _, line := range strings.Split(pooled, "\n") {
		if strings.HasPrefix(line, "| loss |") {
			cols := strings.Split(line, "|")
			if hk := strings.TrimSpace(cols[6]); !strings.HasPrefix(hk, "[") {
				t.Errorf("loss's Hartung–Knapp interval %q, want one:\n%s", hk, line)
			}
			if p := strings.TrimSpace(cols[7]); p != "1" {
				t.Errorf("loss's pooled p %q, want 1 (the estimate lies on the other side):\n%s", p, line)
			}
		}
	}
}

// A check of each run's own wall times against a number needs no runs
// side by side; the report says so instead of claiming they were.
func TestWallTimeAgainstANumber(t *testing.T) {
	o := Outcome{
		Check:   Check{Name: "share", Variant: "v", Metric: "share/gen_time", At: "mean", Want: Higher, Versus: true, Constant: 0.5},
		Against: "0.5",
		Verdict: DoesNotHold,
		Load:    "load average 1.00–2.00 on 2 CPUs beside these runs",
	}
	var buf bytes.Buffer
	p := &printer{w: &buf}
	writeDesignRecord(p, designed{Design: design.Default()}, []Outcome{o})
	writeChecks(p, []Outcome{o}, "base")
	md := buf.String()
	if strings.Contains(md, "side by side in one sitting:") || strings.Contains(md, "— met for `share`") {
		t.Errorf("a check against a number is said to read runs side by side:\n%s", md)
	}
	for _, want := range []string{"not needed for `share`, which compare wall times within each run with a number", "`share` reads wall times within each of its runs, against a number"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

// A pooled check that holds on the normal interval but not on the
// Hartung–Knapp one says so in the pooled verdict.
func TestWritePoolsHartungKnapp(t *testing.T) {
	each := []Outcome{
		{Test: stats.TestResult{Diff: 0.01, StdErr: 0.01, Lo: -0.01, Hi: 0.03}, Verdict: Inconclusive, Against: "base"},
		{Test: stats.TestResult{Diff: 0.03, StdErr: 0.01, Lo: 0.01, Hi: 0.05}, Verdict: Holds, Against: "base"},
	}
	q, err := stats.DerSimonianLaird([]float64{0.01, 0.03}, []float64{0.01, 0.01}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi, err := stats.HartungKnapp([]float64{0.01, 0.03}, []float64{0.01, 0.01}, q)
	if err != nil || lo > 0 || q.Lo <= 0 {
		t.Fatalf("want a normal interval above 0 and a Hartung–Knapp one reaching below it: [%g, %g], [%g, %g], %v", q.Lo, q.Hi, lo, hi, err)
	}
	pools := []Pool{{Check: Check{Name: "gain", Variant: "v", Metric: "eval/acc", At: "final", Want: Higher}, Each: each, Pooled: q, HKLo: lo, HKHi: hi}}
	decidePools(pools, 0.05)
	var buf bytes.Buffer
	writePools(&printer{w: &buf}, []string{"b0", "b1"}, pools)
	md := buf.String()
	tableShapes(t, md)
	if !strings.Contains(md, "**Pooled verdict: holds.**") || !strings.Contains(md, "`gain` holds on the normal interval only: its Hartung–Knapp interval [") {
		t.Errorf("the pooled verdict does not say it rests on the normal interval:\n%s", md)
	}
}
