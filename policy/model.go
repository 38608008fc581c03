// Package policy is the language model that rollouts are sampled from and
// that RL trains: a Llama-style transformer whose parameters, autodiff and
// optimizer are spago's, a fast batched KV-cached inference engine over the
// same weights (float32, or an int8 copy), sampling with entropies,
// character-level tokenization and Hugging Face compatible checkpoints.
//
// The transformer computes the same function as Hugging Face's
// LlamaForCausalLM with rope_theta 10000, rms_norm_eps 1e-5, hidden_act silu
// and untied embeddings: token embedding; per layer RMSNorm → causal
// multi-head attention with rotary embeddings (rotate-half) → residual,
// RMSNorm → SwiGLU feed-forward → residual; final RMSNorm; output head; no
// biases.
package policy

import (
	"fmt"
	"math/rand/v2"

	"github.com/nlpodyssey/spago/ag"
	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"
	"github.com/rollout-rl/rollout/policy/team"
)

// Model is the transformer's parameters. Weight matrices are stored
// [out, in], as PyTorch's Linear stores them.
type Model struct {
	Config Config
	Embed  *nn.Param // [vocab, dim]: model.embed_tokens.weight
	Layers []*Layer
	Norm   *nn.Param // [dim]: model.norm.weight
	Head   *nn.Param // [vocab, dim]: lm_head.weight

	rope  *rope
	pool  *bufPool   // recycled buffers of the training path
	bf16  bool       // see SetBF16Training
	flush bool       // see SetFlushSubnormals
	team  *team.Team // see SetTeam
}

// Layer is one transformer block's parameters.
type Layer struct {
	AttnNorm *nn.Param // [dim]: input_layernorm
	Wq       *nn.Param // [dim, dim]: self_attn.q_proj
	Wk       *nn.Param // [dim, dim]: self_attn.k_proj
	Wv       *nn.Param // [dim, dim]: self_attn.v_proj
	Wo       *nn.Param // [dim, dim]: self_attn.o_proj
	FFNNorm  *nn.Param // [dim]: post_attention_layernorm
	W1       *nn.Param // [hidden, dim]: mlp.gate_proj
	W3       *nn.Param // [hidden, dim]: mlp.up_proj
	W2       *nn.Param // [dim, hidden]: mlp.down_proj
}

// NewModel returns a model with weights drawn from a normal distribution
// with standard deviation 0.02 (norm weights 1), deterministic in seed.
func NewModel(cfg Config, seed uint64) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	normal := func(rows, cols int) *nn.Param {
		v := make([]float32, rows*cols)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * 0.02)
		}
		return newParam(rows, cols, v)
	}
	ones := func(n int) *nn.Param {
		v := make([]float32, n)
		for i := range v {
			v[i] = 1
		}
		return newParam(n, 1, v)
	}
	m := &Model{Config: cfg}
	m.Embed = normal(cfg.VocabSize, cfg.Dim)
	for i := 0; i < cfg.Layers; i++ {
		m.Layers = append(m.Layers, &Layer{
			AttnNorm: ones(cfg.Dim),
			Wq:       normal(cfg.Dim, cfg.Dim),
			Wk:       normal(cfg.Dim, cfg.Dim),
			Wv:       normal(cfg.Dim, cfg.Dim),
			Wo:       normal(cfg.Dim, cfg.Dim),
			FFNNorm:  ones(cfg.Dim),
			W1:       normal(cfg.Hidden, cfg.Dim),
			W3:       normal(cfg.Hidden, cfg.Dim),
			W2:       normal(cfg.Dim, cfg.Hidden),
		})
	}
	m.Norm = ones(cfg.Dim)
	m.Head = normal(cfg.VocabSize, cfg.Dim)
	m.rope = newRope(cfg)
	m.pool = newBufPool()
	m.team = team.New(0)
	return m, nil
}

func newParam(rows, cols int, v []float32) *nn.Param {
	p := &nn.Param{Matrix: dense(rows, cols, v)}
	p.SetRequiresGrad(true)
	return p
}

// NamedParam is a parameter with its Hugging Face tensor name and shape.
type NamedParam struct {
	Name  string
	Shape []int
	Param *nn.Param
}

