//go:build !purego

package kernel

import "unsafe"

//go:noescape
func nt1x16F16AVX512(p *mvArgs)

//go:noescape
func toF16AVX512(dst *uint16, src *float32, n int)

//go:noescape
func attv128x2F16AVX512(p *attvArgs)

// toF16AVX512Go converts the whole 16-blocks of src and returns their length.
func toF16AVX512Go(dst []uint16, src []float32) int {
	n := len(src) &^ 15
	if n == 0 {
		return 0
	}
	dst = dst[:n]
	toF16AVX512(&dst[0], &src[0], n)
	return n
}

// scoresF16AVX512 is ScoresF16 with 1×16 tiles (the last ragged tile
// shifted back) when k is a multiple of 16 and n at least 16, or keys
// holds 16 rows.
func scoresF16AVX512(scores, q []float32, keys []uint16, ldk, n, k int) bool {
	if k == 0 || k%16 != 0 {
		return false
	}
	if n < 16 && len(keys) >= 15*ldk+k {
		// Fewer keys than a tile, but keys holds 16 rows (a KV cache early
		// in a sequence): one tile, storing only the first n scores. The
		// rows past n are read, whatever they hold, and their scores
		// dropped; each stored score has the bits of its dot product.
		p := mvArgs{a: &q[0], b: unsafe.Pointer(&keys[0]), c: &scores[0], ldb: ldk * 2, kfull: k * 4}
		p.ntiles, p.colmask = 1, 1<<n-1
		nt1x16F16AVX512(&p)
		return true
	}
	if n < 16 {
		// Too few keys for a tile: one dot product each (the same bits).
		var buf [256]float32
		if k > len(buf) {
			return false
		}
		row := buf[:k]
		for t := range n {
			widenF16(row, keys[t*ldk:], 1, k, ldk)
			scores[t] = dotAVX512Go(q[:k], row)
		}
		return true
	}
	_ = keys[(n-1)*ldk+k-1]
	_ = q[k-1]
	_ = scores[n-1]
	p := mvArgs{a: &q[0], b: unsafe.Pointer(&keys[0]), c: &scores[0], ldb: ldk * 2, kfull: k * 4}
	nt := n / 16
	p.ntiles, p.colmask = nt, 0xFFFF
	nt1x16F16AVX512(&p)
	if rem := n - 16*nt; rem > 0 {
		j0 := n - 16
		p.b, p.c = unsafe.Pointer(&keys[j0*ldk]), &scores[j0]
		p.ntiles, p.colmask = 1, 0xFFFF&^((1<<(16-rem))-1)
		nt1x16F16AVX512(&p)
	}
	return true
}

// attvF16AVX512 is attvAVX512 over binary16 value rows, for d a multiple of
// 128 and hd of 32.
func attvF16AVX512(out, probs []float32, ldp int, v []uint16, ldv int, n, d, hd int, acc bool) bool {
	if d%128 != 0 || hd%32 != 0 {
		return false
	}
	if n == 0 {
		if !acc {
			clear(out[:d])
		}
		return true
	}
	heads := d / hd
	_ = probs[(heads-1)*ldp+n-1]
	_ = v[(n-1)*ldv+d-1]
	_ = out[d-1]
	var p attvArgs
	p.ldv, p.n, p.acc = ldv*2, n, b2i(acc)
	for j0 := 0; j0 < d; j0 += 128 {
		for r := range 8 {
			p.p[r] = &probs[(j0+16*r)/hd*ldp]
		}
		p.v, p.out = (*float32)(unsafe.Pointer(&v[j0])), &out[j0]
		attv128x2F16AVX512(&p)
	}
	return true
}
