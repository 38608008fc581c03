package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ulpDiff returns |got − want| in units of the float32 spacing at want.
func ulpDiff(got float32, want float64) float64 {
	w := float32(want)
	ulp := math.Nextafter32(float32(math.Abs(float64(w))), float32(math.Inf(1))) - float32(math.Abs(float64(w)))
	if ulp == 0 || math.IsInf(float64(ulp), 0) {
		ulp = math.SmallestNonzeroFloat32
	}
	return math.Abs(float64(got)-want) / float64(ulp)
}

func TestExp(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	xs := []float32{0, -0.0, 1, -1, 0.5, 88, 88.7, 89, 100, -87, -87.5, -100, -103, -104, -200, 200,
		float32(math.Inf(1)), float32(math.Inf(-1))}
	for range 3000 {
		xs = append(xs, float32(r.Float64()*180-90))
	}
	for range 300 {
		xs = append(xs, float32(r.NormFloat64()))
	}
	for _, im := range available() {
		got := make([]float32, len(xs))
		im.exp(got, xs)
		worst := 0.0
		for i, x := range xs {
			want := math.Exp(float64(x))
			switch {
			case want > math.MaxFloat32:
				if !math.IsInf(float64(got[i]), 1) {
					t.Errorf("%s exp(%g) = %g, want +Inf", im.name, x, got[i])
				}
			case want < 0x1p-126: // subnormal range: absolute error
				if math.Abs(float64(got[i])-want) > 4*math.SmallestNonzeroFloat32 {
					t.Errorf("%s exp(%g) = %g, want %g", im.name, x, got[i], want)
				}
			default:
				if d := ulpDiff(got[i], want); d > worst {
					worst = d
				}
			}
		}
		if worst > 3 {
			t.Errorf("%s exp: worst error %.2f ulp, want ≤ 3", im.name, worst)
		}
		nan := []float32{float32(math.NaN())}
		im.exp(nan, nan)
		if nan[0] == nan[0] {
			t.Errorf("%s exp(NaN) = %g, want NaN", im.name, nan[0])
		}
		t.Logf("%s exp: worst %.2f ulp", im.name, worst)
	}
}

func TestSiLUMul(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, im := range available() {
		for _, n := range []int{0, 1, 15, 16, 17, 33, 384, 1000} {
			gate, up := randSlice(r, n), randSlice(r, n)
			for i := range gate {
				gate[i] *= 6
			}
			if n > 3 {
				gate[0], gate[1], gate[2] = -120, 120, 0
			}
			dst := make([]float32, n)
			im.siluMul(dst, gate, up)
			for i := range dst {
				g := float64(gate[i])
				want := g / (1 + math.Exp(-g)) * float64(up[i])
				if math.Abs(float64(dst[i])-want) > 8*u*math.Abs(want)+1e-37 {
					t.Fatalf("%s n=%d: silu(%g)·%g = %g, want %g", im.name, n, gate[i], up[i], dst[i], want)
				}
			}
			sig := make([]float32, n)
			im.sigmoid(sig, gate)
			for i := range sig {
				want := 1 / (1 + math.Exp(-float64(gate[i])))
				if math.Abs(float64(sig[i])-want) > 8*u*want+1e-37 {
					t.Fatalf("%s n=%d: sigmoid(%g) = %g, want %g", im.name, n, gate[i], sig[i], want)
				}
			}
			// In place (dst = gate) gives the same bits.
			in := append([]float32(nil), gate...)
			im.siluMul(in, in, up)
			for i := range in {
				if math.Float32bits(in[i]) != math.Float32bits(dst[i]) {
					t.Fatalf("%s n=%d: in-place result differs at %d", im.name, n, i)
				}
			}
		}
	}
}

func TestRMSNorm(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	for _, n := range []int{1, 7, 128, 256} {
		x, w := randSlice(r, n), randSlice(r, n)
		dst := make([]float32, n)
		inv := RMSNorm(dst, x, w, 1e-5)
		var ss float64
		for _, v := range x {
			ss += float64(v) * float64(v)
		}
		wantInv := 1 / math.Sqrt(ss/float64(n)+1e-5)
		if math.Abs(float64(inv)-wantInv) > 8*u*wantInv {
			t.Fatalf("n=%d: inv %g, want %g", n, inv, wantInv)
		}
		for i := range dst {
			want := float64(w[i]) * float64(x[i]) * wantInv
			if math.Abs(float64(dst[i])-want) > 16*u*math.Abs(want) {
				t.Fatalf("n=%d: dst[%d] = %g, want %g", n, i, dst[i], want)
			}
		}
	}
}

