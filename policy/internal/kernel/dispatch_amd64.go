//go:build amd64 && !purego

package kernel

import "golang.org/x/sys/cpu"

// avx512Impl needs AVX-512F/VL/DQ (and uses AVX2+FMA for the vector
// operations, which are bound by memory anyway).
var avx512Impl = &impl{
	name:   "avx512",
	mvTile: 16,
	nt:     ntAVX512,
	nn:     nnAVX512,
	tn:     tnAVX512,
	dot:    dotAVX512Go,
	axpy:   axpySIMD,
	scale:  scaleSIMD,

	siluMul: siluMulAVX512Go,
	exp:     expAVX512Go,
	sigmoid: sigmoidAVX512Go,
	ntI8:    ntI8AVX512,
	quant:   quantRowsAVX512Go,
	attv:    attvAVX512,

	toF16:     toF16AVX512Go,
	scoresF16: scoresF16AVX512,
	attvF16:   attvF16AVX512,
}

// vnniImpl is avx512Impl with the W8A8 kernel of AVX-512 VNNI.
var vnniImpl = func() *impl {
	im := *avx512Impl
	im.name = "avx512vnni"
	im.w8a8 = w8a8VNNI
	return &im
}()

// avx2Impl needs AVX2 and FMA.
var avx2Impl = &impl{
	name:  "avx2",
	nt:    ntAVX2,
	nn:    nnAVX2,
	tn:    tnAVX2,
	dot:   dotAVX2Go,
	axpy:  axpySIMD,
	scale: scaleSIMD,

	siluMul: siluMulAVX2Go,
	exp:     expAVX2Go,
	sigmoid: sigmoidAVX2Go,
	ntI8:    ntI8Generic,
	quant:   quantRowsGeneric,
}

// available lists the implementations this CPU can run, fastest first.
func available() []*impl {
	var list []*impl
	avx512 := cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX2 && cpu.X86.HasFMA
	if avx512 && cpu.X86.HasAVX512VNNI {
		list = append(list, vnniImpl)
	}
	if avx512 {
		list = append(list, avx512Impl)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		list = append(list, avx2Impl)
	}
	return append(list, genericImpl)
}
