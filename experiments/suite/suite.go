// Package suite is the rollout-economics suite: reports that each test one
// claim about the rollout phase of RL fine-tuning (filtering, length caps,
// temperature, rollouts per prompt, advantage estimators, stale reuse,
// where the compute goes, test-time compute, quantized sampling, the
// recipe) with an experiment config, a baseline and checks whose verdict
// is computed from the numbers in a store.
//
// A check is confirmatory when the design its experiment recorded before
// its runs declares it (package design; rollout suite declares a report's
// checks in a config that declares none), exploratory otherwise, in its
// row and in a verdict no confirmatory check decides. Holm's correction
// runs over each report's primary family; a check resting on a premise
// the test bed does not meet is "not testable here", as is a check on
// wall time unless every seed's runs ran side by side in one sitting with
// the load recorded beside them (rollout run --interleave). Every report shows its design record, every variant's
// disclosed settings (config.Disclose) and the planned beside the achieved
// MDE. Plan plans seeds from a pilot; WriteVerdicts applies the same rules
// to any experiments and pools them across base policies.
//
// A Report names its config (experiments/configs/econ/NAME.yaml), the
// claim and its source, the tables (each read from the store through
// tracking/report at one point of every run, or as per-run means over the
// steps), the plots and the Checks. Write renders a report's markdown from
// a store in which its experiment has run: every number comes from the
// store, the statistics from tracking/report/stats (mean ± 95% t-interval
// over seeds, paired t-tests against the baseline on shared seeds, the
// minimum detectable effect at 80% power). WriteIndex lists the reports
// with their verdicts in an index file between two marker lines.
package suite

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rollout-rl/rollout/experiments/design"
	"github.com/rollout-rl/rollout/tracking"
	"github.com/rollout-rl/rollout/tracking/report"
	"github.com/rollout-rl/rollout/tracking/report/stats"
)

// Report is one report of the suite.
type Report struct {
	// Number is the report's number in the suite's list (1–11).
	Number int
	// Name is the report's key (--only NAME), its markdown file's stem and
	// its config's: experiments/configs/econ/NAME.yaml.
	Name string
	// Experiment is the name of the config's experiment when it is not
	// econ_NAME: a report redesigned on another test bed runs as a new
	// experiment, leaving the old one's records as they were.
	Experiment string
	// Title heads the report.
	Title string
	// Claim is the claim under test, as the literature words it, and
	// Source where it comes from.
	Claim, Source string
	// Design says, in markdown, what the experiment does: the task and why
	// it suits the lever, the variants, the budget.
	Design string
	// Tables are the report's tables, in order.
	Tables []Table
	// Checks are the report's checks. Those declared in the design the
	// experiment recorded before its runs are confirmatory and decide the
	// verdict; the others are computed as exploratory. rollout suite
	// declares them in the design of a config that declares none.
	Checks []Check
	// Premises state premises the report's checks rest on (design.Check's
	// Premise), and with Unmet that the test bed does not meet them; they
	// replace the recorded design's premises of the same name.
	Premises []design.Premise
	// Plots are drawn into the report's directory.
	Plots []Plot
	// AnswerTime, when set, measures the experiment's policies at answer
	// time (Meta.Measure): its checks join Checks, its tables and plots
	// follow Tables.
	AnswerTime *AnswerTime
	// CostModel, when set, is the path, from the repository's root, of a
	// measurement sweep of the cost model (rollout cost --measure): the
	// report then ends with the model fitted to it, its prediction for
	// each variant's step and where generation would become the larger
	// share (writeCostModel).
	CostModel string
	// Minutes is the estimated wall time of the report's runs on the
	// 2-core machine, for the index while it is not generated.
	Minutes float64
}

// Config is the path of the report's config, relative to the repository's
// root.
func (r Report) Config() string { return "experiments/configs/econ/" + r.Name + ".yaml" }

// ExperimentName is the name of the report's experiment (its config's
// name): Experiment, else econ_NAME.
func (r Report) ExperimentName() string {
	if r.Experiment != "" {
		return r.Experiment
	}
	return "econ_" + r.Name
}

