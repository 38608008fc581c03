package report

import (
	"fmt"
	"image/color"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
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

// PlotKind is what a plot shows of a metric.
type PlotKind string

// Kinds of plots.
const (
	// KindCurves is each variant's mean over seeds with its 95% band.
	KindCurves PlotKind = "curves"
	// KindDiff is each variant minus the baseline, seed by seed (runs of
	// one seed paired), with the mean difference and its paired 95%
	// t-interval: the figure of the paired tests the reports make.
	KindDiff PlotKind = "diff"
)

// ParsePlotKind checks a plot kind's name.
func ParsePlotKind(s string) (PlotKind, error) {
	switch k := PlotKind(s); k {
	case KindCurves, KindDiff:
		return k, nil
	case "":
		return KindCurves, nil
	}
	return "", fmt.Errorf("--kind %q: want curves or diff", s)
}

// PlotOptions configure a plot of one metric of an experiment.
type PlotOptions struct {
	Metric string
	// X is the horizontal axis; empty means step.
	X XAxis
	// Kind is curves (empty) or diff.
	Kind PlotKind
	// Baseline is the variant a diff plot subtracts; empty means the
	// experiment's recorded baseline if it has runs, else its first
	// variant.
	Baseline string
	// Variants restricts the plot to these variants (all when empty).
	Variants []string
	// Points is the number of grid points a tokens or time axis is sampled
	// at (seeds are interpolated onto a shared grid); 0 means 200.
	Points int
	// Title defaults to "EXPERIMENT: LABEL"; a caption line under it
	// always says what the lines and bands are and over how many seeds.
	Title string
	// Width and Height of the image; 0 means FigureWidth, and PanelHeight
	// (a row of panels each 6 cm high when there are more than five
	// variants) plus the legend's and the notes' height. PNG images are
	// rendered at DPI dots per inch (0 means FigureDPI, fit for print).
	Width, Height vg.Length
	DPI           int
	// MarkMetric, when set, is the metric an evaluation at a token mark
	// records the mark in (Options.MarkMetric): on the tokens axis such a
	// row is drawn at its mark, so runs that reached a mark a few tokens
	// short of it share the point.
	MarkMetric string
	// Range gives the metric's possible range (e.g. [0, 1] for an
	// accuracy): bands are clipped to it, unless a recorded value lies
	// outside it (a reward mixed from several terms, say), which proves
	// the range wrong for these runs. Nil means the registry's
	// (MetricRange).
	Range func(metric string) (lo, hi float64, ok bool)
	// Runs, when not nil, keeps only the runs it accepts (a filter on
	// their configs, say).
	Runs func(tracking.Run) bool
	// GroupBy, when not nil, groups runs by its value for each run instead
	// of by variant: runs of different configs are then pooled, on
	// purpose. Curve.Variant is the group's value.
	GroupBy func(tracking.Run) string
}

// Curve is one variant's line: the mean over seeds at each x, with the
// 95% t-interval (Lo = Hi = Mean where fewer than two seeds cover x),
// clipped to PlotOptions.Range. On a diff plot the values are differences
// from the baseline and N counts seed pairs.
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
	// Seeds is the number of runs (seed pairs on a diff plot) that
	// recorded the metric. Points where N < Seeds average fewer.
	Seeds int
	// Omitted counts the recorded values no point uses: rows at steps not
	// every seed recorded, or beyond the range every seed covers on an
	// interpolated axis. Notes (CurveNotes) say so under the figure.
	Omitted int
	// Recorded counts the values the runs recorded.
	Recorded int
	// Clipped is true when the band was clipped to the metric's range
	// (PlotOptions.Range), which every recorded value lies in.
	Clipped bool
	// Baseline is, on a diff plot, the variant (or group) subtracted.
	Baseline string
	// Runs is the number of the variant's runs, those that recorded no
	// value of the metric (yet) included.
	Runs int
	// NotDrawn says why a curve without points has none.
	NotDrawn string
	// Unpaired lists, on a diff plot, the seeds run for only one of the
	// variant and the baseline: left out, since they have no partner.
	Unpaired []int64
}

