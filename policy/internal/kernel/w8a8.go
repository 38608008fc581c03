package kernel

import (
	"fmt"
	"math"

	"github.com/rollout-rl/rollout/policy/team"
)

// W8A8 products: int8 weights times int8 activations, accumulated exactly
// in int32 (see MatMulNTW8A8).

const (
	// MaxW8A8K is the longest row (k) MatMulNTW8A8 takes: up to it the int32
	// sums of k products of a byte by an int8 cannot overflow
	// (65536·255·128 < 2³¹).
	MaxW8A8K = 1 << 16

	// w8Cols is the column granularity of the packed weights (four vectors
	// of 16 outputs: the width of the AVX-512 tiles), w8Group the k values
	// one 32-bit lane of VPDPBUSD sums.
	w8Cols  = 64
	w8Group = 4

	// w8Tiny is the largest |x| of a row that quantizes to zeros: below
	// it 127/max|x| could overflow float32.
	w8Tiny = 0x1p-100
)

// Int8Weights is a weight matrix W[n×k] quantized to int8 with one scale per
// output row, W[j][p] ≈ scale[j]·q[j][p], laid out for MatMulNTW8A8: blocks
// of 16 rows, within a block groups of 4 consecutive k, within a group the
// 16 rows' 4 bytes (the operand layout of VPDPBUSD). k is padded with zeros
// to a multiple of 4 and n to a multiple of 64. It is read-only once made
// and may be shared by goroutines.
type Int8Weights struct {
	n, k   int
	kp     int       // k padded to a multiple of 4
	packed []int8    // [np/16][kp/4][16][4]
	sum128 []int32   // 128·Σ_p q[j][p], padded to np
	scale  []float32 // padded to np
}

// PackInt8 lays out the int8 matrix q[n×k] (row-major) with its row scales
// for MatMulNTW8A8. It returns an error when a slice is too short or k
// exceeds MaxW8A8K.
func PackInt8(q []int8, scale []float32, n, k int) (*Int8Weights, error) {
	switch {
	case n < 0 || k < 0:
		return nil, fmt.Errorf("kernel.PackInt8: negative dimension n=%d k=%d", n, k)
	case k > MaxW8A8K:
		return nil, fmt.Errorf("kernel.PackInt8: row length k=%d exceeds %d", k, MaxW8A8K)
	case len(q) < n*k:
		return nil, fmt.Errorf("kernel.PackInt8: q has length %d, need %d×%d=%d", len(q), n, k, n*k)
	case len(scale) < n:
		return nil, fmt.Errorf("kernel.PackInt8: scale has length %d, need %d", len(scale), n)
	}
	kp := roundUp(k, w8Group)
	np := roundUp(n, w8Cols)
	w := &Int8Weights{n: n, k: k, kp: kp, packed: make([]int8, np*kp), sum128: make([]int32, np), scale: make([]float32, np)}
	copy(w.scale, scale[:n])
	for j := range n {
		row := q[j*k : (j+1)*k]
		var s int32
		for p, v := range row {
			w.packed[w8Index(j, p, kp)] = v
			s += int32(v)
		}
		w.sum128[j] = 128 * s
	}
	return w, nil
}

// w8Index is the position of W[j][p] in the packed layout.
func w8Index(j, p, kp int) int {
	return (j/16*(kp/w8Group)+p/w8Group)*64 + j%16*w8Group + p%w8Group
}

// Dims returns the matrix's rows (outputs) n and row length k.
func (w *Int8Weights) Dims() (n, k int) { return w.n, w.k }

func roundUp(x, to int) int { return (x + to - 1) / to * to }

// Int8Rows is a batch of activation rows quantized to int8 with one scale
// per row (made by Quantize, reused across calls to avoid allocation). Row i
// holds a[i][p] ≈ scale[i]·(q[i][p] − 128): the bytes are offset by 128 to
// be unsigned, the operand VPDPBUSD multiplies.
type Int8Rows struct {
	m, k  int
	kp    int       // row stride of q, k padded to a multiple of 4 with zeros
	q     []uint8   // [m][kp]
	scale []float32 // [m]
}

// Quantize sets r to the per-row quantization of x[m×k] (row-major): for
// each row, with a = max_p |x[p]|, scale = a/127 and
//
//	q[p] = 128 + clamp(roundToEven(x[p]·(127/a)), −127, 127)
//
// in float32 arithmetic (a row with a below 2⁻¹⁰⁰ becomes zeros of scale
// 0). The values must be finite. The quantization of a row depends on that
// row alone. It panics when x is too short.
func (r *Int8Rows) Quantize(x []float32, m, k int) {
	checkDims("Int8Rows.Quantize", m, 0, k)
	checkLen("Int8Rows.Quantize", "x", x, m*k)
	kp := roundUp(k, w8Group)
	r.m, r.k, r.kp = m, k, kp
	if cap(r.q) < m*kp {
		r.q = make([]uint8, m*kp)
	}
	r.q = r.q[:m*kp]
	if cap(r.scale) < m {
		r.scale = make([]float32, m)
	}
	r.scale = r.scale[:m]
	if m == 0 || k == 0 {
		clear(r.q)
		clear(r.scale)
		return
	}
	active.quant(r.q, kp, r.scale, x, k, m, k)
	if kp != k {
		for i := range m {
			clear(r.q[i*kp+k : (i+1)*kp])
		}
	}
}

