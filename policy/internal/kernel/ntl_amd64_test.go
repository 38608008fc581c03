//go:build !purego

package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"
)

// specialSlice is randSlice with some elements replaced by values that
// stress the bits of a sum: signed zeros, infinities, NaNs of several
// payloads, subnormals and tiny values whose products underflow to a
// signed zero.
func specialSlice(r *rand.Rand, n int) []float32 {
	specials := []float32{
		0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		math.Float32frombits(0x7fc00001), math.Float32frombits(0xffc00abc), math.Float32frombits(0x7f800123), // NaNs, the last signalling
		math.Float32frombits(1), math.Float32frombits(0x807fffff), 1e-30, -1e-30, 3e38, -3e38,
	}
	s := randSlice(r, n)
	for i := range s {
		if r.IntN(8) == 0 {
			s[i] = specials[r.IntN(len(specials))]
		}
	}
	return s
}

// tinySlice holds values whose products all underflow to a zero of the
// sign of the product: the lanes' sums are then signed zeros, and only the
// +0 that the zero-padded last block adds makes them +0.
func tinySlice(r *rand.Rand, n int) []float32 {
	s := make([]float32, n)
	for i := range s {
		s[i] = float32(1e-30 * (1 + r.Float64()))
		if r.IntN(2) == 0 {
			s[i] = -s[i]
		}
	}
	return s
}

// TestLanePassMatchesTiles checks that the lane-pass kernel gives the bits
// of the 4×4 NT tiles (nt4x4AVX512, the exact bits including NaN payloads)
// on random strided shapes: m around the 6-row tile and below ntlMinRows,
// n around the 64-column panel, k across and not a multiple of 16, up to
// ntlMaxK, with and without acc, on normal, special and underflowing
// operands; that it writes nothing but its panels' columns; and that
// ntAVX512, which runs it on the full panels and the 4×4 tiles on the rest,
// gives the same bits whole.
func TestLanePassMatchesTiles(t *testing.T) {
	if !slices.Contains(available(), avx512Impl) {
		t.Skip("the CPU lacks AVX-512")
	}
	r := rand.New(rand.NewPCG(61, 62))
	shapes := []shape{
		{1, 64, 1}, {6, 64, 16}, {7, 65, 17}, {5, 127, 15}, {24, 128, 128}, {25, 191, 129},
		{48, 64, 256}, {13, 200, 255}, {100, 384, 128}, {2, 70, 33}, {64, 130, 64},
	}
	for range 16 {
		shapes = append(shapes, shape{1 + r.IntN(60), ntlCols + r.IntN(100), 1 + r.IntN(ntlMaxK)})
	}
	gens := map[string]func(*rand.Rand, int) []float32{"normal": randSlice, "special": specialSlice, "tiny": tinySlice}
	for _, sh := range shapes {
		for gname, gen := range gens {
			if gname == "tiny" && sh.m*sh.n*sh.k > 1<<17 {
				continue // underflows take microcode assists: slow
			}
			for _, acc := range []bool{false, true} {
				m, n, k := sh.m, sh.n, sh.k
				lda, ldb, ldc := k+r.IntN(3), k+r.IntN(3), n+1+r.IntN(3)
				a, b := gen(r, (m-1)*lda+k), gen(r, (n-1)*ldb+k)
				c0 := gen(r, m*ldc)
				lane, tile := append([]float32(nil), c0...), append([]float32(nil), c0...)
				ntLanesAVX512(lane, ldc, a, lda, b, ldb, m, n, k, acc)
				ntDriveAVX512(tile, ldc, a, lda, m, n, k, acc, ntB{base: unsafe.Pointer(&b[0]), rowBytes: ldb * 4})
				n64 := n &^ (ntlCols - 1)
				for i := range m {
					for j := range ldc {
						want := tile[i*ldc+j]
						if j >= n64 {
							want = c0[i*ldc+j] // not the lane kernel's to write
						}
						if got := lane[i*ldc+j]; math.Float32bits(got) != math.Float32bits(want) {
							t.Fatalf("%v %s acc=%v: c[%d][%d] = %v (%#x) by lane passes, want %v (%#x)",
								sh, gname, acc, i, j, got, math.Float32bits(got), want, math.Float32bits(want))
						}
					}
				}
				whole := append([]float32(nil), c0...)
				ntAVX512(whole, ldc, a, lda, b, ldb, m, n, k, acc)
				if err := exactBits(whole, tile); err != nil {
					t.Fatalf("%v %s acc=%v: ntAVX512: %v", sh, gname, acc, err)
				}
			}
		}
	}
}

