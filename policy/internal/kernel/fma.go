package kernel

import "math"

// fma32Portable is the correctly rounded float32 a·b+c: what VFMADD231PS
// computes on amd64 and FMADDS on arm64, in portable Go (fma32 on every
// architecture but arm64). The product of two float32
// values is exact in float64, so the float64 sum carries the only rounding
// before the final one to float32; the two roundings differ from a single
// one only when the float64 sum falls exactly halfway between two float32
// values, and then the sign of the float64 sum's error decides (as in
// musl's fmaf). The explicit float64 conversion of the product stops an
// architecture that fuses x*y+z from fusing it here (the product is exact,
// so this changes nothing but keeps every step explicit).
func fma32Portable(a, b, c float32) float32 {
	s := float64(float64(a)*float64(b)) + float64(c)
	// Normal float32 range (or Inf/NaN), and not a float32 halfway point:
	// the float64 sum rounds to the right float32.
	if u := math.Float64bits(s); u&0x1fffffff != 0x10000000 && u&0x7ff0000000000000 >= 0x3810000000000000 {
		return float32(s)
	}
	return fma32Rare(a, b, c)
}

// fma32Rare finishes fma32Portable when the float64 sum s = a·b + c lies on a
// float32 halfway point or below the float32 normal range (subnormal or
// zero): when s is inexact and exactly halfway between two float32 values,
// it is moved one float64 step towards the exact sum before rounding.
func fma32Rare(a, b, c32 float32) float32 {
	p, c := float64(float64(a)*float64(b)), float64(c32)
	s := p + c
	if s == 0 || math.IsInf(s, 0) || math.IsNaN(s) {
		return float32(s)
	}
	// The rounding error of s (TwoSum, exact).
	bb := s - p
	e := (p - (s - bb)) + (c - bb)
	if e == 0 {
		return float32(s)
	}
	var half bool
	if math.Abs(s) < 0x1p-126 {
		// Subnormal float32 results are multiples of 2⁻¹⁴⁹.
		r := float64(float32(s))
		half = math.Abs(s-r) == 0x1p-150
	} else {
		half = math.Float64bits(s)&0x1fffffff == 0x10000000
	}
	if half {
		s = math.Nextafter(s, math.Copysign(math.Inf(1), e))
	}
	return float32(s)
}
