package policy

import (
	"math"

	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"

	"github.com/rollout-rl/rollout/policy/internal/kernel"
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

// embedding looks up the rows of the embedding matrix for the given ids.
type embedding struct {
	table *nn.Param
	ids   []int // one per row; PAD rows get a zero vector and no gradient
	dim   int
}

func (f *embedding) Operands() []mat.Tensor { return []mat.Tensor{f.table} }

func (f *embedding) Forward() (mat.Tensor, error) {
	e := data(f.table)
	out := make([]float32, len(f.ids)*f.dim)
	for r, id := range f.ids {
		if id != PAD {
			copy(out[r*f.dim:(r+1)*f.dim], e[id*f.dim:(id+1)*f.dim])
		}
	}
	return dense(len(f.ids), f.dim, out), nil
}

func (f *embedding) Backward(gy mat.Tensor) error {
	g := data(gy)
	vocab := len(data(f.table)) / f.dim
	ge := make([]float32, vocab*f.dim)
	for r, id := range f.ids { // in row order: deterministic
		if id != PAD {
			kernel.Axpy(1, g[r*f.dim:(r+1)*f.dim], ge[id*f.dim:(id+1)*f.dim])
		}
	}
	accGrad(f.table, vocab, f.dim, ge)
	return nil
}

// rmsNorm is y = x / sqrt(mean(x²) + eps) ∘ w, row by row.
type rmsNorm struct {
	x   mat.Tensor
	w   *nn.Param
	eps float32
	dim int
	inv []float32 // 1/rms per row, for the backward pass
}

func (f *rmsNorm) Operands() []mat.Tensor { return []mat.Tensor{f.x, f.w} }

func (f *rmsNorm) Forward() (mat.Tensor, error) {
	x, w := data(f.x), data(f.w)
	rows := len(x) / f.dim
	out := make([]float32, len(x))
	f.inv = make([]float32, rows)
	for r := 0; r < rows; r++ {
		f.inv[r] = rmsNormRow(out[r*f.dim:(r+1)*f.dim], x[r*f.dim:(r+1)*f.dim], w, f.eps)
	}
	return dense(rows, f.dim, out), nil
}

// rmsNormRow normalises one row as Hugging Face's LlamaRMSNorm does and
// returns 1/rms.
func rmsNormRow(dst, x, w []float32, eps float32) float32 {
	return kernel.RMSNorm(dst, x, w, eps)
}

func (f *rmsNorm) Backward(gy mat.Tensor) error {
	x, w, g := data(f.x), data(f.w), data(gy)
	d := f.dim
	rows := len(x) / d
	gx := make([]float32, len(x))
	gw := make([]float32, d)
	for r := 0; r < rows; r++ {
		xr, gr, inv := x[r*d:(r+1)*d], g[r*d:(r+1)*d], f.inv[r]
		var dot float32 // Σ_j w_j g_j x_j
		for j := range xr {
			dot += w[j] * gr[j] * xr[j]
			gw[j] += gr[j] * xr[j] * inv
		}
		c := inv * inv * inv * dot / float32(d)
		for j := range xr {
			gx[r*d+j] = inv*w[j]*gr[j] - c*xr[j]
		}
	}
	accGrad(f.x, rows, d, gx)
	accGrad(f.w, d, 1, gw)
	return nil
}

// linear is y = x·Wᵀ with W stored [out, in].
type linear struct {
	x       mat.Tensor
	w       *nn.Param
	in, out int
}

func (f *linear) Operands() []mat.Tensor { return []mat.Tensor{f.x, f.w} }

func (f *linear) Forward() (mat.Tensor, error) {
	x := data(f.x)
	rows := len(x) / f.in
	y := make([]float32, rows*f.out)
	kernel.MatMulNT(y, x, data(f.w), rows, f.out, f.in, false)
	return dense(rows, f.out, y), nil
}

func (f *linear) Backward(gy mat.Tensor) error {
	x, g := data(f.x), data(gy)
	rows := len(x) / f.in
	if f.x.RequiresGrad() {
		gx := make([]float32, len(x))
		kernel.MatMulNN(gx, g, data(f.w), rows, f.in, f.out, false)
		accGrad(f.x, rows, f.in, gx)
	}
	gw := make([]float32, f.out*f.in)
	kernel.MatMulTN(gw, g, x, f.out, f.in, rows, false)
	accGrad(f.w, f.out, f.in, gw)
	return nil
}

// feedForward is the SwiGLU block: y = (silu(x·W1ᵀ) ∘ x·W3ᵀ)·W2ᵀ, with W1
// the gate, W3 the up and W2 the down projection.
type feedForward struct {
	x           mat.Tensor
	w1, w3, w2  *nn.Param
	dim, hidden int
	gate, up    []float32 // x·W1ᵀ and x·W3ᵀ, for the backward pass
	act         []float32 // silu(gate) ∘ up
}

func (f *feedForward) Operands() []mat.Tensor { return []mat.Tensor{f.x, f.w1, f.w3, f.w2} }

func (f *feedForward) Forward() (mat.Tensor, error) {
	x := data(f.x)
	rows := len(x) / f.dim
	f.gate = make([]float32, rows*f.hidden)
	f.up = make([]float32, rows*f.hidden)
	kernel.MatMulNT(f.gate, x, data(f.w1), rows, f.hidden, f.dim, false)
	kernel.MatMulNT(f.up, x, data(f.w3), rows, f.hidden, f.dim, false)
	f.act = make([]float32, rows*f.hidden)
	siluMul(f.act, f.gate, f.up)
	y := make([]float32, rows*f.dim)
	kernel.MatMulNT(y, f.act, data(f.w2), rows, f.dim, f.hidden, false)
	return dense(rows, f.dim, y), nil
}

// siluMul sets dst = silu(gate) ∘ up, silu(x) = x·σ(x).
func siluMul(dst, gate, up []float32) { kernel.SiLUMul(dst, gate, up) }

func (f *feedForward) Backward(gy mat.Tensor) error {
	x, g := data(f.x), data(gy)
	rows := len(x) / f.dim
	gw2 := make([]float32, f.dim*f.hidden)
	kernel.MatMulTN(gw2, g, f.act, f.dim, f.hidden, rows, false)
	gact := make([]float32, rows*f.hidden)
	kernel.MatMulNN(gact, g, data(f.w2), rows, f.hidden, f.dim, false)
	ggate := make([]float32, rows*f.hidden)
	gup := make([]float32, rows*f.hidden)
	sig := make([]float32, len(f.gate))
	kernel.Sigmoid(sig, f.gate)
	for i, a := range gact {
		s := sig[i]
		gup[i] = a * f.gate[i] * s
		// d silu(z)/dz = σ(z)·(1 + z·(1 − σ(z)))
		ggate[i] = a * f.up[i] * s * (1 + f.gate[i]*(1-s))
	}
	gw1 := make([]float32, f.hidden*f.dim)
	kernel.MatMulTN(gw1, ggate, x, f.hidden, f.dim, rows, false)
	gw3 := make([]float32, f.hidden*f.dim)
	kernel.MatMulTN(gw3, gup, x, f.hidden, f.dim, rows, false)
	if f.x.RequiresGrad() {
		gx := make([]float32, len(x))
		kernel.MatMulNN(gx, ggate, data(f.w1), rows, f.dim, f.hidden, false)
		kernel.MatMulNN(gx, gup, data(f.w3), rows, f.dim, f.hidden, true)
		accGrad(f.x, rows, f.dim, gx)
	}
	accGrad(f.w1, f.hidden, f.dim, gw1)
	accGrad(f.w3, f.hidden, f.dim, gw3)
	accGrad(f.w2, f.dim, f.hidden, gw2)
	return nil
}

// attention is causal multi-head self-attention with rotary position
// embeddings: y = concat_h(softmax(q_h·k_hᵀ/√d_h + causal) · v_h)·Woᵀ, with
// q = rope(x·Wqᵀ), k = rope(x·Wkᵀ), v = x·Wvᵀ.
type attention struct {
	x              mat.Tensor
	wq, wk, wv, wo *nn.Param
	cfg            Config
	rope           *rope
	seqLen         int   // T: rows per sequence
	lens           []int // valid positions per sequence (right padding)

	q, k, v []float32   // after RoPE, [rows, dim]
	mixed   []float32   // concatenated head outputs, [rows, dim]
	probs   [][]float32 // per (sequence, head): [len, len] attention weights
}

func (f *attention) Operands() []mat.Tensor {
	return []mat.Tensor{f.x, f.wq, f.wk, f.wv, f.wo}
}

func (f *attention) Forward() (mat.Tensor, error) {
	x := data(f.x)
	d, hd, nh := f.cfg.Dim, f.cfg.HeadDim(), f.cfg.Heads
	rows := len(x) / d
	f.q = make([]float32, rows*d)
	f.k = make([]float32, rows*d)
	f.v = make([]float32, rows*d)
	kernel.MatMulNT(f.q, x, data(f.wq), rows, d, d, false)
	kernel.MatMulNT(f.k, x, data(f.wk), rows, d, d, false)
	kernel.MatMulNT(f.v, x, data(f.wv), rows, d, d, false)
	for r := 0; r < rows; r++ {
		t := r % f.seqLen
		for h := 0; h < nh; h++ {
			f.rope.rotate(f.q[r*d+h*hd:r*d+(h+1)*hd], t, 1)
			f.rope.rotate(f.k[r*d+h*hd:r*d+(h+1)*hd], t, 1)
		}
	}
	f.mixed = make([]float32, rows*d)
	f.probs = make([][]float32, len(f.lens)*nh)
	scale := float32(1 / math.Sqrt(float64(hd)))
	parallelFor(len(f.lens)*nh, func(lo, hi int) {
		var ws headScratch
		for i := lo; i < hi; i++ {
			b, h := i/nh, i%nh
			n := f.lens[b]
			ws.resize(n, hd)
			f.gather(ws.q, f.q, b, h, n)
			f.gather(ws.k, f.k, b, h, n)
			f.gather(ws.v, f.v, b, h, n)
			p := make([]float32, n*n)
			kernel.MatMulNT(p, ws.q, ws.k, n, n, hd, false)
			for t := 0; t < n; t++ {
				causalSoftmax(p[t*n:(t+1)*n], t, scale)
			}
			kernel.MatMulNN(ws.o, p, ws.v, n, hd, n, false)
			f.scatter(f.mixed, ws.o, b, h, n)
			f.probs[i] = p
		}
	})
	y := make([]float32, rows*d)
	kernel.MatMulNT(y, f.mixed, data(f.wo), rows, d, d, false)
	return dense(rows, d, y), nil
}

// causalSoftmax turns row t of the score matrix into attention weights
// over positions 0..t (later positions get 0).
func causalSoftmax(row []float32, t int, scale float32) {
	mx := float32(math.Inf(-1))
	for j := 0; j <= t; j++ {
		row[j] *= scale
		mx = max(mx, row[j])
	}
	var sum float32
	for j := 0; j <= t; j++ {
		row[j] = float32(math.Exp(float64(row[j] - mx)))
		sum += row[j]
	}
	for j := 0; j <= t; j++ {
		row[j] /= sum
	}
	clear(row[t+1:])
}

// headScratch holds one head's contiguous [len, headDim] blocks.
type headScratch struct{ q, k, v, o, dq, dk, dv, do []float32 }

func (s *headScratch) resize(n, hd int) {
	for _, p := range []*[]float32{&s.q, &s.k, &s.v, &s.o, &s.dq, &s.dk, &s.dv, &s.do} {
		if cap(*p) < n*hd {
			*p = make([]float32, n*hd)
		}
		*p = (*p)[:n*hd]
	}
}

// gather copies head h of the first n rows of sequence b out of m.
func (f *attention) gather(dst, m []float32, b, h, n int) {
	d, hd := f.cfg.Dim, f.cfg.HeadDim()
	for t := 0; t < n; t++ {
		r := b*f.seqLen + t
		copy(dst[t*hd:(t+1)*hd], m[r*d+h*hd:r*d+(h+1)*hd])
	}
}

// scatter writes a head's block back into rows of m.
func (f *attention) scatter(m, src []float32, b, h, n int) {
	d, hd := f.cfg.Dim, f.cfg.HeadDim()
	for t := 0; t < n; t++ {
		r := b*f.seqLen + t
		copy(m[r*d+h*hd:r*d+(h+1)*hd], src[t*hd:(t+1)*hd])
	}
}

func (f *attention) Backward(gy mat.Tensor) error {
	x, g := data(f.x), data(gy)
	d, hd, nh := f.cfg.Dim, f.cfg.HeadDim(), f.cfg.Heads
	rows := len(x) / d
	gwo := make([]float32, d*d)
	kernel.MatMulTN(gwo, g, f.mixed, d, d, rows, false)
	gmixed := make([]float32, rows*d)
	kernel.MatMulNN(gmixed, g, data(f.wo), rows, d, d, false)

	gq := make([]float32, rows*d)
	gk := make([]float32, rows*d)
	gv := make([]float32, rows*d)
	scale := float32(1 / math.Sqrt(float64(hd)))
	parallelFor(len(f.lens)*nh, func(lo, hi int) {
		var ws headScratch
		var gp []float32
		for i := lo; i < hi; i++ {
			b, h := i/nh, i%nh
			n := f.lens[b]
			ws.resize(n, hd)
			p := f.probs[i]
			f.gather(ws.q, f.q, b, h, n)
			f.gather(ws.k, f.k, b, h, n)
			f.gather(ws.v, f.v, b, h, n)
			f.gather(ws.do, gmixed, b, h, n)
			kernel.MatMulTN(ws.dv, p, ws.do, n, hd, n, false) // dV = Pᵀ·dO
			if cap(gp) < n*n {
				gp = make([]float32, n*n)
			}
			gp = gp[:n*n]
			kernel.MatMulNT(gp, ws.do, ws.v, n, n, hd, false) // dP = dO·Vᵀ
			for t := 0; t < n; t++ {
				pr, gr := p[t*n:(t+1)*n], gp[t*n:(t+1)*n]
				var s float32
				for j := 0; j <= t; j++ {
					s += pr[j] * gr[j]
				}
				for j := 0; j <= t; j++ {
					gr[j] = pr[j] * (gr[j] - s) * scale // dS, scaled
				}
				clear(gr[t+1:])
			}
			kernel.MatMulNN(ws.dq, gp, ws.k, n, hd, n, false) // dQ = dS·K
			kernel.MatMulTN(ws.dk, gp, ws.q, n, hd, n, false) // dK = dSᵀ·Q
			f.scatter(gq, ws.dq, b, h, n)
			f.scatter(gk, ws.dk, b, h, n)
			f.scatter(gv, ws.dv, b, h, n)
		}
	})
	for r := 0; r < rows; r++ { // back through RoPE: rotate by −angle
		t := r % f.seqLen
		for h := 0; h < nh; h++ {
			f.rope.rotate(gq[r*d+h*hd:r*d+(h+1)*hd], t, -1)
			f.rope.rotate(gk[r*d+h*hd:r*d+(h+1)*hd], t, -1)
		}
	}
	if f.x.RequiresGrad() {
		gx := make([]float32, len(x))
		kernel.MatMulNN(gx, gq, data(f.wq), rows, d, d, false)
		kernel.MatMulNN(gx, gk, data(f.wk), rows, d, d, true)
		kernel.MatMulNN(gx, gv, data(f.wv), rows, d, d, true)
		accGrad(f.x, rows, d, gx)
	}
	for _, w := range []struct {
		p *nn.Param
		g []float32
	}{{f.wq, gq}, {f.wk, gk}, {f.wv, gv}} {
		gw := make([]float32, d*d)
		kernel.MatMulTN(gw, w.g, x, d, d, rows, false)
		accGrad(w.p, d, d, gw)
	}
	accGrad(f.wo, d, d, gwo)
	return nil
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

// rotate applies the rotation of position t to one head vector in place;
// dir −1 applies the inverse (transposed) rotation.
func (r *rope) rotate(x []float32, t int, dir float32) {
	c, s := r.cos[t*r.half:(t+1)*r.half], r.sin[t*r.half:(t+1)*r.half]
	for i := 0; i < r.half; i++ {
		a, b := x[i], x[i+r.half]
		sn := dir * s[i]
		x[i] = a*c[i] - b*sn
		x[i+r.half] = b*c[i] + a*sn
	}
}

// tokenLogProbs gives, per row, log p(target) under softmax(logits/τ);
// rows whose target is negative give 0 and take no gradient.
type tokenLogProbs struct {
	logits  mat.Tensor
	targets []int
	vocab   int
	invTemp float32
	probs   []float32 // softmax(logits/τ) per row
}

func (f *tokenLogProbs) Operands() []mat.Tensor { return []mat.Tensor{f.logits} }

func (f *tokenLogProbs) Forward() (mat.Tensor, error) {
	z := data(f.logits)
	rows := len(f.targets)
	f.probs = make([]float32, len(z))
	out := make([]float32, rows)
	for r, tgt := range f.targets {
		if tgt < 0 {
			continue
		}
		p := f.probs[r*f.vocab : (r+1)*f.vocab]
		logZ, _ := softmax(p, z[r*f.vocab:(r+1)*f.vocab], f.invTemp)
		out[r] = z[r*f.vocab+tgt]*f.invTemp - logZ
	}
	return dense(rows, 1, out), nil
}

func (f *tokenLogProbs) Backward(gy mat.Tensor) error {
	g := data(gy)
	gz := make([]float32, len(f.probs))
	for r, tgt := range f.targets {
		if tgt < 0 || g[r] == 0 {
			continue
		}
		row := gz[r*f.vocab : (r+1)*f.vocab]
		for j, p := range f.probs[r*f.vocab : (r+1)*f.vocab] {
			row[j] = -g[r] * p * f.invTemp
		}
		row[tgt] += g[r] * f.invTemp
	}
	accGrad(f.logits, len(f.targets), f.vocab, gz)
	return nil
}

// softmax sets p = softmax(z·invTemp) and returns log Σ exp(z·invTemp) and
// the entropy −Σ p log p, all in float32 with a float64 sum.
func softmax(p, z []float32, invTemp float32) (logZ, entropy float32) {
	mx := float32(math.Inf(-1))
	for _, v := range z {
		mx = max(mx, v*invTemp)
	}
	var sum float64
	for i, v := range z {
		e := math.Exp(float64(v*invTemp - mx))
		p[i] = float32(e)
		sum += e
	}
	lse := math.Log(sum) + float64(mx)
	var h float64
	for i, v := range z {
		p[i] = float32(float64(p[i]) / sum)
		if p[i] > 0 {
			h -= float64(p[i]) * (float64(v*invTemp) - lse)
		}
	}
	return float32(lse), float32(h)
}

// tokenEntropy gives, per row, the entropy of softmax(logits/τ); rows with
// mask false give 0.
type tokenEntropy struct {
	logits  mat.Tensor
	mask    []bool
	vocab   int
	invTemp float32
	probs   []float32
	ez      []float32 // E_p[z/τ] per row
}

func (f *tokenEntropy) Operands() []mat.Tensor { return []mat.Tensor{f.logits} }

func (f *tokenEntropy) Forward() (mat.Tensor, error) {
	z := data(f.logits)
	rows := len(f.mask)
	f.probs = make([]float32, len(z))
	f.ez = make([]float32, rows)
	out := make([]float32, rows)
	for r, ok := range f.mask {
		if !ok {
			continue
		}
		p, zr := f.probs[r*f.vocab:(r+1)*f.vocab], z[r*f.vocab:(r+1)*f.vocab]
		_, out[r] = softmax(p, zr, f.invTemp)
		var e float32
		for j, pj := range p {
			e += pj * zr[j] * f.invTemp
		}
		f.ez[r] = e
	}
	return dense(rows, 1, out), nil
}

func (f *tokenEntropy) Backward(gy mat.Tensor) error {
	g := data(gy)
	z := data(f.logits)
	gz := make([]float32, len(z))
	for r, ok := range f.mask {
		if !ok || g[r] == 0 {
			continue
		}
		// ∂H/∂z_j = −p_j (z_j/τ − E_p[z/τ]) / τ
		for j := 0; j < f.vocab; j++ {
			i := r*f.vocab + j
			gz[i] = -g[r] * f.probs[i] * (z[i]*f.invTemp - f.ez[r]) * f.invTemp
		}
	}
	accGrad(f.logits, len(f.mask), f.vocab, gz)
	return nil
}
