//go:build amd64 && !purego

package kernel

import "golang.org/x/sys/cpu"

// avx512Impl uses AVX-512F/VL/DQ kernels where they exist and the generic
// code for the rest.
var avx512Impl = &impl{
	name:  "avx512",
	nt:    ntAVX512,
	nn:    nnAVX512,
	tn:    tnAVX512,
	dot:   dotAVX512Go,
	axpy:  axpyGeneric,
	scale: scaleGeneric,
}

// available lists the implementations this CPU can run, fastest first.
func available() []*impl {
	var list []*impl
	if cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512DQ {
		list = append(list, avx512Impl)
	}
	return append(list, genericImpl)
}
