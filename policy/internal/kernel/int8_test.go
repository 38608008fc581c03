package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func randInt8(r *rand.Rand, n int) []int8 {
	q := make([]int8, n)
	for i := range q {
		q[i] = int8(r.IntN(255) - 127)
	}
	return q
}

// specDotI8 is specDot with int8 y.
func specDotI8(x []float32, y []int8) float32 {
	yf := make([]float32, len(y))
	for i, v := range y {
		yf[i] = float32(v)
	}
	return specDot(x, yf)
}

// TestMatMulNTInt8 checks every implementation against a float64 reference,
// the SIMD ones bit for bit against the documented reduction, and batch
// independence (row i of a batch equals the single-row product).
func TestMatMulNTInt8(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	shapes := append(raggedShapes(r, 25), shape{1, 384, 128}, shape{64, 384, 128}, shape{5, 40, 131}, shape{37, 9, 2100}, shape{1, 17, 33})
	for _, im := range available() {
		for _, sh := range shapes {
			m, n, k := sh.m, sh.n, sh.k
			a, q, scale := randSlice(r, m*k), randInt8(r, n*k), randSlice(r, n)
			for j := range scale {
				scale[j] = float32(math.Abs(float64(scale[j]))) / 127
			}
			acc := r.IntN(2) == 1
			c := randSlice(r, m*n)
			cOld := append([]float32(nil), c...)
			im.ntI8(c, n, a, k, q, k, scale, m, n, k, acc)
			what := fmt.Sprintf("%s int8 %v acc=%v", im.name, sh, acc)

			ref, mag := refProduct(cOld, m, n, k, acc,
				func(i, p int) float32 { return a[i*k+p] },
				func(p, j int) float32 { return float32(q[j*k+p]) * scale[j] })
			checkClose(t, what, c, ref, mag, 2*u*float64(k/lanes+8))

			for i := range m {
				row := append([]float32(nil), cOld[i*n:(i+1)*n]...)
				im.ntI8(row, n, a[i*k:(i+1)*k], k, q, k, scale, 1, n, k, acc)
				for j := range n {
					if math.Float32bits(row[j]) != math.Float32bits(c[i*n+j]) {
						t.Fatalf("%s: (%d,%d) batch %g, single row %g", what, i, j, c[i*n+j], row[j])
					}
					if im.name != "avx512" || k > 300 { // only AVX-512 has a SIMD int8 kernel
						continue
					}
					want := specDotI8(a[i*k:(i+1)*k], q[j*k:(j+1)*k]) * scale[j]
					if acc {
						want += cOld[i*n+j]
					}
					if math.Float32bits(want) != math.Float32bits(c[i*n+j]) {
						t.Fatalf("%s: (%d,%d) = %g, spec %g", what, i, j, c[i*n+j], want)
					}
				}
			}
		}
	}
}

func TestMatMulNTInt8Split(t *testing.T) {
	r := rand.New(rand.NewPCG(43, 44))
	const m, n, k = 300, 40, 64
	a, q, scale := randSlice(r, m*k), randInt8(r, n*k), randSlice(r, n)
	want := make([]float32, m*n)
	MatMulNTInt8(testTeam, want, a, q, scale, m, n, k, false)
	for _, w := range []int{2, 3} {
		got := make([]float32, m*n)
		splitRows(testTeam, m, w, func(lo, hi int) {
			active.ntI8(got[lo*n:], n, a[lo*k:], k, q, k, scale, hi-lo, n, k, false)
		})
		for x := range got {
			if math.Float32bits(got[x]) != math.Float32bits(want[x]) {
				t.Fatalf("%d goroutines: element %d differs", w, x)
			}
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("no panic on a short scale")
		}
	}()
	MatMulNTInt8(testTeam, want, a, q, scale[:n-1], m, n, k, false)
}
