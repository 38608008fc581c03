// Package team runs the chunks of a parallel pass on helper goroutines that
// stay awake between passes.
//
// A pass of the tiny model's decoding step or training step lasts tens to
// hundreds of microseconds. Starting a goroutine per pass wakes an idle
// thread each time, and on a virtual machine that wake-up can cost as much
// as the pass: a decoding step of up to 16 states ran slower on two cores
// than on one (policy's BenchmarkDecodeBatch; results/performance.md has
// the figures). So a Team keeps its helpers between passes, and after a
// pass they spin for a short while looking for the next one before they
// park: for twice the time the team last stayed without a pass (the gap
// from the end of one pass to the start of the next), at most spinFor. A
// steady stream of passes (a decoding step's, a training step's) finds its
// helpers awake; after the last pass of a burst (a prompt's prefill before
// one-state decoding, say) they spin a few tens of microseconds, not
// spinFor, for nothing.
//
// A Team is an explicit value, owned by whoever runs passes on it (a
// sampling engine, a training step, a worker of the experiment runner): of
// size n it has n-1 helpers, and the goroutine that calls Run is the n-th
// worker, so a Team never keeps more goroutines busy than its size while
// its owner runs one pass at a time. Give concurrent owners Teams whose
// sizes add up to GOMAXPROCS and the process never runs more busy threads
// than it has cores. The helpers start at the first parallel pass (never at
// package initialization) and stop at Close, or when the Team is garbage
// collected.
//
// Work is handed out by chunk from a shared counter, so a helper that the
// operating system deschedules only delays the chunks it has taken; which
// goroutine computes a chunk never changes a result, as long as a chunk's
// job depends only on its chunk index (a job may index per-worker scratch
// buffers with its worker index).
package team

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// spinFor is the longest a helper looks for a new pass after its last one
// before it parks (see spinning). Longer than
// the gap between two passes of a decoding or training step (the search
// bookkeeping between steps takes a few tens of microseconds), short
// enough that an idle process stops using its cores within a fraction of
// a millisecond.
const spinFor = 200 * time.Microsecond

// waitFor is how long a caller whose chunks are done checks whether the
// other workers' are before it blocks until they are.
const waitFor = 50 * time.Microsecond

// yieldEvery is how many checks a spinning goroutine makes between calls
// of runtime.Gosched, which let any other goroutine waiting for a thread
// run first.
const yieldEvery = 64

// slots is how many passes may be open at once on one Team (nested
// passes, or several goroutines sharing a Team); a pass that finds no free
// slot runs on its caller alone.
const slots = 8

// A Team runs parallel passes on its caller and size-1 helper goroutines.
// The zero value and nil are not usable with helpers: a nil *Team runs
// every pass on its caller alone (Size 1). A Team is safe for concurrent
// use.
type Team struct {
	size int
	c    *crew
}

// crew is the state the helpers share. The helpers reference it, never
// the Team, so that an unreachable Team can be collected and its cleanup
// stop them.
type crew struct {
	helpers  int
	start    sync.Once
	stopOnce sync.Once
	stopped  atomic.Bool
	quit     chan struct{}
	wake     chan struct{}
	open     [slots]atomic.Pointer[pass]
	sleepers atomic.Int64
	running  atomic.Int64 // helpers started and not yet stopped

	epoch   time.Time
	lastEnd atomic.Int64 // when the last pass ended, in ns since epoch
	gap     atomic.Int64 // ns from the end of a pass to the start of the next, the last time
}

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

// New returns a Team of size workers: the caller of Run and size-1
// helpers. A size of 0 or less means runtime.GOMAXPROCS(0), the number of
// threads the process may run at once (which follows a container's CPU
// quota, unlike runtime.NumCPU). No goroutine starts before the first
// parallel pass.
func New(size int) *Team {
	if size <= 0 {
		size = runtime.GOMAXPROCS(0)
	}
	t := &Team{size: size}
	if size > 1 {
		t.c = &crew{helpers: size - 1, quit: make(chan struct{}), wake: make(chan struct{}, size-1), epoch: time.Now()}
		runtime.AddCleanup(t, func(c *crew) { c.stop() }, t.c)
	}
	return t
}

