package policy

import (
	"errors"
	"fmt"
	"math"

	"github.com/rollout-rl/rollout/policy/internal/kernel"
	"github.com/rollout-rl/rollout/policy/team"
)

// Engine is the fast inference path of a Model: batched, KV-cached decoding
// over the model's own weight memory (or an int8 copy of it), implementing
// Sampler. One forward pass advances every state of a Step by one token,
// with one matrix product per weight matrix per layer for the whole batch.
//
// An Engine is used by one goroutine at a time. It reads the model's
// weights at each call, so after an optimizer step a float32 engine sees
// the new weights; an int8 engine must be rebuilt (NewEngine) to see them.
type Engine struct {
	cfg  Config
	w    engineWeights
	rope *rope

	counters Counters
	free     []*segment // released cache segments, for reuse
	scratch  scratch
	team     *team.Team // runs the split passes
	workers  int        // goroutines a forward or sampling pass is split over
	stepMark uint64     // counts Step calls, to find a state given twice
	f16      bool       // the KV cache holds binary16 values (int8 engines)
}

// engineWeights is the weight memory an Engine reads: float32 views of the
// model's parameters, or their int8 quantization.
type engineWeights struct {
	embed  []float32 // [vocab, dim]
	layers []engineLayer
	norm   []float32
	head   matrix
}

type engineLayer struct {
	attnNorm, ffnNorm []float32
	wq, wk, wv, wo    matrix
	w1, w3, w2        matrix
}

// matrix is a weight matrix [out, in] that multiplies a batch of rows:
// y[rows, out] = x[rows, in]·Wᵀ, a large product split over t's
// goroutines.
type matrix interface {
	mulT(t *team.Team, y []float32, x *acts)
}

// acts is a batch of activation rows [rows, cols], the input of one or
// more matrix products. Its per-row int8 quantization (for W8A8 products)
// is made on first use and shared by the products that read the same rows
// (the q, k and v projections; the gate and up projections).
type acts struct {
	x          []float32
	rows, cols int
	q          *kernel.Int8Rows // the quantization's buffers
	quantized  bool             // q holds the quantization of x
}

// set makes a hold x[rows, cols], forgetting any quantization.
func (a *acts) set(x []float32, rows, cols int) *acts {
	a.x, a.rows, a.cols, a.quantized = x[:rows*cols], rows, cols, false
	return a
}

// int8 returns the per-row int8 quantization of the rows.
func (a *acts) int8() *kernel.Int8Rows {
	if !a.quantized {
		a.q.Quantize(a.x, a.rows, a.cols)
		a.quantized = true
	}
	return a.q
}

// f32Matrix reads a float32 parameter in place.
type f32Matrix struct {
	w       []float32
	out, in int
}

func (m f32Matrix) mulT(t *team.Team, y []float32, x *acts) {
	kernel.MatMulNT(t, y[:x.rows*m.out], x.x, m.w, x.rows, m.out, m.in, false)
}

// maxEngineWorkers caps the goroutines one pass of an Engine is split over.
const maxEngineWorkers = 8

// EngineOption configures NewEngine.
type EngineOption func(*engineOptions)

type engineOptions struct {
	int8 bool
	from *Engine // WithCachesFrom
	team *team.Team
	set  bool // WithTeam given
}

// WithTeam makes the engine split its passes over t instead of the
// model's team (Model.SetTeam); a nil t runs them on the caller alone.
// The split never changes a result.
func WithTeam(t *team.Team) EngineOption {
	return func(o *engineOptions) { o.team, o.set = t, true }
}

// WithInt8 makes the engine sample from an int8 copy of the model's
// matrix weights (per-output-row scales); embeddings, norms and attention
// stay float32. Where the kernels have a native W8A8 product (kernel paths
// avx512vnni, and neondot and neon on arm64) the products are W8A8: each
// product's input rows are quantized to int8 too, per row with a dynamic
// scale, and multiplied exactly in int32 (kernel.MatMulNTW8A8); elsewhere
// they are weight-only (float32 activations times the int8 weights,
// kernel.MatMulNTInt8), which is the faster choice there. Where the CPU has
// AVX-512 the KV cache holds binary16 keys and values (rounded to nearest,
// clamped to ±65504), which halves the memory that attention reads at
// every step. Either way a row's result does not depend on the other rows
// of a batch; but unlike the float32 engine's, the int8 engine's samples
// depend on the kernel path (W8A8 or weight-only, binary16 cache or not).
func WithInt8() EngineOption { return func(o *engineOptions) { o.int8 = true } }

