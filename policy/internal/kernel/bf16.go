package kernel

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/rollout-rl/rollout/policy/team"
)

// The BF16 products (MatMulNTBF16, MatMulNNBF16, MatMulTNBF16) round both
// operands to bfloat16 (round to nearest even) and accumulate their
// products in float32: with AVX512_BF16 (VDPBF16PS) twice the multiply-adds
// of a float32 FMA per instruction. Operands are packed first into pairs
// along k (two bfloat16 in one 32-bit word, the layout VDPBF16PS reads),
// the rows of a in the scratch buffer's first part and of b in its second.
// Each output is one sequence of pair products in increasing k, so, as for
// the float32 products, a split over goroutines changes no bit. Where the
// CPU has no AVX512_BF16, or a slower implementation is selected with
// ROLLOUT_KERNEL, they are the float32 products (HasBF16 reports false).

// BF16Scratch is the length of the scratch buffer the BF16 products of an
// m×n result summed over k need.
func BF16Scratch(m, n, k int) int { return (k + 1) / 2 * (m + n) }

// toBF16 rounds f to bfloat16 (nearest, ties to even), keeping NaNs NaN.
func toBF16(f float32) uint32 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return (u >> 16) | 0x40
	}
	return (u + 0x7fff + (u>>16)&1) >> 16
}

// fromBF16 is the float32 of a bfloat16.
func fromBF16(h uint32) float32 { return math.Float32frombits(h << 16) }

// pairOf packs two values as one word, x0 in the low half.
func pairOf(x0, x1 float32) uint32 { return toBF16(x0) | toBF16(x1)<<16 }

// packAlongGo packs rows [lo, hi) of x (row stride ldx, k values each)
// along the row: dst[i·kp+q] = (x[i][2q], x[i][2q+1]), kp = ⌈k/2⌉, the
// missing value of an odd k being 0 (packAlong does the same, faster where
// it can).
func packAlongGo(dst []uint32, x []float32, ldx, lo, hi, k int) {
	kp := (k + 1) / 2
	for i := lo; i < hi; i++ {
		row, d := x[i*ldx:i*ldx+k], dst[i*kp:(i+1)*kp]
		for q := 0; q < k/2; q++ {
			d[q] = pairOf(row[2*q], row[2*q+1])
		}
		if k%2 == 1 {
			d[kp-1] = toBF16(row[k-1])
		}
	}
}

// packAcrossGo packs the pair rows [qlo, qhi) of x ([k×n], row stride
// ldx) across rows: dst[q·n+j] = (x[2q][j], x[2q+1][j]), the missing row of
// an odd k being 0 (packAcross does the same, faster where it can).
func packAcrossGo(dst []uint32, x []float32, ldx, qlo, qhi, k, n int) {
	for q := qlo; q < qhi; q++ {
		d, r0 := dst[q*n:(q+1)*n], x[2*q*ldx:2*q*ldx+n]
		if 2*q+1 < k {
			r1 := x[(2*q+1)*ldx : (2*q+1)*ldx+n]
			for j := range d {
				d[j] = pairOf(r0[j], r1[j])
			}
		} else {
			for j := range d {
				d[j] = toBF16(r0[j])
			}
		}
	}
}

// packTransposed packs rows [lo, hi) of x ([n×k], row stride ldx) as
// columns of the pair rows of its transpose: dst[q·n+j] = (x[j][2q],
// x[j][2q+1]).
func packTransposed(dst []uint32, x []float32, ldx, lo, hi, n, k int) {
	kp := (k + 1) / 2
	for j := lo; j < hi; j++ {
		row := x[j*ldx : j*ldx+k]
		for q := 0; q < k/2; q++ {
			dst[q*n+j] = pairOf(row[2*q], row[2*q+1])
		}
		if k%2 == 1 {
			dst[(kp-1)*n+j] = toBF16(row[k-1])
		}
	}
}

// bf16Words views the scratch buffer as 32-bit words and checks its length.
func bf16Words(op string, s []float32, m, n, k int) (ap, bp []uint32) {
	need := BF16Scratch(m, n, k)
	if len(s) < need {
		panic(fmt.Sprintf("kernel.%s: scratch has length %d, need at least %d", op, len(s), need))
	}
	if need == 0 {
		return nil, nil
	}
	w := unsafe.Slice((*uint32)(unsafe.Pointer(&s[0])), need)
	kp := (k + 1) / 2
	return w[:m*kp], w[m*kp:]
}

// bf16Job is one BF16 product after packing: c(+)= A·B with the pair
// A(i, q) = ap[i·ai+q·aq] and B's pair row q at bp[q·n:].
type bf16Job struct {
	c      []float32
	ap     []uint32
	ai, aq int
	bp     []uint32
	m, n   int
	kp     int
	acc    bool
}

