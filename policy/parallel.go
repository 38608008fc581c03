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
