package policy

import (
	"math"

	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"

	"github.com/rollout-rl/rollout/policy/internal/kernel"
	"github.com/rollout-rl/rollout/policy/portmath"
	"github.com/rollout-rl/rollout/policy/team"
)

// This file holds the transformer's layers as spago autograd functions
// (ag.AutoGradFunction): each computes its forward pass with the kernels of
// policy/internal/kernel over a whole batch of rows and keeps what its
// backward pass needs. Rows are the B·T positions of a right-padded batch,
// row b·T+t being position t of sequence b.
//
// Every parameter is an operand of exactly one function per forward pass and
// every intermediate value feeds at most two functions, so the gradients
// spago accumulates do not depend on the order its goroutines finish in.
// Work inside a function is split over goroutines by rows (or by sequence
// and head), never inside a sum, so results do not depend on the split.
//
// The buffers a function keeps for its backward pass, and the gradient
// buffers it hands to spago (which copies them), come from the model's
// bufPool and go back to it at the end of the backward pass: a graph is
// back-propagated once (as Trainer.Step does). A graph that is not
// back-propagated gives them back through release (see forwardPass).

// data returns the float32 slice behind a spago tensor.
func data(t mat.Tensor) []float32 { return mat.Data[float32](t.Value()) }

// dense wraps rows×cols float32s as a spago matrix without copying.
func dense(rows, cols int, v []float32) *mat.Dense[float32] {
	return mat.NewDense[float32](mat.WithShape(rows, cols), mat.WithBacking(v))
}

// accGrad adds g to t's gradient if t takes gradients.
func accGrad(t mat.Tensor, rows, cols int, g []float32) {
	if t.RequiresGrad() {
		t.AccGrad(dense(rows, cols, g))
	}
}

// giveGradCopy adds g to t's gradient as accGrad does, through a copy in
// a buffer of pool that becomes the gradient (see giveGrad) rather than
// spago's freshly allocated copy: for a gradient that is part of a larger
// buffer, which cannot be given away itself.
func giveGradCopy(t mat.Tensor, rows, cols int, g []float32, pool *bufPool) {
	if !t.RequiresGrad() {
		return
	}
	if t.Value().HasGrad() {
		t.AccGrad(dense(rows, cols, g))
		return
	}
	buf := pool.get(len(g))
	copy(buf, g)
	giveGrad(t, rows, cols, buf, pool)
}

// handover is a gradient whose buffer spago may keep: spago's first
// accumulation into a tensor stores a Clone of the gradient it is given,
// and handover's Clone is the matrix itself, not a copy.
type handover struct{ *mat.Dense[float32] }

// Clone returns the matrix itself (see handover).
func (h handover) Clone() mat.Matrix { return h.Dense }

// giveGrad adds g, a whole buffer of pool, to t's gradient as accGrad
// does, but when t has no gradient yet the buffer itself becomes the
// gradient instead of spago's copy of it (a copy of every activation
// gradient was ~7% of a training step). Otherwise, or when t takes no
// gradient, g goes back to the pool. The caller must not use g afterwards.
// A buffer given away returns to the pool when its gradient has been
// consumed: by block.Backward and embedding.Backward for their outputs'
// gradients, by Trainer.Step for the parameters'.
func giveGrad(t mat.Tensor, rows, cols int, g []float32, pool *bufPool) {
	if !t.RequiresGrad() || len(g) == 0 {
		pool.put(g)
		return
	}
	if t.Value().HasGrad() {
		t.AccGrad(dense(rows, cols, g))
		pool.put(g)
		return
	}
	t.AccGrad(handover{dense(rows, cols, g)})
	// Another goroutine may have given its gradient first, in which case
	// spago added g to that one and g is free again.
	if kept := t.Value().Grad(); kept == nil || &data(kept)[0] != &g[0] {
		pool.put(g)
	}
}

// releaser is a function of the forward pass that keeps pooled buffers for
// its backward pass: release gives them back to the pool when no backward
// pass will run (a forward pass whose values alone are wanted). After
// release the function's output may no longer be read.
type releaser interface{ release() }

// forwardPass collects the functions of one forward pass, so that a pass
// that is not back-propagated can release them all. A nil *forwardPass
// collects nothing (a pass that Backward will release).
type forwardPass struct{ fns []releaser }

// add registers f.
func (fp *forwardPass) add(f releaser) {
	if fp != nil {
		fp.fns = append(fp.fns, f)
	}
}

// release gives back every buffer the pass's functions keep.
func (fp *forwardPass) release() {
	for _, f := range fp.fns {
		f.release()
	}
	fp.fns = nil
}

