package tracking

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/rollout-rl/rollout/tracking/stats"
)

// AtKind says where in a run a report takes a metric's value.
type AtKind string

// The places a report can take values at.
const (
	// AtFinal is the last recorded value.
	AtFinal AtKind = "final"
	// AtBest is the best recorded value: the highest, or the lowest for
	// metrics that are minimised (see ReportOptions.Minimize).
	AtBest AtKind = "best"
	// AtStep is the last value recorded at or before a step.
	AtStep AtKind = "step"
	// AtTokens is the last value recorded at or before a cumulative
	// sampled-token count: comparisons at equal compute. A run that has not
	// reached it and is not finished has no value.
	AtTokens AtKind = "tokens"
)

// At is a parsed `final | best | step:N | tokens:T`.
type At struct {
	Kind   AtKind
	Step   int
	Tokens int64
}

// ParseAt parses `final`, `best`, `step:N` or `tokens:T` (T may use a k, M
// or G suffix, e.g. tokens:2M).
func ParseAt(s string) (At, error) {
	kind, arg, hasArg := strings.Cut(s, ":")
	switch AtKind(kind) {
	case AtFinal, AtBest:
		if hasArg {
			return At{}, fmt.Errorf("--at %q: %s takes no argument", s, kind)
		}
		return At{Kind: AtKind(kind)}, nil
	case AtStep:
		n, err := strconv.Atoi(arg)
		if err != nil || n < 0 {
			return At{}, fmt.Errorf("--at %q: want step:N with N a step number ≥ 0", s)
		}
		return At{Kind: AtStep, Step: n}, nil
	case AtTokens:
		mult := int64(1)
		switch {
		case strings.HasSuffix(arg, "k"), strings.HasSuffix(arg, "K"):
			mult, arg = 1_000, arg[:len(arg)-1]
		case strings.HasSuffix(arg, "M"):
			mult, arg = 1_000_000, arg[:len(arg)-1]
		case strings.HasSuffix(arg, "G"):
			mult, arg = 1_000_000_000, arg[:len(arg)-1]
		}
		f, err := strconv.ParseFloat(arg, 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return At{}, fmt.Errorf("--at %q: want tokens:T with T a token count ≥ 0 (e.g. tokens:500000 or tokens:2M)", s)
		}
		return At{Kind: AtTokens, Tokens: int64(f * float64(mult))}, nil
	}
	return At{}, fmt.Errorf("--at %q: want final, best, step:N or tokens:T", s)
}

// String returns the form ParseAt reads.
func (a At) String() string {
	switch a.Kind {
	case AtStep:
		return fmt.Sprintf("step:%d", a.Step)
	case AtTokens:
		return fmt.Sprintf("tokens:%d", a.Tokens)
	case "":
		return string(AtFinal)
	}
	return string(a.Kind)
}

// ReportOptions configure Store.Report.
type ReportOptions struct {
	// Metrics to report; empty means eval/acc and reward/mean where the
	// runs recorded them, otherwise every recorded metric.
	Metrics []string
	// At says which value of each run is taken; the zero value is final.
	At At
	// Baseline is the variant the others are tested against; empty means
	// the experiment's first variant (in config order, else by name).
	Baseline string
	// Minimize lists metrics where lower is better, for At best. When nil,
	// metrics whose names contain "loss", "kl" or "timing" are minimised.
	Minimize []string
}

func (o *ReportOptions) minimize(metric string) bool {
	if o.Minimize != nil {
		return slices.Contains(o.Minimize, metric)
	}
	return strings.Contains(metric, "loss") || strings.Contains(metric, "kl") || strings.Contains(metric, "timing")
}

// Report compares the variants of an experiment: one row per variant, one
// cell per metric.
type Report struct {
	Experiment string
	At         At
	Baseline   string
	Metrics    []string
	Rows       []ReportRow
}

// ReportRow is one variant.
type ReportRow struct {
	Variant string
	// Runs is the number of runs (seeds) of the variant.
	Runs int
	// Unfinished counts runs still running or failed: their values are
	// the last ones recorded.
	Unfinished int
	Cells      []ReportCell
}

