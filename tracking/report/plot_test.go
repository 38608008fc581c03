package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/tracking"
)

func TestCurves(t *testing.T) {
	s := reportStore(t)
	tests := []struct {
		x        XAxis
		at, mean float64
	}{
		{XStep, 0, -9.25},
		{XStep, 1, 100.75},
		{XTokens, 100, -9.25},
		{XTokens, 200, 100.75},
		{XTokens, 300, 0.75},
	}
	for _, tc := range tests {
		curves, err := Curves(s, "cmp", PlotOptions{Metric: "reward/mean", X: tc.x, Points: 5})
		if err != nil {
			t.Fatal(err)
		}
		if len(curves) != 4 || curves[0].Variant != "flat" {
			t.Fatalf("curves %+v", curves)
		}
		c := curves[0]
		found := false
		for i, x := range c.X {
			if x == tc.at {
				found = true
				if !near(c.Mean[i], tc.mean, 1e-9) || c.N[i] != 10 {
					t.Errorf("%s at %v: mean %v n %d, want %v", tc.x, x, c.Mean[i], c.N[i], tc.mean)
				}
				if tc.x == XStep && !near(c.Hi[i]-c.Mean[i], 1.2797804, 1e-7) {
					t.Errorf("%s at %v: half-width %v", tc.x, x, c.Hi[i]-c.Mean[i])
				}
			}
		}
		if !found {
			t.Errorf("%s: no point at %v in %v", tc.x, tc.at, c.X)
		}
		// On the tokens axis the points are the evaluation marks.
		if tc.x == XTokens && (!c.Marks || len(c.X) != 3) {
			t.Errorf("tokens axis: marks %v, points at %v; want the 3 marks", c.Marks, c.X)
		}
	}
	if _, err := Curves(s, "cmp", PlotOptions{Metric: "nope"}); err == nil {
		t.Error("a metric no run recorded plotted")
	}
}

// Runs whose token counts differ (a metric recorded every step) are
// interpolated onto a grid over the range all cover, without marks.
func TestCurvesInterpolateOffMarks(t *testing.T) {
	s := newStore(t)
	s.PutExperiment(tracking.Experiment{Name: "e"})
	for i, tokens := range [][]int64{{100, 200}, {100, 300}} {
		id := string(rune('a' + i))
		addRun(t, s, "e", id, "v", int64(i), "")
		for step, tk := range tokens {
			commit(t, s, id, step, tk, map[string]float64{"m": float64(tk)})
		}
		finish(t, s, id)
	}
	curves, err := Curves(s, "e", PlotOptions{Metric: "m", X: XTokens, Points: 3})
	if err != nil {
		t.Fatal(err)
	}
	c := curves[0]
	if c.Marks || len(c.X) != 3 || c.X[1] != 150 || c.Mean[1] != 150 || c.N[1] != 2 {
		t.Errorf("curve %+v", c)
	}
}

func TestSharedMarks(t *testing.T) {
	xy := func(xs ...float64) xySeries { return xySeries{x: xs, y: xs} }
	tests := []struct {
		name   string
		series []xySeries
		want   []float64
	}{
		{"same marks", []xySeries{xy(0, 10, 20), xy(0, 10, 20)}, []float64{0, 10, 20}},
		{"one still running", []xySeries{xy(0, 10, 20), xy(0, 10)}, []float64{0, 10, 20}},
		{"final evaluation off the marks", []xySeries{xy(0, 10, 20, 25), xy(0, 10, 20, 23)}, []float64{0, 10, 20, 25}},
		{"every step, different counts", []xySeries{xy(3, 7, 12, 18), xy(4, 9, 13, 17)}, nil},
		{"one point", []xySeries{xy(5)}, nil},
	}
	for _, tc := range tests {
		got, ok := sharedMarks(tc.series)
		if !slices.Equal(got, tc.want) || ok != (tc.want != nil) {
			t.Errorf("%s: %v %v, want %v", tc.name, got, ok, tc.want)
		}
	}
}

