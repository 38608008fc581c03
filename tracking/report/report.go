// Package report reads experiments out of a tracking store and compares
// their variants: tables of mean ± 95% t-interval over seeds with t-tests
// against a baseline (Build, Report.Write), curves and plots of a metric
// over steps, sampled tokens or wall time (Curves, Plot, SavePlot), and
// the run listings of `rollout ls` and `rollout show`, and exports of
// metrics, trajectories and rollout groups as JSON lines or CSV (Export).
// The statistics are in the stats subpackage.
//
// It reads the store through Source. Callers say which metrics to report
// by default, which are minimised and which holds the cumulative training
// FLOPs; what figures know of a metric — its label, unit and range — is
// the registry's (Metric), and how they look is the package's figure style
// (Palette, FigureWidth, NewFigurePlot, Figure.Save), which every figure
// of the project and the dashboard share: one variant has one colour
// everywhere. Besides curves of each variant's mean, plots draw paired
// differences from the baseline (KindDiff), and say what a curve leaves
// out (CurveNotes).
//
// A report compares values taken at one point of each run (At): the end,
// the best value, a step, an exact sampled-token mark, or a training-FLOP
// count. It never pools runs of one variant whose resolved configs
// differ, and never clamps a point beyond a finished run's end to its last
// value: both are errors.
package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rollout-rl/rollout/tracking"
	"github.com/rollout-rl/rollout/tracking/report/stats"
)

// Source is what reports read from a store; *tracking.Store is one.
type Source interface {
	// Experiment returns the named experiment's record.
	Experiment(name string) (tracking.Experiment, error)
	// Runs lists an experiment's runs.
	Runs(experiment string) ([]tracking.Run, error)
	// MetricNames returns the sorted names of the metrics a run recorded.
	MetricNames(runID string) ([]string, error)
	// MetricSeries returns the given metrics of a run, one Series each.
	MetricSeries(runID string, metrics []string) ([]tracking.Series, error)
}

var _ Source = (*tracking.Store)(nil)

// Options configure Build.
type Options struct {
	// Metrics to report; empty means those of DefaultMetrics the runs
	// recorded, or, when they recorded none of them, every metric.
	Metrics []string
	// DefaultMetrics are the metrics reported when Metrics is empty.
	DefaultMetrics []string
	// At says which value of each run is taken; the zero value is final.
	At At
	// Baseline is the variant the others are tested against; empty means
	// the experiment's recorded baseline if it has runs, else its first
	// variant (in config order, else by name).
	Baseline string
	// Minimize says whether lower is better for a metric, for At best;
	// nil means higher is better for every metric.
	Minimize func(metric string) bool
	// FLOPsMetric is the metric holding a run's cumulative training FLOPs,
	// which At train_flops reads.
	FLOPsMetric string
	// MarkMetric is the metric an evaluation at a token mark records the
	// mark in (its value T), which At tokens reads: a run evaluates at
	// mark T once the tokens left before T cover no further group, so the
	// row's cumulative token count may fall short of T. Empty, or a run
	// without it, means rows whose cumulative token count is exactly T.
	MarkMetric string
	// FLOPsMarkMetric is the metric an evaluation at a total-FLOP mark
	// records the mark in (its value F), which At flops reads: the only
	// rows it compares at.
	FLOPsMarkMetric string
}

// markMetric is the metric holding the evaluation marks the point at is
// taken on: MarkMetric for At tokens, FLOPsMarkMetric for At flops; empty
// for the other points.
func (o *Options) markMetric(at At) string {
	switch at.Kind {
	case AtTokens:
		return o.MarkMetric
	case AtFLOPs:
		return o.FLOPsMarkMetric
	}
	return ""
}

func (o *Options) minimize(metric string) bool { return o.Minimize != nil && o.Minimize(metric) }

// Report compares the variants of an experiment: one row per variant, one
// cell per metric.
type Report struct {
	Experiment string
	At         At
	Baseline   string
	Metrics    []string
	Rows       []Row
}

// Row is one variant.
type Row struct {
	Variant string
	// Runs is the number of runs (seeds) of the variant.
	Runs int
	// Unfinished counts runs still running or failed: their values are
	// the last ones recorded.
	Unfinished int
	Cells      []Cell
}

