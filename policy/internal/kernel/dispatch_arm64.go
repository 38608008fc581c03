//go:build !purego

package kernel

import "golang.org/x/sys/cpu"

// neonImpl is the NEON implementation (every arm64 CPU has Advanced SIMD):
// the float32 products, Dot, Axpy, Scale, the activations and the
// int8-weight product in NEON, each with the bits of the generic kernel
// (and so of the amd64 ones), and MatMulNTW8A8 with int16 products summed
// exactly in int32.
var neonImpl = &impl{
	name:  "neon",
	nt:    ntNEON,
	nn:    nnNEON,
	tn:    tnNEON,
	dot:   dotNEONGo,
	axpy:  axpyNEONGo,
	scale: scaleNEONGo,

	siluMul: siluMulNEONGo,
	exp:     expNEONGo,
	sigmoid: sigmoidNEONGo,
	ntI8:    ntI8NEON,
	quant:   quantRowsGeneric,
	w8a8:    w8a8NEON,
}

// neonDotImpl is neonImpl with MatMulNTW8A8 on the dot-product
// instructions (SDOT, FEAT_DotProd: Apple M1 and later, Graviton 2 and
// later); its integer sums equal the other paths' exactly.
var neonDotImpl = func() *impl {
	im := *neonImpl
	im.name = "neondot"
	im.w8a8 = w8a8SDOT
	return &im
}()

// available lists the implementations this CPU can run, fastest first.
func available() []*impl {
	var list []*impl
	if cpu.ARM64.HasASIMDDP {
		list = append(list, neonDotImpl)
	}
	return append(list, neonImpl, genericImpl)
}
