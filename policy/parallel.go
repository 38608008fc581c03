package policy

import (
	"runtime"
	"sync"
)

// parallelFor calls fn over [0, n) split into contiguous chunks, one per
// CPU, and waits. fn must treat items independently: the split never
// changes a result, only which goroutine computes it.
func parallelFor(n int, fn func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		fn(0, n)
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := n*w/workers, n*(w+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}