func TestSavePlot(t *testing.T) {
	s := reportStore(t)
	dir := t.TempDir()
	if d := os.Getenv("TRACKING_PLOT_DIR"); d != "" {
		dir = d // keep the images to look at
	}
	for _, name := range []string{"p.png", "p.svg"} {
		path := filepath.Join(dir, name)
		if err := SavePlot(s, "cmp", path, PlotOptions{Metric: "reward/mean", X: XTokens}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil || len(b) < 1000 {
			t.Fatalf("%s: %d bytes, %v", name, len(b), err)
		}
		if strings.HasSuffix(name, ".png") {
			if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
				t.Errorf("%s: no PNG header", name)
			}
			continue
		}
		var root struct{ XMLName xml.Name }
		if err := xml.Unmarshal(b, &root); err != nil || root.XMLName.Local != "svg" {
			t.Errorf("%s: root %v, %v", name, root.XMLName, err)
		}
	}
	if err := SavePlot(s, "cmp", filepath.Join(dir, "p.gif"), PlotOptions{Metric: "reward/mean"}); err == nil || !strings.Contains(err.Error(), ".gif") {
		t.Errorf("gif: %v", err)
	}
}

// A figure fit for a paper: each variant keeps its colour (its index in the
// experiment) whatever subset is drawn; bands are clipped to the metric's
// range; steps tick at whole numbers; tokens tick as 10k, 1.5M.
func TestPlotLooks(t *testing.T) {
	s := reportStore(t)
	all, err := Curves(s, "cmp", PlotOptions{Metric: "reward/mean"})
	if err != nil {
		t.Fatal(err)
	}
	last := all[len(all)-1]
	some, err := Curves(s, "cmp", PlotOptions{Metric: "reward/mean", Variants: []string{last.Variant}})
	if err != nil || len(some) != 1 || some[0].Index != last.Index || last.Index == 0 {
		t.Errorf("variant %s: index %d alone, %d among all (%v)", last.Variant, some[0].Index, last.Index, err)
	}
	// A range every value lies in clips the bands and the axis; one the
	// values leave (a reward mixed from several terms) is not applied.
	for _, tc := range []struct {
		lo, hi float64
		clip   bool
	}{{-1, 1, false}} {
		rng := func(string) (float64, float64, bool) { return tc.lo, tc.hi, true }
		fig, err := Plot(s, "cmp", PlotOptions{Metric: "reward/mean", Range: rng})
		if err != nil {
			t.Fatal(err)
		}
		p := fig.Panels[0]
		clipped := p.Y.Min >= tc.lo && p.Y.Max <= tc.hi
		if len(fig.Panels) != 1 || clipped != tc.clip || fig.Curves[0].Clipped != tc.clip || fig.Entries != len(all) {
			t.Errorf("range [%v, %v]: %d panels, y range [%v, %v], clipped %v, want %v; %d legend entries for %d variants",
				tc.lo, tc.hi, len(fig.Panels), p.Y.Min, p.Y.Max, fig.Curves[0].Clipped, tc.clip, fig.Entries, len(all))
		}
		for _, c := range fig.Curves {
			for j := range c.X {
				if tc.clip && (c.Lo[j] < tc.lo || c.Hi[j] > tc.hi) {
					t.Errorf("range [%v, %v]: %s band [%v, %v] at %v", tc.lo, tc.hi, c.Variant, c.Lo[j], c.Hi[j], c.X[j])
				}
			}
		}
	}
	fig, err := Plot(s, "cmp", PlotOptions{Metric: "reward/mean"})
	if err != nil {
		t.Fatal(err)
	}
	p := fig.Panels[0]
	if want := "mean ± 95% CI (t-interval) over n = 10 seeds at every point (solo: 1)"; fig.Caption != want {
		t.Errorf("caption %q, want %q, and notes saying where (%q)", fig.Caption, want, fig.Notes)
	}
	if want := "reward (mean over responses)"; !strings.Contains(p.Y.Label.Text, "training reward") {
		t.Errorf("y label %q, want the registry's %q", p.Y.Label.Text, want)
	}
	for _, tk := range (integerTicks{}).Ticks(0, 3) {
		if tk.Value != float64(int(tk.Value)) {
			t.Errorf("step tick at %v", tk.Value)
		}
	}
	var labels []string
	for _, tk := range (thousandsTicks{}).Ticks(0, 30000) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if !slices.Contains(labels, "10k") || !slices.Contains(labels, "30k") {
		t.Errorf("token tick labels %v, want 10k … 30k", labels)
	}
}

