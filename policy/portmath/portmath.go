// Package portmath holds float64 Exp and Log that give the same bits on
// every architecture.
//
// The standard library's math.Exp and math.Log run in assembly on some
// architectures (math.Exp on amd64 with or without FMA, and on arm64;
// math.Log on amd64) and in Go elsewhere, and the Go versions are compiled
// with fused multiply-adds on arm64: their last bits differ between CPUs.
// These are the standard library's pure-Go algorithms (FreeBSD's
// e_exp.c and e_log.c, within 1 ulp) with every product rounded explicitly,
// so that no compiler fuses them. The sampler uses them, so that a sampled
// token's log-probability and entropy, and hence the stored trees and
// metrics, are the same on every CPU. Log also has the bits of math.Log on
// amd64 (whose assembly is the same algorithm, unfused) for every positive
// normal x.
//
// ExpAMD64 is the other exp of the project: the algorithm of math.Exp's
// amd64 assembly (Shibata's, from SLEEF) with its fused steps, so that the
// training loss, whose exponentials were math.Exp on amd64, keeps its amd64
// bits and gets them on every other CPU.
package portmath

import "math"

// Exp returns e**x, with the special cases of math.Exp.
func Exp(x float64) float64 {
	const (
		ln2Hi = 6.93147180369123816490e-01
		ln2Lo = 1.90821492927058770002e-10
		log2e = 1.44269504088896338700e+00

		overflow  = 7.09782712893383973096e+02
		underflow = -7.45133219101941108420e+02
		nearZero  = 1.0 / (1 << 28) // 2**-28
	)
	switch {
	case math.IsNaN(x):
		return x
	case x > overflow: // handles case where x is +∞
		return math.Inf(1)
	case x < underflow: // handles case where x is -∞
		return 0
	case -nearZero < x && x < nearZero:
		return 1 + x
	}
	// Reduce; computed as r = hi - lo for extra precision.
	var k int
	switch {
	case x < 0:
		k = int(float64(log2e*x) - 0.5)
	case x > 0:
		k = int(float64(log2e*x) + 0.5)
	}
	hi := x - float64(float64(k)*ln2Hi)
	lo := float64(k) * ln2Lo
	return expmulti(hi, lo, k)
}

// expmulti returns e**r × 2**k where r = hi - lo and |r| ≤ ln(2)/2.
func expmulti(hi, lo float64, k int) float64 {
	const (
		p1 = 1.66666666666666657415e-01  /* 0x3FC55555; 0x55555555 */
		p2 = -2.77777777770155933842e-03 /* 0xBF66C16C; 0x16BEBD93 */
		p3 = 6.61375632143793436117e-05  /* 0x3F11566A; 0xAF25DE2C */
		p4 = -1.65339022054652515390e-06 /* 0xBEBBBD41; 0xC5D26BF1 */
		p5 = 4.13813679705723846039e-08  /* 0x3E663769; 0x72BEA4D0 */
	)
	r := hi - lo
	t := r * r
	q := p4 + float64(t*p5)
	q = p3 + float64(t*q)
	q = p2 + float64(t*q)
	q = p1 + float64(t*q)
	c := r - float64(t*q)
	y := 1 - ((lo - float64(r*c)/(2-c)) - hi)
	return math.Ldexp(y, k)
}

