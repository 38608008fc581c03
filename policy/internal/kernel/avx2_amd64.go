//go:build !purego

package kernel

import "unsafe"

//go:noescape
func nt2x2AVX2(p *ntArgs)

//go:noescape
func dotAVX2(x, y *float32, n int, tail *[16]int32) float32

//go:noescape
func bc4x16AVX2(p *bcArgs)

//go:noescape
func axpyAVX2(alpha float32, x, y *float32, n int)

//go:noescape
func scaleAVX2(alpha float32, x *float32, n int)

// laneMasks sets the first r of the 16 VMASKMOVPS lane masks.
func laneMasks(m *[16]int32, r int) {
	for l := range m {
		m[l] = 0
		if l < r {
			m[l] = -1
		}
	}
}

func dotAVX2Go(x, y []float32) float32 {
	n := len(x)
	if n == 0 {
		return 0
	}
	y = y[:n]
	var tm [16]int32
	var tail *[16]int32
	if r := n % lanes; r != 0 {
		laneMasks(&tm, r)
		tail = &tm
	}
	return dotAVX2(&x[0], &y[0], n, tail)
}

// ntAVX2 computes c = a·bᵀ (strided) with 2×2 tiles of 16-lane dot products;
// ragged edges use duplicated operand rows and skipped stores, so every
// output goes through the same code.
func ntAVX2(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		ntGeneric(c, ldc, a, lda, b, ldb, m, n, k, acc)
		return
	}
	_ = a[(m-1)*lda+k-1]
	_ = b[(n-1)*ldb+k-1]
	_ = c[(m-1)*ldc+n-1]
	var tm [16]int32
	var p ntArgs
	p.kfull = (k &^ (lanes - 1)) * 4
	if r := k % lanes; r != 0 {
		laneMasks(&tm, r)
		p.tail = &tm
	}
	p.acc = b2i(acc)
	p.bstep = 2 * ldb * 4
	nt2 := n / 2
	for i0 := 0; i0 < m; i0 += 2 {
		p.rowmask = (1 << min(2, m-i0)) - 1
		for r := range 2 {
			i := min(i0+r, m-1)
			p.a[r] = &a[i*lda]
			p.c[r] = &c[i*ldc]
		}
		if nt2 > 0 {
			p.b[0], p.b[1] = unsafe.Pointer(&b[0]), unsafe.Pointer(&b[ldb])
			p.ntiles, p.colmask = nt2, 3
			nt2x2AVX2(&p)
		}
		if n%2 != 0 {
			j := n - 1
			p.b[0] = unsafe.Pointer(&b[j*ldb])
			p.b[1] = p.b[0]
			for r := range 2 {
				p.c[r] = &c[min(i0+r, m-1)*ldc+j]
			}
			p.ntiles, p.colmask = 1, 1
			nt2x2AVX2(&p)
		}
	}
}

// bcAVX2 is bcAVX512 with 4×16 tiles (see there).
func bcAVX2(c []float32, ldc int, a []float32, ai, ap int, b []float32, ldb int, m, n, k int, acc bool) {
	if m == 0 || n == 0 {
		return
	}
	if k == 0 {
		if !acc {
			for i := range m {
				clear(c[i*ldc : i*ldc+n])
			}
		}
		return
	}
	_ = a[(m-1)*ai+(k-1)*ap]
	_ = b[(k-1)*ldb+n-1]
	_ = c[(m-1)*ldc+n-1]
	var cm [16]int32
	var p bcArgs
	p.cmask = &cm
	p.astep, p.ldb = ap*4, ldb*4
	for p0 := 0; p0 < k; p0 += bcKBlock {
		p.k = min(bcKBlock, k-p0)
		p.acc = b2i(acc || p0 > 0)
		for j0 := 0; j0 < n; j0 += 16 {
			laneMasks(&cm, n-j0)
			p.b = &b[p0*ldb+j0]
			for i0 := 0; i0 < m; i0 += 4 {
				p.rowmask = (1 << min(4, m-i0)) - 1
				for r := range 4 {
					i := min(i0+r, m-1)
					p.a[r] = &a[i*ai+p0*ap]
					p.c[r] = &c[i*ldc+j0]
				}
				bc4x16AVX2(&p)
			}
		}
	}
}

func nnAVX2(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	bcAVX2(c, ldc, a, lda, 1, b, ldb, m, n, k, acc)
}

func tnAVX2(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	bcAVX2(c, ldc, a, 1, lda, b, ldb, m, n, k, acc)
}

//go:noescape
func siluMulAVX2(dst, gate, up *float32, n int)

//go:noescape
func expAVX2(dst, x *float32, n int)

func axpySIMD(alpha float32, x, y []float32) {
	n := len(x)
	if n == 0 {
		return
	}
	y = y[:n]
	axpyAVX2(alpha, &x[0], &y[0], n)
}

func scaleSIMD(alpha float32, x []float32) {
	if len(x) == 0 {
		return
	}
	scaleAVX2(alpha, &x[0], len(x))
}

func siluMulAVX2Go(dst, gate, up []float32) {
	n := len(gate)
	if n == 0 {
		return
	}
	dst, up = dst[:n], up[:n]
	siluMulAVX2(&dst[0], &gate[0], &up[0], n)
}

func expAVX2Go(dst, x []float32) {
	n := len(x)
	if n == 0 {
		return
	}
	dst = dst[:n]
	expAVX2(&dst[0], &x[0], n)
}

//go:noescape
func sigmoidAVX2(dst, x *float32, n int)

func sigmoidAVX2Go(dst, x []float32) {
	n := len(x)
	if n == 0 {
		return
	}
	dst = dst[:n]
	sigmoidAVX2(&dst[0], &x[0], n)
}
