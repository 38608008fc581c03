package suite

import (
	"bytes"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/rollout-rl/rollout/tracking"
	"github.com/rollout-rl/rollout/tracking/report"
	"github.com/rollout-rl/rollout/tracking/report/stats"
)

// Plot is one figure of a report: a metric against an axis, every variant.
type Plot struct {
	Metric string
	X      report.XAxis
}

// file is the plot's file name in the report's directory.
func (p Plot) file(name string) string {
	m := strings.NewReplacer("/", "_", "@", "at").Replace(p.Metric)
	return fmt.Sprintf("%s_%s_%s.png", name, m, p.X)
}

// diffFile is the file name of the plot's paired-difference figure.
func (p Plot) diffFile(name string) string {
	return strings.TrimSuffix(p.file(name), ".png") + "_diff.png"
}

// Meta is what a report says about how it was made.
type Meta struct {
	// Command regenerates the report alone.
	Command string
	// Commit is the commit of the program that wrote the report.
	Commit string
	// Machine describes the machine that wrote it.
	Machine string
	// Store is the store the runs are in.
	Store string
	// Options are the report options (the metric that holds evaluation
	// marks, the training-FLOP metric, which metrics are minimised).
	Options report.Options
	// Range gives a metric's possible range for the plots' bands.
	Range func(metric string) (lo, hi float64, ok bool)
	// Measure measures policies at answer time, for a report with an
	// AnswerTime.
	Measure Measurer
}

// Write renders the report from the store into dir/NAME.md with its plots
// beside it, and returns its verdict. The report's experiment must have
// run in the store.
func Write(st *tracking.Store, r Report, dir string, meta Meta) (Verdict, error) {
	var buf bytes.Buffer
	v, err := Render(&buf, st, r, dir, meta)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, r.Name+".md")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("suite: %w", err)
	}
	return v, nil
}

// Render writes the report's markdown to w and its plots into dir, and
// returns its verdict: the claim, the verdict, the design, the checks,
// the tables, the plots and how it was made.
func Render(w io.Writer, st *tracking.Store, r Report, dir string, meta Meta) (Verdict, error) {
	exp, runs, err := experimentOf(st, r)
	if err != nil {
		return "", err
	}
	outs, d, answer, err := evaluateReport(st, r, exp, runs, meta)
	if err != nil {
		return "", err
	}
	verdict, exploratory := overall(outs)
	p := &printer{w: w}
	p.f("# %d. %s\n\n", r.Number, r.Title)
	p.f("%s%s | %s -->\n%s%.0f -->\n\n", verdictPrefix, verdictLabel(verdict, exploratory), summary(outs), wallPrefix, span(runs).Seconds())
	p.f("**Claim** (%s): %s\n\n", r.Source, r.Claim)
	if exploratory {
		p.f("**Verdict (exploratory): %s.** No confirmatory primary check decides it: the checks were not declared in a design recorded before the runs. %s\n\n", verdict, verdictSentence(verdict, outs))
	} else {
		p.f("**Verdict: %s.** %s\n\n", verdict, verdictSentence(verdict, outs))
	}
	cfgLink := configLink(dir, r.Config())
	p.f("## Design\n\n%s\n\nConfig: [`%s`](%s) (experiment `%s`, baseline `%s`, variants %s; %d runs over seeds %s).\n\n",
		strings.TrimSpace(r.Design), r.Config(), filepath.ToSlash(cfgLink), exp.Name, exp.Baseline, quoteAll(exp.Variants), len(runs), seedList(runs))
	writeDesignRecord(p, d, outs)
	if err := writeSettings(p, exp, runs); err != nil {
		return "", err
	}
	writeChecks(p, outs, exp.Baseline)
	for _, t := range r.Tables {
		if err := writeTable(p, st, exp, t, meta.Options); err != nil {
			return "", err
		}
	}
	if answer != nil {
		if err := answer.write(p, dir, r.Name); err != nil {
			return "", err
		}
	}
	if len(r.Plots) > 0 {
		p.f("## Plots\n\n")
	}
	for _, pl := range r.Plots {
		opts := report.PlotOptions{Metric: pl.Metric, X: pl.X, Range: meta.Range, MarkMetric: meta.Options.MarkMetric}
		// The paired differences first, the figure of the paired tests
		// above; with one variant there is nothing to pair.
		if len(exp.Variants) > 1 {
			d := opts
			d.Kind = report.KindDiff
			base := exp.Baseline
			if base == "" {
				base = exp.Variants[0]
			}
			// Runs without a shared seed have no paired figure: said, not
			// dropped, and the curves still follow.
			if err := report.SavePlot(st, exp.Name, filepath.Join(dir, pl.diffFile(r.Name)), d); err != nil {
				p.f("No paired-difference figure of %s against %s: %v.\n\n", pl.Metric, pl.X, err)
			} else {
				p.f("![%s against %s: each variant minus %s, paired by seed, mean and 95%% paired t-interval](%s)\n\n", pl.Metric, pl.X, base, pl.diffFile(r.Name))
			}
		}
		if err := report.SavePlot(st, exp.Name, filepath.Join(dir, pl.file(r.Name)), opts); err != nil {
			return "", fmt.Errorf("suite: %s: %w", r.Name, err)
		}
		p.f("![%s against %s](%s)\n\n", pl.Metric, pl.X, pl.file(r.Name))
	}
	if r.CostModel != "" {
		if err := writeCostModel(p, r); err != nil {
			return "", err
		}
	}
	writeProvenance(p, runs, meta)
	return verdict, p.err
}

