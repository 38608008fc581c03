package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// sameBits reports the first element where got and want differ in bits
// (NaNs of any payload count as equal).
func sameBits(got, want []float32) error {
	for i := range want {
		g, w := got[i], want[i]
		if math.Float32bits(g) != math.Float32bits(w) && !(g != g && w != w) {
			return fmt.Errorf("element %d = %g (%#x), generic %g (%#x)", i, g, math.Float32bits(g), w, math.Float32bits(w))
		}
	}
	return nil
}

// TestGenericBitsEqualSIMD checks that the pure-Go kernels (those of CPUs
// without AVX2 or NEON) give the bits of every SIMD path of this CPU (the
// AVX2 and AVX-512 ones on amd64, the NEON ones on arm64: run it there
// with GOARCH=arm64 go test -exec qemu-aarch64-static) on random shapes
// with ragged tails, for every kernel of an implementation: the products
// with and without acc, Dot, Axpy, Scale, Exp, Sigmoid, SiLUMul and the
// int8-weight product (TestMatMulNTW8A8 checks the W8A8 ones).
func TestGenericBitsEqualSIMD(t *testing.T) {
	impls := simdImpls()
	if len(impls) == 0 {
		t.Skip("this CPU has no SIMD path to compare with")
	}
	r := rand.New(rand.NewPCG(33, 34))
	shapes := append(raggedShapes(r, 30), shape{1, 1, 1}, shape{3, 5, 17}, shape{5, 7, 31}, shape{64, 48, 130}, shape{130, 70, 300}, shape{3, 33, 0}, shape{6, 35, 530},
		shape{487, 130, 300}, // rows over many row tiles, k over two k blocks
		shape{9, 32, 300})    // the 8×32 tiles' unmasked loop over two k blocks
	g := genericImpl
	for _, im := range impls {
		for _, sh := range shapes {
			m, n, k := sh.m, sh.n, sh.k
			for _, acc := range []bool{false, true} {
				for name, pair := range map[string][2]matFunc{"nt": {im.nt, g.nt}, "nn": {im.nn, g.nn}, "tn": {im.tn, g.tn}} {
					a, b := randSlice(r, m*k), randSlice(r, n*k)
					lda, ldb := k, k
					switch name {
					case "nn":
						ldb = n
					case "tn":
						lda, ldb = m, n
					}
					c1 := randSlice(r, m*n)
					c2 := append([]float32(nil), c1...)
					pair[0](c1, n, a, lda, b, ldb, m, n, k, acc)
					pair[1](c2, n, a, lda, b, ldb, m, n, k, acc)
					if err := sameBits(c1, c2); err != nil {
						t.Fatalf("%s %s %v acc=%v: %v", im.name, name, sh, acc, err)
					}
				}
				a := randSlice(r, m*k)
				q := make([]int8, n*k)
				for i := range q {
					q[i] = int8(r.IntN(255) - 127)
				}
				scale := randSlice(r, n)
				c1 := randSlice(r, m*n)
				c2 := append([]float32(nil), c1...)
				im.ntI8(c1, n, a, k, q, k, scale, m, n, k, acc)
				g.ntI8(c2, n, a, k, q, k, scale, m, n, k, acc)
				if err := sameBits(c1, c2); err != nil {
					t.Fatalf("%s ntI8 %v acc=%v: %v", im.name, sh, acc, err)
				}
			}
			x, y := randSlice(r, k), randSlice(r, k)
			if d, e := im.dot(x, y), g.dot(x, y); math.Float32bits(d) != math.Float32bits(e) {
				t.Fatalf("%s dot k=%d: %g, generic %g", im.name, k, d, e)
			}
			y1, y2 := append([]float32(nil), y...), append([]float32(nil), y...)
			im.axpy(0.7, x, y1)
			g.axpy(0.7, x, y2)
			if err := sameBits(y1, y2); err != nil {
				t.Fatalf("%s axpy n=%d: %v", im.name, k, err)
			}
			im.scale(-0.3, y1)
			g.scale(-0.3, y2)
			if err := sameBits(y1, y2); err != nil {
				t.Fatalf("%s scale n=%d: %v", im.name, k, err)
			}
			// Activations over the range where exp neither overflows nor
			// flushes, and beyond it.
			z := make([]float32, k)
			for i := range z {
				z[i] = float32(r.NormFloat64() * 30)
			}
			up := randSlice(r, k)
			for fname, f := range map[string][2]func(dst, x []float32){
				"exp":     {im.exp, g.exp},
				"sigmoid": {im.sigmoid, g.sigmoid},
				"siluMul": {func(d, x []float32) { im.siluMul(d, x, up) }, func(d, x []float32) { g.siluMul(d, x, up) }},
			} {
				d1, d2 := make([]float32, k), make([]float32, k)
				f[0](d1, z)
				f[1](d2, z)
				if err := sameBits(d1, d2); err != nil {
					t.Fatalf("%s %s n=%d: %v", im.name, fname, k, err)
				}
			}
		}
	}
}