// WithCachesFrom makes the new engine take over prev's buffers: the KV
// cache segments that prev's released states gave back (which a new
// engine would otherwise allocate, and page-fault on first touch) and its
// scratch buffers. Neither depends on the weights, and a state's results
// depend only on the positions it has written into its segment (stale
// positions past them feed only products whose results are dropped, as
// with any segment reused within one engine), so the engine samples the
// same bits as a fresh one. The new engine reads the model's current
// weights (or quantizes them anew) like any other: a run that evaluates
// its policy after optimizer steps can build one engine per evaluation
// over the previous one's buffers.
//
// It takes nothing when prev is nil, or has another Config or another
// cache precision (WithInt8 on a CPU with a binary16 cache). prev keeps
// its live states, whose segments return to prev when released; prev must
// not be in use during NewEngine.
func WithCachesFrom(prev *Engine) EngineOption {
	return func(o *engineOptions) { o.from = prev }
}

// NewEngine returns an inference engine over the model's weights.
func NewEngine(m *Model, opts ...EngineOption) *Engine {
	var o engineOptions
	for _, opt := range opts {
		opt(&o)
	}
	c := m.Config
	w8a8 := o.int8 && kernel.W8A8()
	mk := func(p []float32, out, in int) matrix {
		if o.int8 {
			return quantize(p, out, in, w8a8)
		}
		return f32Matrix{w: p, out: out, in: in}
	}
	if !o.set {
		o.team = m.team
	}
	e := &Engine{cfg: c, rope: m.rope, team: o.team, workers: min(o.team.Size(), maxEngineWorkers), f16: o.int8 && kernel.F16()}
	if p := o.from; p != nil && p.cfg == c && p.f16 == e.f16 {
		e.free, e.scratch = p.free, p.scratch
		p.free, p.scratch = nil, scratch{}
	}
	e.w.embed = data(m.Embed)
	e.w.norm = data(m.Norm)
	e.w.head = mk(data(m.Head), c.VocabSize, c.Dim)
	for _, l := range m.Layers {
		e.w.layers = append(e.w.layers, engineLayer{
			attnNorm: data(l.AttnNorm), ffnNorm: data(l.FFNNorm),
			wq: mk(data(l.Wq), c.Dim, c.Dim), wk: mk(data(l.Wk), c.Dim, c.Dim),
			wv: mk(data(l.Wv), c.Dim, c.Dim), wo: mk(data(l.Wo), c.Dim, c.Dim),
			w1: mk(data(l.W1), c.Hidden, c.Dim), w3: mk(data(l.W3), c.Hidden, c.Dim),
			w2: mk(data(l.W2), c.Dim, c.Hidden),
		})
	}
	return e
}

// Config returns the shape of the engine's model.
func (e *Engine) Config() Config { return e.cfg }

// Counters reports the positions computed since the engine was made.
func (e *Engine) Counters() Counters { return e.counters }

// segment is the KV cache of one state: the keys, values and next-token
// logits of its positions 0, 1, …. A fork starts with a copy of the
// positions it shares (see Fork), so a state never reads another's
// segment.
//
// The buffers hold room for cap positions, grown on demand (reserve) up to
// max_position_embeddings: a state holds memory for the positions it has
// written, not for the longest sequence the model allows. Segments are
// reused through Engine.free.
type segment struct {
	n      int         // positions filled
	cap    int         // positions the buffers have room for
	k, v   [][]float32 // per layer, [positions, dim]; nil with k16 and v16
	k16    [][]uint16  // the same in binary16 (Engine.f16)
	v16    [][]uint16
	logits []float32 // [positions, vocab]: the distribution after each position
	recv   []float32 // [positions]: attention received (AttentionReceived)
}

// minSegment is the fewest positions a segment has room for: the score
// products of attend read a kernel tile's rows of keys (maxScoreTile at
// most) even when fewer are filled.
const minSegment = maxScoreTile

