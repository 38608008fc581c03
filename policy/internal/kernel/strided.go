package kernel

import "fmt"

// checkStrided panics unless the strided operand of rows×cols with row stride
// ld fits in s (ld ≥ cols).
func checkStrided(op, name string, s []float32, rows, cols, ld int) {
	if ld < cols {
		panic(fmt.Sprintf("kernel.%s: %s has row stride %d below its row length %d", op, name, ld, cols))
	}
	if rows > 0 && cols > 0 {
		checkLen(op, name, s, (rows-1)*ld+cols)
	}
}

// MatMulNTStrided is MatMulNT on sub-matrices: row i of a starts at a[i·lda],
// row j of b at b[j·ldb] and row i of c at c[i·ldc] (each stride at least
// the row length). It reads the per-head blocks of a KV cache in place, e.g.
// the scores of one query against n cached keys of one head:
//
//	MatMulNTStrided(scores, n, q[h*hd:], hd, keys[h*hd:], dim, 1, n, hd, false)
//
// Every output has the bits of the dense MatMulNT (and of Dot) on the same
// rows. It runs on the calling goroutine.
func MatMulNTStrided(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	checkDims("MatMulNTStrided", m, n, k)
	checkStrided("MatMulNTStrided", "c", c, m, n, ldc)
	checkStrided("MatMulNTStrided", "a", a, m, k, lda)
	checkStrided("MatMulNTStrided", "b", b, n, k, ldb)
	if m == 0 || n == 0 {
		return
	}
	active.nt(c, ldc, a, lda, b, ldb, m, n, k, acc)
}

// MatMulNNStrided is MatMulNN on sub-matrices with row strides lda, ldb and
// ldc (each at least the row length), e.g. the attention output of one head
// as the probability-weighted sum of n cached values:
//
//	MatMulNNStrided(out[h*hd:], hd, probs, n, values[h*hd:], dim, 1, hd, n, false)
//
// Its outputs are deterministic (a sequential multiply-add over k). It runs on
// the calling goroutine.
func MatMulNNStrided(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	checkDims("MatMulNNStrided", m, n, k)
	checkStrided("MatMulNNStrided", "c", c, m, n, ldc)
	checkStrided("MatMulNNStrided", "a", a, m, k, lda)
	checkStrided("MatMulNNStrided", "b", b, k, n, ldb)
	if m == 0 || n == 0 {
		return
	}
	active.nn(c, ldc, a, lda, b, ldb, m, n, k, acc)
}

// MatMulTNStrided is MatMulTN on sub-matrices: a is k rows of at least m
// columns with stride lda, b is k rows of at least n columns with stride
// ldb, c is m rows with stride ldc. It runs on the calling goroutine.
func MatMulTNStrided(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool) {
	checkDims("MatMulTNStrided", m, n, k)
	checkStrided("MatMulTNStrided", "c", c, m, n, ldc)
	checkStrided("MatMulTNStrided", "a", a, k, m, lda)
	checkStrided("MatMulTNStrided", "b", b, k, n, ldb)
	if m == 0 || n == 0 {
		return
	}
	active.tn(c, ldc, a, lda, b, ldb, m, n, k, acc)
}
