//go:build !purego

package kernel

//go:noescape
func swigluBwdAVX512(ggate, gup, gate, up, grad *float32, n int)

// swigluBackward is SiLUMulBackward in one AVX-512 pass where the active
// implementation is an AVX-512 one, else swigluBackwardGo.
func swigluBackward(ggate, gup, gate, up, g []float32) {
	if active != avx512Impl && active != vnniImpl {
		swigluBackwardGo(ggate, gup, gate, up, g)
		return
	}
	swigluBwdAVX512(&ggate[0], &gup[0], &gate[0], &up[0], &g[0], len(gate))
}