// Dims returns the rows m and the row length k of the batch.
func (r *Int8Rows) Dims() (m, k int) { return r.m, r.k }

// quantRowsGeneric is Quantize's arithmetic for rows 0..m-1 of x (row
// stride ldx) into q (row stride ldq) and scale; it writes q[i][0..k).
func quantRowsGeneric(q []uint8, ldq int, scale []float32, x []float32, ldx, m, k int) {
	for i := range m {
		row := x[i*ldx : i*ldx+k]
		var amax float32
		for _, v := range row {
			amax = max(amax, float32(math.Abs(float64(v))))
		}
		var s, inv float32
		if amax >= w8Tiny {
			s, inv = amax/127, 127/amax
		}
		scale[i] = s
		qi := q[i*ldq : i*ldq+k]
		for p, v := range row {
			t := math.RoundToEven(float64(v * inv))
			qi[p] = uint8(int32(min(max(t, -127), 127)) + 128)
		}
	}
}

// MatMulNTW8A8 computes c[m×n] = a·Wᵀ (or c += when acc) for activation rows
// a (m×k, quantized per row) and int8 weights W (n×k, quantized per row):
//
//	d = Σ_p (a.q[i][p] − 128)·W.q[j][p]           (exact, in int32)
//	c[i][j] = float32(d)·W.scale[j]·a.scale[i]    (+ old c[i][j])
//
// with the two products rounded in that order. The sum is computed as
// Σ a.q·W.q − 128·Σ W.q, so that the bytes of a are unsigned; being integer
// it has one value whatever the order, so every implementation (AVX-512
// VNNI's VPDPBUSD, or pure Go) gives the same bits, and an output depends
// only on row i of a and row j of W. It panics when the shapes disagree or
// c is too short.
func MatMulNTW8A8(t *team.Team, c []float32, a *Int8Rows, w *Int8Weights, acc bool) {
	const op = "MatMulNTW8A8"
	if a.k != w.k {
		panic(fmt.Sprintf("kernel.%s: activations have row length %d, weights %d", op, a.k, w.k))
	}
	m, n := a.m, w.n
	checkLen(op, "c", c, m*n)
	if m == 0 || n == 0 {
		return
	}
	f := active.w8a8
	if f == nil {
		f = w8a8Generic
	}
	if wk := workers(t, m, n, w.kp); wk > 1 {
		splitRows(t, m, wk, func(lo, hi int) {
			f(c[lo*n:], n, a.q[lo*a.kp:], a.kp, a.scale[lo:], w, hi-lo, acc)
		})
		return
	}
	f(c, n, a.q, a.kp, a.scale, w, m, acc)
}

// W8A8 reports whether the active implementation has a native W8A8 kernel
// (AVX-512 VNNI, or NEON on arm64); elsewhere MatMulNTW8A8 runs in pure Go,
// slower than the weight-only MatMulNTInt8.
func W8A8() bool { return active.w8a8 != nil }

// w8a8Generic is MatMulNTW8A8 in pure Go on the packed layout, for rows
// 0..m-1 of aq (row stride lda) into c (row stride ldc).
func w8a8Generic(c []float32, ldc int, aq []uint8, lda int, ascale []float32, w *Int8Weights, m int, acc bool) {
	groups := w.kp / w8Group
	for i := range m {
		ai := aq[i*lda : i*lda+w.kp]
		ci := c[i*ldc : i*ldc+w.n]
		for j0 := 0; j0 < w.n; j0 += 16 {
			var d [16]int32
			blk := w.packed[j0/16*groups*64 : (j0/16+1)*groups*64]
			for g := range groups {
				a4 := ai[g*w8Group : g*w8Group+w8Group : g*w8Group+w8Group]
				wg := blk[g*64 : g*64+64 : g*64+64]
				for jj := range 16 {
					d[jj] += int32(a4[0])*int32(wg[4*jj]) + int32(a4[1])*int32(wg[4*jj+1]) +
						int32(a4[2])*int32(wg[4*jj+2]) + int32(a4[3])*int32(wg[4*jj+3])
				}
			}
			for jj := range min(16, w.n-j0) {
				j := j0 + jj
				// The conversion keeps the product rounded (no fused add).
				v := float32(float32(d[jj]-w.sum128[j]) * w.scale[j] * ascale[i])
				if acc {
					ci[j] += v
				} else {
					ci[j] = v
				}
			}
		}
	}
}
