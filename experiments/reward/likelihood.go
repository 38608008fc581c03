package reward

import (
	"fmt"
	"slices"

	"github.com/nlpodyssey/spago/mat"

	"github.com/rollout-rl/rollout/policy"
)

// This file scores a response by its log-likelihood under the reward
// model's body, Σ log π(response token | what precedes it) over the
// response's tokens and EOS, instead of by a head on the last hidden
// state. Trained with the pairwise ranking loss (TrainRanking), the body
// learns to give right candidates more probability than the wrong
// candidates of the same prompt, a sequence-likelihood ranking loss as in
// RRHF (Yuan et al. 2023) and SLiC (Zhao et al. 2023). Its signal is in
// the language-model head at every position of the response — the
// probability of each written digit given the digits before it — where a
// head on EOS must learn to gather it; untrained, the base policy's own
// likelihood already orders its candidates somewhat. The score is a
// log-probability (≤ 0), not a logit: a model scored this way ranks
// candidates (best-of-N, within-prompt AUC) and is not mixed into
// rewards as a probability.

// Scoring says how a reward model turns a response into its score.
type Scoring int

// The scorings.
const (
	// HeadScore is w·h_EOS + b, a logit: the probability that the
	// verifier grades the response right is its sigmoid.
	HeadScore Scoring = iota
	// LikelihoodScore is the body's log-likelihood of the response
	// tokens and EOS given BOS prompt SEP.
	LikelihoodScore
)

// String is the scoring's name in checkpoints and on the command line.
func (s Scoring) String() string {
	switch s {
	case HeadScore:
		return "head"
	case LikelihoodScore:
		return "likelihood"
	}
	return fmt.Sprintf("Scoring(%d)", int(s))
}

// ParseScoring reads a scoring's name ("head" or "likelihood").
func ParseScoring(name string) (Scoring, error) {
	for _, s := range []Scoring{HeadScore, LikelihoodScore} {
		if s.String() == name {
			return s, nil
		}
	}
	return 0, fmt.Errorf("reward model: unknown scoring %q (known: head, likelihood)", name)
}

// responseRows returns, for each sequence of b (BOS prompt SEP response
// EOS), the rows of the token log-probabilities (policy.Model.
// TokenLogProbs) that predict its response tokens and EOS.
func responseRows(b *policy.Batch, seqs [][]int) ([][]int, error) {
	rows := make([][]int, len(seqs))
	for i, s := range seqs {
		sep := slices.Index(s, policy.SEP)
		if sep < 0 {
			return nil, fmt.Errorf("reward model: sequence %d has no SEP token", i)
		}
		for t := sep + 1; t < len(s); t++ {
			rows[i] = append(rows[i], b.Target(i, t-1))
		}
	}
	return rows, nil
}

// likelihoods returns each sequence's response log-likelihood under the
// body (LikelihoodScore), without gradients.
func (m *Model) likelihoods(seqs [][]int) ([]float64, error) {
	b, err := m.Body.NewBatch(seqs)
	if err != nil {
		return nil, err
	}
	rows, err := responseRows(b, seqs)
	if err != nil {
		return nil, err
	}
	lp := mat.Data[float32](m.Body.TokenLogProbs(b, m.Body.Logits(b), 1).Value())
	out := make([]float64, len(seqs))
	for i, rs := range rows {
		for _, r := range rs {
			out[i] += float64(lp[r])
		}
	}
	return out, nil
}

// likelihoodRank is the pairwise loss over the candidates' response
// log-likelihoods as one autograd function on the token log-probabilities.
type likelihoodRank struct {
	lp     mat.Tensor // [rows, 1]: policy.Model.TokenLogProbs
	rows   [][]int    // each candidate's rows of lp
	labels []bool
	prompt []int // the step's index of each candidate's prompt
	z      []float32
	pairs  [][2]int
}

func (f *likelihoodRank) Operands() []mat.Tensor { return []mat.Tensor{f.lp} }

func (f *likelihoodRank) Forward() (mat.Tensor, error) {
	lp := mat.Data[float32](f.lp.Value())
	f.z = make([]float32, len(f.rows))
	for i, rs := range f.rows {
		for _, r := range rs {
			f.z[i] += lp[r]
		}
	}
	f.pairs = rankPairs(f.labels, f.prompt)
	return mat.Scalar(float32(pairLoss(f.z, f.pairs))), nil
}

func (f *likelihoodRank) Backward(gy mat.Tensor) error {
	if !f.lp.RequiresGrad() {
		return nil
	}
	dz := pairGrad(f.z, f.pairs, float64(mat.Data[float32](gy.Value())[0]))
	g := make([]float32, f.lp.Value().Shape()[0])
	for i, rs := range f.rows {
		for _, r := range rs {
			g[r] += dz[i]
		}
	}
	f.lp.AccGrad(mat.NewDense[float32](mat.WithShape(len(g), 1), mat.WithBacking(g)))
	return nil
}
