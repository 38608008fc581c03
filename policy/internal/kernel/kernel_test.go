package kernel

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/policy/team"
)

// testTeam runs the split products of the tests: four workers, more than
// the two cores of CI, so that chunks really go to several goroutines.
var testTeam = team.New(4)

// u is the unit roundoff of float32.
const u = 1.0 / (1 << 24)

// shape is one matrix product size.
type shape struct{ m, n, k int }

// modelShapes are sizes the policy uses (tiny and small models; the larger
// ones are left to the benchmarks to keep the suite fast).
var modelShapes = []shape{
	{1, 384, 128}, {1, 128, 384}, {1, 64, 128}, {1, 768, 256}, {3, 384, 128},
	{64, 384, 128}, {16, 128, 384}, {8, 768, 256}, {8, 256, 768}, {64, 64, 256},
	{100, 384, 128},
}

// raggedShapes returns random shapes with m, n, k in 1..67 plus the corner
// cases 0 and the tile sizes ±1.
func raggedShapes(r *rand.Rand, count int) []shape {
	out := []shape{{1, 1, 1}, {4, 4, 16}, {5, 17, 15}, {3, 15, 17}, {16, 16, 32}, {2, 2, 0}, {0, 3, 3}, {3, 0, 3}}
	for range count {
		out = append(out, shape{1 + r.IntN(67), 1 + r.IntN(67), 1 + r.IntN(67)})
	}
	return out
}

func randSlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(r.NormFloat64())
	}
	return s
}

// refProduct computes c (+)= op(a)·op(b) in float64 and the matching sum of
// absolute products, which bounds the rounding error. get reads operand
// elements: ga(i, p) and gb(p, j).
func refProduct(cOld []float32, m, n, k int, acc bool, ga, gb func(x, y int) float32) (ref, mag []float64) {
	ref = make([]float64, m*n)
	mag = make([]float64, m*n)
	for i := range m {
		for j := range n {
			var s, t float64
			if acc {
				s = float64(cOld[i*n+j])
				t = math.Abs(s)
			}
			for p := range k {
				x := float64(ga(i, p)) * float64(gb(p, j))
				s += x
				t += math.Abs(x)
			}
			ref[i*n+j], mag[i*n+j] = s, t
		}
	}
	return ref, mag
}

// checkClose fails unless every c[i] is within bound·mag[i] of ref[i].
func checkClose(t *testing.T, what string, c []float32, ref, mag []float64, bound float64) {
	t.Helper()
	for i := range ref {
		if d := math.Abs(float64(c[i]) - ref[i]); d > bound*mag[i]+1e-30 {
			t.Fatalf("%s: element %d = %g, reference %g (error %g > %g)", what, i, c[i], ref[i], d, bound*mag[i])
		}
	}
}

// fma32Exact is the correctly rounded float32 a·b+c (what VFMADD231PS
// computes), through math/big where the float64 sum is inexact: the
// reference fma32 is checked against.
func fma32Exact(a, b, c float32) float32 {
	p := float64(a) * float64(b) // exact
	s := p + float64(c)
	if s == 0 || math.IsInf(s, 0) || math.IsNaN(s) {
		return float32(s)
	}
	// Exact when the float64 sum had no rounding error (TwoSum).
	bb := s - p
	e := (p - (s - bb)) + (float64(c) - bb)
	if e == 0 {
		return float32(s)
	}
	var x, y, z big.Float
	x.SetFloat64(p)
	y.SetFloat64(float64(c))
	z.SetPrec(2000).Add(&x, &y)
	f, _ := z.Float32()
	return f
}

// specDot is the package's documented 16-lane dot product, with fused
// multiply-adds emulated exactly: the SIMD paths must match it bit for bit.
func specDot(x, y []float32) float32 {
	var s [lanes]float32
	k := len(x)
	for p := 0; p < (k+lanes-1)/lanes*lanes; p++ {
		l := p % lanes
		if p < k {
			s[l] = fma32Exact(x[p], y[p], s[l])
		} else {
			s[l] += 0
		}
	}
	return reduce16(&s)
}

// ntBound is the relative error bound (to the sum of absolute products)
// of MatMulNT's outputs with implementation im: the 16-lane dot product
// adds k/16 + 4 roundings to each product, the generic sequential sum k.
func ntBound(im *impl, k int) float64 {
	if im.name == "generic" {
		return 2 * u * float64(k+6)
	}
	return 2 * u * float64(k/lanes+6)
}

