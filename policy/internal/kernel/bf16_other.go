//go:build !amd64 || purego

package kernel

// HasBF16 reports whether the BF16 products use bfloat16: never on this
// platform, where they are the float32 products.
func HasBF16() bool { return false }

// bf16Rows computes output rows [lo, hi) of j in Go.
func bf16Rows(j bf16Job, lo, hi int) { bf16RowsGeneric(j, lo, hi) }

// packAlong is packAlongGo.
func packAlong(dst []uint32, x []float32, ldx, lo, hi, k int) { packAlongGo(dst, x, ldx, lo, hi, k) }

// packAcross is packAcrossGo.
func packAcross(dst []uint32, x []float32, ldx, qlo, qhi, k, n int) {
	packAcrossGo(dst, x, ldx, qlo, qhi, k, n)
}
