package kernel

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// genericModelShapes are the products of the tiny (dim 128, hidden 384)
// and small (256, 768) models, vocabulary 64, as m×n×k: decoding (m = 1
// and 32 rows, the share of one core at batch 64; NT, c = x·Wᵀ) and
// training over trainRows tokens (the forward NT, dX = dY·W as NN with m =
// tokens, n = in, k = out, and dW = dYᵀ·X as TN with m = out, n = in, k =
// tokens).
func genericModelShapes() map[string][]shape {
	const trainRows = 512
	// [out, in] of every Linear: attention, gate/up, down, head.
	linears := [][2]int{{128, 128}, {384, 128}, {128, 384}, {64, 128}, {256, 256}, {768, 256}, {256, 768}, {64, 256}}
	sh := map[string][]shape{}
	for _, l := range linears {
		out, in := l[0], l[1]
		sh["nt"] = append(sh["nt"], shape{1, out, in}, shape{32, out, in}, shape{trainRows, out, in})
		sh["nn"] = append(sh["nn"], shape{trainRows, in, out})
		sh["tn"] = append(sh["tn"], shape{out, in, trainRows})
	}
	return sh
}

// BenchmarkGenericModelShapes times the pure-Go products on one goroutine
// at every shape of genericModelShapes, GFLOP/s over wall and CPU time
// (whatever ROLLOUT_KERNEL says).
func BenchmarkGenericModelShapes(b *testing.B) {
	shapes := genericModelShapes()
	for _, op := range []string{"nt", "nn", "tn"} {
		f := map[string]matFunc{"nt": genericImpl.nt, "nn": genericImpl.nn, "tn": genericImpl.tn}[op]
		for _, sh := range shapes[op] {
			r := rand.New(rand.NewPCG(1, 1))
			m, n, k := sh.m, sh.n, sh.k
			a, bb, c := randSlice(r, m*k), randSlice(r, n*k), make([]float32, m*n)
			// Leading dimensions of the dense operands (see MatMulNN/TN).
			lda, ldb := k, k
			switch op {
			case "nn":
				ldb = n
			case "tn":
				lda, ldb = m, n
			}
			b.Run(fmt.Sprintf("%s/%s", op, shapeName(sh)), func(b *testing.B) {
				timeProduct(b, sh, func() { f(c, n, a, lda, bb, ldb, m, n, k, false) })
			})
		}
	}
}
