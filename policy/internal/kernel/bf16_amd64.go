//go:build !purego

package kernel

//go:generate python3 gen_bf16.py

import (
	"unsafe"

	"golang.org/x/sys/cpu"
)

//go:noescape
func bcb6x64AVX512(p *bcArgs)

//go:noescape
func bf16AlongAVX512(dst *uint16, src *float32, n int)

//go:noescape
func bf16AcrossAVX512(dst *uint32, r0, r1 *float32, n int)

// packAlong is packAlongGo with AVX-512 (16 values at a time) when the
// BF16 products run natively.
func packAlong(dst []uint32, x []float32, ldx, lo, hi, k int) {
	if !HasBF16() || k < 16 {
		packAlongGo(dst, x, ldx, lo, hi, k)
		return
	}
	kp := (k + 1) / 2
	k16 := k &^ 15
	for i := lo; i < hi; i++ {
		d := dst[i*kp : (i+1)*kp]
		row := x[i*ldx : i*ldx+k]
		bf16AlongAVX512((*uint16)(unsafe.Pointer(&d[0])), &row[0], k16/16)
		for q := k16 / 2; q < k/2; q++ {
			d[q] = pairOf(row[2*q], row[2*q+1])
		}
		if k%2 == 1 {
			d[kp-1] = toBF16(row[k-1])
		}
	}
}

// packAcross is packAcrossGo with AVX-512 (16 columns at a time) when the
// BF16 products run natively.
func packAcross(dst []uint32, x []float32, ldx, qlo, qhi, k, n int) {
	n16 := n &^ 15
	if !HasBF16() || n16 == 0 {
		packAcrossGo(dst, x, ldx, qlo, qhi, k, n)
		return
	}
	for q := qlo; q < qhi; q++ {
		if 2*q+1 >= k {
			packAcrossGo(dst, x, ldx, q, q+1, k, n)
			continue
		}
		d, r0, r1 := dst[q*n:(q+1)*n], x[2*q*ldx:2*q*ldx+n], x[(2*q+1)*ldx:(2*q+1)*ldx+n]
		bf16AcrossAVX512(&d[0], &r0[0], &r1[0], n16/16)
		for j := n16; j < n; j++ {
			d[j] = pairOf(r0[j], r1[j])
		}
	}
}

// HasBF16 reports whether the BF16 products use bfloat16 (the CPU has
// AVX512_BF16 and an AVX-512 implementation is active); if not they are
// the float32 products.
func HasBF16() bool {
	return cpu.X86.HasAVX512BF16 && (active == avx512Impl || active == vnniImpl)
}

// bf16Rows computes output rows [lo, hi) of j with the 6×64 VDPBF16PS
// tiles, in blocks of bcKBlock pairs whose float32 sums are stored and
// reloaded exactly (as bcAVX512 does).
func bf16Rows(j bf16Job, lo, hi int) {
	if !HasBF16() {
		bf16RowsGeneric(j, lo, hi)
		return
	}
	m, n := hi-lo, j.n
	if m == 0 || n == 0 {
		return
	}
	_ = j.ap[(hi-1)*j.ai+(j.kp-1)*j.aq]
	_ = j.bp[(j.kp-1)*n+n-1]
	_ = j.c[(hi-1)*n+n-1]
	var p bcArgs
	p.astep, p.ldb = j.aq*4, n*4
	for q0 := 0; q0 < j.kp; q0 += bcKBlock {
		p.k = min(bcKBlock, j.kp-q0)
		p.acc = b2i(j.acc || q0 > 0)
		for i0 := lo; i0 < hi; i0 += 6 {
			p.rowmask = (1 << min(6, hi-i0)) - 1
			for r := range 6 {
				p.a[r] = (*float32)(unsafe.Pointer(&j.ap[min(i0+r, hi-1)*j.ai+q0*j.aq]))
			}
			for j0 := 0; j0 < n; j0 += 64 {
				for v := range 4 {
					w := min(max(n-j0-16*v, 0), 16)
					p.masks[v] = (1 << w) - 1
				}
				p.b = (*float32)(unsafe.Pointer(&j.bp[q0*n+j0]))
				for r := range 6 {
					p.c[r] = &j.c[min(i0+r, hi-1)*n+j0]
				}
				bcb6x64AVX512(&p)
			}
		}
	}
}
