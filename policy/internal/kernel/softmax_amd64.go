//go:build amd64 && !purego

package kernel

// softmaxFor returns the fused SoftmaxScaled of im: the AVX-512 kernel on
// the AVX-512 paths, nil elsewhere.
func softmaxFor(im *impl) func(s []float32, scale float32) {
	if im == avx512Impl || im == vnniImpl {
		return softmaxAVX512Go
	}
	return nil
}

//go:noescape
func softmaxAVX512(s *float32, n int, scale float32)

// softmaxAVX512Go is SoftmaxScaled in one AVX-512 kernel: s·scale and its
// maximum in one pass (VMAXPS differs from max only for NaN and the sign
// of zero, which change no output: e^(±0) is 1, and a NaN makes the sum
// and so every output NaN either way), the exp of Exp on s − max, the sum
// sequentially over the stored values, and the product with 1/sum.
func softmaxAVX512Go(s []float32, scale float32) {
	if len(s) == 0 {
		return
	}
	softmaxAVX512(&s[0], len(s), scale)
}
