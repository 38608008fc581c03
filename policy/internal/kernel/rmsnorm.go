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