// Cell is one metric of one variant over its seeds.
type Cell struct {
	Metric string
	// Seeds and Values are the runs that have a value, in seed order.
	Seeds  []int64
	Values []float64
	// Missing counts runs without a value at the chosen point.
	Missing int
	Summary stats.Summary
	// Test is the t-test of this variant against the baseline (nil for the
	// baseline itself or when a side has fewer than two values).
	Test *stats.TestResult
}

// Build computes the comparison table of an experiment.
func Build(src Source, experiment string, opts Options) (*Report, error) {
	exp, err := src.Experiment(experiment)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	runs, err := src.Runs(experiment)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("report: experiment %q has no runs yet", experiment)
	}
	if opts.At.Kind == "" {
		opts.At.Kind = AtFinal
	}
	if opts.At.Kind == AtTrainFLOPs && opts.FLOPsMetric == "" {
		return nil, fmt.Errorf("report: at %s: no training-FLOP metric given", opts.At)
	}
	if opts.At.Kind == AtFLOPs && opts.FLOPsMarkMetric == "" {
		return nil, fmt.Errorf("report: at %s: no FLOPs-mark metric given", opts.At)
	}
	metrics := opts.Metrics
	if len(metrics) == 0 {
		if metrics, err = defaultMetrics(src, runs, opts.DefaultMetrics); err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
	}
	variants, err := byVariant(exp, runs)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	baseline := opts.Baseline
	if baseline == "" && slices.ContainsFunc(variants, func(v variantRuns) bool { return v.Name == exp.Baseline }) {
		baseline = exp.Baseline
	}
	bi := slices.IndexFunc(variants, func(v variantRuns) bool { return v.Name == baseline })
	switch {
	case baseline == "":
		bi, baseline = 0, variants[0].Name
	case bi < 0:
		names := make([]string, len(variants))
		for i, v := range variants {
			names[i] = v.Name
		}
		return nil, fmt.Errorf("report: baseline variant %q has no runs in experiment %q (variants: %s)", baseline, experiment, strings.Join(names, ", "))
	}
	// Baseline first.
	base := variants[bi]
	variants = append([]variantRuns{base}, slices.Delete(variants, bi, bi+1)...)

	rep := &Report{Experiment: experiment, At: opts.At, Baseline: baseline, Metrics: metrics}
	off := newOffPoints(opts.At.Kind)
	for _, v := range variants {
		row, err := buildRow(src, v, metrics, &opts, off)
		if err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
		rep.Rows = append(rep.Rows, row)
	}
	if err := off.err(opts.At, metrics, opts.FLOPsMetric); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	if err := checkRecorded(src, rep, runs); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	rep.test()
	return rep, nil
}

// buildRow takes each run's value of each metric; runs whose value lies
// off the chosen point are noted in off.
func buildRow(src Source, v variantRuns, metrics []string, opts *Options, off *offPoints) (Row, error) {
	row := Row{Variant: v.Name, Runs: len(v.Runs), Cells: make([]Cell, len(metrics))}
	for i, m := range metrics {
		row.Cells[i].Metric = m
	}
	names := metrics
	if opts.At.Kind == AtTrainFLOPs {
		names = append(slices.Clip(metrics), opts.FLOPsMetric)
	}
	markMetric := opts.markMetric(opts.At)
	withMarks := markMetric != ""
	if withMarks {
		names = append(slices.Clip(metrics), markMetric)
	}
	for _, r := range v.Runs {
		if r.Status != tracking.StatusFinished {
			row.Unfinished++
		}
		series, err := src.MetricSeries(r.ID, names)
		if err != nil {
			return row, err
		}
		var flops, marks *tracking.Series
		if opts.At.Kind == AtTrainFLOPs {
			flops = &series[len(metrics)]
		}
		if withMarks {
			marks = &series[len(metrics)]
		}
		for i, m := range metrics {
			c := &row.Cells[i]
			val, ok, why, atMark := markValue(&series[i], marks, opts.At)
			if !atMark && opts.At.Kind == AtFLOPs {
				why = flopsMarkMissing(marks, r, opts.At.FLOPs)
			} else if !atMark {
				val, ok, why = valueAt(&series[i], flops, r, opts.At, opts.minimize(m))
			}
			switch {
			case why != "":
				off.add(m, r, why)
			case ok:
				c.Seeds = append(c.Seeds, r.Seed)
				c.Values = append(c.Values, val)
			default:
				c.Missing++
			}
			off.note(m, &series[i], marks, r)
		}
		off.noteFLOPs(flops, r)
	}
	for i := range row.Cells {
		row.Cells[i].Summary = stats.Summarize(row.Cells[i].Values)
	}
	return row, nil
}

