package passrate

import (
	"cmp"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/rollout-rl/rollout/tracking/report"
)

// Metric selects what PlotRows draws against tokens.
type Metric string

// Metrics of PlotRows.
const (
	MetricPass Metric = "pass" // pass rate
	MetricAcc  Metric = "acc"  // mean leaf accuracy
)

// PlotRows draws one metric of the rows against mean generated tokens per
// prompt, in the project's figure style (report.Figure: one size and
// font, the palette, the legend below the data, the title wrapped), and
// writes it to path (.png or .svg). The i.i.d. family is drawn from curve
// as a line through its points at every n, with a shaded band; the other
// families' points are separate settings (tree shapes), so they get a
// marker and 95% bootstrap error bars each and no line joining them.
func PlotRows(path, title string, curve, rows []Row, metric Metric) error {
	if err := checkExt(path); err != nil {
		return err
	}
	var ylabel string
	switch metric {
	case MetricPass:
		ylabel = "PassRate (share of prompts with ≥ 1 correct leaf)"
	case MetricAcc:
		ylabel = "mean leaf accuracy (share)"
	default:
		return fmt.Errorf("plot %s: metric %q: want pass or acc", path, metric)
	}
	p := report.NewFigurePlot("", "generated tokens per prompt (mean)", ylabel)
	p.Add(plotter.NewGrid())
	legend := report.NewFigureLegend()
	families := map[string][]Row{"iid": curve}
	order := []string{"iid"}
	for _, r := range rows {
		if r.Family == "iid" {
			continue
		}
		if _, ok := families[r.Family]; !ok {
			order = append(order, r.Family)
		}
		families[r.Family] = append(families[r.Family], r)
	}
	entries := 0
	for i, fam := range order {
		added, err := addFamily(p, &legend, fam, families[fam], metric, i)
		if err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		if added {
			entries++
		}
	}
	p.Y.Min, p.Y.Max = max(p.Y.Min, 0), min(p.Y.Max, 1)
	fig := &report.Figure{Title: title, Panels: []*plot.Plot{p}, Legend: legend, Entries: entries,
		Caption: "points: mean over prompts with 95% bootstrap CIs over prompts; the i.i.d. line joins its n = 1 … K samples per prompt, other points are separate settings, not joined"}
	if err := fig.Save(path, 0, 0, report.FigureDPI); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return nil
}

// errPoints are points with vertical error bars.
type errPoints struct {
	plotter.XYs
	plotter.YErrors
}

// addFamily adds one family's points with their error bars (the i.i.d.
// family a line and a band instead) and its legend entry; it reports
// whether the family had points.
func addFamily(p *plot.Plot, legend *plot.Legend, fam string, rows []Row, metric Metric, idx int) (bool, error) {
	rows = slices.Clone(rows)
	slices.SortFunc(rows, func(a, b Row) int { return cmp.Compare(a.Tokens, b.Tokens) })
	var pts errPoints
	for _, r := range rows {
		iv := r.Pass
		if metric == MetricAcc {
			iv = r.Acc
		}
		pts.XYs = append(pts.XYs, plotter.XY{X: r.Tokens, Y: iv.Est})
		pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{iv.Est - iv.Lo, iv.Hi - iv.Est})
	}
	if len(pts.XYs) == 0 {
		return false, nil
	}
	col := report.VariantColour(idx)
	if fam == "iid" {
		// The reference has a point at every n: a line with a shaded band.
		ring := slices.Clone(pts.XYs)
		for i := range ring {
			ring[i].Y += pts.YErrors[i].High
		}
		for i := len(pts.XYs) - 1; i >= 0; i-- {
			ring = append(ring, plotter.XY{X: pts.XYs[i].X, Y: pts.XYs[i].Y - pts.YErrors[i].Low})
		}
		band, err := plotter.NewPolygon(ring)
		if err != nil {
			return false, fmt.Errorf("family %s: %w", fam, err)
		}
		band.Color = color.NRGBA{R: col.R, G: col.G, B: col.B, A: 50}
		band.LineStyle.Width = 0
		line, err := plotter.NewLine(pts.XYs)
		if err != nil {
			return false, fmt.Errorf("family %s: %w", fam, err)
		}
		line.Color, line.Width = col, vg.Points(1.5)
		p.Add(band, line)
		legend.Add("i.i.d. (flat, n = 1 … K)", line)
		return true, nil
	}
	marks, err := plotter.NewScatter(pts.XYs)
	if err != nil {
		return false, fmt.Errorf("family %s: %w", fam, err)
	}
	marks.GlyphStyle.Color, marks.GlyphStyle.Shape = col, plotutil.Shape(idx)
	marks.GlyphStyle.Radius = vg.Points(2.5)
	bars, err := plotter.NewYErrorBars(pts)
	if err != nil {
		return false, fmt.Errorf("family %s: %w", fam, err)
	}
	bars.Color = col
	p.Add(marks, bars)
	legend.Add(fam, marks)
	return true, nil
}

// PlotProfile draws the mean entropy by response position (positions that
// at least 1% of the responses and 20 of them reach) and, for each
// family in flipFamilies, the share of its forks at a position (binned by
// bin) that changed the outcome, and writes it to path.
func PlotProfile(path, title string, prof *Profile, flipFamilies []string, bin int) error {
	if err := checkExt(path); err != nil {
		return err
	}
	p := report.NewFigurePlot("", "response position (tokens)", "entropy (nats) / share of forks")
	p.Add(plotter.NewGrid())
	legend := report.NewFigureLegend()
	// Positions few responses reach are left out: their means are noise.
	ent := prof.MeanEntropy()
	var pts plotter.XYs
	for i, h := range ent {
		if prof.Count[i] >= max(20, prof.Count[0]/100) {
			pts = append(pts, plotter.XY{X: float64(i), Y: h})
		}
	}
	if len(pts) == 0 {
		return fmt.Errorf("plot %s: the profile has no positions", path)
	}
	line, err := plotter.NewLine(pts)
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	line.Color, line.Width = report.VariantColour(0), vg.Points(1.5)
	p.Add(line)
	legend.Add("mean entropy of the sampling distribution (i.i.d. samples)", line)
	entries := 1
	for i, fam := range flipFamilies {
		xs, rates := prof.FlipRate(fam, bin, 20)
		var fp plotter.XYs
		for j := range xs {
			if !math.IsNaN(rates[j]) {
				fp = append(fp, plotter.XY{X: xs[j], Y: rates[j]})
			}
		}
		if len(fp) == 0 {
			continue
		}
		l, err := plotter.NewLine(fp)
		if err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
		l.Color, l.Width = report.VariantColour(i+1), vg.Points(1.5)
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		p.Add(l)
		legend.Add(fmt.Sprintf("share of %s forks that change the outcome (bins of %d, ≥ 20 forks)", fam, bin), l)
		entries++
	}
	fig := &report.Figure{Title: title, Panels: []*plot.Plot{p}, Legend: legend, Entries: entries}
	if err := fig.Save(path, 0, 0, report.FigureDPI); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return nil
}

// checkExt accepts .png and .svg paths.
func checkExt(path string) error {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".png", ".svg":
		return nil
	}
	return fmt.Errorf("plot %s: want a .png or .svg file", path)
}
