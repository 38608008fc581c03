//go:build amd64 && !purego

package kernel

// normScaleFor returns the vector normScale of im: the AVX-512 kernel on
// the AVX-512 paths, nil elsewhere.
func normScaleFor(im *impl) func(dst, x, w []float32, inv float32) {
	if im == avx512Impl || im == vnniImpl {
		return normScaleAVX512Go
	}
	return nil
}

//go:noescape
func normScaleAVX512(dst, x, w *float32, n int, inv float32)

func normScaleAVX512Go(dst, x, w []float32, inv float32) {
	n := len(x)
	if n == 0 {
		return
	}
	dst, w = dst[:n], w[:n]
	normScaleAVX512(&dst[0], &x[0], &w[0], n, inv)
}
