package report

import (
	"fmt"
	"image/color"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/rollout-rl/rollout/tracking"
	"github.com/rollout-rl/rollout/tracking/report/stats"
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
	// Title defaults to "EXPERIMENT: METRIC"; a caption line under it
	// always says "mean ± 95% CI over n = k seeds".
	Title string
	// Width and Height of the image; 0 means 16 cm, and 10 cm plus the
	// legend's height. PNG images are
	// rendered at DPI dots per inch (0 means 300, fit for print).
	Width, Height vg.Length
	DPI           int
	// MarkMetric, when set, is the metric an evaluation at a token mark
	// records the mark in (Options.MarkMetric): on the tokens axis such a
	// row is drawn at its mark, so runs that reached a mark a few tokens
	// short of it share the point.
	MarkMetric string
	// Range, when not nil, gives the metric's possible range (e.g. [0, 1]
	// for an accuracy): bands are clipped to it. The caller names metrics;
	// this package does not.
	Range func(metric string) (lo, hi float64, ok bool)
}

// Curve is one variant's line: the mean over seeds at each x, with the
// 95% t-interval (Lo = Hi = Mean where fewer than two seeds cover x),
// clipped to PlotOptions.Range.
type Curve struct {
	Variant string
	// Index is the variant's place in the experiment's variant order: its
	// colour and marker, whatever subset of variants is drawn.
	Index        int
	X            []float64
	Mean, Lo, Hi []float64
	N            []int
	// Marks is true on the tokens axis when the points are the evaluation
	// marks the variant's runs share (see sharedMarks) rather than a grid
	// the runs were interpolated onto; plots draw a marker at each point.
	Marks bool
}

// xySeries is one run's metric against the plot's x axis.
type xySeries struct{ x, y []float64 }

// Curves computes the per-variant mean curves with their 95% bands. On the
// step axis each point averages the runs that recorded that step. On the
// tokens axis, when the variant's runs recorded the metric at shared token
// counts (evaluation marks, see sharedMarks), each point averages the runs
// at one mark; otherwise, and on the time axis, each run is linearly
// interpolated onto a grid over the range every run covers. Runs of one
// variant with different configs are an error, never pooled.
func Curves(src Source, experiment string, opts PlotOptions) ([]Curve, error) {
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
	exp, err := src.Experiment(experiment)
	if err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	runs, err := src.Runs(experiment)
	if err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	for _, v := range opts.Variants {
		if !slices.ContainsFunc(runs, func(r tracking.Run) bool { return r.Variant == v }) {
			return nil, fmt.Errorf("plot: experiment %q has no variant %q (variants: %s)", experiment, v, strings.Join(exp.Variants, ", "))
		}
	}
	runs = slices.DeleteFunc(runs, func(r tracking.Run) bool {
		return len(opts.Variants) > 0 && !slices.Contains(opts.Variants, r.Variant)
	})
	variants, err := byVariant(exp, runs)
	if err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	var curves []Curve
	for _, v := range variants {
		series, err := readXY(src, v.Runs, opts)
		if err != nil {
			return nil, err
		}
		if len(series) > 0 {
			c := curve(v.Name, series, opts)
			if opts.Range != nil {
				if lo, hi, ok := opts.Range(opts.Metric); ok {
					for j := range c.Lo {
						c.Lo[j], c.Hi[j] = math.Max(c.Lo[j], lo), math.Min(c.Hi[j], hi)
					}
				}
			}
			if c.Index = slices.Index(exp.Variants, v.Name); c.Index < 0 {
				c.Index = len(exp.Variants) + len(curves)
			}
			curves = append(curves, c)
		}
	}
	if len(curves) == 0 {
		return nil, fmt.Errorf("plot: no run of experiment %q recorded %q", experiment, opts.Metric)
	}
	return curves, nil
}