// embedding looks up the rows of the embedding matrix for the given ids.
type embedding struct {
	table *nn.Param
	ids   []int // one per row; PAD rows get a zero vector and no gradient
	dim   int
	pool  *bufPool
	out   []float32 // the output, a pooled buffer (see Backward)
}

func (f *embedding) Operands() []mat.Tensor { return []mat.Tensor{f.table} }

func (f *embedding) Forward() (mat.Tensor, error) {
	e := data(f.table)
	out := f.pool.get(len(f.ids) * f.dim)
	for r, id := range f.ids {
		if id != PAD {
			copy(out[r*f.dim:(r+1)*f.dim], e[id*f.dim:(id+1)*f.dim])
		} else {
			clear(out[r*f.dim : (r+1)*f.dim])
		}
	}
	f.out = out
	return dense(len(f.ids), f.dim, out), nil
}

func (f *embedding) Backward(gy mat.Tensor) error {
	g := data(gy)
	vocab := len(data(f.table)) / f.dim
	ge := f.pool.getZero(vocab * f.dim)
	for r, id := range f.ids { // in row order: deterministic
		if id != PAD {
			kernel.Axpy(1, g[r*f.dim:(r+1)*f.dim], ge[id*f.dim:(id+1)*f.dim])
		}
	}
	giveGrad(f.table, vocab, f.dim, ge, f.pool)
	// The output's gradient (given by the first block, see giveGrad) and
	// the output itself (read last by the first block's backward pass).
	f.pool.put(g, f.out)
	f.out = nil
	return nil
}

func (f *embedding) release() {
	f.pool.put(f.out)
	f.out = nil
}

// rmsNorm is y = x / sqrt(mean(x²) + eps) ∘ w, row by row.
type rmsNorm struct {
	x    mat.Tensor
	w    *nn.Param
	eps  float32
	dim  int
	pool *bufPool
	team *team.Team
	inv  []float32 // 1/rms per row, for the backward pass
}

func (f *rmsNorm) Operands() []mat.Tensor { return []mat.Tensor{f.x, f.w} }

func (f *rmsNorm) Forward() (mat.Tensor, error) {
	x, w := data(f.x), data(f.w)
	d := f.dim
	rows := len(x) / d
	out := make([]float32, len(x))
	f.inv = f.pool.get(rows)
	parallelFor(f.team, rows, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			f.inv[r] = rmsNormRow(out[r*d:(r+1)*d], x[r*d:(r+1)*d], w, f.eps)
		}
	})
	return dense(rows, d, out), nil
}

// rmsNormRow normalises one row as Hugging Face's LlamaRMSNorm does and
// returns 1/rms.
func rmsNormRow(dst, x, w []float32, eps float32) float32 {
	return kernel.RMSNorm(dst, x, w, eps)
}

func (f *rmsNorm) Backward(gy mat.Tensor) error {
	x, g := data(f.x), data(gy)
	gx := f.pool.get(len(x))
	gw := rmsNormBackward(gx, nil, x, data(f.w), g, f.inv, f.dim, f.pool, f.team)
	giveGrad(f.x, len(x)/f.dim, f.dim, gx, f.pool)
	accGrad(f.w, f.dim, 1, gw)
	f.pool.put(f.inv)
	f.inv = nil
	return nil
}

func (f *rmsNorm) release() {
	f.pool.put(f.inv)
	f.inv = nil
}

// rmsNormBackward sets gx to the gradient of RMSNorm's input x (weight w,
// 1/rms per row inv) for the output gradient g, plus res if res is not nil
// (a residual gradient), and returns the weight's gradient, summed over
// rows in row order.
func rmsNormBackward(gx, res, x, w, g, inv []float32, d int, pool *bufPool, tm *team.Team) []float32 {
	rows := len(x) / d
	gxw := pool.get(len(x)) // per row, g ∘ x · inv: the terms of w's gradient
	parallelFor(tm, rows, func(lo, hi int) {
		var rr []float32
		if res != nil {
			rr = res[lo*d : hi*d]
		}
		kernel.RMSNormBackwardRows(gx[lo*d:hi*d], gxw[lo*d:hi*d], rr, x[lo*d:hi*d], w, g[lo*d:hi*d], inv[lo:hi])
	})
	gw := make([]float32, d)
	// Each column summed in row order (deterministic), the columns split
	// over goroutines in blocks of 16.
	parallelFor(tm, (d+15)/16, func(lo, hi int) {
		lo, hi = 16*lo, min(d, 16*hi)
		for r := 0; r < rows; r++ {
			kernel.Axpy(1, gxw[r*d+lo:r*d+hi], gw[lo:hi])
		}
	})
	pool.put(gxw)
	return gw
}