// ntWith runs MatMulNT with a given implementation and goroutine count.
func ntWith(im *impl, w int, c, a, b []float32, m, n, k int, acc bool) {
	run(testTeam, im.nt, c, a, k, k, b, k, m, n, k, acc, w)
}

func simdImpls() []*impl {
	var out []*impl
	for _, im := range available() {
		if im != genericImpl {
			out = append(out, im)
		}
	}
	return out
}

func TestChooseImpl(t *testing.T) {
	best := available()[0]
	tests := []struct {
		override, want string
		warns          bool
	}{
		{"", best.name, false},
		{"generic", "generic", false},
		{best.name, best.name, false},
		{"no-such-path", best.name, true},
	}
	for _, tc := range tests {
		var warn strings.Builder
		if got := chooseImpl(tc.override, &warn).name; got != tc.want {
			t.Errorf("chooseImpl(%q) = %q, want %q", tc.override, got, tc.want)
		}
		if got := warn.Len() > 0; got != tc.warns {
			t.Errorf("chooseImpl(%q) warned %q, want a warning: %v", tc.override, warn.String(), tc.warns)
		}
		if tc.warns && !strings.Contains(warn.String(), tc.override) {
			t.Errorf("warning %q does not name the bad value %q", warn.String(), tc.override)
		}
	}
	if Impl() == "" {
		t.Error("Impl() is empty")
	}
	t.Logf("active implementation: %s; available: %d", Impl(), len(available()))
}

func TestMatMulNTReference(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	shapes := append(raggedShapes(r, 60), modelShapes...)
	for _, im := range available() {
		for _, sh := range shapes {
			for _, acc := range []bool{false, true} {
				m, n, k := sh.m, sh.n, sh.k
				a, b, c := randSlice(r, m*k), randSlice(r, n*k), randSlice(r, m*n)
				cOld := append([]float32(nil), c...)
				ntWith(im, 1, c, a, b, m, n, k, acc)
				ref, mag := refProduct(cOld, m, n, k, acc,
					func(i, p int) float32 { return a[i*k+p] },
					func(p, j int) float32 { return b[j*k+p] })
				checkClose(t, fmt.Sprintf("%s nt %v acc=%v", im.name, sh, acc), c, ref, mag, ntBound(im, k))
			}
		}
	}
}

// TestMatMulNTSpec checks that the SIMD paths compute exactly the documented
// reduction (16 fused lanes, +0 padding, fixed tree, then the old value).
func TestMatMulNTSpec(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	shapes := append(raggedShapes(r, 30), shape{5, 40, 128}, shape{6, 20, 200}, shape{37, 9, 2100})
	for _, im := range simdImpls() {
		for _, sh := range shapes {
			m, n, k := sh.m, sh.n, sh.k
			a, b, c := randSlice(r, m*k), randSlice(r, n*k), randSlice(r, m*n)
			cOld := append([]float32(nil), c...)
			acc := r.IntN(2) == 1
			ntWith(im, 1, c, a, b, m, n, k, acc)
			for i := range m {
				for j := range n {
					want := specDot(a[i*k:i*k+k], b[j*k:j*k+k])
					if acc {
						want += cOld[i*n+j]
					}
					if math.Float32bits(want) != math.Float32bits(c[i*n+j]) {
						t.Fatalf("%s %v acc=%v: c[%d][%d] = %x, spec %x", im.name, sh, acc, i, j,
							math.Float32bits(c[i*n+j]), math.Float32bits(want))
					}
				}
			}
			if k > 0 && m > 0 && n > 0 {
				x, y := a[:k], b[:k]
				if got, want := im.dot(x, y), specDot(x, y); math.Float32bits(got) != math.Float32bits(want) {
					t.Fatalf("%s dot k=%d = %x, spec %x", im.name, k, math.Float32bits(got), math.Float32bits(want))
				}
			}
		}
	}
}