// Table is one table of a report: one row per variant.
type Table struct {
	// Title heads the table.
	Title string
	// At is the point of each run the values are taken at (see
	// report.ParseAt: final, step:N, tokens:T, train_flops:F), or "mean":
	// each run's mean over the steps that recorded the metric.
	At string
	// Metrics are the table's columns. With At "mean", "steps" is a run's
	// last step and "wall_s" its wall time in seconds.
	Metrics []string
}

// Direction is what a check expects of a variant against the baseline
// (see package design).
type Direction = design.Direction

// The directions a check can test.
const (
	Higher    = design.Higher
	Lower     = design.Lower
	NotWorse  = design.NotWorse
	NotHigher = design.NotHigher
)

// Check is one comparison of a variant with the baseline that the claim
// implies (see design.Check). A report's checks declared in the design
// its experiment recorded before its runs are confirmatory; the others
// are exploratory.
type Check = design.Check

// against names what the check compares with.
func against(c Check, baseline string) string {
	switch {
	case c.Versus:
		return fmt.Sprintf("%g", c.Constant)
	case c.Baseline != "":
		return c.Baseline
	}
	return baseline
}

// Verdict is a check's or a report's outcome.
type Verdict string

// The verdicts.
const (
	Holds        Verdict = "holds"
	DoesNotHold  Verdict = "does not hold"
	Inconclusive Verdict = "inconclusive"
	// NotTestable: the test bed does not meet a premise the claim rests
	// on (Outcome.Premise names it); the numbers are reported, the
	// verdict is not drawn from them.
	NotTestable Verdict = "not testable here"
)

// Outcome is a check evaluated on a store.
type Outcome struct {
	Check
	// Test is the paired t-test of the variant against the baseline over
	// their shared seeds (Diff = variant − baseline).
	Test stats.TestResult
	// Against names what the variant was compared with: a variant or a
	// number.
	Against string
	// MDE is the smallest difference the design detects with 80% power at
	// α = 0.05 (two-sided): (t_{0.975,df} + t_{0.8,df}) · StdErr.
	MDE     float64
	Verdict Verdict
	// Exploratory is set for a check not declared in the design recorded
	// before the runs it reads; Why says why.
	Exploratory bool
	Why         string
	// Premise, for a verdict not testable here, names the premise the test
	// bed does not meet and why.
	Premise string
	// PremiseMet, for a check resting on a measured premise that the
	// measurement meets, says so with the figure.
	PremiseMet string
	// RankAUC, for a check at answer time whose rule selects by the
	// reward model, summarises over the seeds the model's within-prompt
	// AUC on the candidates that rule reranks (N 0 for any other check):
	// the figure of a premise measured by design.WithinPromptAUC.
	RankAUC stats.Summary
	// PHolds is the two-sided p-value of the test that decides "holds":
	// the difference against 0 (higher, lower) or against the margin (not
	// worse, not higher), so that PHolds < α exactly when the interval
	// lies on the claimed side. AdjP is PHolds after the correction over
	// the report's primary family (PHolds itself outside it).
	PHolds, AdjP float64
	// Corrected is set when AdjP comes from a correction over a family of
	// more than one test.
	Corrected bool
	// PlannedMDE is the MDE the design planned (from the check's pilot SD
	// and the planned seeds); NaN when it planned none.
	PlannedMDE float64
	// Load, for a check on wall time that decides its verdict (its runs
	// interleaved in one sitting), gives the load recorded beside them.
	Load string
}

// mde is the minimum detectable effect of a paired test at 80% power and
// α = 0.05.
func mde(t stats.TestResult) float64 { return mdeAt(t, 0.05, 0.8) }

// mdeAt is the minimum detectable effect of a paired test at the given
// level and power: (t_{1−α/2, df} + t_{power, df}) · SE.
func mdeAt(t stats.TestResult, alpha, power float64) float64 {
	if t.DF <= 0 {
		return math.Inf(1)
	}
	return (stats.TQuantile(1-alpha/2, t.DF) + stats.TQuantile(power, t.DF)) * t.StdErr
}