// sublayer is the body of a residual block: attention or the feed-forward
// network, over raw row-major slices.
type sublayer interface {
	// params lists the sublayer's parameters (operands of the block).
	params() []mat.Tensor
	// forward adds the sublayer's output for the normalised input h
	// ([rows, dim]) to y, which holds the block's input.
	forward(y, h []float32)
	// backward sets gh to the gradient of h for the output gradient g,
	// accumulates the parameters' gradients and releases what forward kept.
	backward(gh, g, h []float32)
	// release gives back what forward kept, when no backward pass runs.
	release()
}

// block is one residual sub-layer of the transformer, y = x + f(RMSNorm(x)),
// as one autograd function: the normalised input stays inside (a pooled
// buffer during each pass, computed again for the backward pass) and x's
// gradient, g + RMSNorm'(∂f), is handed to spago once.
type block struct {
	x    mat.Tensor
	norm *nn.Param
	eps  float32
	dim  int
	pool *bufPool
	team *team.Team
	f    sublayer
	h    []float32 // RMSNorm(x)
	inv  []float32 // 1/rms per row
	y    []float32 // the output, a pooled buffer (see Backward)
}

func (b *block) Operands() []mat.Tensor {
	return append([]mat.Tensor{b.x, b.norm}, b.f.params()...)
}

func (b *block) Forward() (mat.Tensor, error) {
	x, w := data(b.x), data(b.norm)
	d := b.dim
	rows := len(x) / d
	b.h, b.inv, b.y = b.pool.get(len(x)), b.pool.get(rows), b.pool.get(len(x))
	// The output starts as the block's input (the residual, to which the
	// sublayer adds), copied row by row while the row is in cache.
	parallelFor(b.team, rows, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			xr := x[r*d : (r+1)*d]
			b.inv[r] = rmsNormRow(b.h[r*d:(r+1)*d], xr, w, b.eps)
			copy(b.y[r*d:(r+1)*d], xr)
		}
	})
	b.f.forward(b.y, b.h)
	// The normalised input is not kept for the backward pass, which
	// computes it again from x (normalise): the same bits, for one more
	// pass over a [rows, dim] matrix instead of holding it through the
	// forward and backward passes of every later block.
	b.pool.put(b.h)
	b.h = nil
	return dense(rows, d, b.y), nil
}

// normalise sets h to RMSNorm(x) row by row, as Forward computed it.
func (b *block) normalise(h, x []float32) {
	d, w := b.dim, data(b.norm)
	parallelFor(b.team, len(x)/d, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			rmsNormRow(h[r*d:(r+1)*d], x[r*d:(r+1)*d], w, b.eps)
		}
	})
}

func (b *block) Backward(gy mat.Tensor) error {
	x, g := data(b.x), data(gy)
	b.h = b.pool.get(len(x))
	b.normalise(b.h, x)
	gh := b.pool.get(len(x))
	b.f.backward(gh, g, b.h)
	gx := b.pool.get(len(x))
	gw := rmsNormBackward(gx, g, x, data(b.norm), gh, b.inv, b.dim, b.pool, b.team)
	giveGrad(b.x, len(x)/b.dim, b.dim, gx, b.pool)
	accGrad(b.norm, b.dim, 1, gw)
	// g, the gradient of this block's output, was given by its consumer
	// (see giveGrad) and is read by nobody after this.
	// The output too: its consumers, whose backward passes are over, were
	// the last to read it (a block's output is never a model's output).
	b.pool.put(gh, b.h, b.inv, g, b.y)
	b.h, b.inv, b.y = nil, nil, nil
	return nil
}

func (b *block) release() {
	b.f.release()
	b.pool.put(b.h, b.inv, b.y)
	b.h, b.inv, b.y = nil, nil, nil
}

// linear is y = x·Wᵀ with W stored [out, in].
type linear struct {
	x       mat.Tensor
	w       *nn.Param
	in, out int
	pool    *bufPool
	mm      products
}

func (f *linear) Operands() []mat.Tensor { return []mat.Tensor{f.x, f.w} }

func (f *linear) Forward() (mat.Tensor, error) {
	x := data(f.x)
	rows := len(x) / f.in
	y := make([]float32, rows*f.out)
	f.mm.nt(y, x, data(f.w), rows, f.out, f.in, false)
	return dense(rows, f.out, y), nil
}

func (f *linear) Backward(gy mat.Tensor) error {
	x, g := data(f.x), data(gy)
	rows := len(x) / f.in
	if f.x.RequiresGrad() {
		gx := f.pool.get(len(x))
		f.mm.nn(gx, g, data(f.w), rows, f.in, f.out, false)
		giveGrad(f.x, rows, f.in, gx, f.pool)
	}
	gw := f.pool.get(f.out * f.in)
	f.mm.tn(gw, g, x, f.out, f.in, rows, false)
	giveGrad(f.w, f.out, f.in, gw, f.pool)
	return nil
}

