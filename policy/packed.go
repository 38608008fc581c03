package policy

import (
	"math"

	"github.com/rollout-rl/rollout/policy/internal/kernel"
)

// This file is the packed (prefix-shared) layout of a training batch: the
// sequences of a batch merged into one prefix tree, each distinct prefix's
// last token one row. A rollout tree's leaves share their prompt and the
// tokens before each fork, so the rows of a packed batch are the tree's
// tokens, each once, where the padded layout repeats every shared prefix
// once per leaf.
//
// Row j attends to the rows of its own prefix only (its path from the
// first token to j), and RoPE rotates it by its depth on that path (its
// position in its sequences), not by its row index: every row then computes
// exactly what the same position of any of its sequences computes in the
// padded layout, up to float32 rounding of the sums that gather several
// sequences' gradients into one row.

// packing is a packed batch's prefix tree.
type packing struct {
	parent []int   // per row: the row of the previous token of its prefix; −1 for a first token
	depth  []int   // per row: its position in its sequences
	index  [][]int // index[i][t]: the row of position t of sequence i
	segs   []chain
}

// chain is a run of consecutive rows each of which continues the
// previous one (rows [start, start+n)), with the path of its last row:
// path[p] is the row at depth p, the chain's own rows its last n.
type chain struct {
	start, n int
	path     []int
}

// NewPackedBatch lays out sequences for a forward pass as a prefix tree:
// every distinct prefix of the sequences is one row (Rows), so a prefix
// shared by several sequences — a tree's prompt and the tokens before each
// fork — runs once. Row(i, t) is the row of position t of sequence i, and
// Target(i, t) the row of TokenLogProbs and TokenEntropies that holds the
// prediction of token t+1 of sequence i. The rows come in the order the
// sequences first reach them, so the layout is a function of seqs alone.
// The checks on seqs are NewBatch's.
func (m *Model) NewPackedBatch(seqs [][]int) (*Batch, error) {
	b, err := m.NewBatch(seqs)
	if err != nil {
		return nil, err
	}
	type key struct{ parent, id int }
	rowOf := map[key]int{}
	p := &packing{index: make([][]int, len(seqs))}
	var ids []int
	for i, s := range seqs {
		p.index[i] = make([]int, len(s))
		prev := -1
		for t, id := range s {
			r, ok := rowOf[key{prev, id}]
			if !ok {
				r = len(ids)
				rowOf[key{prev, id}] = r
				ids = append(ids, id)
				p.parent = append(p.parent, prev)
				p.depth = append(p.depth, t)
			}
			p.index[i][t] = r
			prev = r
		}
	}
	for r := 0; r < len(ids); {
		seg := chain{start: r, n: 1}
		for r+seg.n < len(ids) && p.parent[r+seg.n] == r+seg.n-1 {
			seg.n++
		}
		last := r + seg.n - 1
		seg.path = make([]int, p.depth[last]+1)
		for q, d := last, p.depth[last]; q >= 0; q, d = p.parent[q], d-1 {
			seg.path[d] = q
		}
		p.segs = append(p.segs, seg)
		r += seg.n
	}
	b.ids, b.packed = ids, p
	return b, nil
}

// Packed reports whether the batch is packed (NewPackedBatch).
func (b *Batch) Packed() bool { return b.packed != nil }

// Target returns the row of TokenLogProbs and TokenEntropies that holds the
// prediction of token t+1 of sequence i from its first t+1 tokens, for
// t+1 < len(Seqs[i]): Row(i, t) in the padded layout, Row(i, t+1) in the
// packed one (where a row predicting several sequences' next tokens, at a
// fork, has one output per token predicted).
func (b *Batch) Target(i, t int) int {
	if b.packed != nil {
		return b.packed.index[i][t+1]
	}
	return b.Row(i, t)
}

// predictions returns, per output row of TokenLogProbs and TokenEntropies,
// the logits row it reads (src, −1: none) and the token it predicts: the
// next token of each sequence in the padded layout, each row's own token
// from its parent's logits in the packed one.
func (b *Batch) predictions() (src, targets []int) {
	rows := b.Rows()
	src, targets = make([]int, rows), make([]int, rows)
	for i := range src {
		src[i], targets[i] = -1, -1
	}
	if p := b.packed; p != nil {
		for r, q := range p.parent {
			if q >= 0 {
				src[r], targets[r] = q, b.ids[r]
			}
		}
		return src, targets
	}
	for i, s := range b.Seqs {
		for t := 0; t+1 < len(s); t++ {
			r := b.Row(i, t)
			src[r], targets[r] = r, s[t+1]
		}
	}
	return src, targets
}

