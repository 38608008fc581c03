package kernel

import (
	"fmt"
	"math"

	"github.com/rollout-rl/rollout/policy/portmath"
)

// The float32 exp shared by the activation kernels (Cephes expf): x is
// clamped to [−128, 128], split as n·ln2 + r with n = round(x·log2 e) and
// |r| ≤ ln2/2, e^r is a degree-7 polynomial and 2^n is applied exactly.
// Its error is within 1 ulp of e^x over the float32 range (TestExp).
const (
	expLog2e = float32(1.44269504088896341)
	expLn2Hi = float32(0.693359375)
	expLn2Lo = float32(-2.12194440e-4)
	expP0    = float32(1.9875691500e-4)
	expP1    = float32(1.3981999507e-3)
	expP2    = float32(8.3334519073e-3)
	expP3    = float32(4.1665795894e-2)
	expP4    = float32(1.6666665459e-1)
	expP5    = float32(5.0000001201e-1)
)

// expGeneric is the pure-Go float32 exp: the steps of the SIMD one, with
// its fused multiply-adds done by fma32 and its other products rounded
// explicitly, so that every architecture gives the SIMD bits.
func expGeneric(x float32) float32 {
	if x != x {
		return x
	}
	x = min(max(x, -128), 128)
	// Round to nearest even by adding and removing 1.5·2²³.
	const shifter = float32(1.5 * (1 << 23))
	n := float32(x*expLog2e) + shifter
	n -= shifter
	r := fma32(-n, expLn2Hi, x)
	r = fma32(-n, expLn2Lo, r)
	p := expP0
	p = fma32(p, r, expP1)
	p = fma32(p, r, expP2)
	p = fma32(p, r, expP3)
	p = fma32(p, r, expP4)
	p = fma32(p, r, expP5)
	y := fma32(p, float32(r*r), r) + 1
	// y·2ⁿ with |n| ≤ 185, in two exact power-of-two steps so that the only
	// rounding is the last one (as VSCALEFPS does for subnormal results).
	ni := int32(n)
	n1 := ni / 2
	y *= math.Float32frombits(uint32(n1+127) << 23)
	return y * math.Float32frombits(uint32(ni-n1+127)<<23)
}

func expSliceGeneric(dst, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = expGeneric(v)
	}
}

func sigmoidGeneric(dst, x []float32) {
	dst = dst[:len(x)]
	for i, v := range x {
		dst[i] = 1 / (1 + expGeneric(-v))
	}
}

func siluMulGeneric(dst, gate, up []float32) {
	dst, up = dst[:len(gate)], up[:len(gate)]
	for i, g := range gate {
		dst[i] = g / (1 + expGeneric(-g)) * up[i]
	}
}

// SiLUMul sets dst[i] = silu(gate[i])·up[i] with silu(g) = g/(1+e^(−g)), the
// SwiGLU activation. dst may be gate or up. The exp is a float32
// polynomial within 1 ulp of the true exp (not math.Exp), the same on
// every call. It panics when the lengths differ.
func SiLUMul(dst, gate, up []float32) {
	if len(dst) != len(gate) || len(up) != len(gate) {
		panic(fmt.Sprintf("kernel.SiLUMul: lengths differ: dst %d, gate %d, up %d", len(dst), len(gate), len(up)))
	}
	active.siluMul(dst, gate, up)
}

// Sigmoid sets dst[i] = 1/(1+e^(−x[i])) with the float32 exp of SiLUMul (for
// the SwiGLU backward: silu'(g) = σ(g)·(1 + g·(1 − σ(g)))). dst may be x. It
// panics when the lengths differ.
func Sigmoid(dst, x []float32) {
	if len(dst) != len(x) {
		panic(fmt.Sprintf("kernel.Sigmoid: lengths differ: dst %d, x %d", len(dst), len(x)))
	}
	active.sigmoid(dst, x)
}

// Exp sets dst[i] = e^x[i] with the float32 exp of SiLUMul (within 1 ulp;
// +Inf above about 88.7, subnormal then 0 below about −87.3, NaN kept).
// dst may be x. It panics when the lengths differ.
func Exp(dst, x []float32) {
	if len(dst) != len(x) {
		panic(fmt.Sprintf("kernel.Exp: lengths differ: dst %d, x %d", len(dst), len(x)))
	}
	active.exp(dst, x)
}

// RMSNorm normalises one row as Hugging Face's LlamaRMSNorm does,
// dst[i] = w[i]·(x[i]·inv) with inv = 1/√(mean(x²)+eps), and returns inv.
// The sum of squares is Dot(x, x), so the result depends on the row alone.
// dst may be x. It panics when the lengths differ.
func RMSNorm(dst, x, w []float32, eps float32) float32 {
	if len(dst) != len(x) || len(w) != len(x) {
		panic(fmt.Sprintf("kernel.RMSNorm: lengths differ: dst %d, x %d, w %d", len(dst), len(x), len(w)))
	}
	if len(x) == 0 {
		return 0
	}
	ss := Dot(x, x)
	inv := float32(1 / math.Sqrt(float64(ss/float32(len(x))+eps)))
	normScale(dst, x, w, inv)
	return inv
}

// SoftmaxEntropy sets p = softmax(logits) and returns log Σ exp(logits) and
// the entropy −Σ p·log p of the distribution, in nats. The exponentials use
// the float32 exp of Exp; the sums are accumulated in float64 in index
// order. Entries of −Inf get probability 0; an empty row returns (−Inf, 0).
// p and logits must not overlap. It panics when the lengths differ or p is
// logits.
func SoftmaxEntropy(p, logits []float32) (logZ, entropy float32) {
	if len(p) != len(logits) {
		panic(fmt.Sprintf("kernel.SoftmaxEntropy: lengths differ: p %d, logits %d", len(p), len(logits)))
	}
	if len(p) > 0 && &p[0] == &logits[0] {
		panic("kernel.SoftmaxEntropy: p and logits are the same slice")
	}
	if len(logits) == 0 {
		return float32(math.Inf(-1)), 0
	}
	mx := logits[0]
	for _, v := range logits[1:] {
		mx = max(mx, v)
	}
	if math.IsInf(float64(mx), 0) || mx != mx {
		// All −Inf, or an +Inf/NaN logit: no finite normalisation.
		for i := range p {
			p[i] = float32(math.NaN())
		}
		return mx, float32(math.NaN())
	}
	for i, v := range logits {
		p[i] = v - mx
	}
	active.exp(p, p)
	var s, sz float64 // Σ e^z and Σ e^z·z with z = logit − max
	for i, e := range p {
		s += float64(e)
		if e != 0 {
			sz += float64(float64(e) * float64(logits[i]-mx))
		}
	}
	inv := float32(1 / s)
	for i := range p {
		p[i] *= inv
	}
	logS := portmath.Log(s)
	// H = log S − Σ p·z.
	return mx + float32(logS), float32(logS - sz/s)
}
