// Package passrate measures what sampling alone buys, without training
// (TreeRL's Fig. 1, left): on a base policy and a fixed set of eval
// prompts, the share of prompts with at least one correct leaf (PassRate)
// and the mean share of correct leaves (leaf accuracy), against the tokens
// generated per prompt, for i.i.d. sampling and for rollout trees.
//
// The i.i.d. reference is one flat group of K samples per prompt; its
// pass rate at n ≤ K samples is the unbiased pass@n estimator over those K
// (Chen et al. 2021), at n·ℓ tokens per prompt where ℓ is the mean response
// length, and at a fractional n it is interpolated linearly between the
// neighbouring whole n (with 0 at 0 tokens). A tree is compared with i.i.d.
// sampling at the tree's own mean tokens per prompt (matched budgets), and
// by the i.i.d. tokens needed to reach the tree's pass rate. Confidence
// intervals are percentile bootstraps over prompts; a tree and the i.i.d.
// reference are resampled together (paired: the same prompts). Trees of
// one shape under different fork scores are compared pairwise on the same
// prompts (ForkScorePairs: a paired bootstrap difference of PassRate and
// the exact McNemar test).
//
// Run samples a local policy; RunRemote samples a policy behind an
// OpenAI-compatible completions server (package search/remote) the same
// way, its tokens as the server counts them and its entropies estimated
// from the returned top-k log-probabilities.
package passrate

import (
	"errors"
	"fmt"
	"math"

	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/search/record"
	"github.com/rollout-rl/rollout/tracking/report/stats"
)

// Outcome is what one method generated for one prompt.
type Outcome struct {
	// Tokens are the generated tokens, a shared prefix counted once.
	Tokens int64
	// Leaves is the number of finished responses, Correct how many of them
	// the verifier accepted.
	Leaves, Correct int
}

// validate checks an outcome's counts.
func (o Outcome) validate() error {
	switch {
	case o.Leaves < 1:
		return fmt.Errorf("%d leaves, want at least 1", o.Leaves)
	case o.Correct < 0 || o.Correct > o.Leaves:
		return fmt.Errorf("%d correct of %d leaves", o.Correct, o.Leaves)
	case o.Tokens < 0:
		return fmt.Errorf("%d tokens, want at least 0", o.Tokens)
	}
	return nil
}

// FromRecord is the outcome of a scored rollout group: its generated
// tokens, its leaves and those with reward 1 or more (the verifier's
// reward for a correct answer). A group without leaves or with an unscored
// leaf is an error naming the leaf.
func FromRecord(g *record.Group) (Outcome, error) {
	o := Outcome{Tokens: g.Usage.GeneratedTokens, Leaves: len(g.Leaves)}
	for i, l := range g.Leaves {
		if !l.Scored {
			return Outcome{}, fmt.Errorf("group of prompt %q: leaf %d (node %d) is not scored", g.Prompt, i, l.Node)
		}
		if l.Reward >= 1 {
			o.Correct++
		}
	}
	if err := o.validate(); err != nil {
		return Outcome{}, fmt.Errorf("group of prompt %q: %w", g.Prompt, err)
	}
	return o, nil
}

// Method is one sampling method's outcomes, one per prompt in prompt order.
type Method struct {
	// Name identifies the method in tables ("entropy_tree(6,2,1,2)").
	Name string
	// Family groups methods drawn as one line (e.g. "entropy", "segment").
	Family string
	// Shape is the tree's shape ("6,2,1,2"); methods of the same Shape and
	// different fork-score families are compared pairwise. "" for none.
	Shape string
	// Outcomes has one entry per prompt, the same prompts for every method.
	Outcomes []Outcome
}

// validate checks every outcome and the number of prompts.
func (m Method) validate(prompts int) error {
	if len(m.Outcomes) != prompts {
		return fmt.Errorf("method %s: %d prompts, want %d (the i.i.d. reference's)", m.Name, len(m.Outcomes), prompts)
	}
	for i, o := range m.Outcomes {
		if err := o.validate(); err != nil {
			return fmt.Errorf("method %s: prompt %d: %w", m.Name, i, err)
		}
	}
	return nil
}

// passRate is the share of the prompts idx with at least one correct leaf.
func passRate(os []Outcome, idx []int) float64 {
	n := 0
	for _, i := range idx {
		if os[i].Correct > 0 {
			n++
		}
	}
	return float64(n) / float64(len(idx))
}

// leafAcc is the mean over the prompts idx of their share of correct leaves.
func leafAcc(os []Outcome, idx []int) float64 {
	s := 0.0
	for _, i := range idx {
		s += float64(os[i].Correct) / float64(os[i].Leaves)
	}
	return s / float64(len(idx))
}

// meanTokens is the mean generated tokens per prompt over the prompts idx.
func meanTokens(os []Outcome, idx []int) float64 {
	s := 0.0
	for _, i := range idx {
		s += float64(os[i].Tokens)
	}
	return s / float64(len(idx))
}

// IID is the i.i.d. reference: one flat group of K samples per prompt
// (K may differ between prompts; the curve ends at the smallest). Make it
// with NewIID.
type IID struct {
	Outcomes []Outcome
	// pass[i][n] is prompt i's pass@n, n = 0 … k; k is MaxN.
	pass [][]float64
	k    int
}