// reserve makes room for n positions (n ≤ c.MaxSeq), keeping the filled
// ones: the buffers grow to at least twice their size, at least minSegment
// positions, at most c.MaxSeq.
func (s *segment) reserve(n int, c Config, f16 bool) {
	if n <= s.cap {
		return
	}
	size := min(max(n, 2*s.cap, minSegment), c.MaxSeq)
	d, v, filled := c.Dim, c.VocabSize, s.n
	if f16 {
		s.k16, s.v16 = growLayers(s.k16, c.Layers, size*d, filled*d), growLayers(s.v16, c.Layers, size*d, filled*d)
	} else {
		s.k, s.v = growLayers(s.k, c.Layers, size*d, filled*d), growLayers(s.v, c.Layers, size*d, filled*d)
	}
	logits := make([]float32, size*v)
	copy(logits, s.logits[:filled*v])
	recv := make([]float32, size)
	copy(recv, s.recv[:filled])
	s.logits, s.recv, s.cap = logits, recv, size
}

// growLayers returns per-layer buffers of size elements (one per layer,
// bufs's if it has them) holding the first keep elements of bufs's.
func growLayers[T float32 | uint16](bufs [][]T, layers, size, keep int) [][]T {
	out := make([][]T, layers)
	for l := range out {
		out[l] = make([]T, size)
		if l < len(bufs) {
			copy(out[l], bufs[l][:keep])
		}
	}
	return out
}

// state is a decoding state of an Engine.
type state struct {
	eng       *Engine
	seg       *segment // the state's cache; nil once released
	tokens    []int
	promptLen int
	pending   bool // the last token has been sampled but not yet run through the model
	stream    Stream
	released  bool
	mark      uint64 // the engine's stepMark of the last Step that had this state
}

// newSegment returns an empty segment with room for at least n positions:
// a released one, or a new one.
func (e *Engine) newSegment(n int) *segment {
	var s *segment
	if k := len(e.free); k > 0 {
		s, e.free = e.free[k-1], e.free[:k-1]
		clear(s.recv)
	} else {
		s = &segment{}
	}
	s.n = 0
	s.reserve(n, e.cfg, e.f16)
	return s
}

// Prefill runs the prompt through the model in one batched forward pass.
func (e *Engine) Prefill(prompt []int, stream Stream) (State, error) {
	states, err := e.PrefillBatch([][]int{prompt}, []Stream{stream})
	if err != nil {
		return nil, err
	}
	return states[0], nil
}

// PrefillBatch runs several prompts through the model in one batched
// forward pass and returns their states, in order.
func (e *Engine) PrefillBatch(prompts [][]int, streams []Stream) ([]State, error) {
	if len(streams) != len(prompts) {
		return nil, fmt.Errorf("prefill: %d prompts but %d streams", len(prompts), len(streams))
	}
	var rows []row
	states := make([]State, len(prompts))
	for p, prompt := range prompts {
		if len(prompt) == 0 {
			return nil, fmt.Errorf("prefill: prompt %d is empty", p)
		}
		if len(prompt) >= e.cfg.MaxSeq {
			return nil, fmt.Errorf("prefill: prompt %d of %d tokens leaves no room to sample within max_position_embeddings %d", p, len(prompt), e.cfg.MaxSeq)
		}
		for i, id := range prompt {
			if id < 0 || id >= e.cfg.VocabSize {
				return nil, fmt.Errorf("prefill: prompt %d position %d: token id %d outside the vocabulary of %d", p, i, id, e.cfg.VocabSize)
			}
		}
	}
	for p, prompt := range prompts {
		st := &state{eng: e, tokens: append([]int(nil), prompt...), promptLen: len(prompt), stream: streams[p]}
		st.seg = e.newSegment(len(prompt))
		for i, id := range prompt {
			rows = append(rows, row{st: st, token: id, pos: i, logits: i == len(prompt)-1})
		}
		states[p] = st
		e.counters.PrefillTokens += int64(len(prompt))
	}
	e.forward(rows, nil)
	return states, nil
}

// Tokens returns the prompt and the tokens sampled so far.
func (s *state) Tokens() []int { return s.tokens }

// PromptLen is the number of prompt tokens.
func (s *state) PromptLen() int { return s.promptLen }

