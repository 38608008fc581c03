package passrate

import (
	"fmt"
	"math"
)

// Row is one method's point of the figure, with its comparison to i.i.d.
// sampling at the same tokens (i.i.d. rows compare with themselves: zero).
type Row struct {
	Method, Family string
	// Leaves is the mean number of leaves per prompt.
	Leaves float64
	// Tokens is the mean generated tokens per prompt.
	Tokens float64
	// Pass is the pass rate, Acc the mean leaf accuracy.
	Pass, Acc Interval
	// InRange is false when Tokens lies beyond the i.i.d. reference (more
	// than its K samples cost); the fields below are then zero.
	InRange bool
	// IIDPass is the i.i.d. pass rate at Tokens; DiffPass and DiffAcc are
	// this method's pass rate and leaf accuracy minus i.i.d. sampling's at
	// the same tokens (paired bootstrap over prompts).
	IIDPass           float64
	DiffPass, DiffAcc Interval
	// IIDTokens is the mean tokens per prompt i.i.d. sampling needs for
	// Pass.Est (TokensReached false: K samples fall short, and IIDTokens is
	// what K cost); TokenRatio is Tokens / IIDTokens (TreeRL: about 0.5),
	// 0 when the pass rate is 0.
	IIDTokens     float64
	TokensReached bool
	TokenRatio    float64
}

// IIDRows are the i.i.d. reference's points at n samples per prompt for
// each n of ns (every n from 1 to the reference's K must fit).
func IIDRows(r IID, ns []int, b Bootstrap) ([]Row, error) {
	prompts := len(r.Outcomes)
	var rows []Row
	for _, n := range ns {
		if n < 1 || n > r.MaxN() {
			return nil, fmt.Errorf("i.i.d. point at n = %d: want 1 to %d (the reference's samples per prompt)", n, r.MaxN())
		}
		pass, err := b.interval(prompts, func(idx []int) float64 { return r.passAtN(idx, n) })
		if err != nil {
			return nil, err
		}
		acc, err := b.interval(prompts, func(idx []int) float64 { return leafAcc(r.Outcomes, idx) })
		if err != nil {
			return nil, err
		}
		tokens := float64(n) * r.tokensPerSample(r.all(nil))
		rows = append(rows, Row{
			Method: fmt.Sprintf("iid(n=%d)", n), Family: "iid", Leaves: float64(n), Tokens: tokens,
			Pass: pass, Acc: acc, InRange: true, IIDPass: pass.Est,
			IIDTokens: tokens, TokensReached: true, TokenRatio: 1,
		})
	}
	return rows, nil
}

// Compare computes each method's row against the i.i.d. reference: its
// pass rate and leaf accuracy with bootstrap intervals, and the paired
// differences to i.i.d. sampling at the method's own mean tokens per
// prompt. Every method must have an outcome for each of the reference's
// prompts, in the same order.
func Compare(r IID, methods []Method, b Bootstrap) ([]Row, error) {
	prompts := len(r.Outcomes)
	rows := make([]Row, 0, len(methods))
	for _, m := range methods {
		if err := m.validate(prompts); err != nil {
			return nil, err
		}
		row, err := compareOne(r, m, b)
		if err != nil {
			return nil, fmt.Errorf("method %s: %w", m.Name, err)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// compareOne is one method's row (see Compare).
func compareOne(r IID, m Method, b Bootstrap) (Row, error) {
	prompts := len(r.Outcomes)
	os := m.Outcomes
	all := r.all(nil)
	leaves := 0.0
	for _, o := range os {
		leaves += float64(o.Leaves)
	}
	row := Row{Method: m.Name, Family: m.Family, Leaves: leaves / float64(prompts), Tokens: meanTokens(os, all)}
	var err error
	if row.Pass, err = b.interval(prompts, func(idx []int) float64 { return passRate(os, idx) }); err != nil {
		return Row{}, err
	}
	if row.Acc, err = b.interval(prompts, func(idx []int) float64 { return leafAcc(os, idx) }); err != nil {
		return Row{}, err
	}
	row.IIDTokens, row.TokensReached = r.TokensFor(nil, row.Pass.Est)
	if row.IIDTokens > 0 {
		row.TokenRatio = row.Tokens / row.IIDTokens
	}
	iid, ok := r.PassAtTokens(nil, row.Tokens)
	if !ok {
		return row, nil
	}
	row.InRange, row.IIDPass = true, iid
	// In a resample whose mean tokens pass the reference's end, the i.i.d.
	// pass rate is taken at K samples (rare when the point is in range).
	iidAt := func(idx []int) float64 {
		n := math.Min(meanTokens(os, idx)/r.tokensPerSample(idx), float64(r.MaxN()))
		p, _ := r.passAt(idx, n)
		return p
	}
	if row.DiffPass, err = b.interval(prompts, func(idx []int) float64 { return passRate(os, idx) - iidAt(idx) }); err != nil {
		return Row{}, err
	}
	row.DiffAcc, err = b.interval(prompts, func(idx []int) float64 { return leafAcc(os, idx) - leafAcc(r.Outcomes, idx) })
	if err != nil {
		return Row{}, err
	}
	return row, nil
}