// fanout lists, per logits row, the output rows that read it (in
// increasing order): the rows of a CSR matrix.
type fanout struct {
	first []int // outputs of row r: outs[first[r]:first[r+1]]
	outs  []int
}

func newFanout(src []int, rows int) fanout {
	f := fanout{first: make([]int, rows+1)}
	for _, r := range src {
		if r >= 0 {
			f.first[r+1]++
		}
	}
	for r := 0; r < rows; r++ {
		f.first[r+1] += f.first[r]
	}
	f.outs = make([]int, f.first[rows])
	next := append([]int(nil), f.first[:rows]...)
	for o, r := range src {
		if r >= 0 {
			f.outs[next[r]] = o
			next[r]++
		}
	}
	return f
}

// of returns the outputs of logits row r.
func (f fanout) of(r int) []int { return f.outs[f.first[r]:f.first[r+1]] }

// The tree-masked attention of a packed batch: per chain and head, the
// keys and values of the chain's path are gathered into contiguous
// [L, head_dim] blocks, and the chain's queries (at depths L−n … L−1)
// attend causally to them, as the last n positions of a sequence of length
// L would. Each row is a query of one chain only, so the outputs and the
// queries' gradients are written in place; a key's or value's gradient
// gathers the contributions of every chain whose path holds it, summed
// in chain order after the per-chain passes.

// treeForward sets f.mixed's rows to the heads' outputs and keeps the
// attention weights in f.probs, per (chain, head) an [n, L] block.
func (f *attention) treeForward() {
	d, hd, nh := f.cfg.Dim, f.cfg.HeadDim(), f.cfg.Heads
	segs := f.tree.segs
	f.offs = make([]int, len(segs)*nh+1)
	for i := range len(segs) * nh {
		s := segs[i/nh]
		f.offs[i+1] = f.offs[i] + s.n*len(s.path)
	}
	f.probs = f.pool.get(f.offs[len(f.offs)-1])
	scale := float32(1 / math.Sqrt(float64(hd)))
	ld := 3 * d
	parallelFor(f.mm.team, len(segs)*nh, func(lo, hi int) {
		var kb, vb []float32
		for i := lo; i < hi; i++ {
			s, h := segs[i/nh], i%nh
			L, n := len(s.path), s.n
			off := L - n
			kb, vb = f.gatherPath(kb, vb, s.path, h)
			q := f.qkv[s.start*ld+h*hd:]
			p := f.probs[f.offs[i]:f.offs[i+1]]
			causalRows(n, func(i0, i1 int) { // S = Q·Kᵀ over the path up to the block's last query
				kernel.MatMulNTStrided(p[i0*L:], L, q[i0*ld:], ld, kb, hd, i1-i0, off+i1, hd, false)
			})
			for t := 0; t < n; t++ {
				softmaxScaled(p[t*L:t*L+off+t+1], scale)
				clear(p[t*L+off+t+1 : (t+1)*L])
			}
			om := s.start*d + h*hd
			causalRows(n, func(i0, i1 int) { // O = P·V
				kernel.MatMulNNStrided(f.mixed[om+i0*d:], d, p[i0*L:], L, vb, hd, i1-i0, hd, off+i1, false)
			})
		}
	})
}

// gatherPath copies head h's keys and values of the rows of path into
// kb and vb ([len(path), head_dim] each), grown as needed.
func (f *attention) gatherPath(kb, vb []float32, path []int, h int) ([]float32, []float32) {
	d, hd := f.cfg.Dim, f.cfg.HeadDim()
	kb, vb = grow(kb, len(path)*hd), grow(vb, len(path)*hd)
	for j, r := range path {
		o := r*3*d + h*hd
		copy(kb[j*hd:(j+1)*hd], f.qkv[o+d:o+d+hd])
		copy(vb[j*hd:(j+1)*hd], f.qkv[o+2*d:o+2*d+hd])
	}
	return kb, vb
}

