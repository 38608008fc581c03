package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// bf16Ref is c(+)= A·B in float64 from the bfloat16-rounded operands, with
// A(i, p) = a[i·ai+p·ap] and B(p, j) = b[p·bp+j·bj], and the bound of the
// float32 accumulation's error, Σ|A·B| · 2⁻²⁰ (k ≤ 2¹⁰ roundings of 2⁻²⁴,
// generous).
func bf16Ref(c []float64, bound []float64, a []float32, ai, ap int, b []float32, bp, bj int, m, n, k int) {
	r := func(x float32) float64 { return float64(fromBF16(toBF16(x))) }
	for i := 0; i < m; i++ {
		for j := 0; j < n; j++ {
			var s, abs float64
			for p := 0; p < k; p++ {
				v := r(a[i*ai+p*ap]) * r(b[p*bp+j*bj])
				s += v
				abs += math.Abs(v)
			}
			c[i*n+j] += s
			bound[i*n+j] = abs * math.Ldexp(1, -20)
		}
	}
}

// TestBF16Products checks the three BF16 products against a float64
// reference on the rounded operands, for ragged shapes (odd k, rows not a
// multiple of 6, columns not of 64), with and without accumulation, and
// that they are within bfloat16's rounding of the float32 products.
func TestBF16Products(t *testing.T) {
	if !HasBF16() {
		t.Log("no AVX512_BF16 here: the BF16 products are the float32 ones")
	}
	rng := rand.New(rand.NewPCG(8, 9))
	fill := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64())
		}
		return v
	}
	for _, sh := range []struct{ m, n, k int }{
		{1, 1, 1}, {5, 7, 3}, {6, 64, 2}, {13, 70, 9}, {7, 130, 600}, {200, 96, 128}, {300, 200, 64},
	} {
		for _, acc := range []bool{false, true} {
			m, n, k := sh.m, sh.n, sh.k
			a1, b1 := fill(m*k), fill(n*k) // NT: a [m×k], b [n×k]
			a2, b2 := fill(m*k), fill(k*n) // NN: a [m×k], b [k×n]
			a3, b3 := fill(k*m), fill(k*n) // TN: a [k×m], b [k×n]
			for _, pr := range []struct {
				name   string
				run    func(c []float32, s []float32)
				f32    func(c []float32)
				a      []float32
				ai, ap int
				b      []float32
				bp, bj int
			}{
				{"NT", func(c, s []float32) { MatMulNTBF16(testTeam, c, a1, b1, m, n, k, acc, s) }, func(c []float32) { MatMulNT(testTeam, c, a1, b1, m, n, k, acc) }, a1, k, 1, b1, 1, k},
				{"NN", func(c, s []float32) { MatMulNNBF16(testTeam, c, a2, b2, m, n, k, acc, s) }, func(c []float32) { MatMulNN(testTeam, c, a2, b2, m, n, k, acc) }, a2, k, 1, b2, n, 1},
				{"TN", func(c, s []float32) { MatMulTNBF16(testTeam, c, a3, b3, m, n, k, acc, s) }, func(c []float32) { MatMulTN(testTeam, c, a3, b3, m, n, k, acc) }, a3, 1, m, b3, n, 1},
			} {
				init := fill(m * n)
				c, c32 := append([]float32(nil), init...), append([]float32(nil), init...)
				pr.run(c, make([]float32, BF16Scratch(m, n, k)))
				pr.f32(c32)
				ref, bound := make([]float64, m*n), make([]float64, m*n)
				if acc {
					for i, v := range init {
						ref[i] = float64(v)
					}
				}
				bf16Ref(ref, bound, pr.a, pr.ai, pr.ap, pr.b, pr.bp, pr.bj, m, n, k)
				for i := range c {
					if !HasBF16() {
						if c[i] != c32[i] {
							t.Fatalf("%s %v acc=%v: [%d] = %v, float32 product %v", pr.name, sh, acc, i, c[i], c32[i])
						}
						continue
					}
					if d := math.Abs(float64(c[i]) - ref[i]); d > bound[i]+1e-6*math.Abs(ref[i]) {
						t.Fatalf("%s %v acc=%v: [%d] = %v, reference %v (bound %v)", pr.name, sh, acc, i, c[i], ref[i], bound[i])
					}
					// bfloat16 keeps 8 significant bits: each product is
					// within 2⁻⁷ of its float32 value.
					if d := math.Abs(float64(c[i] - c32[i])); d > math.Ldexp(1, -7)*(bound[i]*math.Ldexp(1, 20))+1e-4 {
						t.Fatalf("%s %v acc=%v: [%d] = %v, float32 product %v", pr.name, sh, acc, i, c[i], c32[i])
					}
				}
			}
		}
	}
}

