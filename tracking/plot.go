package tracking

import (
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

	"github.com/rollout-rl/rollout/tracking/stats"
)

// XAxis is what a plot's horizontal axis shows.
type XAxis string

// Horizontal axes of plots.
const (
	XStep   XAxis = "step"
	XTokens XAxis = "tokens"
	XTime   XAxis = "time"
)

// ParseXAxis checks an axis name.
func ParseXAxis(s string) (XAxis, error) {
	switch x := XAxis(s); x {
	case XStep, XTokens, XTime:
		return x, nil
	}
	return "", fmt.Errorf("--x %q: want step, tokens or time", s)
}

// PlotOptions configure a plot of one metric of an experiment.
type PlotOptions struct {
	Metric string
	// X is the horizontal axis; empty means step.
	X XAxis
	// Variants restricts the plot to these variants (all when empty).
	Variants []string
	// Points is the number of grid points a tokens or time axis is sampled
	// at (seeds are interpolated onto a shared grid); 0 means 200.
	Points int
	// Title defaults to "EXPERIMENT: METRIC".
	Title string
	// Width and Height of the image; 0 means 16 cm × 10 cm.
	Width, Height vg.Length
}

// Curve is one variant's line: the mean over seeds at each x, with the
// 95% t-interval (Lo = Hi = Mean where fewer than two seeds cover x).
type Curve struct {
	Variant      string
	X            []float64
	Mean, Lo, Hi []float64
	N            []int
}

// Curves computes the per-variant mean curves with their 95% bands. On the
// step axis each point averages the runs that recorded that step; on the
// tokens and time axes each run is linearly interpolated onto a grid and a
// point averages the runs whose range covers it.
func (s *Store) Curves(experiment string, opts PlotOptions) ([]Curve, error) {
	if opts.Metric == "" {
		return nil, fmt.Errorf("plot: no metric given")
	}
	if opts.X == "" {
		opts.X = XStep
	}
	if _, err := ParseXAxis(string(opts.X)); err != nil {
		return nil, err
	}
	if opts.Points <= 0 {
		opts.Points = 200
	}
	exp, err := s.Experiment(experiment)
	if err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	runs, err := s.Runs(experiment)
	if err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	type xy struct{ x, y []float64 }
	byVariant := map[string][]xy{}
	for _, r := range runs {
		if len(opts.Variants) > 0 && !slices.Contains(opts.Variants, r.Variant) {
			continue
		}
		ser, err := s.Series(r.ID, opts.Metric)
		if err != nil {
			return nil, fmt.Errorf("plot: %w", err)
		}
		if ser.Len() == 0 {
			continue
		}
		p := xy{x: make([]float64, ser.Len()), y: ser.Values}
		for i := range p.x {
			switch opts.X {
			case XStep:
				p.x[i] = float64(ser.Steps[i])
			case XTokens:
				p.x[i] = float64(ser.Tokens[i])
			case XTime:
				p.x[i] = ser.Elapsed[i].Seconds()
			}
		}
		byVariant[r.Variant] = append(byVariant[r.Variant], p)
	}
	if len(byVariant) == 0 {
		return nil, fmt.Errorf("plot: no run of experiment %q recorded %q", experiment, opts.Metric)
	}
	var names []string
	for _, v := range exp.Variants {
		if _, ok := byVariant[v]; ok && !slices.Contains(names, v) {
			names = append(names, v)
		}
	}
	var rest []string
	for v := range byVariant {
		if !slices.Contains(names, v) {
			rest = append(rest, v)
		}
	}
	slices.Sort(rest)
	names = append(names, rest...)

	var curves []Curve
	for _, v := range names {
		series := byVariant[v]
		var grid []float64
		if opts.X == XStep {
			for _, p := range series {
				grid = append(grid, p.x...)
			}
			slices.Sort(grid)
			grid = slices.Compact(grid)
		} else {
			// The range every seed covers, so each grid point's mean
			// and band are over all of the variant's seeds.
			lo, hi := math.Inf(-1), math.Inf(1)
			for _, p := range series {
				lo, hi = math.Max(lo, p.x[0]), math.Min(hi, p.x[len(p.x)-1])
			}
			if hi < lo {
				hi = lo
			}
			grid = make([]float64, opts.Points)
			for i := range grid {
				grid[i] = lo + (hi-lo)*float64(i)/float64(max(1, opts.Points-1))
			}
			grid = slices.Compact(grid)
		}
		c := Curve{Variant: v}
		vals := make([]float64, 0, len(series))
		for _, x := range grid {
			vals = vals[:0]
			for _, p := range series {
				if y, ok := sampleAt(p.x, p.y, x, opts.X == XStep); ok {
					vals = append(vals, y)
				}
			}
			if len(vals) == 0 {
				continue
			}
			sum := stats.Summarize(vals)
			c.X = append(c.X, x)
			c.Mean = append(c.Mean, sum.Mean)
			c.Lo = append(c.Lo, sum.Lo)
			c.Hi = append(c.Hi, sum.Hi)
			c.N = append(c.N, sum.N)
		}
		curves = append(curves, c)
	}
	return curves, nil
}