// feedForward is the SwiGLU block: y = (silu(x·W1ᵀ) ∘ x·W3ᵀ)·W2ᵀ, with W1
// the gate, W3 the up and W2 the down projection. W1 and W3 are stacked
// into one [2·hidden, dim] matrix for the step, so that the gate and up
// projections (and their backward products) are one matrix product each.
type feedForward struct {
	w1, w3, w2  *nn.Param
	dim, hidden int
	pool        *bufPool
	mm          products
	w13         []float32 // [W1; W3], [2·hidden, dim]
	gu          []float32 // [rows, 2·hidden]: x·W1ᵀ then x·W3ᵀ per row
	act         []float32 // silu(gate) ∘ up, [rows, hidden], during a pass only
}

func (f *feedForward) params() []mat.Tensor { return []mat.Tensor{f.w1, f.w3, f.w2} }

func (f *feedForward) forward(y, x []float32) {
	rows := len(x) / f.dim
	hid := f.hidden
	f.w13 = f.pool.get(2 * hid * f.dim)
	copy(f.w13, data(f.w1))
	copy(f.w13[hid*f.dim:], data(f.w3))
	f.gu = f.pool.get(rows * 2 * hid)
	f.mm.nt(f.gu, x, f.w13, rows, 2*hid, f.dim, false)
	f.act = f.pool.get(rows * hid)
	f.product(f.act)
	f.mm.nt(y, f.act, data(f.w2), rows, f.dim, hid, true)
	// The product is not kept for the backward pass, which computes it
	// again from the gate and up projections (product): the same bits,
	// for one elementwise pass instead of a [rows, hidden] buffer per layer
	// held through the passes of every later layer.
	f.pool.put(f.act)
	f.act = nil
}

// product sets act to silu(gate) ∘ up from f.gu, row by row.
func (f *feedForward) product(act []float32) {
	hid := f.hidden
	parallelFor(f.mm.team, len(act)/hid, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			gu := f.gu[r*2*hid : (r+1)*2*hid]
			siluMul(act[r*hid:(r+1)*hid], gu[:hid], gu[hid:])
		}
	})
}

// siluMul sets dst = silu(gate) ∘ up, silu(x) = x·σ(x).
func siluMul(dst, gate, up []float32) { kernel.SiLUMul(dst, gate, up) }

func (f *feedForward) backward(gx, g, x []float32) {
	rows := len(x) / f.dim
	hid := f.hidden
	f.act = f.pool.get(rows * hid)
	f.product(f.act)
	gw2 := f.pool.get(f.dim * hid)
	f.mm.tn(gw2, g, f.act, f.dim, hid, rows, false)
	gact := f.pool.get(rows * hid)
	f.mm.nn(gact, g, data(f.w2), rows, hid, f.dim, false)
	ggu := f.pool.get(rows * 2 * hid) // per row: the gate's gradient, then the up's
	parallelFor(f.mm.team, rows, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			gate, up := f.gu[r*2*hid:r*2*hid+hid], f.gu[r*2*hid+hid:(r+1)*2*hid]
			ggate, gup := ggu[r*2*hid:r*2*hid+hid], ggu[r*2*hid+hid:(r+1)*2*hid]
			// d silu(z)/dz = σ(z)·(1 + z·(1 − σ(z))), in one pass
			kernel.SiLUMulBackward(ggate, gup, gate, up, gact[r*hid:(r+1)*hid])
		}
	})
	gw13 := f.pool.get(2 * hid * f.dim)
	f.mm.tn(gw13, ggu, x, 2*hid, f.dim, rows, false)
	f.mm.nn(gx, ggu, f.w13, rows, f.dim, 2*hid, false)
	giveGradCopy(f.w1, hid, f.dim, gw13[:hid*f.dim], f.pool)
	giveGradCopy(f.w3, hid, f.dim, gw13[hid*f.dim:], f.pool)
	giveGrad(f.w2, f.dim, hid, gw2, f.pool)
	f.pool.put(gw13, gact, ggu, f.w13, f.gu, f.act)
	f.w13, f.gu, f.act = nil, nil, nil
}

func (f *feedForward) release() {
	f.pool.put(f.w13, f.gu, f.act)
	f.w13, f.gu, f.act = nil, nil, nil
}