func TestSoftmaxEntropy(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 28))
	inf := float32(math.Inf(-1))
	tests := []struct {
		name   string
		logits []float32
	}{
		{"uniform", []float32{2, 2, 2, 2}},
		{"one", []float32{5}},
		{"masked", []float32{1, inf, 3, inf, 0.5}},
		{"peaked", []float32{100, 0, -100}},
		{"random 64", randSlice(r, 64)},
		{"random 37 scaled", func() []float32 {
			s := randSlice(r, 37)
			for i := range s {
				s[i] *= 10
			}
			return s
		}()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mx := math.Inf(-1)
			for _, v := range tc.logits {
				mx = math.Max(mx, float64(v))
			}
			var s float64
			for _, v := range tc.logits {
				s += math.Exp(float64(v) - mx)
			}
			wantZ := mx + math.Log(s)
			var wantH float64
			wantP := make([]float64, len(tc.logits))
			for i, v := range tc.logits {
				wantP[i] = math.Exp(float64(v) - wantZ)
				if wantP[i] > 0 {
					wantH -= wantP[i] * math.Log(wantP[i])
				}
			}
			p := make([]float32, len(tc.logits))
			logZ, h := SoftmaxEntropy(p, tc.logits)
			if math.Abs(float64(logZ)-wantZ) > 1e-5*(1+math.Abs(wantZ)) {
				t.Errorf("logZ = %g, want %g", logZ, wantZ)
			}
			if math.Abs(float64(h)-wantH) > 1e-5*(1+wantH) {
				t.Errorf("entropy = %g, want %g", h, wantH)
			}
			for i := range p {
				if math.Abs(float64(p[i])-wantP[i]) > 1e-6*(1+wantP[i]) {
					t.Errorf("p[%d] = %g, want %g", i, p[i], wantP[i])
				}
			}
		})
	}
}

func TestActivationPanics(t *testing.T) {
	tests := []struct {
		name string
		f    func()
	}{
		{"silu", func() { SiLUMul(make([]float32, 2), make([]float32, 3), make([]float32, 3)) }},
		{"exp", func() { Exp(make([]float32, 2), make([]float32, 3)) }},
		{"sigmoid", func() { Sigmoid(make([]float32, 2), make([]float32, 3)) }},
		{"rmsnorm", func() { RMSNorm(make([]float32, 3), make([]float32, 3), make([]float32, 2), 1e-5) }},
		{"softmax", func() { SoftmaxEntropy(make([]float32, 2), make([]float32, 3)) }},
		{"softmax in place", func() { x := make([]float32, 3); SoftmaxEntropy(x, x) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("no panic")
				}
			}()
			tc.f()
		})
	}
}

// TestElementwisePositionIndependent checks that the element-wise kernels
// give each element the same bits whatever its position in the slice (body
// or masked tail) and that the SIMD paths agree with each other.
func TestElementwisePositionIndependent(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 30))
	const n = 77
	x, y := randSlice(r, n), randSlice(r, n)
	for i := range x {
		x[i] *= 8
	}
	type result struct{ exp, silu, axpy, sig []float32 }
	compute := func(im *impl, lo, hi int) result {
		var res result
		res.exp = make([]float32, hi-lo)
		im.exp(res.exp, x[lo:hi])
		res.silu = make([]float32, hi-lo)
		im.siluMul(res.silu, x[lo:hi], y[lo:hi])
		res.axpy = append([]float32(nil), y[lo:hi]...)
		im.axpy(-0.37, x[lo:hi], res.axpy)
		res.sig = make([]float32, hi-lo)
		im.sigmoid(res.sig, x[lo:hi])
		return res
	}
	var simdFull *result
	for _, im := range available() {
		full := compute(im, 0, n)
		for _, span := range [][2]int{{0, 1}, {3, 10}, {5, 21}, {8, 16}, {13, 77}, {70, 77}} {
			part := compute(im, span[0], span[1])
			for name, pair := range map[string][2][]float32{"exp": {part.exp, full.exp}, "silu": {part.silu, full.silu}, "axpy": {part.axpy, full.axpy}, "sigmoid": {part.sig, full.sig}} {
				for i, v := range pair[0] {
					if math.Float32bits(v) != math.Float32bits(pair[1][span[0]+i]) {
						t.Fatalf("%s %s: element %d differs in the span %v", im.name, name, span[0]+i, span)
					}
				}
			}
		}
		if im == genericImpl {
			continue
		}
		if simdFull == nil {
			simdFull = &full
			continue
		}
		for i := range full.exp {
			if math.Float32bits(full.exp[i]) != math.Float32bits(simdFull.exp[i]) ||
				math.Float32bits(full.silu[i]) != math.Float32bits(simdFull.silu[i]) ||
				math.Float32bits(full.axpy[i]) != math.Float32bits(simdFull.axpy[i]) ||
				math.Float32bits(full.sig[i]) != math.Float32bits(simdFull.sig[i]) {
				t.Fatalf("%s: element %d differs from the other SIMD path", im.name, i)
			}
		}
	}
}