// ReportCell is one metric of one variant over its seeds.
type ReportCell struct {
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

// Report computes the comparison table of an experiment.
func (s *Store) Report(experiment string, opts ReportOptions) (*Report, error) {
	exp, err := s.Experiment(experiment)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	runs, err := s.Runs(experiment)
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("report: experiment %q has no runs yet", experiment)
	}
	if opts.At.Kind == "" {
		opts.At.Kind = AtFinal
	}
	metrics := opts.Metrics
	if len(metrics) == 0 {
		if metrics, err = s.defaultMetrics(runs); err != nil {
			return nil, fmt.Errorf("report: %w", err)
		}
	}
	// Variant order: config order, then any others by name.
	byVariant := map[string][]Run{}
	for _, r := range runs {
		byVariant[r.Variant] = append(byVariant[r.Variant], r)
	}
	var variants []string
	for _, v := range exp.Variants {
		if _, ok := byVariant[v]; ok && !slices.Contains(variants, v) {
			variants = append(variants, v)
		}
	}
	var rest []string
	for v := range byVariant {
		if !slices.Contains(variants, v) {
			rest = append(rest, v)
		}
	}
	slices.Sort(rest)
	variants = append(variants, rest...)
	baseline := opts.Baseline
	if baseline == "" {
		baseline = variants[0]
	} else if _, ok := byVariant[baseline]; !ok {
		return nil, fmt.Errorf("report: baseline variant %q has no runs in experiment %q (variants: %s)", baseline, experiment, strings.Join(variants, ", "))
	}
	// Baseline first.
	variants = slices.DeleteFunc(variants, func(v string) bool { return v == baseline })
	variants = append([]string{baseline}, variants...)

	rep := &Report{Experiment: experiment, At: opts.At, Baseline: baseline, Metrics: metrics}
	for _, v := range variants {
		row := ReportRow{Variant: v, Runs: len(byVariant[v]), Cells: make([]ReportCell, len(metrics))}
		for i, m := range metrics {
			row.Cells[i].Metric = m
		}
		for _, r := range byVariant[v] {
			if r.Status != StatusFinished {
				row.Unfinished++
			}
			series, err := s.seriesMany(r.ID, metrics)
			if err != nil {
				return nil, fmt.Errorf("report: %w", err)
			}
			for i, m := range metrics {
				c := &row.Cells[i]
				if val, ok := valueAt(&series[i], r, opts.At, opts.minimize(m)); ok {
					c.Seeds = append(c.Seeds, r.Seed)
					c.Values = append(c.Values, val)
				} else {
					c.Missing++
				}
			}
		}
		for i := range row.Cells {
			row.Cells[i].Summary = stats.Summarize(row.Cells[i].Values)
		}
		rep.Rows = append(rep.Rows, row)
	}
	// A metric no run has recorded is a typo more often than not (at step:N
	// or tokens:T it may merely not have been reached).
	for i, m := range metrics {
		seen := false
		for _, row := range rep.Rows {
			seen = seen || row.Cells[i].Summary.N > 0
		}
		if !seen && (opts.At.Kind == AtFinal || opts.At.Kind == AtBest) {
			known, _ := s.recordedMetrics(runs)
			return nil, fmt.Errorf("report: no run of experiment %q recorded metric %q (recorded: %s)", experiment, m, strings.Join(known, ", "))
		}
	}
	base := rep.Rows[0]
	for ri := 1; ri < len(rep.Rows); ri++ {
		for i := range metrics {
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
	return rep, nil
}

// recordedMetrics returns the sorted names of the metrics any run recorded.
func (s *Store) recordedMetrics(runs []Run) ([]string, error) {
	var out []string
	for _, r := range runs {
		names, err := s.MetricNames(r.ID)
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

// defaultMetrics picks eval/acc and reward/mean where recorded, else all.
func (s *Store) defaultMetrics(runs []Run) ([]string, error) {
	all, err := s.recordedMetrics(runs)
	if err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("no metrics recorded yet")
	}
	var out []string
	for _, m := range []string{"eval/acc", "reward/mean"} {
		if slices.Contains(all, m) {
			out = append(out, m)
		}
	}
	if len(out) == 0 {
		return all, nil
	}
	return out, nil
}

// valueAt picks a run's value of one metric at the chosen point.
func valueAt(s *Series, r Run, at At, minimize bool) (float64, bool) {
	n := s.Len()
	if n == 0 {
		return 0, false
	}
	switch at.Kind {
	case AtBest:
		best := s.Values[0]
		for _, v := range s.Values[1:] {
			if minimize && v < best || !minimize && v > best || math.IsNaN(best) {
				best = v
			}
		}
		return best, true
	case AtStep:
		i, _ := slices.BinarySearch(s.Steps, at.Step+1)
		if i == 0 {
			return 0, false
		}
		return s.Values[i-1], true
	case AtTokens:
		if r.Tokens < at.Tokens && r.Status != StatusFinished {
			return 0, false
		}
		i := 0
		for i < n && s.Tokens[i] <= at.Tokens {
			i++
		}
		if i == 0 {
			return 0, false
		}
		return s.Values[i-1], true
	}
	return s.Values[n-1], true
}

// pairBySeed returns the two cells' values paired by seed when both have
// exactly the same set of distinct seeds.
func pairBySeed(a, b *ReportCell) ([]float64, []float64, bool) {
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

// ReportFormat is an output format of a report.
type ReportFormat string

// Report formats.
const (
	FormatTable    ReportFormat = "table"
	FormatMarkdown ReportFormat = "markdown"
	FormatCSV      ReportFormat = "csv"
	FormatJSON     ReportFormat = "json"
)

// ParseReportFormat checks a report format name.
func ParseReportFormat(s string) (ReportFormat, error) {
	switch f := ReportFormat(s); f {
	case FormatTable, FormatMarkdown, FormatCSV, FormatJSON:
		return f, nil
	}
	return "", fmt.Errorf("report format %q: want table, markdown, csv or json", s)
}

// Write renders the report: a terminal table, a markdown table, CSV (one
// row per variant and metric) or JSON.
func (r *Report) Write(w io.Writer, format ReportFormat) error {
	var err error
	switch format {
	case FormatTable, "":
		err = r.writeTable(w, false)
	case FormatMarkdown:
		err = r.writeTable(w, true)
	case FormatCSV:
		err = r.writeCSV(w)
	case FormatJSON:
		err = r.writeJSON(w)
	default:
		_, err = ParseReportFormat(string(format))
	}
	if err != nil {
		return fmt.Errorf("writing report of %s: %w", r.Experiment, err)
	}
	return nil
}

// Legend is the sentence that says how to read the table.
func (r *Report) Legend() string {
	return fmt.Sprintf("%s at %s: mean ± 95%% t-interval over seeds; p: two-sided t-test of each variant against %s (paired over shared seeds, Welch otherwise).", r.Experiment, r.At, r.Baseline)
}

func (r *Report) writeTable(w io.Writer, markdown bool) error {
	header := []string{"variant", "n"}
	for _, m := range r.Metrics {
		header = append(header, m, "p")
	}
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithHeaderAlignment(tw.AlignCenter),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{Global: tw.AlignRight, PerColumn: []tw.Align{tw.AlignLeft}}),
	}
	if markdown {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	}
	if markdown {
		if _, err := fmt.Fprintf(w, "%s\n\n", r.Legend()); err != nil {
			return err
		}
	}
	t := tablewriter.NewTable(w, opts...)
	t.Header(header)
	for _, row := range r.Rows {
		n := strconv.Itoa(row.Runs)
		if row.Unfinished > 0 {
			n += fmt.Sprintf(" (%d unfinished)", row.Unfinished)
		}
		line := []string{row.Variant, n}
		for _, c := range row.Cells {
			line = append(line, formatCell(&c), r.formatTest(row.Variant, &c))
		}
		if err := t.Append(line); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	if !markdown {
		_, err := fmt.Fprintln(w, r.Legend())
		return err
	}
	return nil
}

// formatCell renders "mean ± half-width", with the mean given to the
// precision of the interval (three significant digits of the half-width).
func formatCell(c *ReportCell) string {
	s := c.Summary
	var out string
	switch {
	case s.N == 0:
		out = "—"
	case math.IsNaN(s.Mean) || math.IsInf(s.Mean, 0):
		out = fmt.Sprint(s.Mean)
	case !s.HasInterval:
		out = fmt.Sprintf("%.4g (n=1)", s.Mean)
	case s.HalfWidth == 0 || math.IsInf(s.HalfWidth, 0) || math.IsNaN(s.HalfWidth):
		out = fmt.Sprintf("%.4g ± 0", s.Mean)
	default:
		dec := max(0, min(8, 2-int(math.Floor(math.Log10(s.HalfWidth)))))
		out = fmt.Sprintf("%.*f ± %.*f", dec, s.Mean, dec, s.HalfWidth)
	}
	if c.Missing > 0 {
		out += fmt.Sprintf(" [%d missing]", c.Missing)
	}
	return out
}

func (r *Report) formatTest(variant string, c *ReportCell) string {
	if variant == r.Baseline {
		return "baseline"
	}
	if c.Test == nil {
		return "n/a"
	}
	return formatP(c.Test.P) + " " + string(c.Test.Kind)
}

func formatP(p float64) string {
	if p < 0.001 {
		return "<0.001"
	}
	return strconv.FormatFloat(p, 'f', 3, 64)
}

func (r *Report) writeCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"experiment", "at", "variant", "metric", "n", "missing", "mean", "std", "ci_lo", "ci_hi", "half_width", "baseline", "test", "diff", "t", "df", "p", "runs", "unfinished"})
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for _, row := range r.Rows {
		for _, c := range row.Cells {
			s := c.Summary
			rec := []string{r.Experiment, r.At.String(), row.Variant, c.Metric, strconv.Itoa(s.N), strconv.Itoa(c.Missing), "", "", "", "", "", r.Baseline, "", "", "", "", "", strconv.Itoa(row.Runs), strconv.Itoa(row.Unfinished)}
			if s.N > 0 {
				rec[6], rec[7] = f(s.Mean), f(s.Std)
			}
			if s.HasInterval {
				rec[8], rec[9], rec[10] = f(s.Lo), f(s.Hi), f(s.HalfWidth)
			}
			if t := c.Test; t != nil {
				rec[12], rec[13], rec[14], rec[15], rec[16] = string(t.Kind), f(t.Diff), f(t.T), f(t.DF), f(t.P)
			}
			cw.Write(rec)
		}
	}
	cw.Flush()
	return cw.Error()
}