// Log returns the natural logarithm of x, with the special cases of
// math.Log.
func Log(x float64) float64 {
	const (
		ln2Hi = 6.93147180369123816490e-01 /* 3fe62e42 fee00000 */
		ln2Lo = 1.90821492927058770002e-10 /* 3dea39ef 35793c76 */
		l1    = 6.666666666666735130e-01   /* 3FE55555 55555593 */
		l2    = 3.999999999940941908e-01   /* 3FD99999 9997FA04 */
		l3    = 2.857142874366239149e-01   /* 3FD24924 94229359 */
		l4    = 2.222219843214978396e-01   /* 3FCC71C5 1D8E78AF */
		l5    = 1.818357216161805012e-01   /* 3FC74664 96CB03DE */
		l6    = 1.531383769920937332e-01   /* 3FC39A09 D078C69F */
		l7    = 1.479819860511658591e-01   /* 3FC2F112 DF3E5244 */
	)
	switch {
	case math.IsNaN(x) || math.IsInf(x, 1):
		return x
	case x < 0:
		return math.NaN()
	case x == 0:
		return math.Inf(-1)
	}
	f1, ki := math.Frexp(x)
	if f1 < math.Sqrt2/2 {
		f1 *= 2
		ki--
	}
	f := f1 - 1
	k := float64(ki)
	s := f / (2 + f)
	s2 := s * s
	s4 := s2 * s2
	t1 := float64(s2 * (l1 + float64(s4*(l3+float64(s4*(l5+float64(s4*l7)))))))
	t2 := float64(s4 * (l2 + float64(s4*(l4+float64(s4*l6)))))
	R := t1 + t2
	hfsq := float64(0.5 * f * f)
	return float64(k*ln2Hi) - ((hfsq - (float64(s*(hfsq+R)) + float64(k*ln2Lo))) - f)
}

// ExpAMD64 returns e**x with the bits of math.Exp on an amd64 CPU with FMA
// (the standard library's assembly, Shibata's method from SLEEF), on every
// architecture: the fused steps of that assembly are math.FMA, its other
// products are rounded explicitly. Within 1 ulp of e**x; special cases as
// math.Exp, but +Inf from x ≈ 709.44 on (where e**x is still below the
// float64 maximum), as that assembly returns.
func ExpAMD64(x float64) float64 {
	const (
		log2e    = 1.4426950408889634073599246810018920
		ln2U     = 0.69314718055966295651160180568695068359375
		ln2L     = 0.28235290563031577122588448175013436025525412068e-12
		overflow = 7.09782712893384e+02
	)
	switch {
	case math.IsNaN(x) || math.IsInf(x, 1):
		return x
	case math.IsInf(x, -1):
		return 0
	case x > overflow:
		return math.Inf(1)
	}
	// k = round(x·log2 e) to int32 (CVTSD2SL: to nearest even, the
	// integer indefinite −2³¹ out of range).
	k := int32(math.MinInt32)
	if r := math.RoundToEven(float64(log2e * x)); r >= math.MinInt32 && r <= math.MaxInt32 {
		k = int32(r)
	}
	kf := float64(k)
	x = math.FMA(-kf, ln2U, x)
	x = math.FMA(-kf, ln2L, x)
	x = float64(x * 0.0625)
	// e^(x/16) − 1 by its Taylor series, then squared four times as
	// (y+1)² − 1 = y·(y+2).
	p := 2.4801587301587301587e-5
	p = math.FMA(p, x, 1.9841269841269841270e-4)
	p = math.FMA(p, x, 1.3888888888888888889e-3)
	p = math.FMA(p, x, 8.3333333333333333333e-3)
	p = math.FMA(p, x, 4.1666666666666666667e-2)
	p = math.FMA(p, x, 1.6666666666666666667e-1)
	p = math.FMA(p, x, 0.5)
	p = math.FMA(p, x, 1.0)
	y := float64(x * p)
	y = float64(y * float64(y+2))
	y = float64(y * float64(y+2))
	y = float64(y * float64(y+2))
	y = math.FMA(y, float64(y+2), 1.0)
	// y·2^k, through a subnormal result in two steps as the assembly does.
	b := k + 0x3FF
	switch {
	case b <= 0:
		if b < -52 {
			return 0
		}
		y = float64(y * math.Float64frombits(uint64(b+0x3FE)<<52))
		b = 1
	case b >= 0x7FF:
		return math.Inf(1)
	}
	return float64(y * math.Float64frombits(uint64(b)<<52))
}