// Fork returns a state sharing tokens[:at], with a copy of their cache.
func (s *state) Fork(at int, stream Stream) (State, error) {
	if s.released {
		return nil, errors.New("fork: state already released")
	}
	if at < s.promptLen || at > len(s.tokens) {
		return nil, fmt.Errorf("fork: position %d outside [%d, %d]", at, s.promptLen, len(s.tokens))
	}
	child := &state{eng: s.eng, promptLen: s.promptLen, stream: stream}
	child.tokens = s.tokens[:at:at] // shared until the child's first token is appended
	child.pending = at == len(s.tokens) && s.pending
	// The child sees positions [0, at) — or [0, at−1) if the token at−1 is
	// still pending and will be run through the model by the child itself.
	visible := at
	if child.pending {
		visible = at - 1
	}
	child.seg = s.eng.newSegment(visible + 1)
	child.seg.copyFrom(s.seg, visible, s.eng.cfg)
	return child, nil
}

// copyFrom fills positions [0, n) of the segment (keys, values and logits
// of every layer) from src and marks them filled. Forks copy what they
// share instead of reading their ancestors' segments, so that every
// state's cache is one contiguous segment: attention then runs one product
// per head over the whole context instead of one per ancestor, many of
// them shorter than a kernel tile. A fork copies a few hundred kilobytes
// (tiny model, full context) and then samples tens of positions. s must
// have room for n positions.
func (s *segment) copyFrom(src *segment, n int, c Config) {
	d, v := c.Dim, c.VocabSize
	for l := range c.Layers {
		if s.k16 != nil {
			copy(s.k16[l][:n*d], src.k16[l][:n*d])
			copy(s.v16[l][:n*d], src.v16[l][:n*d])
		} else {
			copy(s.k[l][:n*d], src.k[l][:n*d])
			copy(s.v[l][:n*d], src.v[l][:n*d])
		}
	}
	copy(s.logits[:n*v], src.logits[:n*v])
	s.n = n
}

// FreeCaches drops the KV caches that the engine's released states gave
// back, so that they do not hold memory while the engine is idle (an RL
// step's update, between evaluations); the engine allocates new ones as
// its next states need them. States still live keep theirs.
func (e *Engine) FreeCaches() {
	clear(e.free)
	e.free = nil
}

// Release returns the state's cache to the engine.
func (s *state) Release() {
	if s.released {
		return
	}
	s.released = true
	s.eng.free = append(s.eng.free, s.seg)
	s.seg = nil
}

// nextLogits returns the logits of the distribution of the state's next
// token, at position len(tokens): they were computed when position
// len(tokens)−1 was run (nil while that token is pending).
func (s *state) nextLogits() []float32 {
	p, v := len(s.tokens)-1, s.eng.cfg.VocabSize
	if p >= s.seg.n {
		return nil
	}
	return s.seg.logits[p*v : (p+1)*v]
}

// Step samples one token per state, after running every pending token
// through the model in one batched forward pass.
func (e *Engine) Step(states []State, cfg Sampling, out []Token) error {
	if len(out) != len(states) {
		return fmt.Errorf("step: %d states but %d outputs", len(states), len(out))
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("step: %w", err)
	}
	rows, fresh := e.scratch.rows[:0], e.scratch.fresh[:0]
	e.stepMark++
	for i, s := range states {
		st, ok := s.(*state)
		if !ok || st.eng != e {
			return fmt.Errorf("step: state %d does not belong to this engine", i)
		}
		if st.released {
			return fmt.Errorf("step: state %d was released", i)
		}
		if len(st.tokens) >= e.cfg.MaxSeq {
			return fmt.Errorf("step: state %d is full: %d tokens, max_position_embeddings %d", i, len(st.tokens), e.cfg.MaxSeq)
		}
		if st.mark == e.stepMark {
			return fmt.Errorf("step: state %d appears twice in the batch", i)
		}
		st.mark = e.stepMark
		if st.pending {
			rows = append(rows, row{st: st, token: st.tokens[len(st.tokens)-1], pos: len(st.tokens) - 1, logits: true, out: i})
		} else {
			fresh = append(fresh, i)
		}
	}
	e.scratch.rows, e.scratch.fresh = rows, fresh
	// Sampling is per state (its logits and its stream), so the states can
	// be split over goroutines without changing any result. A state whose
	// pending token runs through the model is sampled by the goroutine that
	// ran it, in the same pass (one hand-off per step instead of two, which
	// matters most for the many small batches of a tree); the others (just
	// prefilled or forked) in a pass of their own.
	sample := func(w *work, i int) {
		st := states[i].(*state)
		tok := w.sampler.sample(st.nextLogits(), cfg, uniform(st.stream, len(st.tokens)))
		st.tokens = append(st.tokens, tok.ID)
		st.pending = true
		out[i] = tok
	}
	if len(rows) > 0 {
		e.forward(rows, func(w *work, rows []row) {
			for _, r := range rows {
				sample(w, r.out)
			}
		})
		e.counters.DecodeTokens += int64(len(rows))
	}
	if len(fresh) > 0 {
		e.parallel(len(fresh), chunksPerWorker, func(int) bool { return true }, func(w *work, lo, hi int) {
			for _, i := range fresh[lo:hi] {
				sample(w, i)
			}
		})
	}
	e.counters.SampledTokens += int64(len(states))
	return nil
}