// Partial is the number of points that average fewer than Seeds runs.
func (c Curve) Partial() int {
	k := 0
	for _, n := range c.N {
		if n < c.Seeds {
			k++
		}
	}
	return k
}

// xySeries is one run's metric against the plot's x axis.
type xySeries struct {
	seed int64
	x, y []float64
}

// curveGroup is the runs of one curve: a variant, or a value of
// PlotOptions.GroupBy.
type curveGroup struct {
	name  string
	index int
	runs  []tracking.Run
}

// Curves computes the per-variant mean curves with their 95% bands (or,
// for Kind diff, the paired differences from the baseline). On the step
// axis each point averages the runs that recorded that step. On the
// tokens axis, when the variant's runs recorded the metric at shared token
// counts (evaluation marks, see sharedMarks), each point averages the runs
// at one mark; otherwise, and on the time axis, each run is linearly
// interpolated onto a grid over the range every run covers. Runs of one
// variant with different configs are an error, never pooled (unless
// GroupBy pools them on purpose). Each curve counts what it leaves out
// (Curve.Omitted, Curve.Partial, Curve.Unpaired).
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
	kind, err := ParsePlotKind(string(opts.Kind))
	if err != nil {
		return nil, err
	}
	if opts.Points <= 0 {
		opts.Points = 200
	}
	if opts.Range == nil {
		opts.Range = MetricRange
	}
	exp, err := src.Experiment(experiment)
	if err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	runs, err := src.Runs(experiment)
	if err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	if opts.Runs != nil {
		runs = slices.DeleteFunc(runs, func(r tracking.Run) bool { return !opts.Runs(r) })
	}
	groups, err := curveGroups(exp, runs, opts)
	if err != nil {
		return nil, fmt.Errorf("plot: %w", err)
	}
	for _, v := range opts.Variants {
		if !slices.ContainsFunc(groups, func(g curveGroup) bool { return g.name == v }) {
			names := make([]string, len(groups))
			for i, g := range groups {
				names[i] = g.name
			}
			return nil, fmt.Errorf("plot: experiment %q has no variant %q (variants: %s)", experiment, v, strings.Join(names, ", "))
		}
	}
	base := -1
	if kind == KindDiff {
		if base, err = baselineGroup(exp, groups, opts.Baseline); err != nil {
			return nil, fmt.Errorf("plot: %w", err)
		}
	}
	series := make([][]xySeries, len(groups))
	lo, hi, clip := opts.Range(opts.Metric)
	for i, g := range groups {
		if len(opts.Variants) > 0 && !slices.Contains(opts.Variants, g.name) && i != base {
			continue
		}
		if series[i], err = readXY(src, g.runs, opts); err != nil {
			return nil, err
		}
		for _, p := range series[i] {
			for _, y := range p.y {
				clip = clip && y >= lo && y <= hi
			}
		}
	}
	if kind == KindDiff {
		lo, hi = lo-hi, hi-lo
	}
	var curves []Curve
	for i, g := range groups {
		if i == base || len(opts.Variants) > 0 && !slices.Contains(opts.Variants, g.name) {
			continue
		}
		// A curve with nothing to draw is kept, empty, so that the notes
		// say why (CurveNotes).
		empty := Curve{Variant: g.name, Index: g.index, Runs: len(g.runs)}
		if base >= 0 {
			empty.Baseline = groups[base].name
		}
		if len(series[i]) == 0 {
			empty.NotDrawn = "no run recorded " + opts.Metric
			curves = append(curves, empty)
			continue
		}
		ser, unpaired := series[i], []int64(nil)
		if kind == KindDiff {
			if ser, unpaired = pairedDiffs(series[i], series[base], opts.X); len(ser) == 0 {
				empty.Unpaired, empty.NotDrawn = unpaired, "no seed shared with the baseline"
				curves = append(curves, empty)
				continue
			}
		}
		c := curve(g.name, ser, opts)
		c.Index, c.Unpaired, c.Clipped, c.Runs = g.index, unpaired, clip, len(g.runs)
		if base >= 0 {
			c.Baseline = groups[base].name
		}
		if clip {
			for j := range c.Lo {
				c.Lo[j], c.Hi[j] = math.Max(c.Lo[j], lo), math.Min(c.Hi[j], hi)
			}
		}
		curves = append(curves, c)
	}
	if !slices.ContainsFunc(curves, func(c Curve) bool { return len(c.X) > 0 }) {
		if kind == KindDiff {
			return nil, fmt.Errorf("plot: no variant of experiment %q shares a seed with the baseline %q and recorded %q", experiment, groups[base].name, opts.Metric)
		}
		return nil, fmt.Errorf("plot: no run of experiment %q recorded %q", experiment, opts.Metric)
	}
	return curves, nil
}

