package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestStridedMatchesDense checks the strided products against the dense ones
// on copies of the same sub-matrices: bit for bit for NT (the determinism
// contract), within rounding for NN and TN.
func TestStridedMatchesDense(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	for _, sh := range []shape{{1, 5, 32}, {1, 40, 32}, {3, 17, 20}, {6, 70, 33}} {
		m, n, k := sh.m, sh.n, sh.k
		const pad = 7
		lda, ldb, ldc := k+pad, k+2*pad, n+pad
		a, b := randSlice(r, m*lda), randSlice(r, n*ldb)
		c := make([]float32, m*ldc)
		MatMulNTStrided(c, ldc, a, lda, b, ldb, m, n, k, false)
		da, db := make([]float32, m*k), make([]float32, n*k)
		for i := range m {
			copy(da[i*k:], a[i*lda:i*lda+k])
		}
		for j := range n {
			copy(db[j*k:], b[j*ldb:j*ldb+k])
		}
		dc := make([]float32, m*n)
		MatMulNT(testTeam, dc, da, db, m, n, k, false)
		for i := range m {
			for j := range n {
				if math.Float32bits(c[i*ldc+j]) != math.Float32bits(dc[i*n+j]) {
					t.Fatalf("NT %v: (%d,%d) strided %g, dense %g", sh, i, j, c[i*ldc+j], dc[i*n+j])
				}
				if j == 0 && math.Float32bits(c[i*ldc]) != math.Float32bits(Dot(da[i*k:(i+1)*k], db[:k])) {
					t.Fatalf("NT %v: row %d differs from Dot", sh, i)
				}
			}
			if c[i*ldc+n] != 0 {
				t.Fatalf("NT %v: wrote past the row into the stride padding", sh)
			}
		}

		// NN: c[m×n] = a[m×k]·b[k×n] with strides.
		bnn := randSlice(r, k*(n+pad))
		cnn := make([]float32, m*ldc)
		MatMulNNStrided(cnn, ldc, a, lda, bnn, n+pad, m, n, k, false)
		ref, mag := refProduct(nil, m, n, k, false,
			func(i, p int) float32 { return a[i*lda+p] },
			func(p, j int) float32 { return bnn[p*(n+pad)+j] })
		got := make([]float32, m*n)
		for i := range m {
			copy(got[i*n:], cnn[i*ldc:i*ldc+n])
		}
		checkClose(t, "NN strided", got, ref, mag, 2*u*float64(k+4))

		// TN: c[m×n] = a[k×m]ᵀ·b[k×n] with strides.
		atn := randSlice(r, k*(m+pad))
		ctn := make([]float32, m*ldc)
		MatMulTNStrided(ctn, ldc, atn, m+pad, bnn, n+pad, m, n, k, false)
		ref, mag = refProduct(nil, m, n, k, false,
			func(i, p int) float32 { return atn[p*(m+pad)+i] },
			func(p, j int) float32 { return bnn[p*(n+pad)+j] })
		for i := range m {
			copy(got[i*n:], ctn[i*ldc:i*ldc+n])
		}
		checkClose(t, "TN strided", got, ref, mag, 2*u*float64(k+4))
	}
}

func TestStridedPanics(t *testing.T) {
	tests := []struct {
		name string
		f    func()
	}{
		{"stride below row", func() {
			MatMulNTStrided(make([]float32, 4), 2, make([]float32, 9), 2, make([]float32, 9), 3, 2, 2, 3, false)
		}},
		{"short b", func() {
			MatMulNNStrided(make([]float32, 4), 2, make([]float32, 6), 3, make([]float32, 4), 2, 2, 2, 3, false)
		}},
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

func TestWorkers(t *testing.T) {
	tests := []struct {
		sh  shape
		one bool // must stay on the calling goroutine
	}{
		{shape{1, 768, 256}, true},
		{shape{64, 384, 128}, true},
		{shape{64, 768, 256}, true},
		{shape{4096, 384, 128}, false},
	}
	for _, tc := range tests {
		w := workers(testTeam, tc.sh.m, tc.sh.n, tc.sh.k)
		if tc.one && w != 1 {
			t.Errorf("workers%v = %d, want 1", tc.sh, w)
		}
		if w < 1 || w > maxWorkers {
			t.Errorf("workers%v = %d, want 1..%d", tc.sh, w, maxWorkers)
		}
	}
}

// TestNoAllocations checks that the per-token kernels allocate nothing on
// the calling goroutine (they run thousands of times per decoding step).
func TestNoAllocations(t *testing.T) {
	r := rand.New(rand.NewPCG(33, 34))
	a, b, c := randSlice(r, 64*128), randSlice(r, 384*128), make([]float32, 64*384)
	q, scale := make([]int8, 384*128), randSlice(r, 384)
	tests := []struct {
		name string
		f    func()
	}{
		{"MatMulNT 1×384×128", func() { MatMulNT(testTeam, c, a, b, 1, 384, 128, false) }},
		{"MatMulNT 64×384×128", func() { MatMulNT(testTeam, c, a, b, 64, 384, 128, true) }},
		{"MatMulNT 3×5×7", func() { MatMulNT(testTeam, c, a, b, 3, 5, 7, false) }},
		{"MatMulNN 64×128×384", func() { MatMulNN(testTeam, c, c, b, 64, 128, 384, false) }},
		{"MatMulTN 64×128×64", func() { MatMulTN(testTeam, c, a, b, 64, 128, 64, false) }},
		{"MatMulNTInt8 64×384×128", func() { MatMulNTInt8(testTeam, c, a, q, scale, 64, 384, 128, false) }},
		{"MatMulNTStrided", func() { MatMulNTStrided(c, 64, a, 32, b, 128, 1, 64, 32, false) }},
		{"MatMulNNStrided", func() { MatMulNNStrided(c, 32, a, 64, b, 128, 1, 32, 64, false) }},
		{"Dot", func() { Dot(a[:128], b[:128]) }},
		{"Axpy", func() { Axpy(0.5, a[:100], c[:100]) }},
		{"SiLUMul", func() { SiLUMul(c[:384], a[:384], b[:384]) }},
		{"SoftmaxEntropy", func() { SoftmaxEntropy(c[:64], a[:64]) }},
		{"RMSNorm", func() { RMSNorm(c[:128], a[:128], b[:128], 1e-5) }},
	}
	for _, tc := range tests {
		if n := testing.AllocsPerRun(5, tc.f); n != 0 {
			t.Errorf("%s: %v allocations per call, want 0", tc.name, n)
		}
	}
}