// NamedParams lists every parameter with its Hugging Face Llama tensor
// name, in a fixed order (the order the optimizer visits them in).
func (m *Model) NamedParams() []NamedParam {
	c := m.Config
	out := []NamedParam{{"model.embed_tokens.weight", []int{c.VocabSize, c.Dim}, m.Embed}}
	for i, l := range m.Layers {
		p := fmt.Sprintf("model.layers.%d.", i)
		out = append(out,
			NamedParam{p + "input_layernorm.weight", []int{c.Dim}, l.AttnNorm},
			NamedParam{p + "self_attn.q_proj.weight", []int{c.Dim, c.Dim}, l.Wq},
			NamedParam{p + "self_attn.k_proj.weight", []int{c.Dim, c.Dim}, l.Wk},
			NamedParam{p + "self_attn.v_proj.weight", []int{c.Dim, c.Dim}, l.Wv},
			NamedParam{p + "self_attn.o_proj.weight", []int{c.Dim, c.Dim}, l.Wo},
			NamedParam{p + "post_attention_layernorm.weight", []int{c.Dim}, l.FFNNorm},
			NamedParam{p + "mlp.gate_proj.weight", []int{c.Hidden, c.Dim}, l.W1},
			NamedParam{p + "mlp.up_proj.weight", []int{c.Hidden, c.Dim}, l.W3},
			NamedParam{p + "mlp.down_proj.weight", []int{c.Dim, c.Hidden}, l.W2},
		)
	}
	return append(out,
		NamedParam{"model.norm.weight", []int{c.Dim}, m.Norm},
		NamedParam{"lm_head.weight", []int{c.VocabSize, c.Dim}, m.Head},
	)
}

// Params lists the parameters in NamedParams order.
func (m *Model) Params() []*nn.Param {
	named := m.NamedParams()
	out := make([]*nn.Param, len(named))
	for i, p := range named {
		out[i] = p.Param
	}
	return out
}

// Batch is a right-padded batch of token sequences laid out as rows: row
// b·SeqLen+t is position t of sequence b.
type Batch struct {
	Seqs   [][]int
	SeqLen int // the longest sequence's length

	// A packed batch's rows (NewPackedBatch): the token of each row and
	// the prefix tree; nil for a padded batch.
	ids    []int
	packed *packing
}

// NewBatch lays out sequences for a forward pass; every sequence must be
// non-empty, no longer than the model's MaxSeq, and made of valid ids.
func (m *Model) NewBatch(seqs [][]int) (*Batch, error) {
	b := &Batch{Seqs: seqs}
	for i, s := range seqs {
		if len(s) == 0 {
			return nil, fmt.Errorf("batch: sequence %d is empty", i)
		}
		if len(s) > m.Config.MaxSeq {
			return nil, fmt.Errorf("batch: sequence %d has %d tokens, more than max_position_embeddings %d", i, len(s), m.Config.MaxSeq)
		}
		for j, id := range s {
			if id < 0 || id >= m.Config.VocabSize {
				return nil, fmt.Errorf("batch: sequence %d position %d: token id %d outside the vocabulary of %d", i, j, id, m.Config.VocabSize)
			}
		}
		b.SeqLen = max(b.SeqLen, len(s))
	}
	if len(seqs) == 0 {
		return nil, fmt.Errorf("batch: no sequences")
	}
	return b, nil
}

// Rows is the number of rows of the batch: sequences × SeqLen, or the
// number of distinct prefixes of a packed batch.
func (b *Batch) Rows() int {
	if b.packed != nil {
		return len(b.ids)
	}
	return len(b.Seqs) * b.SeqLen
}

// Row returns the row of position t of sequence i.
func (b *Batch) Row(i, t int) int {
	if b.packed != nil {
		return b.packed.index[i][t]
	}
	return i*b.SeqLen + t
}

// FreeBuffers drops the free buffers the model keeps for its training
// passes (the activations and gradients of the last optimizer step, kept
// for the next one) and returns how many bytes they held. Between updates
// that are far apart — an RL step samples and evaluates between them —
// holding them costs memory for the whole phase in between, and the
// garbage collector, whose heap goal is twice the live heap, lets the
// heap grow by as much again; dropped, the next pass allocates them anew.
// No result depends on it: a pooled buffer's contents are undefined.
func (m *Model) FreeBuffers() int64 { return 4 * int64(m.pool.drop()) }

// Logits runs the differentiable forward pass and returns the next-token
// logits of every row, a [rows, vocab] tensor; rows past a sequence's end
// hold meaningless values.
func (m *Model) Logits(b *Batch) mat.Tensor {
	c := m.Config
	return ag.NewOperator(&linear{x: m.Hidden(b), w: m.Head, in: c.Dim, out: c.VocabSize, pool: m.pool, mm: m.products()}).Run()
}