// TestMatMulNTBatchIndependence asserts the determinism contract exactly:
// row i of a batch product equals the single-row product of that row, and
// column j does not depend on the other columns, the tile position or the
// number of goroutines.
func TestMatMulNTBatchIndependence(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n, k = 70, 131
	const maxM = 67
	a, b := randSlice(r, maxM*k), randSlice(r, n*k)
	base := randSlice(r, maxM*n)
	for _, im := range available() {
		for _, acc := range []bool{false, true} {
			// The single-row products are the reference.
			single := make([]float32, maxM*n)
			copy(single, base)
			for i := range maxM {
				ntWith(im, 1, single[i*n:(i+1)*n], a[i*k:(i+1)*k], b, 1, n, k, acc)
			}
			for _, m := range []int{1, 2, 3, 4, 5, 7, 8, 13, 16, 33, 64, 67} {
				for _, w := range []int{1, 2, 3, 5} {
					for _, i0 := range []int{0, maxM - m} {
						c := append([]float32(nil), base[i0*n:(i0+m)*n]...)
						ntWith(im, w, c, a[i0*k:(i0+m)*k], b, m, n, k, acc)
						for x := range c {
							if math.Float32bits(c[x]) != math.Float32bits(single[i0*n+x]) {
								t.Fatalf("%s acc=%v m=%d w=%d rows from %d: element (%d,%d) = %g, single-row %g",
									im.name, acc, m, w, i0, x/n, x%n, c[x], single[i0*n+x])
							}
						}
					}
				}
			}
			// A subset of the columns (other n, other tile positions).
			for _, j0 := range []int{0, 1, 5, 17, 33} {
				for _, nn := range []int{1, 2, 7, 16, 19, n - j0} {
					if j0+nn > n {
						continue
					}
					const m = 9
					c := make([]float32, m*nn)
					for i := range m {
						copy(c[i*nn:(i+1)*nn], base[i*n+j0:i*n+j0+nn])
					}
					ntWith(im, 1, c, a, b[j0*k:(j0+nn)*k], m, nn, k, acc)
					for i := range m {
						for j := range nn {
							if math.Float32bits(c[i*nn+j]) != math.Float32bits(single[i*n+j0+j]) {
								t.Fatalf("%s acc=%v columns %d..%d: (%d,%d) differs", im.name, acc, j0, j0+nn, i, j)
							}
						}
					}
				}
			}
		}
	}
}

// TestSIMDMatchesGeneric compares every SIMD kernel with the pure-Go one.
func TestSIMDMatchesGeneric(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, im := range simdImpls() {
		for _, sh := range append(raggedShapes(r, 20), modelShapes[:4]...) {
			m, n, k := sh.m, sh.n, sh.k
			bound := 2 * u * float64(k/lanes+k+6)
			for name, pair := range map[string][2]matFunc{"nt": {im.nt, genericImpl.nt}, "nn": {im.nn, genericImpl.nn}, "tn": {im.tn, genericImpl.tn}} {
				a, b := randSlice(r, m*k), randSlice(r, n*k)
				lda, ldb := k, k
				switch name {
				case "nn":
					ldb = n
				case "tn":
					lda, ldb = m, n
				}
				c1, c2 := make([]float32, m*n), make([]float32, m*n)
				pair[0](c1, n, a, lda, b, ldb, m, n, k, false)
				pair[1](c2, n, a, lda, b, ldb, m, n, k, false)
				for x := range c1 {
					if d := math.Abs(float64(c1[x] - c2[x])); d > bound*float64(k+1)*4 {
						t.Fatalf("%s %s %v: element %d = %g, generic %g", im.name, name, sh, x, c1[x], c2[x])
					}
				}
			}
			x, y := randSlice(r, k), randSlice(r, k)
			if d, g := im.dot(x, y), genericImpl.dot(x, y); math.Abs(float64(d-g)) > bound*float64(k+1)*4 {
				t.Fatalf("%s dot k=%d: %g, generic %g", im.name, k, d, g)
			}
			y1, y2 := append([]float32(nil), y...), append([]float32(nil), y...)
			im.axpy(0.7, x, y1)
			genericImpl.axpy(0.7, x, y2)
			for i := range y1 {
				if math.Abs(float64(y1[i]-y2[i])) > 4*u*(math.Abs(float64(y2[i]))+math.Abs(float64(x[i]))) {
					t.Fatalf("%s axpy n=%d element %d: %g, generic %g", im.name, k, i, y1[i], y2[i])
				}
			}
			copy(y1, y2)
			im.scale(-1.5, y1)
			genericImpl.scale(-1.5, y2)
			for i := range y1 {
				if math.Float32bits(y1[i]) != math.Float32bits(y2[i]) {
					t.Fatalf("%s scale n=%d element %d: %g, generic %g", im.name, k, i, y1[i], y2[i])
				}
			}
		}
	}
}

