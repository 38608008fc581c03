package report

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/rollout-rl/rollout/search/record/codec"
)

// Format is an output format of a report.
type Format string

// Report formats.
const (
	FormatTable    Format = "table"
	FormatMarkdown Format = "markdown"
	FormatCSV      Format = "csv"
	FormatJSON     Format = "json"
)

// ParseFormat checks a report format name.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case FormatTable, FormatMarkdown, FormatCSV, FormatJSON:
		return f, nil
	}
	return "", fmt.Errorf("report format %q: want table, markdown, csv or json", s)
}

// Write renders the report: a terminal table, a markdown table, CSV (one
// row per variant and metric) or JSON.
func (r *Report) Write(w io.Writer, format Format) error {
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
		_, err = ParseFormat(string(format))
	}
	if err != nil {
		return fmt.Errorf("writing report of %s: %w", r.Experiment, err)
	}
	return nil
}

// Legend is the sentence that says how to read the table, starting with
// the axis the report compares on (At.Axis).
func (r *Report) Legend() string {
	return fmt.Sprintf("%s %s: mean ± 95%% t-interval over seeds; p: two-sided t-test of each variant against %s (paired over shared seeds, Welch otherwise).", r.Experiment, r.At.Axis(), r.Baseline)
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
func formatCell(c *Cell) string {
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

func (r *Report) formatTest(variant string, c *Cell) string {
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
	cw.Write([]string{"experiment", "at", "variant", "metric", "n", "missing", "mean", "std", "ci_lo", "ci_hi", "half_width", "baseline", "test", "diff", "t", "df", "p", "runs", "unfinished", "axis"})
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for _, row := range r.Rows {
		for _, c := range row.Cells {
			s := c.Summary
			rec := []string{r.Experiment, r.At.String(), row.Variant, c.Metric, strconv.Itoa(s.N), strconv.Itoa(c.Missing), "", "", "", "", "", r.Baseline, "", "", "", "", "", strconv.Itoa(row.Runs), strconv.Itoa(row.Unfinished), r.At.Axis()}
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
	return codec.AppendJSONFloat(nil, float64(f)), nil
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
		Axis       string   `json:"axis"`
		Baseline   string   `json:"baseline"`
		Metrics    []string `json:"metric_names"`
		Rows       []row    `json:"variants"`
	}{Experiment: r.Experiment, At: r.At.String(), Axis: r.At.Axis(), Baseline: r.Baseline, Metrics: r.Metrics}
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
