package policy

import (
	"math/bits"
	"sync"
)

// bufPool recycles the large float32 buffers of the training path (the
// activations an operator keeps for its backward pass, and the gradient
// buffers it hands to spago, which copies them): a training step then
// reuses the previous step's memory instead of allocating, zeroing and
// page-faulting hundreds of megabytes. Buffers are kept by size class
// (sizeClass: eight classes per power of two), so batches whose lengths
// differ from step to step reuse each other's buffers, and the pool holds
// at most maxPooledPerSize buffers a class and maxPooledFloats in all: its
// memory stays bounded however many shapes training sees. It is safe for
// concurrent use (spago runs backward passes in goroutines). A nil
// *bufPool allocates.
//
// Its memory follows the training step: a request that finds no buffer of
// its class takes the smallest free one up to twice its size (the lengths
// of RL batches change from step to step), and trim, at the end of each
// optimizer step, drops the buffers the step did not ask for, so that the
// pool holds at most what one step used instead of filling up to its bound
// with the size classes of past steps; drop (Model.FreeBuffers) empties it
// where the next step is far off, as between the updates of an RL run.
type bufPool struct {
	mu     sync.Mutex
	free   map[int][][]float32 // by capacity, a size class
	used   map[int]int         // buffers of each class handed out since the last trim
	pooled int                 // floats held in free
	limit  int                 // the most floats free may hold
}

// maxPooledPerSize bounds the buffers of one size class the pool keeps.
const maxPooledPerSize = 256

// maxPooledFloats bounds the floats the pool keeps in all (1.5 GB: a
// training step of the small model on 64 × 128 tokens frees ~0.7 GB of
// buffers, which a smaller bound dropped and the next step reallocated).
const maxPooledFloats = 384 << 20

func newBufPool() *bufPool {
	return &bufPool{free: make(map[int][][]float32), used: make(map[int]int), limit: maxPooledFloats}
}

// sizeClass rounds n up to the capacity of the buffers that serve it: 64
// at least, then one of eight evenly spaced sizes in each power-of-two
// range, so a buffer is at most 12.5% larger than asked for.
func sizeClass(n int) int {
	if n <= 64 {
		return 64
	}
	step := 1 << (bits.Len(uint(n-1)) - 4)
	return (n + step - 1) / step * step
}

// get returns a buffer of length n with undefined contents.
func (p *bufPool) get(n int) []float32 {
	if p == nil {
		return make([]float32, n)
	}
	c := sizeClass(n)
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.free[c]) == 0 {
		// The smallest free buffer up to twice the size asked for.
		best := 0
		for k, l := range p.free {
			if k > c && k <= 2*c && len(l) > 0 && (best == 0 || k < best) {
				best = k
			}
		}
		if best == 0 {
			p.used[c]++
			return make([]float32, n, c)
		}
		c = best
	}
	l := p.free[c]
	k := len(l)
	b := l[k-1]
	l[k-1] = nil
	p.free[c] = l[:k-1]
	p.pooled -= c
	p.used[c]++
	return b[:n]
}

// trim drops the free buffers beyond what was asked for since the last
// trim, class by class (a class not asked for at all goes entirely), and
// starts counting anew. Called at the end of each optimizer step, it
// bounds the pool by the memory of one step.
func (p *bufPool) trim() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for c, l := range p.free {
		keep := min(len(l), p.used[c])
		clear(l[keep:])
		p.pooled -= (len(l) - keep) * c
		if keep == 0 {
			delete(p.free, c)
		} else {
			p.free[c] = l[:keep]
		}
	}
	clear(p.used)
}

// drop empties the pool, leaving its free buffers to the garbage
// collector (the next requests allocate), and returns how many floats
// they held.
func (p *bufPool) drop() int {
	if p == nil {
		return 0
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.pooled
	clear(p.free)
	clear(p.used)
	p.pooled = 0
	return n
}

// getZero returns a zeroed buffer of length n.
func (p *bufPool) getZero(n int) []float32 {
	b := p.get(n)
	clear(b)
	return b
}

// put gives buffers back; the caller must hold no reference to them.
// Buffers that did not come from get (their capacity is no size class)
// are left to the garbage collector.
func (p *bufPool) put(bufs ...[]float32) {
	if p == nil {
		return
	}
	p.mu.Lock()
	for _, b := range bufs {
		c := cap(b)
		if b == nil || c != sizeClass(c) || len(p.free[c]) >= maxPooledPerSize || p.pooled+c > p.limit {
			continue
		}
		p.free[c] = append(p.free[c], b[:c])
		p.pooled += c
	}
	p.mu.Unlock()
}