func TestMatMulNNAndTNReference(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	shapes := append(raggedShapes(r, 40), shape{64, 128, 384}, shape{384, 128, 64}, shape{130, 70, 300}, shape{1, 70, 50}, shape{1, 32, 64}, shape{1, 130, 3})
	for _, im := range available() {
		for _, sh := range shapes {
			for _, acc := range []bool{false, true} {
				m, n, k := sh.m, sh.n, sh.k
				bound := 2 * u * float64(k+4)
				a, b, c := randSlice(r, m*k), randSlice(r, k*n), randSlice(r, m*n)
				cOld := append([]float32(nil), c...)
				run(testTeam, im.nn, c, a, k, k, b, n, m, n, k, acc, 1)
				ref, mag := refProduct(cOld, m, n, k, acc,
					func(i, p int) float32 { return a[i*k+p] },
					func(p, j int) float32 { return b[p*n+j] })
				checkClose(t, fmt.Sprintf("%s nn %v acc=%v", im.name, sh, acc), c, ref, mag, bound)

				copy(c, cOld)
				run(testTeam, im.tn, c, a, 1, m, b, n, m, n, k, acc, 1)
				ref, mag = refProduct(cOld, m, n, k, acc,
					func(i, p int) float32 { return a[p*m+i] },
					func(p, j int) float32 { return b[p*n+j] })
				checkClose(t, fmt.Sprintf("%s tn %v acc=%v", im.name, sh, acc), c, ref, mag, bound)
			}
		}
	}
}

// TestMatMulNNAndTNDeterministic checks that the goroutine split does not
// change any bit of the training products.
func TestMatMulNNAndTNDeterministic(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, im := range available() {
		for _, sh := range []shape{{67, 45, 33}, {5, 100, 70}, {200, 40, 64}} {
			m, n, k := sh.m, sh.n, sh.k
			a, b := randSlice(r, m*k), randSlice(r, k*n)
			for _, tc := range []struct {
				name           string
				f              matFunc
				aRow, lda, ldb int
			}{{"nn", im.nn, k, k, n}, {"tn", im.tn, 1, m, n}} {
				want := make([]float32, m*n)
				run(testTeam, tc.f, want, a, tc.aRow, tc.lda, b, tc.ldb, m, n, k, false, 1)
				for _, w := range []int{2, 3, 7} {
					got := make([]float32, m*n)
					run(testTeam, tc.f, got, a, tc.aRow, tc.lda, b, tc.ldb, m, n, k, false, w)
					for x := range got {
						if math.Float32bits(got[x]) != math.Float32bits(want[x]) {
							t.Fatalf("%s %s %v with %d goroutines: element %d differs", im.name, tc.name, sh, w, x)
						}
					}
				}
			}
		}
	}
}

func TestDotMatchesMatMulNT(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	for _, im := range available() {
		for k := 0; k <= 70; k++ {
			x, y := randSlice(r, k), randSlice(r, k)
			var c [1]float32
			ntWith(im, 1, c[:], x, y, 1, 1, k, false)
			if d := im.dot(x, y); math.Float32bits(d) != math.Float32bits(c[0]) {
				t.Fatalf("%s k=%d: Dot %g, MatMulNT %g", im.name, k, d, c[0])
			}
		}
	}
}