// row is one position run through the model in a forward pass.
type row struct {
	st     *state
	token  int
	pos    int
	logits bool // compute and keep the next-token logits of this row
	out    int  // Step: the index of the row's state in the batch
}

// scratch is an Engine's reusable buffers, so that decoding does not
// allocate per token.
type scratch struct {
	rows   []row
	fresh  []int // Step: the states that have no row
	bounds []int
	work   []*work // one per goroutine of a split pass
}

// work is the buffers of one goroutine's share of a forward or sampling
// pass.
type work struct {
	x, h, q, k, v, att, o []float32
	gate, up              []float32
	headIn, logits        []float32
	headRows              []int
	scores                []float32
	sampler               samplerScratch
	in                    acts            // the input of the current products
	quant                 kernel.Int8Rows // its int8 quantization (W8A8)
}

// input sets the work's product input to x[rows, cols].
func (w *work) input(x []float32, rows, cols int) *acts {
	w.in.q = &w.quant
	return w.in.set(x, rows, cols)
}

func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// minRowsPerWorker is the fewest rows (or states) a goroutine of a split
// pass gets: one decoding row of the tiny model costs tens of
// microseconds, starting a goroutine a few.
const minRowsPerWorker = 2

// parallel runs job over [0, n) split into up to perWorker contiguous
// chunks per worker, of at least minRowsPerWorker items, run by up to
// e.workers goroutines (the calling one and the helpers of e.team) that
// take the chunks in turn, each goroutine with its own work buffers; a
// chunk may only end at an index i with cut(i) (or at n).
// Every item is computed the same way whichever chunk or goroutine it
// falls to, so the split never changes a result.
func (e *Engine) parallel(n, perWorker int, cut func(i int) bool, job func(w *work, lo, hi int)) {
	sc := &e.scratch
	sc.bounds = append(sc.bounds[:0], 0)
	parts := min(perWorker*e.workers, n/minRowsPerWorker)
	for p := 1; p < parts; p++ {
		b := max(n*p/parts, sc.bounds[len(sc.bounds)-1]+1)
		for b < n && !cut(b) {
			b++
		}
		if b < n {
			sc.bounds = append(sc.bounds, b)
		}
	}
	sc.bounds = append(sc.bounds, n)
	parts = len(sc.bounds) - 1
	workers := min(e.workers, parts)
	for len(sc.work) < workers {
		sc.work = append(sc.work, &work{})
	}
	if workers <= 1 {
		job(sc.work[0], 0, n)
		return
	}
	e.team.Run(workers, parts, func(w, c int) { job(sc.work[w], sc.bounds[c], sc.bounds[c+1]) })
}

// forward runs rows through the model: it writes each row's key and value
// into its state's segment and, for rows that ask, stores the logits of
// the next token there. Rows of one state must be consecutive positions in
// increasing order, next to each other in rows. Then, if after is not nil,
// the goroutine that ran a share of the rows calls after on that share.
//
// The rows are split over the engine's goroutines at state boundaries: a
// row depends only on its own state's rows and cache, and every kernel used
// computes a row's outputs from that row alone, so the split changes no
// bit of any result.
func (e *Engine) forward(rows []row, after func(w *work, rows []row)) {
	for _, r := range rows {
		r.st.seg.reserve(r.pos+1, e.cfg, e.f16)
	}
	// One chunk per goroutine: each chunk streams all the weights through
	// its core's cache once, so more chunks would cost more memory traffic.
	e.parallel(len(rows), 1, func(i int) bool { return rows[i].st != rows[i-1].st }, func(w *work, lo, hi int) {
		e.forwardRows(w, rows[lo:hi], lo == 0 && hi == len(rows))
		// A state's rows are all in this share, and no other goroutine
		// reads its segment.
		for _, r := range rows[lo:hi] {
			r.st.seg.n++
		}
		if after != nil {
			after(w, rows[lo:hi])
		}
	})
}