// evaluateReport computes a report's checks on the store: the recorded
// design's declared checks and the report's own (and its answer-time
// checks), each classified confirmatory or exploratory, premises applied
// and the primary family corrected.
func evaluateReport(st *tracking.Store, r Report, exp tracking.Experiment, runs []tracking.Run, meta Meta) ([]Outcome, designed, *answerSection, error) {
	d, err := loadDesign(st, exp.Name, runs, r)
	if err != nil {
		return nil, d, nil, err
	}
	var outs []Outcome
	for _, c := range d.checks(r) {
		o, err := Evaluate(st, exp.Name, exp.Baseline, c, meta.Options)
		if err != nil {
			return nil, d, nil, err
		}
		outs = append(outs, o)
	}
	var answer *answerSection
	if r.AnswerTime != nil {
		if answer, err = measureAnswerSection(r.AnswerTime, runs, meta.Measure); err != nil {
			return nil, d, nil, fmt.Errorf("suite: report %s: %w", r.Name, err)
		}
		outs = append(outs, answer.checks...)
	}
	var answerChecks []Outcome
	if answer != nil {
		answerChecks = answer.checks
	}
	if err := d.answered(r, answerChecks); err != nil {
		return nil, d, nil, err
	}
	for i := range outs {
		d.classify(&outs[i], runs)
	}
	d.correct(outs)
	return outs, d, answer, nil
}

// configLink is the path of config (relative to the working directory)
// from dir, for a markdown link.
func configLink(dir, config string) string {
	absDir, err1 := filepath.Abs(dir)
	absCfg, err2 := filepath.Abs(config)
	if err1 != nil || err2 != nil {
		return config
	}
	rel, err := filepath.Rel(absDir, absCfg)
	if err != nil {
		return config
	}
	return rel
}

// experimentOf reads the report's experiment and its runs, which must all
// have finished.
func experimentOf(st *tracking.Store, r Report) (tracking.Experiment, []tracking.Run, error) {
	return finishedExperiment(st, r.ExperimentName(), r)
}

// finishedExperiment reads an experiment and its runs, which must all
// have finished; r names the report in errors.
func finishedExperiment(st *tracking.Store, name string, r Report) (tracking.Experiment, []tracking.Run, error) {
	exp, err := st.Experiment(name)
	if err != nil {
		return exp, nil, fmt.Errorf("suite: report %s: %w", r.Name, err)
	}
	runs, err := st.Runs(name)
	if err != nil {
		return exp, nil, fmt.Errorf("suite: report %s: %w", r.Name, err)
	}
	for _, run := range runs {
		if run.Status != tracking.StatusFinished {
			return exp, nil, fmt.Errorf("suite: report %s: run %s (%s seed %d) is %s: run the suite again to finish it", r.Name, run.ID, run.Variant, run.Seed, run.Status)
		}
	}
	if len(runs) == 0 {
		return exp, nil, fmt.Errorf("suite: report %s: experiment %s has no runs", r.Name, name)
	}
	return exp, runs, nil
}

