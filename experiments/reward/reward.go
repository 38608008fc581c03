// Package reward turns responses into RL rewards: a learned reward model (a
// classifier on the policy's transformer with a scalar head, trained on
// verifier labels of the base policy's own samples), its held-out AUC, and
// Mixer, which mixes the verifier's reward, the reward model's probability,
// a format term and a length-shaping term with weights from config. A
// reward model can also be trained to order one prompt's candidates
// (TrainRanking, with near misses as hard negatives: NearMisses), scored
// by its head or by its body's likelihood of a response (Scoring).
//
// The reward model reads BOS prompt SEP response EOS, exactly the sequence
// the policy samples, and puts its head on the final hidden state at EOS:
// score = w·h_EOS + b is a logit, and sigmoid(score) is the probability that
// the verifier would grade the response correct. The layout follows Hugging
// Face's LlamaForSequenceClassification (a "score" head on the last token),
// with a bias added.
//
// A typical run:
//
//	train, _, err := reward.Collect(ctx, base, tok, t, reward.CollectConfig{Split: task.Train})
//	held, _, err := reward.Collect(ctx, base, tok, t, reward.CollectConfig{Split: task.Eval, Prompts: 1024})
//	rm, err := reward.NewModel(base, tok) // a copy of the base policy, head at zero
//	_, err = reward.Train(ctx, rm, train, reward.TrainConfig{}, onStep)
//	ev, err := rm.Evaluate(held) // ev.AUC: held-out AUC
//	mix, err := reward.NewMixer(reward.Config{Verifier: 1, Model: 0.5}, t, rm)
//	scored, err := mix.Score(prompts, responses) // scored[i].Reward
package reward

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"

	"github.com/rollout-rl/rollout/experiments/pretrain"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/portmath"
)

// Model is a reward model: a transformer body and a scalar head on its
// final hidden state at the last position of a sequence.
//
// Scoring only reads the parameters, so scoring calls may run
// concurrently; training must not run at the same time as anything else.
type Model struct {
	Body      *policy.Model
	Tokenizer *policy.Tokenizer
	Weight    *nn.Param // [1, dim]: score.weight
	Bias      *nn.Param // [1, 1]: score.bias ([1] in checkpoints)
	// Scoring is how a response is scored: the head (the zero value) or
	// the body's likelihood of it, in which case the head is unused.
	Scoring Scoring
}

// NewModel returns a reward model whose body is a copy of base's weights
// (base itself is never modified) and whose head is zero, so that every
// score starts at logit 0 (probability ½).
func NewModel(base *policy.Model, tok *policy.Tokenizer) (*Model, error) {
	if tok == nil {
		return nil, fmt.Errorf("reward model: no tokenizer")
	}
	if tok.VocabSize() != base.Config.VocabSize {
		return nil, fmt.Errorf("reward model: tokenizer has %d tokens, model vocab_size %d", tok.VocabSize(), base.Config.VocabSize)
	}
	raw, err := policy.EncodeWeights(base)
	if err != nil {
		return nil, fmt.Errorf("reward model: copy base weights: %w", err)
	}
	body, err := policy.DecodeWeights(base.Config, raw)
	if err != nil {
		return nil, fmt.Errorf("reward model: copy base weights: %w", err)
	}
	return &Model{
		Body:      body,
		Tokenizer: tok,
		Weight:    newParam([]float32{}, 1, base.Config.Dim),
		Bias:      newParam([]float32{}, 1, 1),
	}, nil
}

// newParam returns a trainable parameter of the given shape holding v
// (zeros when v is empty).
func newParam(v []float32, shape ...int) *nn.Param {
	n := 1
	for _, s := range shape {
		n *= s
	}
	if len(v) == 0 {
		v = make([]float32, n)
	}
	p := nn.NewParam(mat.NewDense[float32](mat.WithShape(shape...), mat.WithBacking(v)))
	p.SetRequiresGrad(true)
	return p
}

// Params lists every trainable parameter: the body's, then score.weight and
// score.bias.
func (m *Model) Params() []*nn.Param {
	return append(m.Body.Params(), m.Weight, m.Bias)
}

// Encode returns the token ids the reward model reads for a (prompt,
// response) pair: BOS prompt SEP response EOS. A character outside the
// tokenizer's alphabet, or a sequence longer than the body's
// max_position_embeddings, is an error.
func (m *Model) Encode(prompt, response string) ([]int, error) {
	ids, _, err := pretrain.Encode(m.Tokenizer, prompt, response)
	if err != nil {
		return nil, fmt.Errorf("reward model: encode %q → %q: %w", prompt, response, err)
	}
	if len(ids) > m.Body.Config.MaxSeq {
		return nil, fmt.Errorf("reward model: %q → %q is %d tokens, more than max_position_embeddings %d", prompt, response, len(ids), m.Body.Config.MaxSeq)
	}
	return ids, nil
}

// scoreChunk is the number of sequences per forward pass when scoring.
const scoreChunk = 128

