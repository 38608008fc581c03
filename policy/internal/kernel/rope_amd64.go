//go:build amd64 && !purego

package kernel

//go:noescape
func ropeAVX512(x, cos, sin *float32, heads, half int, dir float32)

// rope is ropeGo, 16 pairs at a time with AVX-512 where the active
// implementation is an AVX-512 one.
func rope(x []float32, heads int, cos, sin []float32, dir float32) {
	if !avx512Active() {
		ropeGo(x, heads, cos, sin, dir)
		return
	}
	ropeAVX512(&x[0], &cos[0], &sin[0], heads, len(cos), dir)
}