// Bands never leave their metric's range: two seeds of an accuracy at 0
// and 0.1 have a t-interval far below 0, drawn from 0; the paired
// differences' band stays in [-1, 1].
func TestBandsInRange(t *testing.T) {
	// A flat line at the range's end keeps its axis inside the range.
	z := newStore(t)
	addRun(t, z, "z", "z1", "v", 1, "")
	commit(t, z, "z1", 0, 0, map[string]float64{"eval/acc": 0})
	commit(t, z, "z1", 1, 100, map[string]float64{"eval/acc": 0})
	fig, err := Plot(z, "z", PlotOptions{Metric: "eval/acc"})
	if err != nil {
		t.Fatal(err)
	}
	if p := fig.Panels[0]; p.Y.Min != 0 || !(p.Y.Max > 0 && p.Y.Max <= 1) {
		t.Errorf("a flat line at 0: y axis [%v, %v], want [0, something ≤ 1]", p.Y.Min, p.Y.Max)
	}
	s := newStore(t)
	s.PutExperiment(tracking.Experiment{Name: "e", Variants: []string{"a", "b"}, Baseline: "a"})
	for _, v := range []string{"a", "b"} {
		for seed := int64(1); seed <= 2; seed++ {
			id := fmt.Sprintf("%s%d", v, seed)
			addRun(t, s, "e", id, v, seed, "v: "+v+"\n")
			for step := 0; step < 3; step++ {
				acc := 0.1 * float64(seed-1)
				if v == "b" {
					acc = 1 - acc*float64(step)
				}
				commit(t, s, id, step, int64(100*step), map[string]float64{"eval/acc": acc})
			}
			finish(t, s, id)
		}
	}
	for _, kind := range []PlotKind{KindCurves, KindDiff} {
		fig, err := Plot(s, "e", PlotOptions{Metric: "eval/acc", Kind: kind})
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := 0.0, 1.0
		if kind == KindDiff {
			lo = -1
		}
		clippedSome := false
		for _, c := range fig.Curves {
			if !c.Clipped {
				t.Errorf("%s %s: not clipped", kind, c.Variant)
			}
			for j := range c.X {
				if c.Lo[j] < lo || c.Hi[j] > hi {
					t.Errorf("%s %s at %v: band [%v, %v] outside [%v, %v]", kind, c.Variant, c.X[j], c.Lo[j], c.Hi[j], lo, hi)
				}
				clippedSome = clippedSome || c.Lo[j] == lo || c.Hi[j] == hi
			}
		}
		if !clippedSome {
			t.Errorf("%s: no band reached its range: the test shows nothing", kind)
		}
		if p := fig.Panels[0]; p.Y.Min < lo || p.Y.Max > hi {
			t.Errorf("%s: y axis [%v, %v] outside [%v, %v]", kind, p.Y.Min, p.Y.Max, lo, hi)
		}
	}
}