// MatMulNTBF16 is MatMulNT (c = a·bᵀ, or c += when acc) with bfloat16
// operands and float32 accumulation (see BF16Scratch for scratch).
func MatMulNTBF16(t *team.Team, c, a, b []float32, m, n, k int, acc bool, scratch []float32) {
	const op = "MatMulNTBF16"
	checkDims(op, m, n, k)
	checkLen(op, "c", c, m*n)
	checkLen(op, "a", a, m*k)
	checkLen(op, "b", b, n*k)
	if !HasBF16() || m == 0 || n == 0 || k == 0 {
		MatMulNT(t, c, a, b, m, n, k, acc)
		return
	}
	ap, bp := bf16Words(op, scratch, m, n, k)
	kp := (k + 1) / 2
	w := workers(t, m, n, k)
	// b's rows split over the goroutines too (a serial pass before).
	splitRows(t, n, max(1, min(w, n/minRowsPerWorker)), func(lo, hi int) { packTransposed(bp, b, k, lo, hi, n, k) })
	runBF16(t, bf16Job{c: c, ap: ap, ai: kp, aq: 1, bp: bp, m: m, n: n, kp: kp, acc: acc},
		func(lo, hi int) { packAlong(ap, a, k, lo, hi, k) }, w)
}

// MatMulNNBF16 is MatMulNN (c = a·b, or c += when acc) with bfloat16
// operands and float32 accumulation (see BF16Scratch for scratch).
func MatMulNNBF16(t *team.Team, c, a, b []float32, m, n, k int, acc bool, scratch []float32) {
	const op = "MatMulNNBF16"
	checkDims(op, m, n, k)
	checkLen(op, "c", c, m*n)
	checkLen(op, "a", a, m*k)
	checkLen(op, "b", b, k*n)
	if !HasBF16() || m == 0 || n == 0 || k == 0 {
		MatMulNN(t, c, a, b, m, n, k, acc)
		return
	}
	ap, bp := bf16Words(op, scratch, m, n, k)
	kp := (k + 1) / 2
	packAcross(bp, b, n, 0, kp, k, n)
	runBF16(t, bf16Job{c: c, ap: ap, ai: kp, aq: 1, bp: bp, m: m, n: n, kp: kp, acc: acc},
		func(lo, hi int) { packAlong(ap, a, k, lo, hi, k) }, workers(t, m, n, k))
}

// MatMulTNBF16 is MatMulTN (c = aᵀ·b, or c += when acc) with bfloat16
// operands and float32 accumulation (see BF16Scratch for scratch).
func MatMulTNBF16(t *team.Team, c, a, b []float32, m, n, k int, acc bool, scratch []float32) {
	const op = "MatMulTNBF16"
	checkDims(op, m, n, k)
	checkLen(op, "c", c, m*n)
	checkLen(op, "a", a, k*m)
	checkLen(op, "b", b, k*n)
	if !HasBF16() || m == 0 || n == 0 || k == 0 {
		MatMulTN(t, c, a, b, m, n, k, acc)
		return
	}
	ap, bp := bf16Words(op, scratch, m, n, k)
	kp := (k + 1) / 2
	w := workers(t, m, n, k)
	// Both operands are packed across rows of k; the pair rows split over
	// the goroutines.
	splitRows(t, kp, max(1, min(w, kp/minRowsPerWorker)), func(lo, hi int) {
		packAcross(ap, a, m, lo, hi, k, m)
		packAcross(bp, b, n, lo, hi, k, n)
	})
	runBF16(t, bf16Job{c: c, ap: ap, ai: 1, aq: m, bp: bp, m: m, n: n, kp: kp, acc: acc}, nil, w)
}

// runBF16 runs j split by output rows over w goroutines of t, each first
// packing its own rows of a with packA (when not nil).
func runBF16(t *team.Team, j bf16Job, packA func(lo, hi int), w int) {
	splitRows(t, j.m, w, func(lo, hi int) {
		if packA != nil {
			packA(lo, hi)
		}
		bf16Rows(j, lo, hi)
	})
}

// bf16RowsGeneric computes rows [lo, hi) of j in Go: per output, the pair
// products added in increasing q (the reference of the kernel's numerics
// up to its rounding of each pair's sum).
func bf16RowsGeneric(j bf16Job, lo, hi int) {
	for i := lo; i < hi; i++ {
		for col := 0; col < j.n; col++ {
			var s float32
			if j.acc {
				s = j.c[i*j.n+col]
			}
			for q := 0; q < j.kp; q++ {
				a, b := j.ap[i*j.ai+q*j.aq], j.bp[q*j.n+col]
				s += float32(fromBF16(a&0xffff)*fromBF16(b&0xffff)) + float32(fromBF16(a>>16)*fromBF16(b>>16))
			}
			j.c[i*j.n+col] = s
		}
	}
}
