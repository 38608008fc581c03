//go:build amd64 && !purego

package kernel

import "unsafe"

// scoresHeadsFor returns the native ScoresF16Heads of im: the AVX-512
// kernel on the AVX-512 paths, nil elsewhere.
func scoresHeadsFor(im *impl) func(scores, q []float32, keys []uint16, ldk, n, heads, hd int) bool {
	if im == avx512Impl || im == vnniImpl {
		return scoresHeadsAVX512
	}
	return nil
}

// shArgs are the arguments of scoresHeadsF16AVX512 (offsets in bytes in
// the comments, read by the assembly).
type shArgs struct {
	q       *float32       // four heads' query, 128 values (0)
	keys    unsafe.Pointer // the first group's first key row, at the four heads (8)
	scores  *float32       // head 0's score of the first group's first key (16)
	ldk     int            // bytes between key rows (24)
	lds     int            // bytes between the heads' score rows (32)
	ngroups int            // groups of four keys (40)
}

//go:noescape
func scoresHeadsF16AVX512(p *shArgs)

// scoresHeadsAVX512 is ScoresF16Heads for hd 32, heads a multiple of 4 and
// n ≥ 4: per four heads, the keys in groups of four (the last group
// shifted back to end at n, its first keys computed again with the same
// bits), sixteen 16-lane dot products per group reduced as
// nt1x16F16AVX512 reduces them.
func scoresHeadsAVX512(scores, q []float32, keys []uint16, ldk, n, heads, hd int) bool {
	if hd != 32 || heads%4 != 0 || n < 4 {
		return false
	}
	d := heads * hd
	_ = keys[(n-1)*ldk+d-1]
	_ = q[d-1]
	_ = scores[heads*n-1]
	for g := 0; g < heads; g += 4 {
		p := shArgs{q: &q[g*hd], keys: unsafe.Pointer(&keys[g*hd]), scores: &scores[g*n], ldk: ldk * 2, lds: n * 4, ngroups: n / 4}
		scoresHeadsF16AVX512(&p)
		if n%4 != 0 {
			p.keys, p.scores, p.ngroups = unsafe.Pointer(&keys[(n-4)*ldk+g*hd]), &scores[g*n+n-4], 1
			scoresHeadsF16AVX512(&p)
		}
	}
	return true
}