// attention is causal multi-head self-attention with rotary position
// embeddings: y = concat_h(softmax(q_h·k_hᵀ/√d_h + causal) · v_h)·Woᵀ, with
// q = rope(x·Wqᵀ), k = rope(x·Wkᵀ), v = x·Wvᵀ. Wq, Wk and Wv are stacked
// into one [3·dim, dim] matrix for the step, so q, k and v come from one
// matrix product, rows [q | k | v]; the per-head blocks are read in place
// with the strided kernels.
type attention struct {
	wq, wk, wv, wo *nn.Param
	cfg            Config
	rope           *rope
	seqLen         int      // T: rows per sequence
	lens           []int    // valid positions per sequence (right padding)
	tree           *packing // a packed batch's prefix tree (then lens is nil)
	pool           *bufPool
	mm             products

	wqkv  []float32 // [Wq; Wk; Wv], [3·dim, dim]
	qkv   []float32 // [rows, 3·dim]: q and k after RoPE, v
	mixed []float32 // concatenated head outputs, [rows, dim]
	probs []float32 // packed: per (chain, head) a block of attention weights
	offs  []int     // where each (chain, head) block starts in probs
}

func (f *attention) params() []mat.Tensor {
	return []mat.Tensor{f.wq, f.wk, f.wv, f.wo}
}

// padded reports whether some sequence is shorter than the batch's rows.
// A packed batch has no padding.
func (f *attention) padded() bool {
	for _, n := range f.lens {
		if n < f.seqLen {
			return true
		}
	}
	return false
}

// rotate applies RoPE (dir 1) or its inverse (dir −1) to every head of
// the q and k parts of every row of m ([rows, 3·dim]).
func (f *attention) rotate(m []float32, dir float32) {
	d, nh, half := f.cfg.Dim, f.cfg.Heads, f.rope.half
	parallelFor(f.mm.team, len(m)/(3*d), func(lo, hi int) {
		for r := lo; r < hi; r++ {
			t := r % max(f.seqLen, 1)
			if f.tree != nil {
				t = f.tree.depth[r]
			}
			// q's heads, then k's: 2·nh consecutive head vectors
			kernel.RoPE(m[r*3*d:r*3*d+2*d], 2*nh, f.rope.cos[t*half:(t+1)*half], f.rope.sin[t*half:(t+1)*half], dir)
		}
	})
}

func (f *attention) forward(y, x []float32) {
	d, hd, nh := f.cfg.Dim, f.cfg.HeadDim(), f.cfg.Heads
	rows := len(x) / d
	f.wqkv = f.pool.get(3 * d * d)
	copy(f.wqkv, data(f.wq))
	copy(f.wqkv[d*d:], data(f.wk))
	copy(f.wqkv[2*d*d:], data(f.wv))
	f.qkv = f.pool.get(rows * 3 * d)
	f.mm.nt(f.qkv, x, f.wqkv, rows, 3*d, d, false)
	f.rotate(f.qkv, 1)
	if f.padded() {
		f.mixed = f.pool.getZero(rows * d)
	} else {
		f.mixed = f.pool.get(rows * d)
	}
	if f.tree != nil {
		f.treeForward()
		f.mm.nt(y, f.mixed, data(f.wo), rows, d, d, true)
		return
	}
	ld := 3 * d
	parallelFor(f.mm.team, len(f.lens)*nh, func(lo, hi int) {
		var p []float32
		for i := lo; i < hi; i++ {
			b, h := i/nh, i%nh
			n, o := f.lens[b], b*f.seqLen*ld+h*hd // v of the block at o+2d
			p = grow(p, n*n)
			f.weights(p, b, h)
			om := b*f.seqLen*d + h*hd
			causalRows(n, func(i0, i1 int) { // O = P·V over the values up to i1
				kernel.MatMulNNStrided(f.mixed[om+i0*d:], d, p[i0*n:], n, f.qkv[o+2*d:], ld, i1-i0, hd, i1, false)
			})
		}
	})
	f.mm.nt(y, f.mixed, data(f.wo), rows, d, d, true)
}

// weights sets p ([n, n], n the length of sequence b) to head h's
// attention weights over sequence b, softmax(q·kᵀ/√d_h + causal), from the
// q and k in f.qkv. The forward pass does not keep them for the backward
// pass, which computes them again, the same bits, from the same q and k:
// one more Q·Kᵀ per head instead of [len, len] weights per sequence, head
// and layer held through the passes of every later layer.
func (f *attention) weights(p []float32, b, h int) {
	d, hd := f.cfg.Dim, f.cfg.HeadDim()
	ld := 3 * d
	n, o := f.lens[b], b*f.seqLen*ld+h*hd // q of the block at o, k at o+d
	scale := float32(1 / math.Sqrt(float64(hd)))
	causalRows(n, func(i0, i1 int) { // S = Q·Kᵀ, the keys up to the block's last query
		kernel.MatMulNTStrided(p[i0*n:], n, f.qkv[o+i0*ld:], ld, f.qkv[o+d:], ld, i1-i0, i1, hd, false)
	})
	for t := 0; t < n; t++ {
		softmaxScaled(p[t*n:t*n+t+1], scale)
		clear(p[t*n+t+1 : (t+1)*n])
	}
}