func TestPanicsOnShortSlices(t *testing.T) {
	tests := []struct {
		name string
		f    func()
	}{
		{"nt short c", func() { MatMulNT(testTeam, make([]float32, 5), make([]float32, 6), make([]float32, 6), 2, 3, 3, false) }},
		{"nn short b", func() { MatMulNN(testTeam, make([]float32, 6), make([]float32, 6), make([]float32, 5), 2, 3, 3, false) }},
		{"tn short a", func() { MatMulTN(testTeam, make([]float32, 6), make([]float32, 5), make([]float32, 9), 2, 3, 3, false) }},
		{"dot lengths", func() { Dot(make([]float32, 2), make([]float32, 3)) }},
		{"axpy lengths", func() { Axpy(1, make([]float32, 2), make([]float32, 3)) }},
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

// FuzzMatMulNT checks the active MatMulNT on arbitrary shapes against the
// float64 reference and the single-row products (batch independence).
func FuzzMatMulNT(f *testing.F) {
	f.Add(uint8(1), uint8(1), uint8(1), uint64(1), false)
	f.Add(uint8(5), uint8(17), uint8(33), uint64(2), true)
	f.Add(uint8(64), uint8(70), uint8(128), uint64(3), false)
	f.Fuzz(func(t *testing.T, mm, nn, kk uint8, seed uint64, acc bool) {
		m, n, k := int(mm)%80, int(nn)%80, int(kk)
		r := rand.New(rand.NewPCG(seed, 99))
		a, b, c := randSlice(r, m*k), randSlice(r, n*k), randSlice(r, m*n)
		cOld := append([]float32(nil), c...)
		MatMulNT(testTeam, c, a, b, m, n, k, acc)
		ref, mag := refProduct(cOld, m, n, k, acc,
			func(i, p int) float32 { return a[i*k+p] },
			func(p, j int) float32 { return b[j*k+p] })
		checkClose(t, fmt.Sprintf("nt m=%d n=%d k=%d", m, n, k), c, ref, mag, ntBound(active, k))
		for i := range m {
			row := append([]float32(nil), cOld[i*n:(i+1)*n]...)
			MatMulNT(testTeam, row, a[i*k:(i+1)*k], b, 1, n, k, acc)
			for j := range n {
				if math.Float32bits(row[j]) != math.Float32bits(c[i*n+j]) {
					t.Fatalf("m=%d n=%d k=%d: (%d,%d) batch %g, single row %g", m, n, k, i, j, c[i*n+j], row[j])
				}
			}
		}
	})
}

// The row split keeps both goroutines busy on the model's shapes: no chunk
// is more than 4/3 of the last one, and the chunks cover the rows.
func TestSplitChunkIsBalanced(t *testing.T) {
	for _, tc := range []struct{ m, w int }{{128, 2}, {256, 2}, {384, 2}, {768, 2}, {4096, 2}, {8192, 2}, {130, 2}, {200, 3}, {1000, 8}} {
		chunk := splitChunk(tc.m, tc.w)
		n := (tc.m + chunk - 1) / chunk
		last := tc.m - (n-1)*chunk
		if n > tc.w || 4*last < 3*chunk && n > 1 {
			t.Errorf("m=%d w=%d: chunk %d gives %d chunks, the last of %d rows", tc.m, tc.w, chunk, n, last)
		}
	}
}

// TestGenericNTSpec checks that the pure-Go MatMulNT computes exactly its
// documented sums (the 16-lane dot product with fused multiply-adds, then
// the old value) on every shape, and that Dot equals it.
func TestGenericNTSpec(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	seq := specDot
	for _, sh := range append(raggedShapes(r, 40), shape{7, 13, 130}, shape{1, 385, 128}, shape{64, 384, 128},
		shape{2, 128, 64}, shape{3, 64, 128}, shape{5, 7, 9}, shape{1, 130, 17}, shape{2, 4, 3}) {
		m, n, k := sh.m, sh.n, sh.k
		a, b, c := randSlice(r, m*k), randSlice(r, n*k), randSlice(r, m*n)
		cOld := append([]float32(nil), c...)
		acc := r.IntN(2) == 1
		ntWith(genericImpl, 1, c, a, b, m, n, k, acc)
		for i := range m {
			for j := range n {
				want := seq(a[i*k:i*k+k], b[j*k:j*k+k])
				if dot := genericImpl.dot(a[i*k:i*k+k], b[j*k:j*k+k]); math.Float32bits(dot) != math.Float32bits(want) {
					t.Fatalf("generic dot %v (%d,%d) = %x, spec %x", sh, i, j, math.Float32bits(dot), math.Float32bits(want))
				}
				if acc {
					want += cOld[i*n+j]
				}
				if math.Float32bits(want) != math.Float32bits(c[i*n+j]) {
					t.Fatalf("generic %v acc=%v: c[%d][%d] = %x, spec %x", sh, acc, i, j, math.Float32bits(c[i*n+j]), math.Float32bits(want))
				}
			}
		}
	}
}

// MVTile's contract: a single-row product of n < MVTile columns has the
// bits of the first n columns of the product of MVTile columns, on every
// path, for the head widths of the engine's attention.
func TestMVTileColumns(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for _, im := range available() {
		withImpl(im, func() {
			tile := MVTile()
			for _, k := range []int{16, 24, 32, 64} {
				a, b := randSlice(r, k), randSlice(r, tile*k)
				all := make([]float32, tile)
				MatMulNTStrided(all, tile, a, k, b, k, 1, tile, k, false)
				for n := 1; n < tile; n++ {
					some := make([]float32, n)
					MatMulNTStrided(some, n, a, k, b, k, 1, n, k, false)
					for j := range some {
						if math.Float32bits(some[j]) != math.Float32bits(all[j]) {
							t.Fatalf("%s k=%d: column %d of %d = %g, of %d: %g", im.name, k, j, n, some[j], tile, all[j])
						}
					}
				}
			}
		})
	}
}
