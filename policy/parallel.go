package policy

import "github.com/rollout-rl/rollout/policy/team"

// chunksPerWorker is how many chunks a parallel pass is cut into per
// goroutine. The goroutines take chunks in turn from a shared counter, so
// when the machine is busy and one goroutine is descheduled, the others
// take its share instead of waiting for it. Which goroutine computes a
// chunk never changes a result.
const chunksPerWorker = 4

// parallelFor calls fn over [0, n) split into contiguous chunks, run by
// up to t.Size() goroutines of t (the caller alone when t is nil), and
// waits. fn must treat items
// independently: the split never changes a result, only which goroutine
// computes it.
func parallelFor(t *team.Team, n int, fn func(lo, hi int)) {
	workers := min(t.Size(), n)
	if workers <= 1 {
		fn(0, n)
		return
	}
	chunks := min(n, chunksPerWorker*workers)
	t.Run(workers, chunks, func(_, c int) { fn(n*c/chunks, n*(c+1)/chunks) })
}

// Column splits of the products of a pass that runs on one goroutine (see
// acts.byColumns).
const (
	// colSplitMaxRows is the most rows a product split by output columns
	// may have: the kernels split products from 128 rows on by rows.
	colSplitMaxRows = 127
	// colSplitMinWeights is the fewest weights (out·in) a product must
	// read to be split: below it the hand-off costs more than it saves
	// (the tiny model's matrices are below it, the small model's above).
	colSplitMinWeights = 1 << 16
	// colAlign is the column granularity of a float32 split (the widest
	// tile of the matrix-vector kernels).
	colAlign = 16
)

// byColumns runs job over the output columns [0, out) of the product of
// the rows with an out×in weight matrix, in contiguous ranges of whole
// multiples of align (the last one ragged), one range per goroutine of
// x.split, when x.split has more than one and the product has few rows
// and enough weights; it reports whether it did (otherwise the caller runs
// the product whole). An output of a matrix product depends only on its
// input row and weight row, so the split changes no bit. What it changes
// is what each core reads: a decoding step of one state reads every
// weight once, and two cores each reading half of them finish in about
// half the time (the kernels' row split leaves such a product on one
// goroutine).
func (x *acts) byColumns(out, in, align int, job func(j0, j1 int)) bool {
	t := x.split
	w := t.Size()
	if w <= 1 || x.rows > colSplitMaxRows || out*in < colSplitMinWeights || out < 2*align {
		return false
	}
	chunks := min(w, out/align)
	blocks := out / align
	t.Run(w, chunks, func(_, c int) {
		j0, j1 := blocks*c/chunks*align, blocks*(c+1)/chunks*align
		if c == chunks-1 {
			j1 = out
		}
		job(j0, j1)
	})
	return true
}
