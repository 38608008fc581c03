package kernel

import (
	"fmt"
	"math"
)

// Float16 KV caches: rows stored as IEEE binary16 (uint16 bits), widened
// exactly to float32 when read. ScoresF16 and AttendValuesF16 give the bits
// of the float32 kernels on the widened rows, reading half the bytes.

// F16 reports whether the active implementation has native float16
// attention kernels (the AVX-512 paths); elsewhere ScoresF16 and
// AttendValuesF16 widen the rows into temporary float32 ones, slower than
// a float32 cache.
func F16() bool { return active.scoresF16 != nil }

// maxF16 is the largest finite binary16 value; ToF16 saturates to it.
const maxF16 = 65504

// ToF16 sets dst[i] to src[i] rounded to binary16 (to nearest even, after
// clamping to ±65504, so that no value becomes infinite). The values must
// not be NaN. It panics when dst is shorter than src.
func ToF16(dst []uint16, src []float32) {
	if len(dst) < len(src) {
		panic(fmt.Sprintf("kernel.ToF16: dst has length %d, need %d", len(dst), len(src)))
	}
	done := 0
	if active.toF16 != nil {
		done = active.toF16(dst, src)
	}
	for i := done; i < len(src); i++ {
		dst[i] = f32ToF16(src[i])
	}
}

// f32ToF16 is ToF16 of one value.
func f32ToF16(f float32) uint16 {
	f = min(max(f, -maxF16), maxF16)
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23&0xff) - 127 + 15
	mant := b & 0x7fffff
	if exp <= 0 {
		if exp < -10 {
			return sign
		}
		mant |= 0x800000
		shift := uint32(14 - exp)
		h := mant >> shift
		rem, half := mant&(1<<shift-1), uint32(1)<<(shift-1)
		if rem > half || rem == half && h&1 == 1 {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(exp)<<10 | mant>>13
	if rem := mant & 0x1fff; rem > 0x1000 || rem == 0x1000 && h&1 == 1 {
		h++
	}
	return sign | uint16(h)
}

// F16ToF32 widens a binary16 value exactly.
func F16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch exp {
	case 0:
		v := float32(mant) * 0x1p-24
		if sign != 0 {
			v = -v
		}
		return v
	case 31:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
}

// widenF16 writes rows×cols values of src (row stride ld) to a dense dst.
func widenF16(dst []float32, src []uint16, rows, cols, ld int) {
	for t := range rows {
		for j, h := range src[t*ld : t*ld+cols] {
			dst[t*cols+j] = F16ToF32(h)
		}
	}
}

// ScoresF16 computes scores[t] = Σ_p q[p]·keys[t·ldk + p] over p < k for
// t < n, with binary16 keys (row stride ldk ≥ k): the bits of
// MatMulNTStrided(scores, n, q, k, widened keys, ldk, 1, n, k, false). It
// runs on the calling goroutine.
func ScoresF16(scores, q []float32, keys []uint16, ldk, n, k int) {
	checkDims("ScoresF16", 1, n, k)
	checkLen("ScoresF16", "scores", scores, n)
	checkLen("ScoresF16", "q", q, k)
	if ldk < k || n > 0 && k > 0 && len(keys) < (n-1)*ldk+k {
		panic(fmt.Sprintf("kernel.ScoresF16: keys of length %d and stride %d do not hold %d rows of %d", len(keys), ldk, n, k))
	}
	if n == 0 {
		return
	}
	if active.scoresF16 != nil && active.scoresF16(scores, q, keys, ldk, n, k) {
		return
	}
	row := make([]float32, k)
	for t := range n {
		widenF16(row, keys[t*ldk:], 1, k, ldk)
		scores[t] = active.dot(q[:k], row)
	}
}

// AttendValuesF16 is AttendValues over binary16 value rows, with the bits
// of AttendValues on the widened rows.
func AttendValuesF16(out, probs []float32, ldp int, v []uint16, ldv int, n, d, hd int, acc bool) {
	checkDims("AttendValuesF16", n, d, hd)
	if hd == 0 || d%hd != 0 {
		panic("kernel.AttendValuesF16: head width does not divide the row width")
	}
	if d == 0 {
		return
	}
	if ldv < d || n > 0 && len(v) < (n-1)*ldv+d {
		panic(fmt.Sprintf("kernel.AttendValuesF16: v of length %d and stride %d does not hold %d rows of %d", len(v), ldv, n, d))
	}
	checkLen("AttendValuesF16", "out", out, d)
	checkStrided("AttendValuesF16", "probs", probs, d/hd, n, ldp)
	if active.attvF16 != nil && active.attvF16(out, probs, ldp, v, ldv, n, d, hd, acc) {
		return
	}
	wide := make([]float32, n*d)
	widenF16(wide, v, n, d, ldv)
	AttendValues(out, probs, ldp, wide, d, n, d, hd, acc)
}