// NewIID checks the flat outcomes and returns the reference.
func NewIID(flat []Outcome) (IID, error) {
	if len(flat) == 0 {
		return IID{}, errors.New("i.i.d. reference: no prompts")
	}
	m := Method{Name: "iid", Outcomes: flat}
	if err := m.validate(len(flat)); err != nil {
		return IID{}, err
	}
	k := math.MaxInt
	for _, o := range flat {
		k = min(k, o.Leaves)
	}
	r := IID{Outcomes: flat, k: k}
	r.pass = make([][]float64, len(flat))
	for i, o := range flat {
		r.pass[i] = make([]float64, k+1)
		for n := 1; n <= k; n++ {
			r.pass[i][n] = rl.PassAtK(o.Leaves, o.Correct, n)
		}
	}
	return r, nil
}

// MaxN is the largest whole number of samples the reference covers on
// every prompt.
func (r IID) MaxN() int { return r.k }

// tokensPerSample is the mean over the prompts idx of their mean response
// length in tokens.
func (r IID) tokensPerSample(idx []int) float64 {
	s := 0.0
	for _, i := range idx {
		o := r.Outcomes[i]
		s += float64(o.Tokens) / float64(o.Leaves)
	}
	return s / float64(len(idx))
}

// passAtN is the mean over the prompts idx of pass@n (whole n ≥ 0).
func (r IID) passAtN(idx []int, n int) float64 {
	s := 0.0
	for _, i := range idx {
		s += r.pass[i][n]
	}
	return s / float64(len(idx))
}

// passAt is the pass rate at n samples, linear between whole n; ok is
// false when n is negative or beyond MaxN.
func (r IID) passAt(idx []int, n float64) (float64, bool) {
	if n < 0 || n > float64(r.MaxN()) {
		return math.NaN(), false
	}
	lo := math.Floor(n)
	p := r.passAtN(idx, int(lo))
	if n == lo {
		return p, true
	}
	return p + float64((n-lo)*(r.passAtN(idx, int(lo)+1)-p)), true
}

// PassAtTokens is the i.i.d. pass rate over the prompts idx (nil: all) at
// the given mean tokens per prompt; ok is false beyond the reference's K.
func (r IID) PassAtTokens(idx []int, tokens float64) (float64, bool) {
	idx = r.all(idx)
	return r.passAt(idx, tokens/r.tokensPerSample(idx))
}

// TokensFor is the mean tokens per prompt at which i.i.d. sampling over the
// prompts idx (nil: all) first reaches the pass rate p, interpolated
// between whole numbers of samples; ok is false when K samples do not
// reach it. A pass rate of 0 needs no tokens.
func (r IID) TokensFor(idx []int, p float64) (float64, bool) {
	if p <= 0 {
		return 0, true
	}
	idx = r.all(idx)
	ell := r.tokensPerSample(idx)
	prev := 0.0
	for n := 1; n <= r.MaxN(); n++ {
		cur := r.passAtN(idx, n)
		if cur >= p {
			frac := 1.0
			if cur > prev {
				frac = (p - prev) / (cur - prev)
			}
			return (float64(n-1) + frac) * ell, true
		}
		prev = cur
	}
	return float64(r.MaxN()) * ell, false
}

// all returns idx, or every prompt's index when idx is nil.
func (r IID) all(idx []int) []int {
	if idx != nil {
		return idx
	}
	out := make([]int, len(r.Outcomes))
	for i := range out {
		out[i] = i
	}
	return out
}

// Interval is an estimate with its bootstrap confidence interval.
type Interval struct {
	Est, Lo, Hi float64
}

// Bootstrap configures the confidence intervals.
type Bootstrap struct {
	// Resamples of the prompts (at least 100), Level the confidence level
	// (e.g. 0.95), Seed the resampling stream: the same inputs and seed give
	// the same intervals.
	Resamples int
	Level     float64
	Seed      uint64
}

// DefaultBootstrap is 2,000 resamples at 95% with seed 1.
func DefaultBootstrap() Bootstrap { return Bootstrap{Resamples: 2000, Level: 0.95, Seed: 1} }

// interval is the estimate of stat on all prompts and its percentile
// bootstrap interval over resamples of the prompts. Every call with the
// same options draws the same resamples, so intervals of different
// statistics are over the same resampled prompt sets (paired).
func (b Bootstrap) interval(prompts int, stat func(idx []int) float64) (Interval, error) {
	all := make([]int, prompts)
	xs := make([]float64, prompts)
	for i := range all {
		all[i], xs[i] = i, float64(i)
	}
	idx := make([]int, prompts)
	lo, hi, err := stats.BootstrapCI(xs, func(sample []float64) float64 {
		for i, x := range sample {
			idx[i] = int(x)
		}
		return stat(idx)
	}, b.Level, b.Resamples, b.Seed)
	if err != nil {
		return Interval{}, fmt.Errorf("bootstrap over %d prompts: %w", prompts, err)
	}
	return Interval{Est: stat(all), Lo: lo, Hi: hi}, nil
}
