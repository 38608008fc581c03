package kernel

import (
	"fmt"
	"math"
)

// SoftmaxScaled sets s to softmax(s·scale) in place, the attention weights
// of one head: every element is multiplied by scale, the largest product
// is subtracted, e^x taken with the float32 exp of Exp, the results summed
// sequentially from +0 in increasing index, and every element multiplied
// by 1/sum (rounded to float32 first). On every path its bits are those of
// these steps done one after the other with Scale, a maximum, a
// subtraction, Exp and Scale; the AVX-512 paths fuse the first four into
// one kernel. It runs on the calling goroutine.
func SoftmaxScaled(s []float32, scale float32) {
	softmaxRows(active, activeSoftmaxExp, s, 1, len(s), scale)
}

// SoftmaxScaledRows is SoftmaxScaled on each of rows rows of n elements
// stored one after the other in s (the heads of one attention row), with
// the same bits; the sequential sums of four rows run side by side, so
// they cost about as much as one. It panics when s holds fewer than
// rows·n elements.
func SoftmaxScaledRows(s []float32, rows, n int, scale float32) {
	if rows < 0 || n < 0 {
		panic(fmt.Sprintf("kernel.SoftmaxScaledRows: negative dimension rows=%d n=%d", rows, n))
	}
	checkLen("SoftmaxScaledRows", "s", s, rows*n)
	softmaxRows(active, activeSoftmaxExp, s, rows, n, scale)
}

// activeSoftmaxExp is the fused first part of SoftmaxScaled on the active
// implementation (see softmaxExpFor), nil where there is none. Like active,
// it is set once at initialisation.
var activeSoftmaxExp = softmaxExpFor(active)

// softmaxRows is SoftmaxScaledRows with im's kernels and, when not nil,
// the fused kernel exp for the steps up to the exponentials.
func softmaxRows(im *impl, exp func(s []float32, scale float32), s []float32, rows, n int, scale float32) {
	if n == 0 {
		return
	}
	for r := range rows {
		row := s[r*n : (r+1)*n]
		if exp != nil {
			exp(row, scale)
		} else {
			softmaxExpSteps(im, row, scale)
		}
	}
	r := 0
	for ; r+4 <= rows; r += 4 {
		a, b, c, d := s[r*n:(r+1)*n], s[(r+1)*n:(r+2)*n], s[(r+2)*n:(r+3)*n], s[(r+3)*n:(r+4)*n]
		b, c, d = b[:len(a)], c[:len(a)], d[:len(a)]
		var sa, sb, sc, sd float32
		for i, v := range a {
			sa += v
			sb += b[i]
			sc += c[i]
			sd += d[i]
		}
		im.scale(1/sa, a)
		im.scale(1/sb, b)
		im.scale(1/sc, c)
		im.scale(1/sd, d)
	}
	for ; r < rows; r++ {
		a := s[r*n : (r+1)*n]
		var sum float32
		for _, v := range a {
			sum += v
		}
		im.scale(1/sum, a)
	}
}

// softmaxExpSteps sets s to e^(s·scale − max(s·scale)) step by step with
// im's kernels: the first part of SoftmaxScaled.
func softmaxExpSteps(im *impl, s []float32, scale float32) {
	im.scale(scale, s)
	mx := maxOf(s)
	for j := range s {
		s[j] -= mx
	}
	im.exp(s, s)
}

// softmaxSteps is SoftmaxScaled done step by step with im's kernels, the
// definition the fused kernels are tested against.
func softmaxSteps(im *impl, s []float32, scale float32) {
	softmaxExpSteps(im, s, scale)
	var sum float32
	for _, v := range s {
		sum += v
	}
	im.scale(1/sum, s)
}

// maxOf returns the largest element of s (−Inf when s is empty), in four
// independent chains: max is order-free, so the result is that of one
// sequential pass.
func maxOf(s []float32) float32 {
	inf := float32(math.Inf(-1))
	m0, m1, m2, m3 := inf, inf, inf, inf
	j := 0
	for ; j+4 <= len(s); j += 4 {
		q := s[j : j+4 : j+4]
		m0, m1, m2, m3 = max(m0, q[0]), max(m1, q[1]), max(m2, q[2]), max(m3, q[3])
	}
	for ; j < len(s); j++ {
		m0 = max(m0, s[j])
	}
	return max(max(m0, m1), max(m2, m3))
}
