package passrate

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// outcomeHeader is the header of the outcomes CSV, its columns in order.
const outcomeHeader = "prompt,prompt_text,method,family,shape,leaves,correct,tokens,pass"

// PromptOutcome is what one method gave one prompt: a row of the outcomes
// CSV (WriteOutcomes, ReadOutcomes). The mean of Pass over the prompts is
// the method's PassRate in the table, the mean of Tokens its tokens per
// prompt.
type PromptOutcome struct {
	// Prompt is the eval prompt's index, Text its text.
	Prompt int
	Text   string
	// Method, Family and Shape name the method as the table does
	// ("entropy(2,1,1,3)", "entropy", "2,1,1,3"; Shape "" for none).
	Method, Family, Shape string
	// Leaves and Correct are the prompt's finished and correct responses;
	// for an i.i.d. point, those of the prompt's K samples.
	Leaves, Correct int
	// Tokens are the prompt's generated tokens; for an i.i.d. point at n
	// samples, n times the mean length of the prompt's K samples.
	Tokens float64
	// Pass is 1 when a leaf is correct and 0 otherwise; for an i.i.d.
	// point at n samples, pass@n over the prompt's K samples.
	Pass float64
}

// Outcomes are the result's per-prompt outcomes: each i.i.d. point of the
// table, then each method, in the table's order, every one over the
// prompts in order. A Result that Run did not make has none.
func (r *Result) Outcomes() []PromptOutcome {
	var out []PromptOutcome
	for _, n := range r.iidNs {
		for i, o := range r.ref.Outcomes {
			out = append(out, PromptOutcome{
				Prompt: i, Text: r.text(i), Method: fmt.Sprintf("iid(n=%d)", n), Family: "iid",
				Leaves: o.Leaves, Correct: o.Correct,
				Tokens: float64(n) * float64(o.Tokens) / float64(o.Leaves),
				Pass:   r.ref.pass[i][n],
			})
		}
	}
	for _, m := range r.methods {
		for i, o := range m.Outcomes {
			pass := 0.0
			if o.Correct > 0 {
				pass = 1
			}
			out = append(out, PromptOutcome{
				Prompt: i, Text: r.text(i), Method: m.Name, Family: m.Family, Shape: m.Shape,
				Leaves: o.Leaves, Correct: o.Correct, Tokens: float64(o.Tokens), Pass: pass,
			})
		}
	}
	return out
}

// text is prompt i's text, "" when the result does not have it.
func (r *Result) text(i int) string {
	if i < len(r.texts) {
		return r.texts[i]
	}
	return ""
}

// WriteOutcomes writes rows as CSV: the header
// prompt,prompt_text,method,family,shape,leaves,correct,tokens,pass, then
// a line a row, numbers in their shortest exact form.
func WriteOutcomes(w io.Writer, rows []PromptOutcome) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(strings.Split(outcomeHeader, ",")); err != nil {
		return fmt.Errorf("write outcomes: %w", err)
	}
	num := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	for _, r := range rows {
		rec := []string{strconv.Itoa(r.Prompt), r.Text, r.Method, r.Family, r.Shape,
			strconv.Itoa(r.Leaves), strconv.Itoa(r.Correct), num(r.Tokens), num(r.Pass)}
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("write outcomes: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write outcomes: %w", err)
	}
	return nil
}

// ReadOutcomes reads the rows of an outcomes CSV as WriteOutcomes writes
// it; name (the file) starts every error, with the line, the column and
// the value at fault.
func ReadOutcomes(r io.Reader, name string) ([]PromptOutcome, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: empty, want the header %s", name, outcomeHeader)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if got := strings.Join(head, ","); got != outcomeHeader {
		return nil, fmt.Errorf("%s:1: header %q, want %q", name, got, outcomeHeader)
	}
	cols := strings.Split(outcomeHeader, ",")
	var rows []PromptOutcome
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return rows, nil
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if len(rec) != len(cols) {
			return nil, fmt.Errorf("%s:%d: %d fields, want %d (%s)", name, line, len(rec), len(cols), outcomeHeader)
		}
		bad := func(col int, why string) error {
			return fmt.Errorf("%s:%d: column %s: %q %s", name, line, cols[col], rec[col], why)
		}
		row := PromptOutcome{Text: rec[1], Method: rec[2], Family: rec[3], Shape: rec[4]}
		ints := []*int{&row.Prompt, nil, nil, nil, nil, &row.Leaves, &row.Correct}
		for c, p := range ints {
			if p == nil {
				continue
			}
			if *p, err = strconv.Atoi(rec[c]); err != nil || *p < 0 {
				return nil, bad(c, "is not a whole number ≥ 0")
			}
		}
		if row.Tokens, err = strconv.ParseFloat(rec[7], 64); err != nil || row.Tokens < 0 || math.IsInf(row.Tokens, 0) || math.IsNaN(row.Tokens) {
			return nil, bad(7, "is not a number of tokens ≥ 0")
		}
		if row.Pass, err = strconv.ParseFloat(rec[8], 64); err != nil || !(row.Pass >= 0 && row.Pass <= 1) {
			return nil, bad(8, "is not a pass rate from 0 to 1")
		}
		switch {
		case row.Method == "":
			return nil, bad(2, "is empty, want a method's name")
		case row.Leaves < 1:
			return nil, bad(5, "want at least 1 leaf")
		case row.Correct > row.Leaves:
			return nil, bad(6, fmt.Sprintf("correct of %d leaves", row.Leaves))
		}
		rows = append(rows, row)
	}
}