// forwardRows is forward on one goroutine's share of the rows. When the
// share is the whole pass (one state's prefill, say), the attention is
// split over rows instead.
func (e *Engine) forwardRows(sc *work, rows []row, whole bool) {
	c := e.cfg
	d, hd, R := c.Dim, c.HeadDim(), len(rows)
	sc.x, sc.h = grow(sc.x, R*d), grow(sc.h, R*d)
	sc.q, sc.k, sc.v = grow(sc.q, R*d), grow(sc.k, R*d), grow(sc.v, R*d)
	sc.att, sc.o = grow(sc.att, R*d), grow(sc.o, R*d)
	sc.gate, sc.up = grow(sc.gate, R*c.Hidden), grow(sc.up, R*c.Hidden)
	x := sc.x
	for i, r := range rows {
		copy(x[i*d:(i+1)*d], e.w.embed[r.token*d:(r.token+1)*d])
	}
	eps := float32(c.NormEps)
	scale := float32(1 / math.Sqrt(float64(hd)))
	for l, w := range e.w.layers {
		for i := 0; i < R; i++ {
			rmsNormRow(sc.h[i*d:(i+1)*d], x[i*d:(i+1)*d], w.attnNorm, eps)
		}
		in := sc.input(sc.h, R, d)
		w.wq.mulT(e.team, sc.q, in)
		w.wk.mulT(e.team, sc.k, in)
		w.wv.mulT(e.team, sc.v, in)
		for i, r := range rows {
			// kernel.RoPE, not rope.rotate: its products are rounded
			// explicitly, so that arm64 (which fuses x*y+z) gives the bits
			// of amd64.
			half := e.rope.half
			cos, sin := e.rope.cos[r.pos*half:(r.pos+1)*half], e.rope.sin[r.pos*half:(r.pos+1)*half]
			kernel.RoPE(sc.q[i*d:(i+1)*d], c.Heads, cos, sin, 1)
			kernel.RoPE(sc.k[i*d:(i+1)*d], c.Heads, cos, sin, 1)
			r.st.seg.store(l, r.pos*d, sc.k[i*d:(i+1)*d], sc.v[i*d:(i+1)*d])
		}
		if whole && R >= 2*minRowsPerWorker && e.workers > 1 {
			parallelFor(e.team, R, func(lo, hi int) {
				var scores []float32
				for i := lo; i < hi; i++ {
					scores = attend(sc.att[i*d:(i+1)*d], sc.q[i*d:(i+1)*d], rows[i].st.seg, rows[i].pos, l, c, scale, scores)
					rows[i].receive(scores, c)
				}
			})
		} else {
			for i := range rows {
				sc.scores = attend(sc.att[i*d:(i+1)*d], sc.q[i*d:(i+1)*d], rows[i].st.seg, rows[i].pos, l, c, scale, sc.scores)
				rows[i].receive(sc.scores, c)
			}
		}
		w.wo.mulT(e.team, sc.o, sc.input(sc.att, R, d))
		kernel.Axpy(1, sc.o[:R*d], x[:R*d])
		for i := 0; i < R; i++ {
			rmsNormRow(sc.h[i*d:(i+1)*d], x[i*d:(i+1)*d], w.ffnNorm, eps)
		}
		in = sc.input(sc.h, R, d)
		w.w1.mulT(e.team, sc.gate, in)
		w.w3.mulT(e.team, sc.up, in)
		siluMul(sc.gate[:R*c.Hidden], sc.gate[:R*c.Hidden], sc.up[:R*c.Hidden])
		w.w2.mulT(e.team, sc.o, sc.input(sc.gate, R, c.Hidden))
		kernel.Axpy(1, sc.o[:R*d], x[:R*d])
	}
	// The output head, only for the rows whose logits are kept.
	sc.headRows = sc.headRows[:0]
	for i, r := range rows {
		if r.logits {
			sc.headRows = append(sc.headRows, i)
		}
	}
	H := len(sc.headRows)
	sc.headIn = grow(sc.headIn, H*d)
	sc.logits = grow(sc.logits, H*c.VocabSize)
	for j, i := range sc.headRows {
		rmsNormRow(sc.headIn[j*d:(j+1)*d], x[i*d:(i+1)*d], e.w.norm, eps)
	}
	e.w.head.mulT(e.team, sc.logits, sc.input(sc.headIn, H, d))
	for j, i := range sc.headRows {
		r := rows[i]
		off := r.pos * c.VocabSize
		copy(r.st.seg.logits[off:off+c.VocabSize], sc.logits[j*c.VocabSize:(j+1)*c.VocabSize])
	}
}