// curveGroups groups the runs into curves: by variant (in the
// experiment's order, each of one config), or by opts.GroupBy's value
// (sorted).
func curveGroups(exp tracking.Experiment, runs []tracking.Run, opts PlotOptions) ([]curveGroup, error) {
	if opts.GroupBy == nil {
		variants, err := byVariant(exp, runs)
		if err != nil {
			return nil, err
		}
		out := make([]curveGroup, len(variants))
		extra := 0
		for i, v := range variants {
			out[i] = curveGroup{name: v.Name, runs: v.Runs, index: slices.Index(exp.Variants, v.Name)}
			if out[i].index < 0 {
				out[i].index = len(exp.Variants) + extra
				extra++
			}
		}
		return out, nil
	}
	byValue := map[string][]tracking.Run{}
	for _, r := range runs {
		v := opts.GroupBy(r)
		byValue[v] = append(byValue[v], r)
	}
	names := slices.Sorted(maps.Keys(byValue))
	out := make([]curveGroup, len(names))
	for i, n := range names {
		out[i] = curveGroup{name: n, index: i, runs: byValue[n]}
	}
	return out, nil
}

// baselineGroup is the index of the baseline among the groups: the given
// one, else the experiment's recorded baseline, else the first group.
func baselineGroup(exp tracking.Experiment, groups []curveGroup, given string) (int, error) {
	find := func(name string) int {
		return slices.IndexFunc(groups, func(g curveGroup) bool { return g.name == name })
	}
	if given != "" {
		if i := find(given); i >= 0 {
			return i, nil
		}
		return 0, fmt.Errorf("baseline %q: experiment %q has no runs of it", given, exp.Name)
	}
	if i := find(exp.Baseline); exp.Baseline != "" && i >= 0 {
		return i, nil
	}
	if len(groups) == 0 {
		return 0, fmt.Errorf("experiment %q has no runs", exp.Name)
	}
	return 0, nil
}