// printer writes formatted text, keeping the first error.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) f(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func quoteAll(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + n + "`"
	}
	return strings.Join(q, ", ")
}

func seedList(runs []tracking.Run) string {
	var seeds []int64
	for _, r := range runs {
		if !slices.Contains(seeds, r.Seed) {
			seeds = append(seeds, r.Seed)
		}
	}
	slices.Sort(seeds)
	return strings.Trim(fmt.Sprint(seeds), "[]")
}

// verdictLabel is a verdict as the index shows it: "(exploratory)" after
// one no confirmatory check decided.
func verdictLabel(v Verdict, exploratory bool) string {
	if exploratory {
		return string(v) + " (exploratory)"
	}
	return string(v)
}

// kind says whether an outcome is confirmatory (with its family) or
// exploratory.
func kind(o Outcome) string {
	if o.Exploratory {
		return "exploratory"
	}
	return "confirmatory, " + string(o.InFamily())
}

// summary is the one-line account of the checks for the index.
func summary(outs []Outcome) string {
	var parts []string
	for _, o := range outs {
		adj := ""
		if o.Corrected {
			adj = fmt.Sprintf(", Holm p %.2g", o.AdjP)
		}
		parts = append(parts, fmt.Sprintf("%s vs %s, %s %s (%s): %+.3g [%+.3g, %+.3g], MDE %.2g%s: %s (%s)",
			o.Variant, o.Against, o.Metric, o.Want, atText(o.At, o.Metric), o.Test.Diff, o.Test.Lo, o.Test.Hi, o.MDE, adj, o.Verdict, kind(o)))
	}
	return strings.Join(parts, "; ")
}

// verdictSentence explains the verdict from the checks that decide it
// (decidingChecks), naming each check that makes it and why: a reader
// sees which check a "does not hold" rests on, and whether it excludes
// only an effect as large as the claim's or any effect in the claimed
// direction.
func verdictSentence(v Verdict, outs []Outcome) string {
	deciding, _ := decidingChecks(outs)
	switch v {
	case Holds:
		s := "Every check that decides it holds: its interval lies on the claimed side (after the correction, for the primary family)."
		for _, o := range deciding {
			if o.Verdict == Holds && belowEffect(o) {
				s += fmt.Sprintf(" %s holds in direction only: its 95%% interval [%+.3g, %+.3g] lies wholly between 0 and %s, the smallest effect of interest, so the difference is established but smaller than the effect the design was planned for.", checkName(o), o.Test.Lo, o.Test.Hi, effectText(o))
			}
		}
		return s
	case DoesNotHold:
		var m []string
		for _, o := range deciding {
			if o.Verdict == DoesNotHold {
				m = append(m, checkName(o)+": "+whyNotHolds(o))
			}
		}
		if len(m) == 1 {
			return "A check that decides it does not hold: " + m[0] + "."
		}
		return fmt.Sprintf("%d checks that decide it do not hold: %s.", len(m), strings.Join(m, "; "))
	case NotTestable:
		var why []string
		for _, o := range outs {
			if o.Premise != "" && !slices.Contains(why, o.Premise) {
				why = append(why, o.Premise)
			}
		}
		return "This test bed cannot answer the claim: " + strings.Join(why, "; ") + "."
	}
	var m []string
	for _, o := range deciding {
		if o.Verdict == Inconclusive {
			m = append(m, checkName(o, fmt.Sprintf("achieved MDE %.3g", o.MDE)))
		}
	}
	if len(m) == 0 {
		return "No check decides it."
	}
	return "The design cannot decide: " + strings.Join(m, ", ") + " — differences smaller than the minimum detectable effect (80% power, α = 0.05) may exist, or the correction for multiplicity leaves a difference short of significance."
}

