package cost

import (
	"fmt"
	"math"
)

// Coef is a phase's fitted constants: the seconds per unit of each term
// (per FLOP, per byte, per call), indexed by Term.
type Coef [NumTerms]float64

// Seconds is the predicted time of work w.
func (c Coef) Seconds(w Work) float64 {
	s := 0.0
	for k, x := range w.Terms {
		s += x * c[k]
	}
	return s
}

// Model is the fitted cost model: each phase's constants, and the
// relative error on the points it was fitted to.
type Model struct {
	Coef   [NumPhases]Coef
	FitRMS [NumPhases]float64 // root mean square of predicted/measured − 1 on the fitted points
	Points int                // points fitted
}

// Predict returns the predicted seconds of each phase of s.
func (m Model) Predict(s Step) [NumPhases]float64 {
	w := s.Work()
	var out [NumPhases]float64
	for p := range out {
		out[p] = m.Coef[p].Seconds(w[p])
	}
	return out
}

// Fit fits each phase's constants to the sweep's points marked Fit:
// non-negative constants minimizing the sum of squared relative errors
// (predicted/measured − 1), so that the short and the long steps weigh
// alike. A term the phase never does (zero on every fitted point) and a
// constant the data cannot support come out zero.
func Fit(sw Sweep) (Model, error) {
	var m Model
	var works [][NumPhases]Work
	var secs [][NumPhases]float64
	for _, s := range sw.Samples {
		if !s.Fit {
			continue
		}
		st, err := s.Point.Step()
		if err != nil {
			return Model{}, err
		}
		works = append(works, st.Work())
		secs = append(secs, s.Seconds)
	}
	if len(works) < int(NumTerms) {
		return Model{}, fmt.Errorf("cost: fit: %d points to fit, want at least %d", len(works), NumTerms)
	}
	m.Points = len(works)
	for p := range NumPhases {
		rows := make([][]float64, len(works))
		for i, w := range works {
			t := secs[i][p]
			if !(t > 0) {
				return Model{}, fmt.Errorf("cost: fit: point %d phase %s: measured %g s, want > 0", i, p, t)
			}
			rows[i] = make([]float64, NumTerms)
			for k, x := range w[p].Terms {
				rows[i][k] = x / t
			}
		}
		x, rms := nnls(rows)
		copy(m.Coef[p][:], x)
		m.FitRMS[p] = rms
	}
	return m, nil
}

// nnls solves min Σ (a·x − 1)² over x ≥ 0 for the rows a, by trying
// every subset of free columns (the others at zero; columns that are
// zero in every row always at zero) and keeping the best solution with
// no negative entry; it returns x and the root mean square residual.
// The columns are scaled to unit norm first, and each subset is solved by
// a QR factorization, which keeps nearly collinear columns (the terms of
// one size all grow with the batch) accurate.
func nnls(rows [][]float64) ([]float64, float64) {
	n := len(rows[0])
	scale := make([]float64, n)
	for _, r := range rows {
		for j, v := range r {
			scale[j] += v * v
		}
	}
	var live []int
	for j := range scale {
		scale[j] = math.Sqrt(scale[j])
		if scale[j] > 0 {
			live = append(live, j)
		}
	}
	best, bestRes := make([]float64, n), math.Inf(1)
	for mask := 1; mask < 1<<len(live); mask++ {
		var cols []int
		for i, j := range live {
			if mask&(1<<i) != 0 {
				cols = append(cols, j)
			}
		}
		a := make([][]float64, len(rows))
		for i, r := range rows {
			a[i] = make([]float64, len(cols))
			for c, j := range cols {
				a[i][c] = r[j] / scale[j]
			}
		}
		y, ok := leastSquares(a)
		if !ok {
			continue
		}
		x := make([]float64, n)
		feasible := true
		for c, j := range cols {
			if y[c] < 0 {
				feasible = false
			}
			x[j] = y[c] / scale[j]
		}
		if !feasible {
			continue
		}
		res := 0.0
		for _, r := range rows {
			d := -1.0
			for j, v := range r {
				d += v * x[j]
			}
			res += d * d
		}
		if res < bestRes {
			best, bestRes = x, res
		}
	}
	if math.IsInf(bestRes, 1) {
		bestRes = float64(len(rows)) // x = 0: every point off by 100%
	}
	return best, math.Sqrt(bestRes / float64(len(rows)))
}

// leastSquares returns the y minimizing ‖a·y − 1‖ for a tall matrix a
// (rows × k, rows ≥ k), by Householder QR; ok is false when a is rank
// deficient (a column adds nothing to the ones before it).
func leastSquares(a [][]float64) (y []float64, ok bool) {
	m, k := len(a), len(a[0])
	if m < k {
		return nil, false
	}
	b := make([]float64, m)
	for i := range b {
		b[i] = 1
	}
	norm0 := make([]float64, k)
	for j := range k {
		for i := range m {
			norm0[j] += a[i][j] * a[i][j]
		}
		norm0[j] = math.Sqrt(norm0[j])
	}
	for j := range k {
		// The Householder reflection that zeroes column j below row j.
		s := 0.0
		for i := j; i < m; i++ {
			s += a[i][j] * a[i][j]
		}
		s = math.Sqrt(s)
		if s <= 1e-10*norm0[j] {
			return nil, false
		}
		alpha := -math.Copysign(s, a[j][j])
		v := make([]float64, m-j)
		for i := j; i < m; i++ {
			v[i-j] = a[i][j]
		}
		v[0] -= alpha
		vv := 0.0
		for _, x := range v {
			vv += x * x
		}
		apply := func(col func(i int) *float64) {
			d := 0.0
			for i := j; i < m; i++ {
				d += v[i-j] * *col(i)
			}
			f := 2 * d / vv
			for i := j; i < m; i++ {
				*col(i) -= f * v[i-j]
			}
		}
		for c := j; c < k; c++ {
			apply(func(i int) *float64 { return &a[i][c] })
		}
		apply(func(i int) *float64 { return &b[i] })
	}
	y = make([]float64, k)
	for r := k - 1; r >= 0; r-- {
		s := b[r]
		for c := r + 1; c < k; c++ {
			s -= a[r][c] * y[c]
		}
		y[r] = s / a[r][r]
	}
	return y, true
}