// MethodPass is one method's pass (0 to 1) on each prompt of rows, in
// prompt order, and the prompts' texts. Every prompt from 0 to the last
// must be there exactly once.
func MethodPass(rows []PromptOutcome, method string) (pass []float64, texts []string, err error) {
	var mine []PromptOutcome
	var names []string
	for _, r := range rows {
		if r.Method == method {
			mine = append(mine, r)
		}
		if !slices.Contains(names, r.Method) {
			names = append(names, r.Method)
		}
	}
	if len(mine) == 0 {
		return nil, nil, fmt.Errorf("no method %q (the outcomes have %s)", method, strings.Join(names, ", "))
	}
	pass, texts = make([]float64, len(mine)), make([]string, len(mine))
	seen := make([]bool, len(mine))
	for _, r := range mine {
		if r.Prompt >= len(mine) || seen[r.Prompt] {
			return nil, nil, fmt.Errorf("method %s: prompt %d twice or beyond its %d prompts (want each of 0 to %d once)", method, r.Prompt, len(mine), len(mine)-1)
		}
		seen[r.Prompt] = true
		pass[r.Prompt], texts[r.Prompt] = r.Pass, r.Text
	}
	return pass, texts, nil
}

// GapChange is the gap between two methods, A's PassRate minus B's, in two
// measurements of the same prompts (base and other), and its change,
// other's gap minus base's. Every interval is a percentile bootstrap over
// the prompts, resampled together in both measurements (paired), the three
// over the same resamples.
type GapChange struct {
	A, B string
	// Prompts is the number of prompts both measurements read.
	Prompts int
	// BasePassA, BasePassB, OtherPassA and OtherPassB are the PassRates.
	BasePassA, BasePassB, OtherPassA, OtherPassB float64
	// BaseGap and OtherGap are A − B in each, Change OtherGap − BaseGap.
	BaseGap, OtherGap, Change Interval
}

// CompareGaps compares the gap between methods a and b in the outcomes
// base and other (see GapChange). Both must have both methods on the same
// prompts: the same number, and the same text at each index.
func CompareGaps(base, other []PromptOutcome, a, b string, bs Bootstrap) (GapChange, error) {
	srcs := [4]struct {
		rows          []PromptOutcome
		method, which string
	}{{base, a, "base"}, {base, b, "base"}, {other, a, "other"}, {other, b, "other"}}
	var pass [4][]float64
	var texts [4][]string
	for i, src := range srcs {
		var err error
		if pass[i], texts[i], err = MethodPass(src.rows, src.method); err != nil {
			return GapChange{}, fmt.Errorf("%s outcomes: %w", src.which, err)
		}
	}
	n := len(pass[0])
	for i, src := range srcs[1:] {
		i++
		if len(pass[i]) != n {
			return GapChange{}, fmt.Errorf("%s has %d prompts in the base outcomes, %s %d in the %s ones: want the same prompts", a, n, src.method, len(pass[i]), src.which)
		}
		for p := range texts[i] {
			if texts[i][p] != texts[0][p] {
				return GapChange{}, fmt.Errorf("prompt %d is %q in the base outcomes of %s and %q in the %s outcomes of %s: want the same prompts", p, texts[0][p], a, texts[i][p], src.which, src.method)
			}
		}
	}
	mean := func(xs []float64, idx []int) float64 {
		s := 0.0
		for _, i := range idx {
			s += xs[i]
		}
		return s / float64(len(idx))
	}
	gap := func(x, y []float64) func([]int) float64 {
		return func(idx []int) float64 { return mean(x, idx) - mean(y, idx) }
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	g := GapChange{A: a, B: b, Prompts: n,
		BasePassA: mean(pass[0], all), BasePassB: mean(pass[1], all),
		OtherPassA: mean(pass[2], all), OtherPassB: mean(pass[3], all)}
	var err error
	if g.BaseGap, err = bs.interval(n, gap(pass[0], pass[1])); err != nil {
		return GapChange{}, err
	}
	if g.OtherGap, err = bs.interval(n, gap(pass[2], pass[3])); err != nil {
		return GapChange{}, err
	}
	g.Change, err = bs.interval(n, func(idx []int) float64 { return gap(pass[2], pass[3])(idx) - gap(pass[0], pass[1])(idx) })
	if err != nil {
		return GapChange{}, err
	}
	return g, nil
}