// store writes one position's key k and value v (equal lengths) into
// layer l of the segment's cache from element off, rounded to binary16 in
// a binary16 cache.
func (s *segment) store(l, off int, k, v []float32) {
	if s.k16 != nil {
		kernel.ToF16(s.k16[l][off:off+len(k)], k)
		kernel.ToF16(s.v16[l][off:off+len(v)], v)
		return
	}
	copy(s.k[l][off:off+len(k)], k)
	copy(s.v[l][off:off+len(v)], v)
}

// maxScoreTile bounds the kernel.MVTile that attend uses.
const maxScoreTile = 16

// attend computes one row's attention output over the keys and values of
// positions 0..pos of its state's segment: per head one strided product for
// the scores (for a binary16 cache one kernel.ScoresF16Heads pass over the
// key rows for all heads), then one pass over the value rows for all heads
// (kernel.AttendValues, the bits of per-head products), the weights of all
// heads normalised by one kernel.SoftmaxScaledRows; a binary16 cache is
// read by the kernels' F16 variants, with the bits of the same products on
// the widened values. scores holds one row of pos+1 weights per head.
func attend(out, q []float32, seg *segment, pos, layer int, c Config, scale float32, scores []float32) []float32 {
	d, hd := c.Dim, c.HeadDim()
	n := pos + 1
	scores = grow(scores, c.Heads*n)
	if seg.k16 != nil {
		// One pass over the key rows for all heads (the bits of
		// kernel.ScoresF16 per head).
		kernel.ScoresF16Heads(scores, q[:d], seg.k16[layer], d, n, c.Heads, hd)
	} else {
		scoresF32(scores, q, seg.k[layer], n, c)
	}
	// All heads at once: the bits of softmaxScaled on each.
	kernel.SoftmaxScaledRows(scores, c.Heads, n, scale)
	if seg.v16 != nil {
		kernel.AttendValuesF16(out[:d], scores, n, seg.v16[layer], d, n, d, hd, false)
	} else {
		kernel.AttendValues(out[:d], scores, n, seg.v[layer], d, n, d, hd, false)
	}
	return scores
}

// scoresF32 sets scores[h*n+t] to head h's query in q dotted with key t of
// the float32 cache keys (row width c.Dim), per head one strided product.
func scoresF32(scores, q, keys []float32, n int, c Config) {
	d, hd := c.Dim, c.HeadDim()
	tile := min(kernel.MVTile(), maxScoreTile)
	for h := 0; h < c.Heads; h++ {
		qh, sh := q[h*hd:(h+1)*hd], scores[h*n:(h+1)*n]
		if n < tile && c.MaxSeq >= tile {
			// Fewer keys than the matrix-vector kernel's tile: score a
			// tile's rows of the segment, those past n stale, and keep n
			// (see kernel.MVTile; the same bits).
			var buf [maxScoreTile]float32
			kernel.MatMulNTStrided(buf[:tile], tile, qh, hd, keys[h*hd:], d, 1, tile, hd, false)
			copy(sh, buf[:n])
		} else {
			kernel.MatMulNTStrided(sh, n, qh, hd, keys[h*hd:], d, 1, n, hd, false)
		}
	}
}

// softmaxScaled turns attention scores s into softmax(s·scale) in place,
// with the float32 exp of the kernels (kernel.SoftmaxScaled: one fused
// kernel on the AVX-512 paths, the same bits on every path). The inference
// engine and the training attention both use it, so they compute the same
// weights.
func softmaxScaled(s []float32, scale float32) {
	kernel.SoftmaxScaled(s, scale)
}
