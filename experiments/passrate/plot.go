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
)

// Metric selects what PlotRows draws against tokens.
type Metric string

// Metrics of PlotRows.
const (
	MetricPass Metric = "pass" // pass rate
	MetricAcc  Metric = "acc"  // mean leaf accuracy
)

// PlotRows draws one metric of the rows against mean generated tokens per
// prompt, one line per family (points sorted by tokens) with 95% bootstrap
// error bars, and writes it to path (.png or .svg). The i.i.d. family is
// drawn from curve, its points at every n, with a shaded band.
func PlotRows(path, title string, curve, rows []Row, metric Metric) error {
	if err := checkExt(path); err != nil {
		return err
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "generated tokens per prompt (mean)"
	switch metric {
	case MetricPass:
		p.Y.Label.Text = "PassRate (share of prompts with ≥ 1 correct leaf)"
	case MetricAcc:
		p.Y.Label.Text = "mean leaf accuracy"
	default:
		return fmt.Errorf("plot %s: metric %q: want pass or acc", path, metric)
	}
	p.Add(plotter.NewGrid())
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
	for i, fam := range order {
		if err := addFamily(p, fam, families[fam], metric, i); err != nil {
			return fmt.Errorf("plot %s: %w", path, err)
		}
	}
	p.Legend.Top = metric == MetricAcc
	if err := p.Save(18*vg.Centimeter, 12*vg.Centimeter, path); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return nil
}

// errPoints are points with vertical error bars.
type errPoints struct {
	plotter.XYs
	plotter.YErrors
}

// addFamily adds one family's line, markers and error bars.
func addFamily(p *plot.Plot, fam string, rows []Row, metric Metric, idx int) error {
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
		return nil
	}
	col := plotutil.Color(idx)
	if fam == "iid" {
		// The reference has a point at every n: a shaded band, not bars.
		ring := slices.Clone(pts.XYs)
		for i := range ring {
			ring[i].Y += pts.YErrors[i].High
		}
		for i := len(pts.XYs) - 1; i >= 0; i-- {
			ring = append(ring, plotter.XY{X: pts.XYs[i].X, Y: pts.XYs[i].Y - pts.YErrors[i].Low})
		}
		band, err := plotter.NewPolygon(ring)
		if err != nil {
			return fmt.Errorf("family %s: %w", fam, err)
		}
		r, g, b, _ := col.RGBA()
		band.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 50}
		band.LineStyle.Width = 0
		p.Add(band)
	}
	line, err := plotter.NewLine(pts.XYs)
	if err != nil {
		return fmt.Errorf("family %s: %w", fam, err)
	}
	line.Color, line.Width = col, vg.Points(1.5)
	p.Add(line)
	if fam == "iid" {
		p.Legend.Add("i.i.d. (flat, n = 1 … K)", line)
		return nil
	}
	marks, err := plotter.NewScatter(pts.XYs)
	if err != nil {
		return fmt.Errorf("family %s: %w", fam, err)
	}
	marks.GlyphStyle.Color, marks.GlyphStyle.Shape = col, plotutil.Shape(idx)
	marks.GlyphStyle.Radius = vg.Points(2.5)
	bars, err := plotter.NewYErrorBars(pts)
	if err != nil {
		return fmt.Errorf("family %s: %w", fam, err)
	}
	bars.Color = col
	p.Add(marks, bars)
	p.Legend.Add(fam, line, marks)
	return nil
}

// PlotProfile draws the mean entropy by response position (positions that
// at least 1% of the responses and 20 of them reach) and, for each
// family in flipFamilies, the share of its forks at a position (binned by
// bin) that changed the outcome, and writes it to path.
func PlotProfile(path, title string, prof *Profile, flipFamilies []string, bin int) error {
	if err := checkExt(path); err != nil {
		return err
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "response position (tokens)"
	p.Y.Label.Text = "entropy (nats) / share of forks"
	p.Add(plotter.NewGrid())
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
	line.Color, line.Width = plotutil.Color(0), vg.Points(1.2)
	p.Add(line)
	p.Legend.Add("mean entropy of the sampling distribution (i.i.d. samples)", line)
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
		l.Color, l.Width = plotutil.Color(i+1), vg.Points(1.2)
		l.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("share of %s forks that change the outcome (bins of %d, ≥ 20 forks)", fam, bin), l)
	}
	p.Legend.Top = true
	if err := p.Save(18*vg.Centimeter, 11*vg.Centimeter, path); err != nil {
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
