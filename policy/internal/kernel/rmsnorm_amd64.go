//go:build !purego

package kernel

//go:noescape
func rmsBwdAVX512(gx, tr, res, x, w, grad *float32, inv, c float32, n, hasRes int)

// avx512Active reports whether the active implementation is an AVX-512
// one (the element-wise AVX-512 kernels of this file run).
func avx512Active() bool { return active == avx512Impl || active == vnniImpl }

// rmsNormBackwardRest is rmsNormBackwardGo, in AVX-512 where active.
func rmsNormBackwardRest(gx, tr, res, x, w, g []float32, inv, c float32) {
	if !avx512Active() {
		rmsNormBackwardGo(gx, tr, res, x, w, g, inv, c)
		return
	}
	rp, has := &x[0], 0 // any valid address when there is no residual
	if res != nil {
		rp, has = &res[0], 1
	}
	rmsBwdAVX512(&gx[0], &tr[0], rp, &x[0], &w[0], &g[0], inv, c, len(x), has)
}
