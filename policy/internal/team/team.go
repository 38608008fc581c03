// Package team runs the chunks of a parallel pass on goroutines that stay
// awake between passes.
//
// A pass of the tiny model's decoding step or training step lasts tens to
// hundreds of microseconds. Starting a goroutine per pass wakes an idle
// thread each time, and on a virtual machine that wake-up can cost as much
// as the pass: a decoding step of up to 16 states ran slower on two cores
// than on one (policy's BenchmarkDecodeBatch; results/performance.md
// has the figures). So the helpers are started once
// per process, and after a pass they spin for a short while (spinFor)
// looking for the next one before they park. Work is handed out by chunk from a
// shared counter, so a helper that the operating system deschedules only
// delays the chunks it has taken; which goroutine computes a chunk never
// changes a result.
//
// The helpers are shared by every caller in the process, as the cores they
// run on are: they hold no result and no setting, only the passes in
// flight.
package team

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// spinFor is how long a helper looks for a new pass after its last one
// before it parks. Longer than the gap between two passes of a decoding or
// training step (the search bookkeeping between steps takes a few tens of
// microseconds), short enough that an idle process stops using its cores
// within a fraction of a millisecond.
const spinFor = 200 * time.Microsecond

// waitFor is how long a caller whose chunks are done checks whether the
// other workers' are before it blocks until they are.
const waitFor = 50 * time.Microsecond

// yieldEvery is how many checks a spinning goroutine makes between calls
// of runtime.Gosched, which let any other goroutine waiting for a thread
// run first.
const yieldEvery = 64

// slots is how many passes may be open at once (several engines or
// trainings of one process run passes concurrently); a pass that finds no
// free slot runs on its caller alone.
const slots = 8

// pass is one call of Run.
type pass struct {
	job        func(worker, chunk int)
	chunks     int64
	next       atomic.Int64 // the next chunk to take
	done       atomic.Int64 // chunks finished
	joined     atomic.Int64 // worker indices handed out (the caller's is 0); may pass maxWorkers
	maxWorkers int64
	finished   chan struct{} // closed when the last chunk is done
}

// helpers is the process's set of helper goroutines.
type helpers struct {
	open     [slots]atomic.Pointer[pass]
	sleepers atomic.Int64
	wake     chan struct{}
}

// shared returns the process's helpers, started at the first pass: one
// per CPU beyond the caller's.
var shared = sync.OnceValue(func() *helpers {
	n := max(runtime.NumCPU()-1, 1)
	h := &helpers{wake: make(chan struct{}, n)}
	for range n {
		go h.loop()
	}
	return h
})

// Run calls job(worker, chunk) for every chunk in [0, chunks) and returns
// when all are done. The calling goroutine takes part, as worker 0; at
// most workers goroutines do, each with its own worker index in
// [0, workers) (a job may index per-worker buffers with it). Each takes
// the next chunk not yet taken, so chunks start in increasing order.
// Passes may run concurrently and be nested (a job may call Run).
func Run(workers, chunks int, job func(worker, chunk int)) {
	if chunks <= 0 {
		return
	}
	if workers <= 1 || chunks == 1 {
		for c := range chunks {
			job(0, c)
		}
		return
	}
	p := &pass{job: job, chunks: int64(chunks), maxWorkers: int64(workers), finished: make(chan struct{})}
	p.joined.Store(1) // the caller is worker 0
	h := shared()
	slot := -1
	for i := range h.open {
		if h.open[i].CompareAndSwap(nil, p) {
			slot = i
			break
		}
	}
	if slot < 0 {
		for c := range chunks {
			job(0, c)
		}
		return
	}
	if h.sleepers.Load() > 0 {
		for range min(workers-1, int(h.sleepers.Load())) {
			select {
			case h.wake <- struct{}{}:
			default:
			}
		}
	}
	p.work(0)
	h.open[slot].Store(nil)
	start := time.Now()
	for i := 1; p.done.Load() < p.chunks; i++ {
		if i%yieldEvery == 0 {
			if time.Since(start) > waitFor {
				<-p.finished
				return
			}
			runtime.Gosched()
		}
	}
}

// work takes chunks of p as worker w until none is left.
func (p *pass) work(w int) {
	for {
		c := p.next.Add(1) - 1
		if c >= p.chunks {
			return
		}
		p.job(w, int(c))
		if p.done.Add(1) == p.chunks {
			close(p.finished)
		}
	}
}

// join makes the calling helper a worker of p if p has chunks left and
// room for another worker; it reports whether it worked.
func (p *pass) join() bool {
	if p.next.Load() >= p.chunks {
		return false
	}
	w := p.joined.Add(1) - 1
	if w >= p.maxWorkers {
		return false
	}
	p.work(int(w))
	return true
}

// loop is a helper goroutine: it works on open passes, spins for spinFor
// after its last one, then parks until a pass wakes it.
func (h *helpers) loop() {
	for {
		idleSince := time.Now()
		for spins := 0; ; spins++ {
			if h.findWork() {
				idleSince, spins = time.Now(), 0
				continue
			}
			if spins%yieldEvery == yieldEvery-1 {
				if time.Since(idleSince) > spinFor {
					break
				}
				runtime.Gosched()
			}
		}
		// Park: count as a sleeper first, then look once more, so that
		// a pass opened in between is not missed.
		h.sleepers.Add(1)
		if h.findWork() {
			h.sleepers.Add(-1)
			continue
		}
		<-h.wake
		h.sleepers.Add(-1)
	}
}

// findWork joins the first open pass that has room; it reports whether
// it worked on one.
func (h *helpers) findWork() bool {
	for i := range h.open {
		if p := h.open[i].Load(); p != nil && p.join() {
			return true
		}
	}
	return false
}