func (f *attention) backward(gx, g, x []float32) {
	d, hd, nh := f.cfg.Dim, f.cfg.HeadDim(), f.cfg.Heads
	rows := len(x) / d
	gwo := f.pool.get(d * d)
	f.mm.tn(gwo, g, f.mixed, d, d, rows, false)
	gmixed := f.pool.get(rows * d)
	f.mm.nn(gmixed, g, data(f.wo), rows, d, d, false)

	ld := 3 * d
	var gqkv []float32 // [rows, 3·dim]: the gradients of q, k and v
	if f.padded() || f.tree != nil {
		gqkv = f.pool.getZero(rows * ld)
	} else {
		gqkv = f.pool.get(rows * ld)
	}
	scale := float32(1 / math.Sqrt(float64(hd)))
	if f.tree != nil {
		f.treeBackward(gqkv, gmixed)
	}
	parallelFor(f.mm.team, len(f.lens)*nh, func(lo, hi int) {
		var p, gp []float32
		for i := lo; i < hi; i++ {
			b, h := i/nh, i%nh
			n, o, om := f.lens[b], b*f.seqLen*ld+h*hd, b*f.seqLen*d+h*hd
			q, k, v := f.qkv[o:], f.qkv[o+d:], f.qkv[o+2*d:]
			gq, gk, gv := gqkv[o:], gqkv[o+d:], gqkv[o+2*d:]
			p = grow(p, n*n)
			f.weights(p, b, h)
			causalRows(n, func(j0, j1 int) { // dV = Pᵀ·dO over the queries from j0
				kernel.MatMulTNStrided(gv[j0*ld:], ld, p[j0*n+j0:], n, gmixed[om+j0*d:], d, j1-j0, hd, n-j0, false)
			})
			gp = grow(gp, n*n)
			causalRows(n, func(i0, i1 int) { // dP = dO·Vᵀ, up to i1
				kernel.MatMulNTStrided(gp[i0*n:], n, gmixed[om+i0*d:], d, v, ld, i1-i0, i1, hd, false)
			})
			for t := 0; t < n; t++ {
				pr, gr := p[t*n:(t+1)*n], gp[t*n:(t+1)*n]
				s := kernel.Dot(pr[:t+1], gr[:t+1])
				for j := 0; j <= t; j++ {
					gr[j] = pr[j] * (gr[j] - s) * scale // dS, scaled
				}
				clear(gr[t+1:])
			}
			causalRows(n, func(i0, i1 int) { // dQ = dS·K over the keys up to i1
				kernel.MatMulNNStrided(gq[i0*ld:], ld, gp[i0*n:], n, k, ld, i1-i0, hd, i1, false)
			})
			causalRows(n, func(j0, j1 int) { // dK = dSᵀ·Q over the queries from j0
				kernel.MatMulTNStrided(gk[j0*ld:], ld, gp[j0*n+j0:], n, q[j0*ld:], ld, j1-j0, hd, n-j0, false)
			})
		}
	})
	f.rotate(gqkv, -1) // back through RoPE: rotate by −angle
	f.mm.nn(gx, gqkv, f.wqkv, rows, d, 3*d, false)
	gw := f.pool.get(3 * d * d)
	f.mm.tn(gw, gqkv, x, 3*d, d, rows, false)
	giveGradCopy(f.wq, d, d, gw[:d*d], f.pool)
	giveGradCopy(f.wk, d, d, gw[d*d:2*d*d], f.pool)
	giveGradCopy(f.wv, d, d, gw[2*d*d:], f.pool)
	giveGrad(f.wo, d, d, gwo, f.pool)
	f.pool.put(gw, gmixed, gqkv, f.wqkv, f.qkv, f.mixed, f.probs)
	f.wqkv, f.qkv, f.mixed, f.probs = nil, nil, nil, nil
}

func (f *attention) release() {
	f.pool.put(f.wqkv, f.qkv, f.mixed, f.probs)
	f.wqkv, f.qkv, f.mixed, f.probs = nil, nil, nil, nil
}

// causalBlock is the height of the row blocks causalRows splits a head's
// positions into: a multiple of the product kernels' tile heights (4, 8).
const causalBlock = 16

