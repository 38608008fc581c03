//go:build amd64 && !purego

package kernel

// softmaxExpFor returns the fused first part of SoftmaxScaled of im (s set
// to e^(s·scale − max)): the AVX-512 kernel on the AVX-512 paths, nil
// elsewhere.
func softmaxExpFor(im *impl) func(s []float32, scale float32) {
	if im == avx512Impl || im == vnniImpl {
		return softmaxExpAVX512Go
	}
	return nil
}

//go:noescape
func softmaxExpAVX512(s *float32, n int, scale float32)

// softmaxExpAVX512Go sets s = e^(s·scale − max) in one AVX-512 kernel: s·scale
// and its maximum in one pass (VMAXPS differs from max only for NaN and the
// sign of zero, which change no output: e^(±0) is 1, and a NaN makes the
// sum and so every output NaN either way), then the exp of Exp on s − max.
func softmaxExpAVX512Go(s []float32, scale float32) {
	if len(s) == 0 {
		return
	}
	softmaxExpAVX512(&s[0], len(s), scale)
}