// treeBackward sets gqkv (zeroed by the caller) to the gradients of q, k
// and v for the heads' output gradient gmixed.
func (f *attention) treeBackward(gqkv, gmixed []float32) {
	d, hd, nh := f.cfg.Dim, f.cfg.HeadDim(), f.cfg.Heads
	segs := f.tree.segs
	ld := 3 * d
	scale := float32(1 / math.Sqrt(float64(hd)))
	// Per (chain, head): the gradients of the path's keys, then values,
	// [2, L, head_dim], added into gqkv afterwards.
	kvOffs := make([]int, len(segs)*nh+1)
	for i := range len(segs) * nh {
		kvOffs[i+1] = kvOffs[i] + 2*len(segs[i/nh].path)*hd
	}
	gkv := f.pool.get(kvOffs[len(kvOffs)-1])
	parallelFor(f.mm.team, len(segs)*nh, func(lo, hi int) {
		var kb, vb, gp []float32
		for i := lo; i < hi; i++ {
			s, h := segs[i/nh], i%nh
			L, n := len(s.path), s.n
			off := L - n
			kb, vb = f.gatherPath(kb, vb, s.path, h)
			gk, gv := gkv[kvOffs[i]:kvOffs[i]+L*hd], gkv[kvOffs[i]+L*hd:kvOffs[i+1]]
			q, gq := f.qkv[s.start*ld+h*hd:], gqkv[s.start*ld+h*hd:]
			gm := gmixed[s.start*d+h*hd:]
			p := f.probs[f.offs[i]:f.offs[i+1]]
			causalRows(L, func(j0, j1 int) { // dV = Pᵀ·dO over the queries at depth ≥ j0
				t0 := max(0, j0-off)
				kernel.MatMulTNStrided(gv[j0*hd:], hd, p[t0*L+j0:], L, gm[t0*d:], d, j1-j0, hd, n-t0, false)
			})
			gp = grow(gp, n*L)
			causalRows(n, func(i0, i1 int) { // dP = dO·Vᵀ
				kernel.MatMulNTStrided(gp[i0*L:], L, gm[i0*d:], d, vb, hd, i1-i0, off+i1, hd, false)
			})
			for t := 0; t < n; t++ {
				k := off + t + 1
				pr, gr := p[t*L:t*L+k], gp[t*L:(t+1)*L]
				sum := kernel.Dot(pr, gr[:k])
				for j := 0; j < k; j++ {
					gr[j] = pr[j] * (gr[j] - sum) * scale // dS, scaled
				}
				clear(gr[k:])
			}
			causalRows(n, func(i0, i1 int) { // dQ = dS·K
				kernel.MatMulNNStrided(gq[i0*ld:], ld, gp[i0*L:], L, kb, hd, i1-i0, hd, off+i1, false)
			})
			causalRows(L, func(j0, j1 int) { // dK = dSᵀ·Q over the queries at depth ≥ j0
				t0 := max(0, j0-off)
				kernel.MatMulTNStrided(gk[j0*hd:], hd, gp[t0*L+j0:], L, q[t0*ld:], ld, j1-j0, hd, n-t0, false)
			})
		}
	})
	// The keys' and values' gradients, per head (disjoint columns), each
	// row's contributions summed in chain order.
	parallelFor(f.mm.team, nh, func(lo, hi int) {
		for h := lo; h < hi; h++ {
			for si, s := range segs {
				i := si*nh + h
				L := len(s.path)
				gk, gv := gkv[kvOffs[i]:kvOffs[i]+L*hd], gkv[kvOffs[i]+L*hd:kvOffs[i+1]]
				for j, r := range s.path {
					o := r*ld + h*hd
					kernel.Axpy(1, gk[j*hd:(j+1)*hd], gqkv[o+d:o+d+hd])
					kernel.Axpy(1, gv[j*hd:(j+1)*hd], gqkv[o+2*d:o+2*d+hd])
				}
			}
		}
	})
	f.pool.put(gkv)
}

// ForwardFLOPs is the cost of one forward pass over the batch as
// Config.ForwardFLOPs counts it: every position of every sequence with its
// context (padded layout; padding rows are not counted), or every row of a
// packed batch once, with its prefix as context.
func (b *Batch) ForwardFLOPs(cfg Config) int64 {
	var n int64
	if p := b.packed; p != nil {
		for _, d := range p.depth {
			n += cfg.ForwardFLOPs(d + 1)
		}
		return n
	}
	for _, s := range b.Seqs {
		for ctx := 1; ctx <= len(s); ctx++ {
			n += cfg.ForwardFLOPs(ctx)
		}
	}
	return n
}