// checkName names a check in a verdict's sentence: its ID, the variant,
// what it is compared with, the metric and the point, then any notes.
func checkName(o Outcome, notes ...string) string {
	s := fmt.Sprintf("`%s` (%s against %s, %s at %s", o.ID(), o.Variant, o.Against, o.Metric, atText(o.At, o.Metric))
	for _, n := range notes {
		s += "; " + n
	}
	return s + ")"
}

// effectText is a "higher" check's smallest effect of interest as a bound
// of the difference, or a "lower" one's negated.
func effectText(o Outcome) string {
	if o.Want == Lower {
		return fmt.Sprintf("−%g", o.SmallestEffect())
	}
	return fmt.Sprintf("%g", o.SmallestEffect())
}

// belowEffect reports whether a "higher" or "lower" check's interval lies
// wholly between 0 and its smallest effect of interest (Check.Effect,
// else its margin): a difference established in direction, smaller than
// the effect the design was planned for.
func belowEffect(o Outcome) bool {
	e := o.SmallestEffect()
	switch {
	case e <= 0:
		return false
	case o.Want == Higher:
		return o.Test.Hi < e
	case o.Want == Lower:
		return o.Test.Lo > -e
	}
	return false
}

// whyNotHolds says where the interval of a check that does not hold lies:
// past 0 on the other side, or short of the check's margin (a smaller
// difference in the claimed direction is not excluded), or worse than the
// baseline by less or more than a "not worse" check's margin.
func whyNotHolds(o Outcome) string {
	in := fmt.Sprintf("its 95%% interval [%+.3g, %+.3g]", o.Test.Lo, o.Test.Hi)
	m := o.Margin
	switch o.Want {
	case Higher:
		if o.Test.Hi < 0 {
			return in + " lies wholly below 0: lower, not higher"
		}
		return fmt.Sprintf("%s lies wholly below %g, the check's margin (the smallest difference that matters): a gain that large is excluded, a smaller one is not", in, m)
	case Lower:
		if o.Test.Lo > 0 {
			return in + " lies wholly above 0: higher, not lower"
		}
		return fmt.Sprintf("%s lies wholly above −%g, the check's margin (the smallest difference that matters): a reduction that large is excluded, a smaller one is not", in, m)
	case NotWorse:
		if o.Test.Hi < -m {
			return fmt.Sprintf("%s lies wholly below −%g: worse by more than the margin", in, m)
		}
		return fmt.Sprintf("%s lies wholly below 0: worse, though not shown to be worse by more than the margin (%g)", in, m)
	case NotHigher:
		if o.Test.Lo > m {
			return fmt.Sprintf("%s lies wholly above %g: higher by more than the margin", in, m)
		}
		return fmt.Sprintf("%s lies wholly above 0: higher, though not shown to be higher by more than the margin (%g)", in, m)
	}
	return in
}