// ScoreTokens returns the score of each token sequence (each normally
// ending in EOS): the head's logit, read at its last position, or with
// LikelihoodScore the body's log-likelihood of the response. Sequences are scored in
// batches; a sequence's score does not depend on the others.
func (m *Model) ScoreTokens(seqs [][]int) ([]float64, error) {
	out := make([]float64, 0, len(seqs))
	for lo := 0; lo < len(seqs); lo += scoreChunk {
		chunk := seqs[lo:min(lo+scoreChunk, len(seqs))]
		if m.Scoring == LikelihoodScore {
			z, err := m.likelihoods(chunk)
			if err != nil {
				return nil, fmt.Errorf("reward model: score: %w", err)
			}
			out = append(out, z...)
			continue
		}
		b, err := m.Body.NewBatch(chunk)
		if err != nil {
			return nil, fmt.Errorf("reward model: score: %w", err)
		}
		h := mat.Data[float32](m.Body.Hidden(b).Value())
		w, bias := mat.Data[float32](m.Weight.Value()), mat.Data[float32](m.Bias.Value())[0]
		dim := m.Body.Config.Dim
		for i, s := range chunk {
			r := b.Row(i, len(s)-1)
			out = append(out, float64(dot(w, h[r*dim:(r+1)*dim])+bias))
		}
	}
	return out, nil
}

// Pair is a prompt and a response to it.
type Pair struct {
	Prompt   string
	Response string
}

// Scores returns the logit of each (prompt, response) pair; see Encode for
// what makes a pair unreadable (an error naming it).
func (m *Model) Scores(pairs []Pair) ([]float64, error) {
	seqs := make([][]int, len(pairs))
	for i, p := range pairs {
		ids, err := m.Encode(p.Prompt, p.Response)
		if err != nil {
			return nil, fmt.Errorf("pair %d: %w", i, err)
		}
		seqs[i] = ids
	}
	return m.ScoreTokens(seqs)
}

// selectionRows bounds the token rows of one SelectionScores forward: a
// batch of a few hundred rows keeps the activations of a tiny or small
// body in the core's cache, which BenchmarkSelectionScores found faster
// than batches of 128 sequences (thousands of rows).
const selectionRows = 256

// SelectionScores returns the logit of each response to its prompt
// (responses[i] to prompts[i]) for choosing among candidates, e.g. best-of-N
// at test time: a pair the model cannot read (see Encode) scores −Inf, so
// that it is never chosen, instead of failing the whole call. The pairs are
// scored in batched forwards of similar lengths (sorted by token count, so
// little of a batch is padding) of at most selectionRows rows; each score
// equals the pair's score alone up to rounding (see ScoreTokens).
func (m *Model) SelectionScores(prompts []task.Prompt, responses []string) ([]float64, error) {
	if len(prompts) != len(responses) {
		return nil, fmt.Errorf("reward model: %d prompts for %d responses", len(prompts), len(responses))
	}
	out := make([]float64, len(responses))
	var seqs [][]int
	var at []int // at[k]: the pair seqs[k] encodes
	for i, r := range responses {
		ids, err := m.Encode(prompts[i].Text, r)
		if err != nil {
			out[i] = math.Inf(-1)
			continue
		}
		seqs = append(seqs, ids)
		at = append(at, i)
	}
	order := make([]int, len(seqs))
	for k := range order {
		order[k] = k
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(len(seqs[a]), len(seqs[b])) })
	sorted := make([][]int, len(seqs))
	for k, o := range order {
		sorted[k] = seqs[o]
	}
	scores := make([]float64, 0, len(sorted))
	for lo := 0; lo < len(sorted); {
		// Sorted by length, a batch's padded rows are its count times its
		// last sequence's length.
		hi := lo + 1
		for hi < len(sorted) && (hi-lo+1)*len(sorted[hi]) <= selectionRows {
			hi++
		}
		sc, err := m.ScoreTokens(sorted[lo:hi])
		if err != nil {
			return nil, err
		}
		scores = append(scores, sc...)
		lo = hi
	}
	for k, o := range order {
		out[at[o]] = scores[k]
	}
	return out, nil
}

// Sigmoid is the logistic function 1/(1+e^−x): a logit's probability,
// with the same bits on every CPU (portmath.ExpAMD64).
func Sigmoid(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + portmath.ExpAMD64(-x))
	}
	e := portmath.ExpAMD64(x)
	return e / (1 + e)
}

func dot(a, b []float32) float32 {
	var s float32
	for i, v := range a {
		s += float32(v * b[i])
	}
	return s
}

// ScoreFLOPs is the forward FLOPs of scoring one token sequence of length
// n (ScoreTokens), counted as policy.Config.ForwardFLOPs counts a position
// (matrix products only) but without the language-model head, which the
// body's hidden states skip, plus the reward head's dot product at the
// last position; with LikelihoodScore, the whole forward pass, the
// language-model head included.
func (m *Model) ScoreFLOPs(n int) int64 {
	c := m.Body.Config
	head := 2 * int64(c.Dim) * int64(c.VocabSize)
	var f int64
	if m.Scoring == LikelihoodScore { // the language-model head at every position, no reward head
		for ctx := 1; ctx <= n; ctx++ {
			f += c.ForwardFLOPs(ctx)
		}
		return f
	}
	for ctx := 1; ctx <= n; ctx++ {
		f += c.ForwardFLOPs(ctx) - head
	}
	return f + 2*int64(c.Dim)
}
