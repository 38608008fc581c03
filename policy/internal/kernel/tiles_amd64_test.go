//go:build !purego

package kernel

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/rollout-rl/rollout/policy/cputime"
)

// BenchmarkTileEfficiency runs the AVX-512 products on the calling
// goroutine alone (no split), on shapes whose operands fit the L1 cache
// ("_l1") and on W3's training shapes, in GFLOP/s per CPU-second: set
// against BenchmarkFLOPBound's one-core peak, it separates what the tiles
// themselves lose (the L1 shapes) from what the caches and the split over
// cores lose (the training shapes here, and BenchmarkMatMulNN and the like
// with their split).
func BenchmarkTileEfficiency(b *testing.B) {
	if !slices.Contains(available(), avx512Impl) {
		b.Skip("the CPU lacks AVX-512")
	}
	for _, c := range []struct {
		op      string // nt, nn or tn
		f       matFunc
		m, n, k int
	}{
		{"nn_l1", nnAVX512, 24, 64, 64},
		{"nn_l1", nnAVX512, 12, 64, 256},
		{"nn", nnAVX512, 4096, 128, 384},
		{"tn_l1", tnAVX512, 24, 64, 64},
		{"tn", tnAVX512, 384, 128, 4096},
		{"nt_l1", ntAVX512, 16, 32, 128},
		{"nt", ntAVX512, 4096, 384, 128},
		{"nt", ntAVX512, 4096, 128, 384},
		// The lane-pass kernel against the 4×4 tiles alone (nt4x4) on the
		// shapes it runs: its panel in L1 ("_l1": a few row tiles), W3
		// tiny's forward products and small's at k = 256.
		{"nt_l1", ntAVX512, 48, 64, 128},
		{"nt4x4_l1", nt4x4Only, 48, 64, 128},
		{"nt", ntAVX512, 4096, 128, 128},
		{"nt4x4", nt4x4Only, 4096, 128, 128},
		{"nt4x4", nt4x4Only, 4096, 384, 128},
		{"nt", ntAVX512, 4096, 768, 256},
		{"nt4x4", nt4x4Only, 4096, 768, 256},
	} {
		b.Run(fmt.Sprintf("%s/%dx%dx%d", c.op, c.m, c.n, c.k), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			a, bb, cc := randSlice(r, c.m*c.k), randSlice(r, c.n*c.k), make([]float32, c.m*c.n)
			lda, ldb := c.k, c.k // nt: a[m×k], b[n×k]
			switch c.op[:2] {
			case "nn": // a[m×k], b[k×n]
				ldb = c.n
			case "tn": // a[k×m], b[k×n]
				lda, ldb = c.m, c.n
			}
			cpu0 := cputime.Process()
			for b.Loop() {
				c.f(cc, c.n, a, lda, bb, ldb, c.m, c.n, c.k, false)
			}
			if cpu := cputime.Process() - cpu0; cpu > 0 {
				b.ReportMetric(2*float64(c.m*c.n*c.k)*float64(b.N)/cpu.Seconds()/1e9, "GFLOP/s-cpu")
			}
		})
	}
}

// BenchmarkSubnormalOperands runs the backward products' kernel (NN, on
// the calling goroutine) at one of W3's shapes twice: with the left operand
// drawn as in the other benchmarks, and with a share of its rows scaled
// into the subnormal range (below 2^-126), as the gradient rows of tokens
// a trained model predicts with confidence are (their softmax
// probabilities underflow). The products do the same FLOPs; the difference
// in GFLOP/s per CPU-second is what the CPU's handling of subnormal
// operands costs (on x86 a microcode assist per operation unless MXCSR's
// DAZ and FTZ bits are set, which the kernels leave clear: flushing would
// change the bits).
func BenchmarkSubnormalOperands(b *testing.B) {
	if !slices.Contains(available(), avx512Impl) {
		b.Skip("the CPU lacks AVX-512")
	}
	const m, n, k = 512, 128, 384
	for _, share := range []float64{0, 0.25, 0.5, 1} {
		b.Run(fmt.Sprintf("nn/%dx%dx%d/subnormal_rows=%.2f", m, n, k, share), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			a, bb, cc := randSlice(r, m*k), randSlice(r, k*n), make([]float32, m*n)
			for i := 0; i < int(share*m); i++ {
				for p := range k {
					a[i*k+p] *= 1e-39 // subnormal: |x| < 2^-126 ≈ 1.18e-38
				}
			}
			cpu0 := cputime.Process()
			for b.Loop() {
				nnAVX512(cc, n, a, k, bb, n, m, n, k, false)
			}
			if cpu := cputime.Process() - cpu0; cpu > 0 {
				b.ReportMetric(2*float64(m*n*k)*float64(b.N)/cpu.Seconds()/1e9, "GFLOP/s-cpu")
			}
		})
	}
}

// nt4x4Only is ntAVX512 with the 4×4 tiles on every shape (no lane passes).
func nt4x4Only(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	ntDriveAVX512(c, ldc, a, lda, m, n, k, acc, ntB{base: unsafe.Pointer(&b[0]), rowBytes: ldb * 4})
}

// BenchmarkBroadcastTileLoop runs the 6×64 broadcast tile alone on the
// same b row and a values at every step (k = 4096: operands in L1, no
// cache effects), through its two loops: "whole" (all 64 columns, plain
// loads of b) and "masked" (63 columns, the loop with masked loads of b;
// it does the same vector work). GFLOP/s counts 6×64 outputs either way,
// against BenchmarkFLOPBound's one-core peak.
func BenchmarkBroadcastTileLoop(b *testing.B) {
	if !slices.Contains(available(), avx512Impl) {
		b.Skip("the CPU lacks AVX-512")
	}
	const k = 4096
	for _, c := range []struct {
		name string
		last int // mask of the last 16-column vector
	}{{"whole", 0xffff}, {"masked", 0x7fff}} {
		b.Run(c.name, func(b *testing.B) {
			a := make([]float32, 6)
			bb := make([]float32, 64)
			out := make([]float32, 6*64)
			for i := range a {
				a[i] = 1e-3
			}
			for i := range bb {
				bb[i] = 1e-3
			}
			var p bcArgs
			for r := range 6 {
				p.a[r] = &a[r]
				p.c[r] = &out[r*64]
			}
			p.b, p.k, p.rowmask = &bb[0], k, 63 // astep and ldb 0: the same operands every step
			p.masks = [4]int{0xffff, 0xffff, 0xffff, c.last}
			for b.Loop() {
				bc6x64AVX512(&p)
			}
			b.ReportMetric(2*6*64*k*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}
