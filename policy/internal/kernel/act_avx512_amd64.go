//go:build !purego

package kernel

//go:noescape
func siluMulAVX512(dst, gate, up *float32, n int)

//go:noescape
func expAVX512(dst, x *float32, n int)

func siluMulAVX512Go(dst, gate, up []float32) {
	n := len(gate)
	if n == 0 {
		return
	}
	dst, up = dst[:n], up[:n]
	siluMulAVX512(&dst[0], &gate[0], &up[0], n)
}

func expAVX512Go(dst, x []float32) {
	n := len(x)
	if n == 0 {
		return
	}
	dst = dst[:n]
	expAVX512(&dst[0], &x[0], n)
}

//go:noescape
func sigmoidAVX512(dst, x *float32, n int)

func sigmoidAVX512Go(dst, x []float32) {
	n := len(x)
	if n == 0 {
		return
	}
	dst = dst[:n]
	sigmoidAVX512(&dst[0], &x[0], n)
}