// Nothing is dropped silently: a curve counts the values it does not
// draw and the points over fewer seeds, and the notes say so.
func TestCurveNotes(t *testing.T) {
	s := newStore(t)
	s.PutExperiment(tracking.Experiment{Name: "e", Variants: []string{"a", "b", "c"}, Baseline: "a"})
	// Evaluations at token marks 0, 100, 200 fall on different steps per
	// seed; seed 2 of a also evaluates at step 5 (off every mark).
	evalSteps := map[string][]int{"a1": {0, 2, 4}, "a2": {0, 2, 4, 5}, "b1": {0, 3, 6}, "b2": {0, 4, 8}}
	for _, id := range []string{"a1", "a2", "b1", "b2"} {
		addRun(t, s, "e", id, id[:1], int64(id[1]-'0'), "v: "+id[:1]+"\n")
		for i, step := range evalSteps[id] {
			m := map[string]float64{"eval/acc": 0.1 * float64(i), "eval/tokens_mark": float64(100 * i)}
			if i == 3 {
				delete(m, "eval/tokens_mark")
			}
			commit(t, s, id, step, int64(100*i-3), m)
		}
		finish(t, s, id)
	}
	// Variant c's run has not recorded eval/acc yet; b's third run neither.
	for _, id := range []string{"c1", "b3"} {
		addRun(t, s, "e", id, id[:1], int64(id[1]-'0'), "v: "+id[:1]+"\n")
		commit(t, s, id, 0, 0, map[string]float64{"reward/mean": 0})
	}
	cNote := "c: not drawn: no run recorded eval/acc"
	tests := []struct {
		x     XAxis
		kind  PlotKind
		notes []string
		capt  string
	}{
		{XStep, KindCurves, []string{
			"a: 1 of 7 recorded values not drawn (at steps not every seed recorded)",
			"b: 4 of 5 points average fewer than its 2 seeds; 1 of its 3 runs recorded no value yet", cNote,
		}, "mean ± 95% CI (t-interval) over n = 2 seeds at every point (b: 1–2)"},
		// a2's last evaluation, past a1's end, is a point of its own.
		{XTokens, KindCurves, []string{"a: 1 of 4 points average fewer than its 2 seeds", "b: 1 of its 3 runs recorded no value yet", cNote},
			"mean ± 95% CI (t-interval) over n = 2 seeds at every point (a: 1–2)"},
		{XTokens, KindDiff, []string{cNote}, "mean paired difference (variant − baseline, same seed) ± 95% CI (paired t-interval) over n = 2 seed pairs at every point"},
	}
	for _, tc := range tests {
		fig, err := Plot(s, "e", PlotOptions{Metric: "eval/acc", X: tc.x, Kind: tc.kind, MarkMetric: "eval/tokens_mark"})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(fig.Notes, tc.notes) || fig.Caption != tc.capt {
			t.Errorf("%s %s: notes %q\ncaption %q\nwant %q\n%q", tc.x, tc.kind, fig.Notes, fig.Caption, tc.notes, tc.capt)
		}
	}
	marks, marked, err := TokenMarks(s, "e", "eval/tokens_mark", "eval/acc")
	if err != nil || !marked || !slices.Equal(marks, []int64{0, 100, 200}) {
		t.Errorf("token marks %v (marked %v, %v), want [0 100 200]", marks, marked, err)
	}
	if x, err := BudgetAxis(s, "e", "eval/tokens_mark"); x != XTokens || err != nil {
		t.Errorf("budget axis %s, %v: want tokens", x, err)
	}
	if marks, marked, _ := TokenMarks(s, "e", "", "eval/acc"); marked || !slices.Equal(marks, []int64{-3, 97, 197, 297}) {
		t.Errorf("without a mark metric: %v (marked %v), want the rows' token counts", marks, marked)
	}
}

// More than five variants: one panel per variant, on one y range, with no
// legend (the panels are titled), and the figure still saves.
func TestSmallMultiples(t *testing.T) {
	s := newStore(t)
	names := []string{"a", "b", "c", "d", "e", "f"}
	s.PutExperiment(tracking.Experiment{Name: "e", Variants: names})
	for i, v := range names {
		for seed := int64(1); seed <= 2; seed++ {
			id := fmt.Sprintf("%s%d", v, seed)
			addRun(t, s, "e", id, v, seed, "v: "+v+"\n")
			for step := 0; step < 3; step++ {
				commit(t, s, id, step, int64(100*step), map[string]float64{"eval/acc": 0.1*float64(i) + 0.01*float64(seed)*float64(step)})
			}
			finish(t, s, id)
		}
	}
	fig, err := Plot(s, "e", PlotOptions{Metric: "eval/acc"})
	if err != nil {
		t.Fatal(err)
	}
	if len(fig.Panels) != len(names) || fig.Columns != 3 || fig.Entries != 0 {
		t.Fatalf("%d panels in %d columns, %d legend entries; want 6, 3, 0", len(fig.Panels), fig.Columns, fig.Entries)
	}
	for i, p := range fig.Panels {
		if p.Title.Text != names[i] || p.Y.Min != fig.Panels[0].Y.Min || p.Y.Max != fig.Panels[0].Y.Max {
			t.Errorf("panel %d: title %q, y [%v, %v]", i, p.Title.Text, p.Y.Min, p.Y.Max)
		}
	}
	if err := fig.Save(filepath.Join(t.TempDir(), "m.png"), 0, 0, 72); err != nil {
		t.Fatal(err)
	}
}