// Hidden runs the differentiable forward pass up to the final RMSNorm and
// returns the [rows, dim] hidden states the output head reads: the features
// a reward model or value head puts its own head on.
func (m *Model) Hidden(b *Batch) mat.Tensor { return m.hidden(b, nil) }

// hidden is Hidden, registering its functions with fp.
func (m *Model) hidden(b *Batch, fp *forwardPass) mat.Tensor {
	c := m.Config
	ids, lens := b.ids, []int(nil)
	if b.packed == nil {
		ids, lens = make([]int, b.Rows()), make([]int, len(b.Seqs))
		for i, s := range b.Seqs {
			copy(ids[i*b.SeqLen:], s)
			lens[i] = len(s)
		}
	}
	eps := float32(c.NormEps)
	run := func(f interface {
		ag.AutoGradFunction
		releaser
	}) mat.Tensor {
		fp.add(f)
		return ag.NewOperator(f).Run()
	}
	x := run(&embedding{table: m.Embed, ids: ids, dim: c.Dim, pool: m.pool})
	for _, l := range m.Layers {
		attn := &attention{wq: l.Wq, wk: l.Wk, wv: l.Wv, wo: l.Wo, cfg: c, rope: m.rope, seqLen: b.SeqLen, lens: lens, tree: b.packed, pool: m.pool, mm: m.products()}
		x = run(&block{x: x, norm: l.AttnNorm, eps: eps, dim: c.Dim, pool: m.pool, team: m.team, f: attn})
		ffn := &feedForward{w1: l.W1, w3: l.W3, w2: l.W2, dim: c.Dim, hidden: c.Hidden, pool: m.pool, mm: m.products()}
		x = run(&block{x: x, norm: l.FFNNorm, eps: eps, dim: c.Dim, pool: m.pool, team: m.team, f: ffn})
	}
	return run(&rmsNorm{x: x, w: m.Norm, eps: eps, dim: c.Dim, pool: m.pool, team: m.team})
}

// TokenLogProbs returns, for every row, log p(next token) under
// softmax(logits/temperature): row Target(i, t) holds log p(seq[t+1] |
// seq[:t+1]) for t < len(seq)−1, the other rows 0 (in the padded layout
// Target(i, t) is Row(i, t); see NewPackedBatch for the packed one). The
// result is a differentiable [rows, 1] tensor.
func (m *Model) TokenLogProbs(b *Batch, logits mat.Tensor, temperature float64) mat.Tensor {
	src, targets := b.predictions()
	return ag.NewOperator(&tokenLogProbs{logits: logits, src: src, targets: targets, vocab: m.Config.VocabSize, invTemp: float32(1 / temperature), flush: m.flush, pool: m.pool, team: m.team}).Run()
}

// TokenLogProbValues returns the values of TokenLogProbs(b, Logits(b),
// temperature), one per row, from a forward pass that is not
// back-propagated: the buffers the pass keeps for a backward pass go back
// to the model's buffer pool as soon as the values are read, instead of
// becoming garbage the size of a training step's activations (π_old's
// log-probs before an update, then the update's own pass, reuse the same
// buffers).
func (m *Model) TokenLogProbValues(b *Batch, temperature float64) []float32 {
	c := m.Config
	var fp forwardPass
	logits := ag.NewOperator(&linear{x: m.hidden(b, &fp), w: m.Head, in: c.Dim, out: c.VocabSize, pool: m.pool, mm: m.products()}).Run()
	src, targets := b.predictions()
	lp := &tokenLogProbs{logits: logits, src: src, targets: targets, vocab: c.VocabSize, invTemp: float32(1 / temperature), flush: m.flush, pool: m.pool, team: m.team}
	fp.add(lp)
	out := data(ag.NewOperator(lp).Run())
	fp.release()
	return out
}

// TokenEntropies returns, in row Target(i, t) for every t < len(seq)−1,
// the entropy of softmax(logits/temperature) at the position that predicts
// seq[t+1] (0 in the other rows), as a differentiable [rows, 1] tensor.
func (m *Model) TokenEntropies(b *Batch, logits mat.Tensor, temperature float64) mat.Tensor {
	src, _ := b.predictions()
	return ag.NewOperator(&tokenEntropy{logits: logits, src: src, vocab: m.Config.VocabSize, invTemp: float32(1 / temperature), flush: m.flush, pool: m.pool, team: m.team}).Run()
}

// Values returns the parameter's float32 values in row-major order: the
// model's own storage, so that writing to it changes the model.
func (p NamedParam) Values() []float32 { return data(p.Param) }
