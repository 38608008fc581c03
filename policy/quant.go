package policy

import (
	"fmt"
	"math"

	"github.com/rollout-rl/rollout/policy/internal/kernel"
	"github.com/rollout-rl/rollout/policy/portmath"
	"github.com/rollout-rl/rollout/policy/team"
)

// int8Matrix is a weight matrix [out, in] quantized to int8 with one scale
// per output row: W[j,k] ≈ scale[j]·q[j,k], scale[j] = max_k |W[j,k]| / 127.
// It multiplies either weight-only (q and scale, float32 activations) or,
// when packed is set, W8A8 (int8 activations, see WithInt8).
type int8Matrix struct {
	q       []int8
	scale   []float32
	packed  *kernel.Int8Weights // the W8A8 layout; nil for weight-only products
	out, in int
}

// quantize rounds w[out, in] to int8 per row; with w8a8 (and rows short
// enough for exact int32 sums) it lays the result out for W8A8 products.
func quantize(w []float32, out, in int, w8a8 bool) *int8Matrix {
	m := &int8Matrix{q: make([]int8, out*in), scale: make([]float32, out), out: out, in: in}
	for j := 0; j < out; j++ {
		var amax float32
		for _, v := range w[j*in : (j+1)*in] {
			amax = max(amax, float32(math.Abs(float64(v))))
		}
		if amax == 0 {
			continue
		}
		s := amax / 127
		m.scale[j] = s
		for k, v := range w[j*in : (j+1)*in] {
			m.q[j*in+k] = int8(math.Round(float64(v / s)))
		}
	}
	if w8a8 && in <= kernel.MaxW8A8K {
		// PackInt8 fails only on shapes ruled out here; were it to fail,
		// the matrix would stay weight-only.
		if p, err := kernel.PackInt8(m.q, m.scale, out, in); err == nil {
			m.packed, m.q = p, nil
		}
	}
	return m
}

// mulT computes y = x·Wᵀ with the int8 kernels: W8A8 when the matrix is
// packed for it (the quantization of x is made once and shared with the
// other products of the same rows), else weight-only, each output the
// 16-lane dot product of the row with the int8 weights, times the row's
// scale. It holds no mutable state, so engines may share the matrix.
func (m *int8Matrix) mulT(t *team.Team, y []float32, x *acts) {
	if m.packed != nil {
		kernel.MatMulNTW8A8(t, y[:x.rows*m.out], x.int8(), m.packed, false)
		return
	}
	kernel.MatMulNTInt8(t, y[:x.rows*m.out], x.x, m.q, m.scale, x.rows, m.out, m.in, false)
}

// Logits returns the next-token logits after every position of seq,
// computed by the engine in one forward pass (a teacher-forced prefill).
func (e *Engine) Logits(seq []int) ([][]float32, error) {
	if len(seq) == 0 || len(seq) > e.cfg.MaxSeq {
		return nil, fmt.Errorf("logits: sequence of %d tokens; need 1 to %d", len(seq), e.cfg.MaxSeq)
	}
	for i, id := range seq {
		if id < 0 || id >= e.cfg.VocabSize {
			return nil, fmt.Errorf("logits: position %d: token id %d outside the vocabulary of %d", i, id, e.cfg.VocabSize)
		}
	}
	st := &state{eng: e, tokens: append([]int(nil), seq...), promptLen: len(seq)}
	st.seg = e.newSegment(len(seq))
	defer st.Release()
	rows := make([]row, len(seq))
	for i, id := range seq {
		rows[i] = row{st: st, token: id, pos: i, logits: true}
	}
	e.forward(rows, nil)
	v := e.cfg.VocabSize
	seg := st.seg
	out := make([][]float32, len(seq))
	for i := range out {
		out[i] = append([]float32(nil), seg.logits[i*v:(i+1)*v]...)
	}
	return out, nil
}

// Divergence measures how far an engine's next-token distributions are from
// a reference engine's over teacher-forced sequences (both at temperature
// 1): the mean over positions of KL(reference ‖ other), and the mean
// |Δ log p| of each sequence's actual next token.
type Divergence struct {
	MeanKL         float64
	MeanAbsLogProb float64
	Positions      int
}

// MeasureDivergence compares other against reference on seqs; it is how the
// int8 engine's error is measured.
func MeasureDivergence(reference, other *Engine, seqs [][]int) (Divergence, error) {
	var d Divergence
	var pr, po []float64
	for i, seq := range seqs {
		lr, err := reference.Logits(seq)
		if err != nil {
			return d, fmt.Errorf("sequence %d: %w", i, err)
		}
		lo, err := other.Logits(seq)
		if err != nil {
			return d, fmt.Errorf("sequence %d: %w", i, err)
		}
		for t := 0; t+1 < len(seq); t++ {
			pr = append(pr[:0], make([]float64, len(lr[t]))...)
			po = append(po[:0], make([]float64, len(lo[t]))...)
			Distribution(pr, lr[t], DefaultSampling)
			Distribution(po, lo[t], DefaultSampling)
			var kl float64
			for j, p := range pr {
				if p > 0 {
					kl += float64(p * (portmath.Log(p) - portmath.Log(po[j])))
				}
			}
			d.MeanKL += kl
			next := seq[t+1]
			d.MeanAbsLogProb += math.Abs(portmath.Log(pr[next]) - portmath.Log(po[next]))
			d.Positions++
		}
	}
	if d.Positions > 0 {
		d.MeanKL /= float64(d.Positions)
		d.MeanAbsLogProb /= float64(d.Positions)
	}
	return d, nil
}
