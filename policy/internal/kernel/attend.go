package kernel

// AttendValues computes the attention output of one query over n cached
// value rows, all heads in one pass: for every column j in [0, d),
//
//	out[j] (+)= Σ_{t<n} probs[(j/hd)·ldp + t] · v[t·ldv + j]
//
// where probs holds one row of n weights per head (row stride ldp ≥ n) and
// v holds n rows of d values with heads side by side (row stride ldv ≥ d),
// as in a KV cache. With acc it adds to out, otherwise it overwrites it.
//
// Every output is the same sequential chain of fused multiply-adds over t as
// the per-head product
//
//	MatMulNNStrided(out[h*hd:], hd, probs[h*ldp:], n, v[h*hd:], ldv, 1, hd, n, acc)
//
// so it has the bits of that call; it only reads each value row once for all
// heads. hd must divide d. It runs on the calling goroutine.
func AttendValues(out, probs []float32, ldp int, v []float32, ldv int, n, d, hd int, acc bool) {
	checkDims("AttendValues", n, d, hd)
	if hd == 0 || d%hd != 0 {
		panic("kernel.AttendValues: head width does not divide the row width")
	}
	if d == 0 {
		return
	}
	heads := d / hd
	checkLen("AttendValues", "out", out, d)
	checkStrided("AttendValues", "probs", probs, heads, n, ldp)
	checkStrided("AttendValues", "v", v, n, d, ldv)
	if active.attv != nil && active.attv(out, probs, ldp, v, ldv, n, d, hd, acc) {
		return
	}
	for h := range heads {
		active.nn(out[h*hd:], hd, probs[h*ldp:], n, v[h*hd:], ldv, 1, hd, n, acc)
	}
}