// sampleAt returns y at x: exactly (exact) or by linear interpolation
// within the series' range.
func sampleAt(xs, ys []float64, x float64, exact bool) (float64, bool) {
	i, found := slices.BinarySearch(xs, x)
	if found {
		return ys[i], true
	}
	if exact || i == 0 || i == len(xs) {
		return 0, false
	}
	x0, x1 := xs[i-1], xs[i]
	t := (x - x0) / (x1 - x0)
	return ys[i-1] + t*(ys[i]-ys[i-1]), true
}

// Plot draws one line per variant (mean over seeds) with a shaded 95% band.
func (s *Store) Plot(experiment string, opts PlotOptions) (*plot.Plot, error) {
	curves, err := s.Curves(experiment, opts)
	if err != nil {
		return nil, err
	}
	p := plot.New()
	p.Title.Text = opts.Title
	if p.Title.Text == "" {
		p.Title.Text = experiment + ": " + opts.Metric
	}
	switch opts.X {
	case XTokens:
		p.X.Label.Text = "sampled tokens (cumulative)"
	case XTime:
		p.X.Label.Text = "wall time (s)"
	default:
		p.X.Label.Text = "step"
	}
	p.Y.Label.Text = opts.Metric
	p.Legend.Top = true
	p.Legend.Left = true
	p.Add(plotter.NewGrid())
	for i, c := range curves {
		col := plotutil.Color(i)
		if band := bandPolygon(c); band != nil {
			r, g, b, _ := col.RGBA()
			band.Color = color.NRGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: 60}
			band.LineStyle.Width = 0
			p.Add(band)
		}
		pts := make(plotter.XYs, len(c.X))
		for j := range c.X {
			pts[j].X, pts[j].Y = c.X[j], c.Mean[j]
		}
		line, err := plotter.NewLine(pts)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", c.Variant, err)
		}
		line.Color = col
		line.Width = vg.Points(1.5)
		p.Add(line)
		p.Legend.Add(c.Variant, line)
	}
	return p, nil
}

// bandPolygon is the region between Lo and Hi, nil when there is none.
func bandPolygon(c Curve) *plotter.Polygon {
	var ring plotter.XYs
	for j := range c.X {
		if c.N[j] >= 2 {
			ring = append(ring, plotter.XY{X: c.X[j], Y: c.Hi[j]})
		}
	}
	for j := len(c.X) - 1; j >= 0; j-- {
		if c.N[j] >= 2 {
			ring = append(ring, plotter.XY{X: c.X[j], Y: c.Lo[j]})
		}
	}
	if len(ring) < 4 {
		return nil
	}
	poly, err := plotter.NewPolygon(ring)
	if err != nil {
		return nil
	}
	return poly
}

// SavePlot draws the plot and writes it to path as PNG or SVG, by the
// file's extension.
func (s *Store) SavePlot(experiment, path string, opts PlotOptions) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".png" && ext != ".svg" {
		return fmt.Errorf("plot %s: extension %q: want .png or .svg", path, ext)
	}
	p, err := s.Plot(experiment, opts)
	if err != nil {
		return err
	}
	w, h := opts.Width, opts.Height
	if w <= 0 {
		w = 16 * vg.Centimeter
	}
	if h <= 0 {
		h = 10 * vg.Centimeter
	}
	if err := p.Save(w, h, path); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return nil
}
