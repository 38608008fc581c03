package kernel

import "math"

// SoftmaxScaled sets s to softmax(s·scale) in place, the attention weights
// of one head: every element is multiplied by scale, the largest product
// is subtracted, e^x taken with the float32 exp of Exp, the results summed
// sequentially from +0 in increasing index, and every element multiplied
// by 1/sum (rounded to float32 first). On every path its bits are those of
// these steps done one after the other with Scale, a maximum, a
// subtraction, Exp and Scale; the AVX-512 paths fuse them into one kernel
// (the order of the sum kept). It runs on the calling goroutine.
func SoftmaxScaled(s []float32, scale float32) {
	if len(s) == 0 {
		return
	}
	if activeSoftmax != nil {
		activeSoftmax(s, scale)
		return
	}
	softmaxSteps(active, s, scale)
}

// activeSoftmax is the fused SoftmaxScaled of the active implementation,
// nil where there is none. Like active, it is set once at initialisation.
var activeSoftmax = softmaxFor(active)

// softmaxSteps is SoftmaxScaled done step by step with im's kernels.
func softmaxSteps(im *impl, s []float32, scale float32) {
	im.scale(scale, s)
	mx := maxOf(s)
	for j := range s {
		s[j] -= mx
	}
	im.exp(s, s)
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