// pairedDiffs pairs the runs of a variant with the baseline's by seed and
// returns each pair's difference, variant minus baseline: at the x values
// both recorded (steps, or shared evaluation marks), else on the union of
// their x values within the range both cover, interpolating linearly
// (exact for the two piecewise-linear series). It also returns the seeds
// either side has and the other lacks.
func pairedDiffs(variant, baseline []xySeries, x XAxis) ([]xySeries, []int64) {
	var out []xySeries
	var unpaired []int64
	for _, v := range variant {
		j := slices.IndexFunc(baseline, func(b xySeries) bool { return b.seed == v.seed })
		if j < 0 {
			unpaired = append(unpaired, v.seed)
			continue
		}
		b := baseline[j]
		var both []float64
		for _, xv := range v.x {
			if _, ok := slices.BinarySearch(b.x, xv); ok && (len(both) == 0 || both[len(both)-1] != xv) {
				both = append(both, xv)
			}
		}
		exact := x == XStep || (x == XTokens && len(both) >= 2)
		xs := both
		if !exact {
			lo, hi := math.Max(v.x[0], b.x[0]), math.Min(v.x[len(v.x)-1], b.x[len(b.x)-1])
			xs = nil
			for _, xv := range slices.Concat(v.x, b.x) {
				if xv >= lo && xv <= hi {
					xs = append(xs, xv)
				}
			}
			slices.Sort(xs)
			xs = slices.Compact(xs)
		}
		d := xySeries{seed: v.seed}
		for _, xv := range xs {
			yv, ok1 := sampleAt(v.x, v.y, xv, exact)
			yb, ok2 := sampleAt(b.x, b.y, xv, exact)
			if ok1 && ok2 {
				d.x, d.y = append(d.x, xv), append(d.y, yv-yb)
			}
		}
		if len(d.x) > 0 {
			out = append(out, d)
		}
	}
	for _, b := range baseline {
		if !slices.ContainsFunc(variant, func(v xySeries) bool { return v.seed == b.seed }) {
			unpaired = append(unpaired, b.seed)
		}
	}
	slices.Sort(unpaired)
	return out, slices.Compact(unpaired)
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
		p := xySeries{seed: r.Seed, x: make([]float64, ser.Len()), y: ser.Values}
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
	c.Seeds = len(series)
	for _, p := range series {
		c.Recorded += len(p.x)
		for _, x := range p.x {
			if exact {
				if _, ok := slices.BinarySearch(grid, x); !ok {
					c.Omitted++
				}
			} else if len(grid) == 0 || x < grid[0] || x > grid[len(grid)-1] {
				c.Omitted++
			}
		}
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
// band (clipped to the metric's range), or for Kind diff each variant
// minus the baseline with its paired band and a line at zero; a marker at
// each point of curves drawn at their evaluation marks, a colour (Palette)
// and marker fixed per variant, integer ticks on the step axis, a y label
// with the metric's unit (Metric), and with more than five variants one
// panel per variant (the others' means in grey behind it). The legend,
// the title with its caption and the notes on what the curves leave out
// come apart, to be drawn around the data (SavePlot), so that they never
// cover a curve.
func Plot(src Source, experiment string, opts PlotOptions) (*Figure, error) {
	curves, err := Curves(src, experiment, opts)
	if err != nil {
		return nil, err
	}
	kind, _ := ParsePlotKind(string(opts.Kind)) // checked by Curves
	info := Metric(opts.Metric)
	fig := &Figure{Legend: NewFigureLegend(), Curves: curves}
	drawn := slices.DeleteFunc(slices.Clone(curves), func(c Curve) bool { return len(c.X) == 0 })
	fig.Entries = len(drawn)
	fig.Title = opts.Title
	if fig.Title == "" {
		fig.Title = experiment + ": " + info.Label
	}
	ylabel := info.AxisLabel()
	if kind == KindDiff {
		fig.Baseline = curves[0].Baseline
		fig.Title += " — difference from " + fig.Baseline
		ylabel = "Δ " + ylabel
	}
	fig.Caption = Caption(curves, kind)
	fig.Notes = CurveNotes(curves, opts.X, kind)
	xlabel, xticks := axisLabel(opts.X, curves)
	lo, hi, clip := math.Inf(-1), math.Inf(1), false
	if kind == KindCurves {
		rng := opts.Range
		if rng == nil {
			rng = MetricRange
		}
		lo, hi, clip = rng(opts.Metric)
	}
	panel := func(title string) *plot.Plot {
		p := NewFigurePlot(title, xlabel, ylabel)
		if xticks != nil {
			p.X.Tick.Marker = xticks
		}
		p.Add(plotter.NewGrid())
		if kind == KindDiff {
			zero := plotter.NewFunction(func(float64) float64 { return 0 })
			zero.Color, zero.Width = color.Gray{Y: 0x60}, vg.Points(0.8)
			zero.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
			p.Add(zero)
		}
		return p
	}
	if len(drawn) <= smallMultiplesAbove {
		p := panel("")
		for _, c := range drawn {
			thumbs, err := addCurve(p, c, true)
			if err != nil {
				return nil, err
			}
			if thumbs != nil {
				fig.Legend.Add(c.Variant, thumbs...)
			}
		}
		fig.Panels = []*plot.Plot{p}
	} else {
		// Small multiples: each variant in its own panel, the others'
		// means in light grey behind it for reference; one y range.
		for _, c := range drawn {
			p := panel(c.Variant)
			for _, o := range drawn {
				if o.Variant != c.Variant {
					if err := addGreyLine(p, o); err != nil {
						return nil, err
					}
				}
			}
			if _, err := addCurve(p, c, true); err != nil {
				return nil, err
			}
			fig.Panels = append(fig.Panels, p)
		}
		ymin, ymax := math.Inf(1), math.Inf(-1)
		for _, p := range fig.Panels {
			ymin, ymax = math.Min(ymin, p.Y.Min), math.Max(ymax, p.Y.Max)
		}
		for _, p := range fig.Panels {
			p.Y.Min, p.Y.Max = ymin, ymax
		}
		fig.Columns = 3
		fig.Entries = 0
	}
	for _, p := range fig.Panels {
		if clip && drawn[0].Clipped {
			if p.Y.Min == p.Y.Max {
				// A flat line (every value 0, say): gonum would widen the
				// axis by 1 each way, out of the range; widen it inside.
				d := math.Max(math.Abs(p.Y.Min)*0.1, 0.05)
				p.Y.Min, p.Y.Max = p.Y.Min-d, p.Y.Max+d
			}
			p.Y.Min, p.Y.Max = math.Max(p.Y.Min, lo), math.Min(p.Y.Max, hi)
		}
		if kind == KindDiff {
			p.Y.Min, p.Y.Max = math.Min(p.Y.Min, 0), math.Max(p.Y.Max, 0)
		}
	}
	return fig, nil
}

// smallMultiplesAbove is the number of variants above which a figure
// draws one panel per variant: more bands on one set of axes merge.
const smallMultiplesAbove = 5

// axisLabel is the x axis's label and tick marker.
func axisLabel(x XAxis, curves []Curve) (string, plot.Ticker) {
	switch x {
	case XTokens:
		if slices.ContainsFunc(curves, func(c Curve) bool { return c.Marks }) {
			return "sampled tokens (cumulative; markers at the evaluation marks)", thousandsTicks{}
		}
		return "sampled tokens (cumulative)", thousandsTicks{}
	case XTime:
		return "wall time (s)", nil
	}
	return "step (optimizer updates)", integerTicks{}
}

// addCurve adds a curve's band, line and (at marks, or where a point
// stands alone) markers in its variant's colour, and returns the legend
// thumbnails.
func addCurve(p *plot.Plot, c Curve, band bool) ([]plot.Thumbnailer, error) {
	if len(c.X) == 0 {
		return nil, nil
	}
	col := VariantColour(c.Index)
	if b := bandPolygon(c); band && b != nil {
		b.Color = withAlpha(col, 60)
		b.LineStyle.Width = 0
		p.Add(b)
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
	line.Width = vg.Points(lineWidthPts)
	p.Add(line)
	if !c.Marks && len(pts) > 1 {
		return []plot.Thumbnailer{line}, nil
	}
	marks, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, fmt.Errorf("plot %s: %w", c.Variant, err)
	}
	marks.GlyphStyle.Color = col
	marks.GlyphStyle.Shape = variantShape(c.Index)
	marks.GlyphStyle.Radius = vg.Points(2.5)
	p.Add(marks)
	return []plot.Thumbnailer{line, marks}, nil
}

// addGreyLine adds a curve's mean as a thin grey line: the other variants
// behind a small multiple's own.
func addGreyLine(p *plot.Plot, c Curve) error {
	if len(c.X) == 0 {
		return nil
	}
	pts := make(plotter.XYs, len(c.X))
	for j := range c.X {
		pts[j].X, pts[j].Y = c.X[j], c.Mean[j]
	}
	line, err := plotter.NewLine(pts)
	if err != nil {
		return fmt.Errorf("plot %s: %w", c.Variant, err)
	}
	line.Color, line.Width = color.Gray{Y: 0xc8}, vg.Points(0.8)
	p.Add(line)
	return nil
}

// Figure is a plot's panels (one, or one per variant) with its title,
// caption, legend and notes, drawn apart from the data by SavePlot.
type Figure struct {
	Title, Caption string
	// Panels are the data panels, in rows of Columns (0: one panel).
	Panels  []*plot.Plot
	Columns int
	Legend  plot.Legend
	// Entries is the number of legend entries (one per variant; 0 with
	// small multiples, whose panels are titled by variant).
	Entries int
	// Notes say what the curves leave out (CurveNotes).
	Notes []string
	// Baseline is the variant a diff figure subtracts.
	Baseline string
	Curves   []Curve
}

// Caption says what the lines and bands are and over how many seeds, true
// at every point: "n = 3 seeds at every point" only when every point of
// every curve averages three; a variant that differs is named with its
// own count, e.g. "(solo: 1)", or its range, e.g. "(tree: 1–3; see the
// notes)".
func Caption(curves []Curve, kind PlotKind) string {
	unit := "seeds"
	if kind == KindDiff {
		unit = "seed pairs"
	}
	desc := make([]string, 0, len(curves))
	count := map[string]int{}
	for _, c := range curves {
		if len(c.N) == 0 {
			continue
		}
		lo, hi := slices.Min(c.N), slices.Max(c.N)
		d := strconv.Itoa(hi)
		if lo != hi {
			d = fmt.Sprintf("%d–%d", lo, hi)
		}
		desc = append(desc, c.Variant+"\x00"+d)
		count[d]++
	}
	main := ""
	for d, k := range count {
		if main == "" || k > count[main] || k == count[main] && d > main {
			main = d
		}
	}
	var others []string
	for _, vd := range desc {
		v, d, _ := strings.Cut(vd, "\x00")
		if d != main {
			others = append(others, v+": "+d)
		}
	}
	seeds := "n = " + main + " " + unit
	if strings.Contains(main, "–") {
		seeds += " per point"
	} else {
		seeds += " at every point"
	}
	if len(others) > 0 {
		seeds += " (" + strings.Join(others, "; ") + ")"
	}
	if kind == KindDiff {
		return "mean paired difference (variant − baseline, same seed) ± 95% CI (paired t-interval) over " + seeds
	}
	return "mean ± 95% CI (t-interval) over " + seeds
}

// CurveNotes says, a line per curve that leaves something out, what: the
// recorded values no point uses and why, the points that average fewer
// seeds than the curve has, and on diff plots the seeds without a partner.
func CurveNotes(curves []Curve, x XAxis, kind PlotKind) []string {
	var out []string
	unit := "seeds"
	if kind == KindDiff {
		unit = "seed pairs"
	}
	for _, c := range curves {
		var parts []string
		if c.Omitted > 0 {
			why := "at steps not every seed recorded"
			switch {
			case x == XTokens && c.Marks:
				why = "off the evaluation marks every seed reached"
			case x != XStep:
				why = "beyond the range every seed covers"
			}
			parts = append(parts, fmt.Sprintf("%d of %d recorded values not drawn (%s)", c.Omitted, c.Recorded, why))
		}
		if k := c.Partial(); k > 0 {
			parts = append(parts, fmt.Sprintf("%d of %d points average fewer than its %d %s", k, len(c.X), c.Seeds, unit))
		}
		if c.NotDrawn != "" {
			parts = append(parts, "not drawn: "+c.NotDrawn)
		}
		if k := c.Runs - c.Seeds; len(c.X) > 0 && kind == KindCurves && k > 0 {
			parts = append(parts, fmt.Sprintf("%d of its %d runs recorded no value yet", k, c.Runs))
		}
		if len(c.Unpaired) > 0 {
			seeds := make([]string, len(c.Unpaired))
			for i, s := range c.Unpaired {
				seeds[i] = strconv.FormatInt(s, 10)
			}
			parts = append(parts, "seeds without a partner left out: "+strings.Join(seeds, ", "))
		}
		if len(parts) > 0 {
			out = append(out, c.Variant+": "+strings.Join(parts, "; "))
		}
	}
	return out
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
// file's extension: the title and caption on top, the panels, the legend
// below the data and the notes under it, each line wrapped to the width.
func SavePlot(src Source, experiment, path string, opts PlotOptions) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".png" && ext != ".svg" {
		return fmt.Errorf("plot %s: extension %q: want .png or .svg", path, ext)
	}
	fig, err := Plot(src, experiment, opts)
	if err != nil {
		return err
	}
	dpi := opts.DPI
	if dpi <= 0 {
		dpi = FigureDPI
	}
	if err := fig.Save(path, opts.Width, opts.Height, dpi); err != nil {
		return fmt.Errorf("plot %s: %w", path, err)
	}
	return nil
}

// Save draws the figure to path (.png at dpi, or .svg). A zero width is
// FigureWidth; a zero height fits the panels (PanelHeight for one, 6 cm a
// row of small multiples) and the text around them.
func (f *Figure) Save(path string, w, h vg.Length, dpi int) error {
	if w <= 0 {
		w = FigureWidth
	}
	pad := vg.Points(6)
	head := NewFigurePlot("", "", "").Title.TextStyle
	small := head
	small.Font.Size = fontSize
	title := wrapText(head, f.Title, w-2*pad)
	notes := wrapText(small, f.Caption, w-2*pad)
	for _, n := range f.Notes {
		notes = append(notes, wrapText(small, n, w-2*pad)...)
	}
	headH := vg.Length(len(title))*head.Height("Xg") + pad
	legendH := vg.Length(f.Entries)*f.Legend.TextStyle.Height("Xg") + vg.Length(f.Entries+1)*vg.Points(2)
	notesH := vg.Length(len(notes))*small.Height("Xg") + pad
	cols := max(1, f.Columns)
	if len(f.Panels) == 1 {
		cols = 1
	}
	rows := (len(f.Panels) + cols - 1) / cols
	panelH := PanelHeight
	if len(f.Panels) > 1 {
		panelH = 6 * vg.Centimeter
	}
	if h <= 0 {
		h = headH + vg.Length(rows)*panelH + legendH + notesH
	}
	panelH = (h - headH - legendH - notesH) / vg.Length(rows)
	if panelH < 2*vg.Centimeter {
		return fmt.Errorf("height %v leaves %v a panel for the data: want at least 2 cm", h, panelH)
	}
	var canvas vg.CanvasWriterTo
	if strings.EqualFold(filepath.Ext(path), ".svg") {
		canvas = vgsvg.New(w, h)
	} else {
		canvas = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi))}
	}
	dc := draw.New(canvas)
	// band is the part of dc between heights y0 and y1 from the bottom and
	// widths x0 and x1 from the left.
	band := func(x0, x1, y0, y1 vg.Length) draw.Canvas { return draw.Crop(dc, x0, x1-w, y0, y1-h) }
	y := h - pad/2
	head.XAlign, head.YAlign = text.XLeft, text.YTop
	for _, line := range title {
		dc.FillText(head, vg.Point{X: pad, Y: y}, line)
		y -= head.Height("Xg")
	}
	top := h - headH
	pw := w / vg.Length(cols)
	for i, p := range f.Panels {
		r, c := i/cols, i%cols
		p.Draw(band(vg.Length(c)*pw, vg.Length(c+1)*pw, top-vg.Length(r+1)*panelH, top-vg.Length(r)*panelH))
	}
	if f.Entries > 0 {
		f.Legend.Top, f.Legend.Left = true, true
		f.Legend.XOffs = pad
		f.Legend.Draw(band(0, w, notesH, notesH+legendH))
	}
	small.XAlign, small.YAlign = text.XLeft, text.YTop
	small.Color = color.Gray{Y: 0x40}
	y = notesH - pad/2
	for _, line := range notes {
		dc.FillText(small, vg.Point{X: pad, Y: y}, line)
		y -= small.Height("Xg")
	}
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := canvas.WriteTo(file); err != nil {
		file.Close()
		return err
	}
	return file.Close()
}

// wrapText splits s into lines no wider than width in style st, at
// spaces (and at its own newlines).
func wrapText(st text.Style, s string, width vg.Length) []string {
	var out []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			next := word
			if line != "" {
				next = line + " " + word
			}
			if line != "" && st.Width(next) > width {
				out = append(out, line)
				next = word
			}
			line = next
		}
		out = append(out, line)
	}
	return out
}