// causalRows calls fn for consecutive blocks [i0, i1) of the n positions
// of one attention head. Causal attention weights (and their gradients)
// are 0 above the diagonal, so a block of queries needs only the keys
// before i1 and a block of keys only the queries from i0: the per-head
// products skip over a third of their work at 64 positions. Skipped terms are
// exact zeros at the start or the end of a sequential sum begun at +0, so
// no output changes a bit.
func causalRows(n int, fn func(i0, i1 int)) {
	for i0 := 0; i0 < n; i0 += causalBlock {
		fn(i0, min(n, i0+causalBlock))
	}
}

// rope holds the rotary embedding's cos and sin tables, computed as
// Hugging Face's LlamaRotaryEmbedding does (float32 inverse frequencies,
// rotate-half convention).
type rope struct {
	half     int
	cos, sin []float32 // [maxSeq, half]
}

func newRope(cfg Config) *rope {
	hd := cfg.HeadDim()
	r := &rope{half: hd / 2, cos: make([]float32, cfg.MaxSeq*hd/2), sin: make([]float32, cfg.MaxSeq*hd/2)}
	for i := 0; i < r.half; i++ {
		invFreq := float32(1 / math.Pow(cfg.RopeTheta, float64(2*i)/float64(hd)))
		for t := 0; t < cfg.MaxSeq; t++ {
			angle := float32(t) * invFreq
			r.cos[t*r.half+i] = float32(math.Cos(float64(angle)))
			r.sin[t*r.half+i] = float32(math.Sin(float64(angle)))
		}
	}
	return r
}

// rotate applies the rotation of position t to one head vector in place
// (kernel.RoPE's arithmetic); dir −1 applies the inverse (transposed)
// rotation.
func (r *rope) rotate(x []float32, t int, dir float32) {
	h := r.half
	c, s := r.cos[t*h:(t+1)*h], r.sin[t*h:(t+1)*h]
	lo, hi := x[:h], x[h:2*h]
	s, lo, hi = s[:len(c)], lo[:len(c)], hi[:len(c)] // one bounds check, not one per element
	for i, ci := range c {
		a, b := lo[i], hi[i]
		sn := dir * s[i]
		lo[i] = float32(a*ci) - float32(b*sn)
		hi[i] = float32(b*ci) + float32(a*sn)
	}
}

// tokenLogProbs gives, per output row o, log p(targets[o]) under
// softmax(logits[src[o]]/τ) (src nil: src[o] = o); rows whose target is
// negative give 0 and take no gradient. Each logits row's softmax is
// computed once however many outputs read it (a packed batch's fork
// points), and their gradients are summed into it in output order.
type tokenLogProbs struct {
	logits  mat.Tensor
	src     []int
	targets []int
	vocab   int
	invTemp float32
	flush   bool // gradients below the smallest normal float32 set to 0 (Model.SetFlushSubnormals)
	pool    *bufPool
	team    *team.Team
	fan     fanout
	probs   []float32 // softmax(logits/τ) per logits row read
}

func (f *tokenLogProbs) Operands() []mat.Tensor { return []mat.Tensor{f.logits} }

func (f *tokenLogProbs) release() {
	f.pool.put(f.probs)
	f.probs = nil
}

// sources returns the fanout of the outputs with a target.
func sources(src, targets []int, rows int) fanout {
	s := make([]int, len(targets))
	for o, tgt := range targets {
		switch {
		case tgt < 0:
			s[o] = -1
		case src == nil:
			s[o] = o
		default:
			s[o] = src[o]
		}
	}
	return newFanout(s, rows)
}

func (f *tokenLogProbs) Forward() (mat.Tensor, error) {
	z := data(f.logits)
	rows := len(z) / f.vocab
	f.fan = sources(f.src, f.targets, rows)
	f.probs = f.pool.get(len(z))
	out := make([]float32, len(f.targets))
	parallelFor(f.team, rows, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			outs := f.fan.of(r)
			if len(outs) == 0 {
				continue
			}
			p := f.probs[r*f.vocab : (r+1)*f.vocab]
			logZ, _ := softmax(p, z[r*f.vocab:(r+1)*f.vocab], f.invTemp)
			for _, o := range outs {
				out[o] = float32(z[r*f.vocab+f.targets[o]]*f.invTemp) - logZ
			}
		}
	})
	return dense(len(out), 1, out), nil
}