// checkRecorded fails on a metric no run recorded, at final or best: a
// typo more often than not (at a step or mark it may merely not have been
// reached).
func checkRecorded(src Source, rep *Report, runs []tracking.Run) error {
	if rep.At.Kind != AtFinal && rep.At.Kind != AtBest {
		return nil
	}
	for i, m := range rep.Metrics {
		seen := false
		for _, row := range rep.Rows {
			seen = seen || row.Cells[i].Summary.N > 0
		}
		if !seen {
			known, _ := recordedMetrics(src, runs)
			return fmt.Errorf("no run of experiment %q recorded metric %q (recorded: %s)", rep.Experiment, m, strings.Join(known, ", "))
		}
	}
	return nil
}

// test runs each variant's t-tests against the baseline (the first row):
// paired over seeds when both have the same seeds, Welch otherwise.
func (rep *Report) test() {
	base := rep.Rows[0]
	for ri := 1; ri < len(rep.Rows); ri++ {
		for i := range rep.Metrics {
			c, b := &rep.Rows[ri].Cells[i], &base.Cells[i]
			var res stats.TestResult
			var err error
			if pa, pb, ok := pairBySeed(c, b); ok {
				res, err = stats.PairedTest(pa, pb)
			} else {
				res, err = stats.WelchTest(c.Values, b.Values)
			}
			if err == nil {
				c.Test = &res
			}
		}
	}
}

