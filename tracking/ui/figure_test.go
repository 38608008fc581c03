package ui

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/tracking"
	"github.com/rollout-rl/rollout/tracking/report"
)

// strokes returns the distinct stroke colours of an SVG file, lower case.
func strokes(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range regexp.MustCompile(`stroke:(#[0-9A-Fa-f]{6})`).FindAllStringSubmatch(string(b), -1) {
		if c := strings.ToLower(m[1]); !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out
}

// TestFigureColours is the figure check: each variant has one colour in
// `rollout plot`'s figures (report.SavePlot) and on the dashboard (the
// experiment's colours and each curve's), whatever subset is drawn; and
// no band the dashboard draws leaves its metric's range.
func TestFigureColours(t *testing.T) {
	path, w := fixture(t, false)
	w.Close()
	h := newHandler(t, path)
	status, body := get(t, h, "GET", "/api/experiments/exp")
	if status != 200 {
		t.Fatalf("status %d: %s", status, body)
	}
	d := decode[ExperimentDetail](t, body)
	st, err := tracking.Open(path, tracking.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i, v := range d.Summary.Variants {
		dash := d.Summary.Colours[i]
		// The plot of this variant alone draws its line in its colour and
		// in no other variant's.
		svg := filepath.Join(t.TempDir(), v+".svg")
		if err := report.SavePlot(st, "exp", svg, report.PlotOptions{Metric: "reward/mean", X: report.XStep, Variants: []string{v}}); err != nil {
			t.Fatal(err)
		}
		got := strokes(t, svg)
		for j, other := range d.Summary.Colours {
			if has := slices.Contains(got, other); has != (j == i) {
				t.Errorf("plot of %s: strokes %v; the dashboard's colour of %s (%s) drawn: %v", v, got, d.Summary.Variants[j], other, has)
			}
		}
		status, body := get(t, h, "GET", "/api/experiments/exp/curves?metric=eval/acc&variant="+v)
		if status != 200 {
			t.Fatalf("status %d: %s", status, body)
		}
		c := decode[CurvesAnswer](t, body).Curves[0]
		if c.Colour != dash {
			t.Errorf("%s: curve colour %s, experiment colour %s", v, c.Colour, dash)
		}
		if lo, hi := d.MetricInfo["eval/acc"].Lo, d.MetricInfo["eval/acc"].Hi; !c.Clipped || slices.Min(c.Lo) < lo || slices.Max(c.Hi) > hi {
			t.Errorf("%s: eval/acc band [%v, %v] (clipped %v) outside [%v, %v]", v, slices.Min(c.Lo), slices.Max(c.Hi), c.Clipped, lo, hi)
		}
	}
}