// writeChecks writes the checks' table.
func writeChecks(p *printer, outs []Outcome, baseline string) {
	p.f("## Checks\n\nEach check compares a variant with the baseline (`%s` unless the row names another variant, or a number: a one-sample test) over their shared seeds: paired t-test, difference = variant − baseline, 95%% interval; p: the test that decides \"holds\" (the difference against 0, or against the margin for \"not worse\" and \"not higher\"), and after the correction over the primary family where one applies; MDE: the difference the design detects with 80%% power at α = 0.05 (or the design's own power and α), (t₀.₉₇₅ + t₀.₈)·SE, achieved from these runs and planned from the pilot SD the design declared, (t₀.₉₇₅ + t₀.₈)·σ_d/√n over its n seeds. A claim \"higher\" holds when the interval lies above 0 and does not hold when it lies below the margin; \"not worse\" holds when it lies above −margin and does not hold when it lies below 0 (\"lower\" and \"not higher\" mirror them); otherwise the check is inconclusive. A check whose premise the test bed does not meet is *not testable here*. Confirmatory checks were declared in the design recorded before their runs; the others are exploratory.\n\n", baseline)
	p.f("| check | kind | variant | against | metric | at | direction | margin | difference | 95%% CI | p | corrected p | planned MDE | achieved MDE | verdict |\n|---|---|---|---|---|---|---|--:|--:|--:|--:|--:|--:|--:|---|\n")
	var notes []string
	for _, o := range outs {
		adj := "—"
		if o.Corrected {
			adj = fmt.Sprintf("%.3g", o.AdjP)
		}
		verdict := "**" + string(o.Verdict) + "**"
		if o.Exploratory {
			verdict += " (exploratory)"
			notes = append(notes, fmt.Sprintf("`%s` is exploratory: %s.", o.ID(), o.Why))
		}
		if o.Premise != "" {
			notes = append(notes, fmt.Sprintf("`%s` is not testable here: %s.", o.ID(), o.Premise))
		}
		if o.PremiseMet != "" {
			notes = append(notes, fmt.Sprintf("`%s` rests on a premise the measurement meets: %s.", o.ID(), o.PremiseMet))
		}
		if o.Claim != "" {
			notes = append(notes, fmt.Sprintf("`%s` tests: %s", o.ID(), o.Claim))
		}
		switch {
		case o.Load != "" && o.Versus:
			notes = append(notes, fmt.Sprintf("`%s` reads wall times within each of its runs, against a number (no two runs are compared, so the runs need not have run side by side): %s.", o.ID(), o.Load))
		case o.Load != "":
			notes = append(notes, fmt.Sprintf("`%s` reads wall times of runs made side by side in one sitting: %s.", o.ID(), o.Load))
		}
		p.f("| %s | %s | %s | %s | %s | %s | %s | %.3g | %+.4g | %+.4g to %+.4g | %.3g | %s | %s | %.3g | %s |\n",
			o.ID(), kind(o), o.Variant, o.Against, o.Metric, atText(o.At, o.Metric), o.Want, o.Margin, o.Test.Diff, o.Test.Lo, o.Test.Hi, o.PHolds, adj, mdeText(o.PlannedMDE), o.MDE, verdict)
	}
	p.f("\n")
	for _, n := range notes {
		p.f("- %s\n", n)
	}
	if len(notes) > 0 {
		p.f("\n")
	}
}

// atText names where a check's values are taken: a point of the runs,
// each run's mean over its steps, or each run as a whole (steps, wall_s).
func atText(at, metric string) string {
	switch {
	case at == "mean" && (metric == "steps" || metric == "wall_s"):
		return "per run"
	case at == "mean":
		return "mean over steps"
	}
	return at
}

// writeTable writes one table: report.Build's markdown at a point of the
// runs, or the per-run means over steps.
func writeTable(p *printer, st *tracking.Store, exp tracking.Experiment, t Table, opts report.Options) error {
	p.f("## %s\n\n", t.Title)
	if t.At != "mean" {
		a, err := report.ParseAt(t.At)
		if err != nil {
			return fmt.Errorf("suite: table %q: %w", t.Title, err)
		}
		opts.At, opts.Metrics, opts.Baseline = a, t.Metrics, exp.Baseline
		rep, err := report.Build(st, exp.Name, opts)
		if err != nil {
			return fmt.Errorf("suite: table %q: %w", t.Title, err)
		}
		if p.err == nil {
			p.err = rep.Write(p.w, report.FormatMarkdown)
		}
		p.f("\n")
		return nil
	}
	return writeMeans(p, st, exp, t, opts)
}

