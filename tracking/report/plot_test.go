package report

import (
	"bytes"
	"encoding/xml"
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
	unit := func(string) (float64, float64, bool) { return -1, 1, true }
	fig, err := Plot(s, "cmp", PlotOptions{Metric: "reward/mean", Range: unit})
	if err != nil {
		t.Fatal(err)
	}
	if fig.Plot.Y.Min < -1 || fig.Plot.Y.Max > 1 || fig.Entries != len(all) {
		t.Errorf("y range [%v, %v] with the metric in [-1, 1]; %d legend entries for %d variants", fig.Plot.Y.Min, fig.Plot.Y.Max, fig.Entries, len(all))
	}
	if !strings.Contains(fig.Plot.Title.Text, "mean ± 95% CI (t-interval) over n = ") || !strings.HasSuffix(fig.Plot.Title.Text, "10 seeds") {
		t.Errorf("title %q lacks the caption", fig.Plot.Title.Text)
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