func (f *tokenLogProbs) Backward(gy mat.Tensor) error {
	g := data(gy)
	gz := f.pool.get(len(f.probs))
	parallelFor(f.team, len(f.fan.first)-1, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			outs := f.fan.of(r)
			row := gz[r*f.vocab : (r+1)*f.vocab]
			var sum float32
			zero := true
			for _, o := range outs {
				sum += g[o]
				zero = zero && g[o] == 0
			}
			if zero {
				clear(row)
				continue
			}
			for j, p := range f.probs[r*f.vocab : (r+1)*f.vocab] {
				row[j] = -sum * p * f.invTemp
			}
			if f.flush {
				flushSubnormals(row)
			}
			for _, o := range outs {
				row[f.targets[o]] += float32(g[o] * f.invTemp)
			}
		}
	})
	giveGrad(f.logits, len(f.fan.first)-1, f.vocab, gz, f.pool)
	f.pool.put(f.probs)
	f.probs = nil
	return nil
}

// flushSubnormals sets every subnormal value of x (magnitude below
// 2^-126, the smallest normal float32) to zero.
func flushSubnormals(x []float32) {
	for i, v := range x {
		if v != 0 && v > -0x1p-126 && v < 0x1p-126 {
			x[i] = 0
		}
	}
}

// softmax sets p = softmax(z·invTemp) and returns log Σ exp(z·invTemp) and
// the entropy −Σ p log p, all in float32 with a float64 sum. Its exp and log
// are portmath's ExpAMD64 and Log (the bits of math.Exp and math.Log on
// amd64, on every CPU), and its products are rounded explicitly (no fused
// multiply-add on arm64), so the training loss is the same everywhere.
func softmax(p, z []float32, invTemp float32) (logZ, entropy float32) {
	mx := float32(math.Inf(-1))
	for _, v := range z {
		mx = max(mx, v*invTemp)
	}
	var sum float64
	for i, v := range z {
		e := portmath.ExpAMD64(float64(float32(v*invTemp) - mx))
		p[i] = float32(e)
		sum += e
	}
	lse := portmath.Log(sum) + float64(mx)
	var h float64
	for i, v := range z {
		p[i] = float32(float64(p[i]) / sum)
		if p[i] > 0 {
			h -= float64(float64(p[i]) * (float64(v*invTemp) - lse))
		}
	}
	return float32(lse), float32(h)
}

// tokenEntropy gives, per output row o with src[o] ≥ 0, the entropy of
// softmax(logits[src[o]]/τ); the other rows give 0. Each logits row's
// entropy is computed once however many outputs read it.
type tokenEntropy struct {
	logits  mat.Tensor
	src     []int
	vocab   int
	invTemp float32
	flush   bool // as tokenLogProbs's
	pool    *bufPool
	team    *team.Team
	fan     fanout
	probs   []float32
	ez      []float32 // E_p[z/τ] per logits row
}

func (f *tokenEntropy) Operands() []mat.Tensor { return []mat.Tensor{f.logits} }

func (f *tokenEntropy) Forward() (mat.Tensor, error) {
	z := data(f.logits)
	rows := len(z) / f.vocab
	f.fan = newFanout(f.src, rows)
	f.probs = f.pool.get(len(z))
	f.ez = make([]float32, rows)
	out := make([]float32, len(f.src))
	parallelFor(f.team, rows, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			outs := f.fan.of(r)
			if len(outs) == 0 {
				continue
			}
			p, zr := f.probs[r*f.vocab:(r+1)*f.vocab], z[r*f.vocab:(r+1)*f.vocab]
			_, h := softmax(p, zr, f.invTemp)
			var e float32
			for j, pj := range p {
				e += float32(pj * zr[j] * f.invTemp)
			}
			f.ez[r] = e
			for _, o := range outs {
				out[o] = h
			}
		}
	})
	return dense(len(out), 1, out), nil
}

func (f *tokenEntropy) Backward(gy mat.Tensor) error {
	g := data(gy)
	z := data(f.logits)
	gz := f.pool.get(len(z))
	parallelFor(f.team, len(f.fan.first)-1, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row := gz[r*f.vocab : (r+1)*f.vocab]
			var sum float32
			zero := true
			for _, o := range f.fan.of(r) {
				sum += g[o]
				zero = zero && g[o] == 0
			}
			if zero {
				clear(row)
				continue
			}
			// ∂H/∂z_j = −p_j (z_j/τ − E_p[z/τ]) / τ
			for j := range row {
				i := r*f.vocab + j
				row[j] = -sum * f.probs[i] * (float32(z[i]*f.invTemp) - f.ez[r]) * f.invTemp
			}
			if f.flush {
				flushSubnormals(row)
			}
		}
	})
	giveGrad(f.logits, len(f.fan.first)-1, f.vocab, gz, f.pool)
	f.pool.put(f.probs)
	f.probs = nil
	return nil
}
