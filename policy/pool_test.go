package policy

import "testing"

// Buffers serve every length of their size class, at most 12.5% larger,
// and the pool's memory stays bounded however many lengths it sees (as
// when batches of varying sequence lengths train).
func TestBufPoolClasses(t *testing.T) {
	for n := 1; n < 1<<24; n += 1 + n/7 {
		c := sizeClass(n)
		if c < n || (n > 64 && float64(c) > 1.125*float64(n)) || sizeClass(c) != c {
			t.Fatalf("sizeClass(%d) = %d", n, c)
		}
	}
	p := newBufPool()
	a := p.get(1000)
	if len(a) != 1000 || cap(a) != sizeClass(1000) {
		t.Fatalf("get(1000): len %d cap %d", len(a), cap(a))
	}
	p.put(a)
	if b := p.get(990); &b[0] != &a[0] || len(b) != 990 {
		t.Error("a buffer of the same class was not reused for a nearby length")
	}
	p.put(make([]float32, 1000)) // not from get: not kept
	if p.pooled != 0 {
		t.Errorf("pooled %d floats of a foreign buffer", p.pooled)
	}
	p.limit = 1 << 16
	for n := 64; n < 1<<14; n = n*9/8 + 1 {
		for range maxPooledPerSize + 1 {
			p.put(make([]float32, n, sizeClass(n)))
		}
	}
	if p.pooled > p.limit || p.pooled < p.limit/2 {
		t.Errorf("pool holds %d floats, want near its bound %d", p.pooled, p.limit)
	}
	for c, l := range p.free {
		if len(l) > maxPooledPerSize {
			t.Errorf("%d buffers of class %d", len(l), c)
		}
	}
}

// A request that misses its class takes a free buffer up to twice its
// size, and trim keeps only the buffers asked for since the last trim, so
// the pool holds one step's memory however the lengths change from step to
// step.
func TestBufPoolFollowsStep(t *testing.T) {
	p := newBufPool()
	a := p.get(1000)
	p.put(a)
	if b := p.get(600); &b[0] != &a[0] || len(b) != 600 {
		t.Error("a free buffer under twice the size was not reused")
	} else {
		p.put(b)
	}
	if b := p.get(400); cap(b) != sizeClass(400) {
		t.Errorf("get(400) took a buffer of %d floats, more than twice its class", cap(b))
	}
	p.trim()
	// A step that asks for three buffers of one class, then gives back
	// buffers of classes nobody asked for.
	var bufs [][]float32
	for range 3 {
		bufs = append(bufs, p.get(5000))
	}
	p.put(bufs...)
	p.put(make([]float32, 70000, sizeClass(70000)), make([]float32, 9000, sizeClass(9000)))
	p.trim()
	if want := 3 * sizeClass(5000); p.pooled != want || len(p.free) != 1 {
		t.Errorf("after trim the pool holds %d floats in %d classes, want %d in 1", p.pooled, len(p.free), want)
	}
	p.trim() // a step that asked for nothing
	if p.pooled != 0 || len(p.free) != 0 {
		t.Errorf("after a step that used nothing the pool holds %d floats", p.pooled)
	}
}