// recordedMetrics returns the sorted names of the metrics any run recorded.
func recordedMetrics(src Source, runs []tracking.Run) ([]string, error) {
	var out []string
	for _, r := range runs {
		names, err := src.MetricNames(r.ID)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// defaultMetrics picks those of preferred that were recorded, else all.
func defaultMetrics(src Source, runs []tracking.Run, preferred []string) ([]string, error) {
	all, err := recordedMetrics(src, runs)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("no metrics recorded yet")
	}
	var out []string
	for _, m := range preferred {
		if slices.Contains(all, m) && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return all, nil
	}
	return out, nil
}

// valueAt picks a run's value of one metric at the chosen point. ok is
// false when the run has no value there (not reached yet, or the metric
// not recorded); why, when not empty, says how the point lies off the run
// (beyond a finished run's end, off its token marks), which is an error.
// flops is the run's cumulative training-FLOP series, for At train_flops.
func valueAt(s, flops *tracking.Series, r tracking.Run, at At, minimize bool) (val float64, ok bool, why string) {
	n := s.Len()
	finished := r.Status == tracking.StatusFinished
	switch at.Kind {
	case AtBest:
		if n == 0 {
			return 0, false, ""
		}
		best := s.Values[0]
		for _, v := range s.Values[1:] {
			if minimize && v < best || !minimize && v > best || math.IsNaN(best) {
				best = v
			}
		}
		return best, true, ""
	case AtStep:
		if at.Step > r.LastStep {
			if finished {
				return 0, false, fmt.Sprintf("ended at step %d", r.LastStep)
			}
			return 0, false, ""
		}
		i, _ := slices.BinarySearch(s.Steps, at.Step+1)
		if i == 0 {
			return 0, false, ""
		}
		return s.Values[i-1], true, ""
	case AtTokens:
		return tokensValue(s, r, at.Tokens)
	case AtTrainFLOPs:
		return flopsValue(s, flops, r, at.FLOPs)
	}
	if n == 0 {
		return 0, false, ""
	}
	return s.Values[n-1], true, ""
}

// markValue is the metric's value at the evaluation a run made at token
// mark at.Tokens (the step whose marks value is that mark). atMark is false
// when the run recorded no such mark (or at is not a tokens point): the
// caller then looks for a row at exactly that many tokens.
func markValue(s, marks *tracking.Series, at At) (val float64, ok bool, why string, atMark bool) {
	mark, unit := float64(at.Tokens), "token"
	switch {
	case marks == nil:
		return 0, false, "", false
	case at.Kind == AtFLOPs:
		mark, unit = at.FLOPs, "FLOP"
	case at.Kind != AtTokens:
		return 0, false, "", false
	}
	i := slices.Index(marks.Values, mark)
	if i < 0 {
		return 0, false, "", false
	}
	step := marks.Steps[i]
	j, found := slices.BinarySearch(s.Steps, step)
	if !found {
		return 0, false, fmt.Sprintf("has no row at its %s-%s mark (step %d)", strconv.FormatFloat(mark, 'g', -1, 64), unit, step), true
	}
	return s.Values[j], true, "", true
}

// flopsMarkMissing says why a run has no evaluation at FLOPs mark f: it
// made none there though it went past it or finished, or it evaluates at
// no FLOPs marks at all. It is empty for a run still running that has not
// reached f.
func flopsMarkMissing(marks *tracking.Series, r tracking.Run, f float64) string {
	if marks == nil || marks.Len() == 0 {
		return "evaluated at no FLOPs marks (eval.every_flops)"
	}
	if last := marks.Values[marks.Len()-1]; f < last || r.Status == tracking.StatusFinished {
		return fmt.Sprintf("has no evaluation at %s FLOPs", strconv.FormatFloat(f, 'g', -1, 64))
	}
	return ""
}

// tokensValue is the metric's value at the row whose cumulative sampled
// tokens are exactly t.
func tokensValue(s *tracking.Series, r tracking.Run, t int64) (float64, bool, string) {
	if t > r.Tokens {
		if r.Status == tracking.StatusFinished {
			return 0, false, fmt.Sprintf("ended at %d sampled tokens", r.Tokens)
		}
		return 0, false, ""
	}
	if s.Len() == 0 {
		return 0, false, ""
	}
	i, _ := slices.BinarySearch(s.Tokens, t+1)
	if i == 0 || s.Tokens[i-1] != t {
		return 0, false, fmt.Sprintf("has no row at %d sampled tokens", t)
	}
	return s.Values[i-1], true, ""
}

// flopsValue is the metric's value at the last row whose cumulative
// training FLOPs (the last flops value at or before its step; 0 before
// the first) are at most f.
func flopsValue(s, flops *tracking.Series, r tracking.Run, f float64) (float64, bool, string) {
	finished := r.Status == tracking.StatusFinished
	if flops.Len() == 0 {
		if !finished && r.LastStep <= 0 {
			return 0, false, "" // nothing trained yet
		}
		return 0, false, "recorded no training FLOPs"
	}
	if end := flops.Values[flops.Len()-1]; f > end {
		if finished {
			return 0, false, fmt.Sprintf("ended at %s training FLOPs", formatFLOPs(end))
		}
		return 0, false, ""
	}
	best, j := -1, 0
	for i, step := range s.Steps {
		for j < flops.Len() && flops.Steps[j] <= step {
			j++
		}
		if j > 0 && flops.Values[j-1] > f {
			break
		}
		best = i
	}
	if best < 0 {
		return 0, false, ""
	}
	return s.Values[best], true, ""
}

func formatFLOPs(f float64) string { return fmt.Sprintf("%.6g", f) }

// pairBySeed returns the two cells' values paired by seed when both have
// exactly the same set of distinct seeds.
func pairBySeed(a, b *Cell) ([]float64, []float64, bool) {
	if len(a.Seeds) != len(b.Seeds) || len(a.Seeds) == 0 {
		return nil, nil, false
	}
	idx := make(map[int64]int, len(b.Seeds))
	for i, s := range b.Seeds {
		if _, dup := idx[s]; dup {
			return nil, nil, false
		}
		idx[s] = i
	}
	pa := make([]float64, len(a.Seeds))
	pb := make([]float64, len(a.Seeds))
	seen := make(map[int64]bool, len(a.Seeds))
	for i, s := range a.Seeds {
		j, ok := idx[s]
		if !ok || seen[s] {
			return nil, nil, false
		}
		seen[s] = true
		pa[i], pb[i] = a.Values[i], b.Values[j]
	}
	return pa, pb, true
}