// readXY reads the metric of each run against the x axis, skipping runs
// that did not record it.
func readXY(src Source, runs []tracking.Run, opts PlotOptions) ([]xySeries, error) {
	var out []xySeries
	names := []string{opts.Metric}
	useMarks := opts.X == XTokens && opts.MarkMetric != ""
	if useMarks {
		names = append(names, opts.MarkMetric)
	}
	for _, r := range runs {
		ss, err := src.MetricSeries(r.ID, names)
		if err != nil {
			return nil, fmt.Errorf("plot: %w", err)
		}
		ser := &ss[0]
		if ser.Len() == 0 {
			continue
		}
		marks := map[int]float64{}
		if useMarks {
			for i, st := range ss[1].Steps {
				marks[st] = ss[1].Values[i]
			}
		}
		p := xySeries{x: make([]float64, ser.Len()), y: ser.Values}
		for i := range p.x {
			switch opts.X {
			case XStep:
				p.x[i] = float64(ser.Steps[i])
			case XTokens:
				p.x[i] = float64(ser.Tokens[i])
				if m, ok := marks[ser.Steps[i]]; ok {
					p.x[i] = m
				}
			case XTime:
				p.x[i] = ser.Elapsed[i].Seconds()
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// sharedMarks returns the x values every run covering them recorded (a
// run covers the range from its first to its last x), when they are at
// least two and more than half of each run's points: the evaluation marks
// of runs evaluated at the same token counts, a run still running having
// fewer of them and a final off-mark evaluation left out.
func sharedMarks(series []xySeries) ([]float64, bool) {
	var union []float64
	for _, p := range series {
		union = append(union, p.x...)
	}
	slices.Sort(union)
	union = slices.Compact(union)
	var shared []float64
	for _, x := range union {
		ok := true
		for _, p := range series {
			if x >= p.x[0] && x <= p.x[len(p.x)-1] {
				if _, found := slices.BinarySearch(p.x, x); !found {
					ok = false
					break
				}
			}
		}
		if ok {
			shared = append(shared, x)
		}
	}
	if len(shared) < 2 {
		return nil, false
	}
	for _, p := range series {
		in := 0
		for _, x := range slices.Compact(slices.Clone(p.x)) {
			if _, found := slices.BinarySearch(shared, x); found {
				in++
			}
		}
		if 2*in <= len(slices.Compact(slices.Clone(p.x))) {
			return nil, false
		}
	}
	return shared, true
}

// sharedXs returns the x values present in every series, sorted.
func sharedXs(series []xySeries) []float64 {
	var out []float64
	for _, x := range series[0].x {
		in := true
		for _, p := range series[1:] {
			if _, found := slices.BinarySearch(p.x, x); !found {
				in = false
				break
			}
		}
		if in && (len(out) == 0 || out[len(out)-1] != x) {
			out = append(out, x)
		}
	}
	return out
}

// curve averages one variant's series.
func curve(variant string, series []xySeries, opts PlotOptions) Curve {
	c := Curve{Variant: variant}
	var grid []float64
	exact := true
	switch marks, ok := sharedMarks(series); {
	case opts.X == XStep:
		// The steps every run recorded the metric at (evaluations every N
		// steps), so each point is over all seeds; all steps when fewer
		// than two are shared (evaluations only at token marks, which
		// fall at different steps).
		grid = sharedXs(series)
		if len(grid) < 2 {
			grid = nil
			for _, p := range series {
				grid = append(grid, p.x...)
			}
			slices.Sort(grid)
			grid = slices.Compact(grid)
		}
	case opts.X == XTokens && ok:
		grid, c.Marks = marks, true
	default:
		// The range every seed covers, so each grid point's mean and
		// band are over all of the variant's seeds.
		exact = false
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
	vals := make([]float64, 0, len(series))
	for _, x := range grid {
		vals = vals[:0]
		for _, p := range series {
			if y, ok := sampleAt(p.x, p.y, x, exact); ok {
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
	return c
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

// Plot draws one line per variant (mean over seeds) with a shaded 95%
// band (clipped to opts.Range), a marker at each point of curves drawn at
// their evaluation marks, a colour and marker fixed per variant, integer
// ticks on the step axis and axis labels with units. Its legend comes
// apart, to be drawn beside the data (SavePlot puts it below the plot), so
// that it never covers a curve.
func Plot(src Source, experiment string, opts PlotOptions) (*Figure, error) {
	legend := plot.NewLegend()
	curves, err := Curves(src, experiment, opts)
	if err != nil {
		return nil, err
	}
	p := plot.New()
	p.Title.Text = opts.Title
	if p.Title.Text == "" {
		p.Title.Text = experiment + ": " + opts.Metric
	}
	p.Title.Text += "\n" + caption(curves)
	switch opts.X {
	case XTokens:
		p.X.Label.Text = "sampled tokens (cumulative)"
		if slices.ContainsFunc(curves, func(c Curve) bool { return c.Marks }) {
			p.X.Label.Text = "sampled tokens (cumulative; markers at the evaluation marks)"
		}
		p.X.Tick.Marker = thousandsTicks{}
	case XTime:
		p.X.Label.Text = "wall time (s)"
	default:
		p.X.Label.Text = "step (optimizer updates)"
		p.X.Tick.Marker = integerTicks{}
	}
	p.Y.Label.Text = opts.Metric
	p.Add(plotter.NewGrid())
	lo, hi, clip := math.Inf(-1), math.Inf(1), false
	if opts.Range != nil {
		lo, hi, clip = opts.Range(opts.Metric)
	}
	for _, c := range curves {
		col := plotutil.Color(c.Index)
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
		if !c.Marks {
			legend.Add(c.Variant, line)
			continue
		}
		marks, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, fmt.Errorf("plot %s: %w", c.Variant, err)
		}
		marks.GlyphStyle.Color = col
		marks.GlyphStyle.Shape = plotutil.Shape(c.Index)
		marks.GlyphStyle.Radius = vg.Points(2.5)
		p.Add(marks)
		legend.Add(c.Variant, line, marks)
	}
	if clip {
		p.Y.Min, p.Y.Max = math.Max(p.Y.Min, lo), math.Min(p.Y.Max, hi)
	}
	return &Figure{Plot: p, Legend: legend, Entries: len(curves)}, nil
}

// Figure is a plot and its legend, drawn apart.
type Figure struct {
	Plot   *plot.Plot
	Legend plot.Legend
	// Entries is the number of legend entries (one per variant).
	Entries int
}

// caption says what the lines and bands are and over how many seeds.
func caption(curves []Curve) string {
	lo, hi := math.MaxInt, 0
	for _, c := range curves {
		for _, n := range c.N {
			lo, hi = min(lo, n), max(hi, n)
		}
	}
	seeds := fmt.Sprintf("n = %d seeds", hi)
	if lo != hi {
		seeds = fmt.Sprintf("n = %d–%d seeds", lo, hi)
	}
	return "mean ± 95% CI (t-interval) over " + seeds
}

// thousandsTicks are the default ticks labelled 10k, 1.5M, …
type thousandsTicks struct{}

// Ticks returns gonum's default ticks with short labels.
func (thousandsTicks) Ticks(min, max float64) []plot.Tick {
	ts := (plot.DefaultTicks{}).Ticks(min, max)
	for i, t := range ts {
		if t.Label == "" {
			continue
		}
		switch v := t.Value; {
		case math.Abs(v) >= 1e6:
			ts[i].Label = strconv.FormatFloat(v/1e6, 'g', 4, 64) + "M"
		case math.Abs(v) >= 1e3:
			ts[i].Label = strconv.FormatFloat(v/1e3, 'g', 4, 64) + "k"
		default:
			ts[i].Label = strconv.FormatFloat(v, 'g', 4, 64)
		}
	}
	return ts
}

// integerTicks are the default ticks with the fractional ones dropped: the
// step axis counts whole updates.
type integerTicks struct{}

// Ticks returns gonum's default ticks at whole numbers only.
func (integerTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	for _, t := range (plot.DefaultTicks{}).Ticks(min, max) {
		if t.Value == math.Trunc(t.Value) {
			if t.Label != "" {
				t.Label = strconv.FormatFloat(t.Value, 'f', 0, 64)
			}
			out = append(out, t)
		}
	}
	return out
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
func SavePlot(src Source, experiment, path string, opts PlotOptions) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".png" && ext != ".svg" {
		return fmt.Errorf("plot %s: extension %q: want .png or .svg", path, ext)
	}
	fig, err := Plot(src, experiment, opts)
	if err != nil {
		return err
	}
	p, legend := fig.Plot, fig.Legend
	// The legend goes below the data, one entry a row, so it never covers
	// it; without a given height the figure grows by the legend's.
	rows := vg.Length(fig.Entries)
	legendH := rows*legend.TextStyle.Height("Xg") + (rows+1)*vg.Points(2)
	w, h := opts.Width, opts.Height
	if w <= 0 {
		w = 16 * vg.Centimeter
	}
	if h <= 0 {
		h = 10*vg.Centimeter + legendH
	}
	dpi := opts.DPI
	if dpi <= 0 {
		dpi = 300
	}
	var canvas vg.CanvasWriterTo
	if ext == ".svg" {
		canvas = vgsvg.New(w, h)
	} else {
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi))}
	}
	dc := draw.New(canvas)
	legend.Top, legend.Left = true, true
	legend.XOffs = vg.Points(8)
	p.Draw(draw.Crop(dc, 0, 0, legendH, 0))
	legend.Draw(draw.Crop(dc, 0, 0, 0, -(h - legendH)))
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	if _, err := canvas.WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("plot %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return nil
}