// TestBF16SplitIndependence checks that an output's bits do not depend on
// how the rows are split over goroutines, nor on the other rows.
func TestBF16SplitIndependence(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	const m, n, k = 300, 100, 1000 // several k blocks, a parallel split
	a, b := make([]float32, m*k), make([]float32, n*k)
	for i := range a {
		a[i] = rng.Float32() - 0.5
	}
	for i := range b {
		b[i] = rng.Float32() - 0.5
	}
	whole := make([]float32, m*n)
	MatMulNTBF16(testTeam, whole, a, b, m, n, k, false, make([]float32, BF16Scratch(m, n, k)))
	for _, rows := range [][2]int{{0, 1}, {7, 19}, {250, 300}} {
		lo, hi := rows[0], rows[1]
		part := make([]float32, (hi-lo)*n)
		MatMulNTBF16(testTeam, part, a[lo*k:], b, hi-lo, n, k, false, make([]float32, BF16Scratch(hi-lo, n, k)))
		for i := range part {
			if math.Float32bits(part[i]) != math.Float32bits(whole[lo*n+i]) {
				t.Fatalf("rows %d..%d: [%d] = %v, whole product %v", lo, hi, i, part[i], whole[lo*n+i])
			}
		}
	}
}

// TestToBF16 checks the rounding: nearest, ties to even, NaN kept.
func TestToBF16(t *testing.T) {
	for _, tc := range []struct {
		in   uint32
		want uint32
	}{
		{0x3f800000, 0x3f80}, // 1
		{0x3f808000, 0x3f80}, // tie, even stays
		{0x3f818000, 0x3f82}, // tie, odd rounds up
		{0x3f808001, 0x3f81}, // above the tie
		{0x7f7fffff, 0x7f80}, // max float32 rounds to +Inf
		{0x80000000, 0x8000}, // −0
	} {
		if got := toBF16(math.Float32frombits(tc.in)); got != tc.want {
			t.Errorf("toBF16(%#x) = %#x, want %#x", tc.in, got, tc.want)
		}
	}
	if got := fromBF16(toBF16(float32(math.NaN()))); !math.IsNaN(float64(got)) {
		t.Errorf("NaN became %v", got)
	}
}

// TestBF16PackMatchesGo checks the packing (vectorised where the CPU runs
// the BF16 products natively) against the Go reference bit for bit, ties,
// NaNs, infinities and ragged lengths included.
func TestBF16PackMatchesGo(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	special := []uint32{0x3f808000, 0x3f818000, 0x7f800000, 0xff800000, 0x7f800001, 0x7fc00000, 0xffffffff, 0x7f7fffff, 0x80000000, 0x00000001}
	for _, sh := range []struct{ rows, cols int }{{3, 16}, {5, 37}, {4, 64}, {7, 15}, {2, 1}} {
		x := make([]float32, sh.rows*sh.cols)
		for i := range x {
			if i%5 == 0 {
				x[i] = math.Float32frombits(special[rng.IntN(len(special))])
			} else {
				x[i] = float32(rng.NormFloat64())
			}
		}
		kp := (sh.cols + 1) / 2
		got, want := make([]uint32, sh.rows*kp), make([]uint32, sh.rows*kp)
		packAlong(got, x, sh.cols, 0, sh.rows, sh.cols)
		packAlongGo(want, x, sh.cols, 0, sh.rows, sh.cols)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("along %v: word %d = %#x, want %#x", sh, i, got[i], want[i])
			}
		}
		// Across: x as [k = rows] × [n = cols].
		qp := (sh.rows + 1) / 2
		got, want = make([]uint32, qp*sh.cols), make([]uint32, qp*sh.cols)
		packAcross(got, x, sh.cols, 0, qp, sh.rows, sh.cols)
		packAcrossGo(want, x, sh.cols, 0, qp, sh.rows, sh.cols)
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("across %v: word %d = %#x, want %#x", sh, i, got[i], want[i])
			}
		}
	}
}