// decide applies the check's direction to the 95% interval [lo, hi] of
// the difference variant − baseline.
func decide(want Direction, margin, lo, hi float64) Verdict {
	switch want {
	case Higher:
		if lo > 0 {
			return Holds
		}
		if hi < margin {
			return DoesNotHold
		}
	case Lower:
		if hi < 0 {
			return Holds
		}
		if lo > -margin {
			return DoesNotHold
		}
	case NotWorse:
		if lo > -margin {
			return Holds
		}
		if hi < 0 {
			return DoesNotHold
		}
	case NotHigher:
		if hi < margin {
			return Holds
		}
		if lo > 0 {
			return DoesNotHold
		}
	}
	return Inconclusive
}

// Overall is a report's verdict from its checks' outcomes: the
// confirmatory checks of the primary family decide it when there are any
// (else every check does, and the verdict is exploratory): does not hold
// when one does not, holds when every testable one holds, not testable
// here when none is testable, else inconclusive.
func Overall(outs []Outcome) Verdict {
	v, _ := overall(outs)
	return v
}

// overall is Overall, and whether the verdict is exploratory (no
// confirmatory primary check decided it).
func overall(outs []Outcome) (Verdict, bool) {
	deciding, exploratory := decidingChecks(outs)
	v, testable := Holds, 0
	for _, o := range deciding {
		switch o.Verdict {
		case DoesNotHold:
			return DoesNotHold, exploratory
		case Inconclusive:
			v = Inconclusive
		}
		if o.Verdict != NotTestable {
			testable++
		}
	}
	switch {
	case len(deciding) == 0:
		return Inconclusive, exploratory
	case testable == 0:
		return NotTestable, exploratory
	}
	return v, exploratory
}

// decidingChecks are the outcomes that decide a verdict: the confirmatory
// checks of the primary family, or every check when there is none (the
// verdict is then exploratory, which the second result says).
func decidingChecks(outs []Outcome) ([]Outcome, bool) {
	var deciding []Outcome
	for _, o := range outs {
		if !o.Exploratory && o.InFamily() == design.Primary {
			deciding = append(deciding, o)
		}
	}
	if len(deciding) == 0 {
		return outs, true
	}
	return deciding, false
}

// Evaluate computes a check on the store: the variant's and the baseline's
// values per seed, their paired test and the verdict.
func Evaluate(src report.Source, experiment, baseline string, c Check, opts report.Options) (Outcome, error) {
	vals, err := Values(src, experiment, c.Metric, c.At, opts)
	if err != nil {
		return Outcome{}, err
	}
	if c.Baseline != "" {
		baseline = c.Baseline
	}
	a, b := vals[c.Variant], vals[baseline]
	if c.Versus {
		b = map[int64]float64{}
		for s := range a {
			b[s] = c.Constant
		}
	}
	if a == nil || b == nil {
		return Outcome{}, fmt.Errorf("suite: check %s %s: experiment %s has no variant %q or %q", c.Metric, c.At, experiment, c.Variant, baseline)
	}
	return compare(c, against(c, baseline), a, b)
}

// compare tests a check's values a (the variant's) against b (what it is
// compared with, named against) per seed over their shared seeds.
func compare(c Check, against string, a, b map[int64]float64) (Outcome, error) {
	var xs, ys []float64
	for _, seed := range slices.Sorted(maps.Keys(a)) {
		if y, ok := b[seed]; ok {
			xs, ys = append(xs, a[seed]), append(ys, y)
		}
	}
	t, err := stats.PairedTest(xs, ys)
	if err != nil {
		return Outcome{}, fmt.Errorf("suite: check %s of %s against %s at %s: %w", c.Metric, c.Variant, against, c.At, err)
	}
	lo, hi := t.Lo, t.Hi
	if t.StdErr == 0 || math.IsNaN(lo) || math.IsNaN(hi) {
		lo, hi = t.Diff, t.Diff
	}
	return Outcome{Check: c, Against: against, Test: t, MDE: mde(t), Verdict: decide(c.Want, c.Margin, lo, hi),
		PHolds: pHolds(c, t), AdjP: pHolds(c, t), PlannedMDE: math.NaN()}, nil
}

