package kernel

import "fmt"

// RMSNormBackward computes, for one row of RMSNorm (y = x·inv ∘ w with
// inv = 1/rms(x)) and the output gradient g:
//
//	tr[j] = (g[j]·x[j])·inv                      (the row's terms of w's gradient)
//	gx[j] = res[j] + ((inv·w[j])·g[j] − c·x[j])  (x's gradient plus a residual one)
//
// with c = inv³·Σ_j w[j]·(g[j]·x[j]) / len(x), the sum taken in index
// order. res may be nil (then no residual term). Every product is rounded
// on its own, in this order, so all paths give the same bits. It panics
// when the lengths differ.
func RMSNormBackward(gx, tr, res, x, w, g []float32, inv float32) {
	n := len(x)
	if len(gx) != n || len(tr) != n || len(w) != n || len(g) != n || (res != nil && len(res) != n) {
		panic(fmt.Sprintf("kernel.RMSNormBackward: lengths differ: gx %d, tr %d, res %d, x %d, w %d, g %d", len(gx), len(tr), len(res), n, len(w), len(g)))
	}
	if n == 0 {
		return
	}
	var dot float32 // a sequential sum: its bits do not depend on the path
	for j, xj := range x {
		dot += float32(w[j] * float32(g[j]*xj))
	}
	c := inv * inv * inv * dot / float32(n)
	rmsNormBackwardRest(gx, tr, res, x, w, g, inv, c)
}

// RMSNormBackwardRows is RMSNormBackward on len(inv) consecutive rows of
// len(w) values: row r of gx, tr, res (when not nil), x and g, with inv[r]
// its 1/rms. The sums of four rows at a time run interleaved, each still in
// index order (a sequential sum waits on each addition; four hide most of
// that wait): the bits of one RMSNormBackward per row. It panics when the
// lengths differ.
func RMSNormBackwardRows(gx, tr, res, x, w, g, inv []float32) {
	d, rows := len(w), len(inv)
	n := d * rows
	if len(gx) != n || len(tr) != n || len(x) != n || len(g) != n || (res != nil && len(res) != n) {
		panic(fmt.Sprintf("kernel.RMSNormBackwardRows: %d rows of %d: lengths gx %d, tr %d, res %d, x %d, g %d", rows, d, len(gx), len(tr), len(res), len(x), len(g)))
	}
	if d == 0 {
		return
	}
	row := func(s []float32, r int) []float32 {
		if s == nil {
			return nil
		}
		return s[r*d : (r+1)*d]
	}
	r := 0
	for ; r+4 <= rows; r += 4 {
		x0, x1, x2, x3 := x[r*d:(r+1)*d], x[(r+1)*d:(r+2)*d], x[(r+2)*d:(r+3)*d], x[(r+3)*d:(r+4)*d]
		g0, g1, g2, g3 := g[r*d:(r+1)*d], g[(r+1)*d:(r+2)*d], g[(r+2)*d:(r+3)*d], g[(r+3)*d:(r+4)*d]
		var s0, s1, s2, s3 float32
		for j, wj := range w {
			s0 += float32(wj * float32(g0[j]*x0[j]))
			s1 += float32(wj * float32(g1[j]*x1[j]))
			s2 += float32(wj * float32(g2[j]*x2[j]))
			s3 += float32(wj * float32(g3[j]*x3[j]))
		}
		for i, dot := range [4]float32{s0, s1, s2, s3} {
			v := inv[r+i]
			c := v * v * v * dot / float32(d)
			rmsNormBackwardRest(row(gx, r+i), row(tr, r+i), row(res, r+i), row(x, r+i), w, row(g, r+i), v, c)
		}
	}
	for ; r < rows; r++ {
		RMSNormBackward(row(gx, r), row(tr, r), row(res, r), row(x, r), w, row(g, r), inv[r])
	}
}

// rmsNormBackwardGo computes RMSNormBackward's tr and gx for a given c.
func rmsNormBackwardGo(gx, tr, res, x, w, g []float32, inv, c float32) {
	tr, w, g, gx = tr[:len(x)], w[:len(x)], g[:len(x)], gx[:len(x)]
	for j, xj := range x {
		tr[j] = float32(g[j]*xj) * inv
		d := float32(float32(inv*w[j])*g[j]) - float32(c*xj)
		if res != nil {
			d = res[j] + d
		}
		gx[j] = d
	}
}
