package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestRMSNormBackward checks the vectorised row against the Go loops bit
// for bit (ragged lengths, with and without the residual), and against
// the float64 derivative of RMSNorm.
func TestRMSNormBackward(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 7, 16, 33, 128} {
		for _, withRes := range []bool{false, true} {
			x, w, g, res := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
			for i := range x {
				x[i], w[i], g[i], res[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(rng.NormFloat64())
			}
			var r []float32
			if withRes {
				r = res
			}
			y := make([]float32, n)
			inv := RMSNorm(y, x, w, 1e-5)
			gx, tr := make([]float32, n), make([]float32, n)
			RMSNormBackward(gx, tr, r, x, w, g, inv)
			var dot float32
			for j := range x {
				dot += float32(w[j] * float32(g[j]*x[j]))
			}
			wgx, wtr := make([]float32, n), make([]float32, n)
			rmsNormBackwardGo(wgx, wtr, r, x, w, g, inv, inv*inv*inv*dot/float32(n))
			for j := range gx {
				if math.Float32bits(gx[j]) != math.Float32bits(wgx[j]) || math.Float32bits(tr[j]) != math.Float32bits(wtr[j]) {
					t.Fatalf("n=%d res=%v [%d]: gx %v tr %v, Go loop %v %v", n, withRes, j, gx[j], tr[j], wgx[j], wtr[j])
				}
			}
			// float64: ∂/∂x_j Σ_i g_i w_i x_i inv = inv·w_j·g_j − inv³·x_j·Σ_i g_i w_i x_i / n
			var s float64
			for i := range x {
				s += float64(g[i]) * float64(w[i]) * float64(x[i])
			}
			iv := float64(inv)
			for j := range x {
				want := iv*float64(w[j])*float64(g[j]) - iv*iv*iv*float64(x[j])*s/float64(n)
				if withRes {
					want += float64(res[j])
				}
				if math.Abs(float64(gx[j])-want) > 1e-4*(1+math.Abs(want)) {
					t.Fatalf("n=%d res=%v [%d]: gx %v, float64 %v", n, withRes, j, gx[j], want)
				}
			}
			// The forward row against its Go loop.
			wy := make([]float32, n)
			normScaleGeneric(wy, x, w, inv)
			for j := range y {
				if math.Float32bits(y[j]) != math.Float32bits(wy[j]) {
					t.Fatalf("n=%d: RMSNorm [%d] = %v, Go loop %v", n, j, y[j], wy[j])
				}
			}
		}
	}
}

// RMSNormBackwardRows gives the bits of one RMSNormBackward per row
// (row counts around the groups of four, with and without the residual).
func TestRMSNormBackwardRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, d := range []int{1, 7, 128} {
		for _, rows := range []int{1, 3, 4, 5, 9} {
			for _, withRes := range []bool{false, true} {
				n := rows * d
				x, g, res, w, inv := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, d), make([]float32, rows)
				for i := range x {
					x[i], g[i], res[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64()), float32(rng.NormFloat64())
				}
				for i := range w {
					w[i] = float32(rng.NormFloat64())
				}
				for i := range inv {
					inv[i] = float32(0.5 + rng.Float64())
				}
				var rr []float32
				if withRes {
					rr = res
				}
				gx, tr := make([]float32, n), make([]float32, n)
				RMSNormBackwardRows(gx, tr, rr, x, w, g, inv)
				for r := range rows {
					var rres []float32
					if withRes {
						rres = res[r*d : (r+1)*d]
					}
					wgx, wtr := make([]float32, d), make([]float32, d)
					RMSNormBackward(wgx, wtr, rres, x[r*d:(r+1)*d], w, g[r*d:(r+1)*d], inv[r])
					for j := range d {
						if math.Float32bits(gx[r*d+j]) != math.Float32bits(wgx[j]) || math.Float32bits(tr[r*d+j]) != math.Float32bits(wtr[j]) {
							t.Fatalf("d=%d rows=%d res=%v row %d [%d]: gx %v tr %v, per row %v %v", d, rows, withRes, r, j, gx[r*d+j], tr[r*d+j], wgx[j], wtr[j])
						}
					}
				}
			}
		}
	}
}