// Values returns each variant's value of metric per seed at a point of
// every run (report.ParseAt), or, with at "mean", each run's mean over
// the steps that recorded it ("steps": its last step, "wall_s": its wall
// time); a run that never recorded the metric has no value.
func Values(src report.Source, experiment, metric, at string, opts report.Options) (map[string]map[int64]float64, error) {
	out := map[string]map[int64]float64{}
	if at == "mean" {
		runs, err := src.Runs(experiment)
		if err != nil {
			return nil, fmt.Errorf("suite: %w", err)
		}
		for _, r := range runs {
			if out[r.Variant] == nil {
				out[r.Variant] = map[int64]float64{}
			}
			v, ok, err := runMean(src, r, metric)
			if err != nil {
				return nil, err
			}
			if ok {
				out[r.Variant][r.Seed] = v
			}
		}
		return out, nil
	}
	a, err := report.ParseAt(at)
	if err != nil {
		return nil, fmt.Errorf("suite: %w", err)
	}
	opts.At, opts.Metrics = a, []string{metric}
	rep, err := report.Build(src, experiment, opts)
	if err != nil {
		return nil, fmt.Errorf("suite: %w", err)
	}
	for _, row := range rep.Rows {
		c := row.Cells[0]
		out[row.Variant] = map[int64]float64{}
		for i, s := range c.Seeds {
			out[row.Variant][s] = c.Values[i]
		}
	}
	return out, nil
}

// shareOf returns the two metrics of a derived share a mean table or
// check may name (the first's share of their sum over a run's steps:
// share/gen_time, share/gen_flops), and whether metric is one.
func shareOf(metric string) ([]string, bool) {
	switch metric {
	case "share/gen_time":
		return []string{"timing_s/gen", "timing_s/update"}, true
	case "share/gen_flops":
		return []string{"budget/flops", "budget/train_flops"}, true
	}
	return nil, false
}

// runMean is a run's mean of metric over the steps that recorded it
// (steps ≥ 1: step 0 is the base policy's evaluation); or its last step
// ("steps"), its wall time in seconds ("wall_s"), or a share (shareOf). A
// run that recorded no value after step 0 has none (false).
func runMean(src report.Source, r tracking.Run, metric string) (float64, bool, error) {
	switch metric {
	case "steps":
		return float64(r.LastStep), true, nil
	case "wall_s":
		return r.Elapsed.Seconds(), true, nil
	}
	names := []string{metric}
	pair, isShare := shareOf(metric)
	if isShare {
		names = pair
	}
	series, err := src.MetricSeries(r.ID, names)
	if err != nil {
		return 0, false, fmt.Errorf("suite: run %s: %w", r.ID, err)
	}
	sums := make([]float64, len(series))
	var xs []float64
	for k, s := range series {
		for i, v := range s.Values {
			if s.Steps[i] >= 1 {
				sums[k] += v
				if k == 0 {
					xs = append(xs, v)
				}
			}
		}
	}
	if len(xs) == 0 {
		return 0, false, nil
	}
	if isShare {
		return sums[0] / (sums[0] + sums[1]), true, nil
	}
	return stats.Mean(xs), true, nil
}

// The lines of a report's markdown that hold its verdict and the wall
// time of its runs (seconds from the first start to the last end), read
// back by WriteIndex.
const (
	verdictPrefix = "<!-- suite verdict: "
	wallPrefix    = "<!-- suite wall seconds: "
)

// ReadWall returns the wall time a report's markdown records, and whether
// it records one.
func ReadWall(markdown string) (time.Duration, bool) {
	for _, line := range strings.Split(markdown, "\n") {
		if rest, ok := strings.CutPrefix(line, wallPrefix); ok {
			sec, err := strconv.ParseFloat(strings.TrimSuffix(rest, " -->"), 64)
			return time.Duration(sec * float64(time.Second)), err == nil
		}
	}
	return 0, false
}

// ReadVerdict returns the verdict a report's markdown records, and
// whether it records one.
func ReadVerdict(markdown string) (Verdict, string, bool) {
	for _, line := range strings.Split(markdown, "\n") {
		if rest, ok := strings.CutPrefix(line, verdictPrefix); ok {
			rest = strings.TrimSuffix(rest, " -->")
			v, summary, _ := strings.Cut(rest, " | ")
			return Verdict(v), summary, true
		}
	}
	return "", "", false
}
