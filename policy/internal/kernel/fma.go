package kernel

import "math"

// fma32Portable is the correctly rounded float32 a·b+c: what VFMADD231PS
// computes on amd64 and FMADDS on arm64, in portable Go (fma32 on every
// architecture but arm64). The product of two float32 values is exact in
// float64; the float64 sum is made round-to-odd (when it is inexact and its
// last bit even, it moves one step towards the exact sum, whose direction
// is the sign of its rounding error, computed exactly by TwoSum), and a
// round-to-odd result with at least two more bits than float32 rounds to
// the nearest float32 exactly as the exact sum would (Boldo and Melquiond,
// "Emulation of FMA and correctly rounded sums: proved algorithms using
// rounding to odd", 2008). The explicit float64 conversion of the product
// stops an architecture that fuses x*y+z from fusing it here. It is small
// enough to be inlined.
func fma32Portable(a, b, c float32) float32 {
	p, q := float64(float64(a)*float64(b)), float64(c)
	s := p + q
	bb := s - p
	e := (p - (s - bb)) + (q - bb)
	u := math.Float64bits(s)
	if u&1 == 0 && (e > 0 || e < 0) { // even, inexact (e is NaN for Inf and NaN)
		// One step away from zero when e has the sign of s, else towards.
		u += 1 - (math.Float64bits(e)^u)>>63*2
	}
	return float32(math.Float64frombits(u))
}
