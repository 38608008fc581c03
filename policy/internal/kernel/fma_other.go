//go:build !arm64

package kernel

import "math"

// fma32 is the correctly rounded float32 a·b+c (see fma32Portable).
func fma32(a, b, c float32) float32 { return fma32Portable(a, b, c) }

// fmaFast returns the float64 sum a·b+c rounded to float32, and whether
// that is the correctly rounded a·b+c: it is unless the float64 sum lies
// exactly halfway between two float32 values (where rounding twice can
// differ from rounding once) or below the float32 normal range, and then
// the caller uses fma32. It is small enough to be inlined into the loops of
// the generic kernels, which fma32 is not.
func fmaFast(a, b, c float32) (float32, bool) {
	s := float64(float64(a)*float64(b)) + float64(c)
	u := math.Float64bits(s)
	return float32(s), u&0x1fffffff != 0x10000000 && u&0x7ff0000000000000 >= 0x3810000000000000
}