// writeMeans writes a table of per-run means over steps: mean ± 95%
// t-interval over seeds, p of the paired t-test against the baseline.
func writeMeans(p *printer, st *tracking.Store, exp tracking.Experiment, t Table, opts report.Options) error {
	cols := make([]map[string]map[int64]float64, len(t.Metrics))
	for i, m := range t.Metrics {
		v, err := Values(st, exp.Name, m, "mean", opts)
		if err != nil {
			return err
		}
		cols[i] = v
	}
	p.f("%s, each run's mean over its steps (steps: the run's last step; wall_s: its wall time in seconds): mean ± 95%% t-interval over seeds; p: paired t-test against %s over shared seeds.\n\n", exp.Name, exp.Baseline)
	header := []string{"variant", "n"}
	for _, m := range t.Metrics {
		header = append(header, m, "p")
	}
	tab := tablewriter.NewTable(p.w, tablewriter.WithRenderer(renderer.NewMarkdown()),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{Global: tw.AlignRight, PerColumn: []tw.Align{tw.AlignLeft}}))
	tab.Header(header)
	for _, variant := range baselineFirst(exp) {
		line := []string{variant, ""}
		for i := range t.Metrics {
			xs, ys := paired(cols[i][variant], cols[i][exp.Baseline])
			own := sortedValues(cols[i][variant])
			line[1] = fmt.Sprint(max(len(own), atoi(line[1])))
			line = append(line, formatSummary(stats.Summarize(own)), pText(variant == exp.Baseline, xs, ys))
		}
		if err := tab.Append(line); err != nil {
			return fmt.Errorf("suite: %w", err)
		}
	}
	if err := tab.Render(); err != nil {
		return fmt.Errorf("suite: %w", err)
	}
	p.f("\n")
	return nil
}

// atoi reads a count written by writeMeans ("" is 0).
func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// baselineFirst lists the experiment's variants, baseline first.
func baselineFirst(exp tracking.Experiment) []string {
	out := []string{exp.Baseline}
	for _, v := range exp.Variants {
		if v != exp.Baseline {
			out = append(out, v)
		}
	}
	return out
}

// paired returns the values of a and b at their shared seeds, in seed
// order.
func paired(a, b map[int64]float64) (xs, ys []float64) {
	for _, s := range slices.Sorted(maps.Keys(a)) {
		if y, ok := b[s]; ok {
			xs, ys = append(xs, a[s]), append(ys, y)
		}
	}
	return xs, ys
}

func sortedValues(m map[int64]float64) []float64 {
	var out []float64
	for _, s := range slices.Sorted(maps.Keys(m)) {
		out = append(out, m[s])
	}
	return out
}

func pText(isBaseline bool, xs, ys []float64) string {
	if isBaseline {
		return "baseline"
	}
	t, err := stats.PairedTest(xs, ys)
	if err != nil || math.IsNaN(t.P) {
		return "n/a"
	}
	return fmt.Sprintf("%.3g paired", t.P)
}

// formatSummary renders mean ± half-width with the precision of the
// interval.
func formatSummary(s stats.Summary) string {
	switch {
	case s.N == 0:
		return "—"
	case !s.HasInterval || s.HalfWidth == 0 || math.IsNaN(s.HalfWidth):
		return fmt.Sprintf("%.4g ± 0", s.Mean)
	}
	dec := max(0, min(8, 2-int(math.Floor(math.Log10(s.HalfWidth)))))
	return fmt.Sprintf("%.*f ± %.*f", dec, s.Mean, dec, s.HalfWidth)
}

// span is the wall time from the first run's start to the last run's end.
func span(runs []tracking.Run) time.Duration {
	var first, last time.Time
	for _, r := range runs {
		if first.IsZero() || r.Start.Before(first) {
			first = r.Start
		}
		if r.End.After(last) {
			last = r.End
		}
	}
	return last.Sub(first)
}

// writeProvenance says how the report was made: the command, the builds
// and hosts that made the runs, their wall time, the commit and machine
// that wrote the report.
func writeProvenance(p *printer, runs []tracking.Run, meta Meta) {
	var versions, hosts []string
	var total time.Duration
	for _, r := range runs {
		if !slices.Contains(versions, r.Version) {
			versions = append(versions, r.Version)
		}
		if !slices.Contains(hosts, r.Host) {
			hosts = append(hosts, r.Host)
		}
		total += r.Elapsed
	}
	p.f("## Reproduce\n\n```sh\n%s\n```\n\n", meta.Command)
	p.f("It runs what the store (`%s`) lacks of the config's runs (resuming unfinished ones), then writes this file and its plots from the store. ", meta.Store)
	p.f("Runs: %d, by build %s on %s; wall time %s summed over runs, %s from the first start to the last end. ",
		len(runs), strings.Join(versions, ", "), strings.Join(hosts, ", "), total.Round(time.Second), span(runs).Round(time.Second))
	p.f("Written by commit %s on %s.\n", meta.Commit, meta.Machine)
}