// jsonFloat encodes non-finite values as null.
type jsonFloat float64

// MarshalJSON writes the number, or null when it is NaN or infinite.
func (f jsonFloat) MarshalJSON() ([]byte, error) {
	return appendJSONFloat(nil, float64(f), 64), nil
}

func (r *Report) writeJSON(w io.Writer) error {
	type test struct {
		Kind string    `json:"kind"`
		Diff jsonFloat `json:"diff"`
		T    jsonFloat `json:"t"`
		DF   jsonFloat `json:"df"`
		P    jsonFloat `json:"p"`
		Lo   jsonFloat `json:"diff_lo"`
		Hi   jsonFloat `json:"diff_hi"`
	}
	type cell struct {
		Metric  string      `json:"metric"`
		N       int         `json:"n"`
		Missing int         `json:"missing"`
		Seeds   []int64     `json:"seeds"`
		Values  []jsonFloat `json:"values"`
		Mean    *jsonFloat  `json:"mean"`
		Std     *jsonFloat  `json:"std"`
		Lo      *jsonFloat  `json:"ci_lo"`
		Hi      *jsonFloat  `json:"ci_hi"`
		Test    *test       `json:"test"`
	}
	type row struct {
		Variant    string `json:"variant"`
		Runs       int    `json:"runs"`
		Unfinished int    `json:"unfinished"`
		Cells      []cell `json:"metrics"`
	}
	out := struct {
		Experiment string   `json:"experiment"`
		At         string   `json:"at"`
		Baseline   string   `json:"baseline"`
		Metrics    []string `json:"metric_names"`
		Rows       []row    `json:"variants"`
	}{Experiment: r.Experiment, At: r.At.String(), Baseline: r.Baseline, Metrics: r.Metrics}
	ptr := func(x float64) *jsonFloat { f := jsonFloat(x); return &f }
	for _, rr := range r.Rows {
		jr := row{Variant: rr.Variant, Runs: rr.Runs, Unfinished: rr.Unfinished}
		for _, c := range rr.Cells {
			jc := cell{Metric: c.Metric, N: c.Summary.N, Missing: c.Missing, Seeds: c.Seeds, Values: make([]jsonFloat, len(c.Values))}
			for i, v := range c.Values {
				jc.Values[i] = jsonFloat(v)
			}
			if jc.Seeds == nil {
				jc.Seeds = []int64{}
			}
			if c.Summary.N > 0 {
				jc.Mean, jc.Std = ptr(c.Summary.Mean), ptr(c.Summary.Std)
			}
			if c.Summary.HasInterval {
				jc.Lo, jc.Hi = ptr(c.Summary.Lo), ptr(c.Summary.Hi)
			}
			if t := c.Test; t != nil {
				jc.Test = &test{Kind: string(t.Kind), Diff: jsonFloat(t.Diff), T: jsonFloat(t.T), DF: jsonFloat(t.DF), P: jsonFloat(t.P), Lo: jsonFloat(t.Lo), Hi: jsonFloat(t.Hi)}
			}
			jr.Cells = append(jr.Cells, jc)
		}
		out.Rows = append(out.Rows, jr)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
