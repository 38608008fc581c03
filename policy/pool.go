package policy

import "sync"

// bufPool recycles the large float32 buffers of the training path (the
// activations an operator keeps for its backward pass, and the gradient
// buffers it hands to spago, which copies them): a training step then
// reuses the previous step's memory instead of allocating, zeroing and
// page-faulting hundreds of megabytes. Buffers are kept by exact length.
// It is safe for concurrent use (spago runs backward passes in goroutines).
// A nil *bufPool allocates.
type bufPool struct {
	mu   sync.Mutex
	free map[int][][]float32
}

// maxPooledPerSize bounds the buffers of one length the pool keeps.
const maxPooledPerSize = 64

func newBufPool() *bufPool { return &bufPool{free: make(map[int][][]float32)} }

// get returns a buffer of length n with undefined contents.
func (p *bufPool) get(n int) []float32 {
	if p == nil {
		return make([]float32, n)
	}
	p.mu.Lock()
	l := p.free[n]
	if k := len(l); k > 0 {
		b := l[k-1]
		l[k-1] = nil
		p.free[n] = l[:k-1]
		p.mu.Unlock()
		return b
	}
	p.mu.Unlock()
	return make([]float32, n)
}

// getZero returns a zeroed buffer of length n.
func (p *bufPool) getZero(n int) []float32 {
	b := p.get(n)
	clear(b)
	return b
}

// put gives buffers back; the caller must hold no reference to them.
func (p *bufPool) put(bufs ...[]float32) {
	if p == nil {
		return
	}
	p.mu.Lock()
	for _, b := range bufs {
		if b == nil || len(p.free[len(b)]) >= maxPooledPerSize {
			continue
		}
		p.free[len(b)] = append(p.free[len(b)], b)
	}
	p.mu.Unlock()
}
