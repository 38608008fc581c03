package cost

import (
	"fmt"
	"math"
)

// Coef is a phase's fitted constants: seconds per FLOP, per byte and per
// call.
type Coef struct {
	SecPerFLOP float64 `json:"s_per_flop"`
	SecPerByte float64 `json:"s_per_byte"`
	SecPerCall float64 `json:"s_per_call"`
}

// Seconds is the predicted time of work w.
func (c Coef) Seconds(w Work) float64 {
	return w.FLOPs*c.SecPerFLOP + w.Bytes*c.SecPerByte + w.Calls*c.SecPerCall
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
// alike. A constant the data cannot support comes out zero.
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
	if len(works) < 3 {
		return Model{}, fmt.Errorf("cost: fit: %d points to fit, want at least 3", len(works))
	}
	m.Points = len(works)
	for p := range NumPhases {
		var rows [][3]float64
		for i, w := range works {
			t := secs[i][p]
			if !(t > 0) {
				return Model{}, fmt.Errorf("cost: fit: point %d phase %s: measured %g s, want > 0", i, p, t)
			}
			rows = append(rows, [3]float64{w[p].FLOPs / t, w[p].Bytes / t, w[p].Calls / t})
		}
		x, rms := nnls3(rows)
		m.Coef[p] = Coef{SecPerFLOP: x[0], SecPerByte: x[1], SecPerCall: x[2]}
		m.FitRMS[p] = rms
	}
	return m, nil
}

// nnls3 solves min Σ (a·x − 1)² over x ≥ 0 for rows a of three columns,
// by trying every subset of free columns (the others at zero) and keeping
// the best solution with no negative entry; it returns x and the root
// mean square residual. The columns are scaled to unit norm first.
func nnls3(rows [][3]float64) ([3]float64, float64) {
	var scale [3]float64
	for _, r := range rows {
		for j, v := range r {
			scale[j] += v * v
		}
	}
	for j := range scale {
		scale[j] = math.Sqrt(scale[j])
		if scale[j] == 0 {
			scale[j] = 1
		}
	}
	best, bestRes := [3]float64{}, math.Inf(1)
	for mask := 1; mask < 8; mask++ {
		var cols []int
		for j := range 3 {
			if mask&(1<<j) != 0 {
				cols = append(cols, j)
			}
		}
		k := len(cols)
		// Normal equations AᵀA y = Aᵀ1 over the free columns.
		ata := make([][]float64, k)
		atb := make([]float64, k)
		for i := range ata {
			ata[i] = make([]float64, k)
		}
		for _, r := range rows {
			for i, ci := range cols {
				atb[i] += r[ci] / scale[ci]
				for j, cj := range cols {
					ata[i][j] += r[ci] / scale[ci] * r[cj] / scale[cj]
				}
			}
		}
		y, ok := solve(ata, atb)
		if !ok {
			continue
		}
		var x [3]float64
		feasible := true
		for i, c := range cols {
			if y[i] < 0 {
				feasible = false
			}
			x[c] = y[i] / scale[c]
		}
		if !feasible {
			continue
		}
		res := 0.0
		for _, r := range rows {
			d := r[0]*x[0] + r[1]*x[1] + r[2]*x[2] - 1
			res += d * d
		}
		if res < bestRes {
			best, bestRes = x, res
		}
	}
	return best, math.Sqrt(bestRes / float64(len(rows)))
}

// solve solves a small linear system by Gaussian elimination with partial
// pivoting; ok is false when it is singular.
func solve(a [][]float64, b []float64) ([]float64, bool) {
	n := len(b)
	for col := range n {
		piv := col
		for r := col + 1; r < n; r++ {
			if math.Abs(a[r][col]) > math.Abs(a[piv][col]) {
				piv = r
			}
		}
		if math.Abs(a[piv][col]) < 1e-12 {
			return nil, false
		}
		a[col], a[piv] = a[piv], a[col]
		b[col], b[piv] = b[piv], b[col]
		for r := col + 1; r < n; r++ {
			f := a[r][col] / a[col][col]
			for c := col; c < n; c++ {
				a[r][c] -= f * a[col][c]
			}
			b[r] -= f * b[col]
		}
	}
	x := make([]float64, n)
	for r := n - 1; r >= 0; r-- {
		s := b[r]
		for c := r + 1; c < n; c++ {
			s -= a[r][c] * x[c]
		}
		x[r] = s / a[r][r]
	}
	return x, true
}