// exactBits reports the first element where got and want differ in bits,
// NaN payloads included.
func exactBits(got, want []float32) error {
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			return fmt.Errorf("element %d = %v (%#x), want %v (%#x)", i, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
		}
	}
	return nil
}

// TestLanePassUnderflowPadding pins the +0 of the zero-padded last block:
// with every product underflowing to −0, the 16-lane sum is −0 when k is a
// multiple of 16 and +0 when it is not (the padded lanes turn −0 into +0),
// and the lane passes give the same.
func TestLanePassUnderflowPadding(t *testing.T) {
	if !slices.Contains(available(), avx512Impl) {
		t.Skip("the CPU lacks AVX-512")
	}
	for _, k := range []int{16, 17, 32, 47} {
		const m, n = 60, 64
		a, b := make([]float32, m*k), make([]float32, n*k)
		for i := range a {
			a[i] = 1e-30
		}
		for i := range b {
			b[i] = -1e-30
		}
		c := make([]float32, m*n)
		ntAVX512(c, n, a, k, b, k, m, n, k, false)
		if !ntlUse(m, n, k) {
			t.Fatalf("k=%d: the lane kernel does not run on %d×%d", k, m, n)
		}
		wantNeg := k%lanes == 0
		for i, v := range c {
			if v != 0 || math.Signbit(float64(v)) != wantNeg {
				t.Fatalf("k=%d: c[%d] = %v (sign bit %v), want a zero of sign bit %v", k, i, v, math.Signbit(float64(v)), wantNeg)
			}
		}
	}
}

// TestLanePassReadsCurrentWeights checks that nothing packed survives a
// call: the panel is packed from b on every call, so after b changes (as a
// weight does at every optimizer step) the product is that of the new b,
// never of a stale copy, whatever ran before on the same goroutine.
func TestLanePassReadsCurrentWeights(t *testing.T) {
	if !slices.Contains(available(), avx512Impl) {
		t.Skip("the CPU lacks AVX-512")
	}
	r := rand.New(rand.NewPCG(63, 64))
	const m, n, k = 48, 128, 128
	a, b := randSlice(r, m*k), randSlice(r, n*k)
	c := make([]float32, m*n)
	for step := range 3 {
		ntAVX512(c, n, a, k, b, k, m, n, k, false)
		want := make([]float32, m*n)
		ntDriveAVX512(want, n, a, k, m, n, k, false, ntB{base: unsafe.Pointer(&b[0]), rowBytes: k * 4})
		if err := exactBits(c, want); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		for i := range b { // an optimizer step: every weight moves
			b[i] += float32(r.NormFloat64()) * 1e-2
		}
	}
}

// TestLanePackGatherMatchesGo checks ntlPackAVX512 (gathers) against
// ntlPack on strided b and k across the 16-blocks: the same slots written
// with the same values, the others left alone.
func TestLanePackGatherMatchesGo(t *testing.T) {
	if !slices.Contains(available(), avx512Impl) {
		t.Skip("the CPU lacks AVX-512")
	}
	r := rand.New(rand.NewPCG(65, 66))
	for _, k := range []int{1, 15, 16, 17, 100, 128, 255, 256} {
		ldb := k + r.IntN(5)
		b := specialSlice(r, (ntlCols-1)*ldb+k)
		nq := (k + lanes - 1) / lanes
		want := make([]float32, lanes*nq*ntlCols)
		for i := range want {
			want[i] = float32(i) + 0.5 // slots neither writes keep these
		}
		got := append([]float32(nil), want...)
		ntlPack(want, b, ldb, k, nq)
		var idx [ntlCols]int32
		for j := range idx {
			idx[j] = int32(j * ldb * 4)
		}
		ntlPackAVX512(&got[0], &b[0], &idx, k, nq)
		if err := exactBits(got, want); err != nil {
			t.Fatalf("k=%d ldb=%d: %v", k, ldb, err)
		}
	}
}