// Split returns n Teams whose sizes add up to t's size (each at least 1),
// for n owners that run passes at the same time: the first t.Size()%n
// get one worker more. With more owners than t's size every Team has size
// 1 and passes run on their callers alone. The new Teams are independent
// of t; Close them when done.
func (t *Team) Split(n int) []*Team {
	teams := make([]*Team, max(n, 0))
	for i := range teams {
		share := t.Size() / n
		if i < t.Size()%n {
			share++
		}
		teams[i] = New(max(share, 1))
	}
	return teams
}

// Size returns the number of goroutines that may work on one pass, the
// caller included: 1 for a nil or closed Team.
func (t *Team) Size() int {
	if t == nil || (t.c != nil && t.c.stopped.Load()) {
		return 1
	}
	return t.size
}

// Close stops the helpers; passes still open finish on their callers. Run
// on a closed Team runs passes on the caller alone. Close is idempotent.
func (t *Team) Close() {
	if t != nil && t.c != nil {
		t.c.stop()
	}
}

func (c *crew) stop() {
	c.stopOnce.Do(func() {
		c.stopped.Store(true)
		close(c.quit)
	})
}

// Run calls job(worker, chunk) for every chunk in [0, chunks) and returns
// when all are done. The calling goroutine takes part, as worker 0; at
// most min(workers, Size()) goroutines do, each with its own worker index
// in [0, workers) (a job may index per-worker buffers with it). Each takes
// the next chunk not yet taken, so chunks start in increasing order.
// Passes may run concurrently and be nested (a job may call Run).
func (t *Team) Run(workers, chunks int, job func(worker, chunk int)) {
	if chunks <= 0 {
		return
	}
	workers = min(workers, t.Size())
	if workers <= 1 || chunks == 1 {
		for c := range chunks {
			job(0, c)
		}
		return
	}
	h := t.c
	h.start.Do(func() {
		for range h.helpers {
			h.running.Add(1)
			go h.loop()
		}
	})
	p := &pass{job: job, chunks: int64(chunks), maxWorkers: int64(workers), finished: make(chan struct{})}
	p.joined.Store(1) // the caller is worker 0
	h.gap.Store(max(int64(time.Since(h.epoch))-h.lastEnd.Load(), 0))
	defer func() { h.lastEnd.Store(int64(time.Since(h.epoch))) }()
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
	if s := h.sleepers.Load(); s > 0 {
		for range min(workers-1, int(s)) {
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

// spinning reports whether a helper idle since idleSince should keep
// looking for a pass: for twice the team's last gap between passes, at
// most spinFor.
func (c *crew) spinning(idleSince time.Time) bool {
	return time.Since(idleSince) <= min(spinFor, 2*time.Duration(c.gap.Load()))
}

// loop is a helper goroutine: it works on open passes, spins after its
// last one while passes come often (see spinning), then parks until a
// pass wakes it or the team stops.
func (c *crew) loop() {
	defer c.running.Add(-1)
	for {
		idleSince := time.Now()
		for spins := 0; ; spins++ {
			if c.findWork() {
				idleSince, spins = time.Now(), 0
				continue
			}
			if spins%yieldEvery == yieldEvery-1 {
				if c.stopped.Load() || !c.spinning(idleSince) {
					break
				}
				runtime.Gosched()
			}
		}
		// Park: count as a sleeper first, then look once more, so that
		// a pass opened in between is not missed.
		c.sleepers.Add(1)
		if c.findWork() {
			c.sleepers.Add(-1)
			continue
		}
		select {
		case <-c.wake:
			c.sleepers.Add(-1)
		case <-c.quit:
			c.sleepers.Add(-1)
			return
		}
	}
}

// findWork joins the first open pass that has room; it reports whether
// it worked on one.
func (c *crew) findWork() bool {
	for i := range c.open {
		if p := c.open[i].Load(); p != nil && p.join() {
			return true
		}
	}
	return false
}
