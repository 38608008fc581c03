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
type bufPool struct {
	mu     sync.Mutex
	free   map[int][][]float32 // by capacity, a size class
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
	return &bufPool{free: make(map[int][][]float32), limit: maxPooledFloats}
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
	l := p.free[c]
	if k := len(l); k > 0 {
		b := l[k-1]
		l[k-1] = nil
		p.free[c] = l[:k-1]
		p.pooled -= c
		p.mu.Unlock()
		return b[:n]
	}
	p.mu.Unlock()
	return make([]float32, n, c)
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
