// Package policytest provides a policy.Sampler whose next-token distribution
// is a Go function chosen by the test, so rollout search and the RL loop can
// be tested against distributions, entropies and counters known exactly.
//
// The sampler behaves like the real engine where search can observe it:
// counter-based sampling per (Stream, position), temperature/top-k/top-p,
// forks that share their prefix, lazy feeding of the last sampled token
// (as policy.Engine: a fork taken right after a token was sampled, at the
// end of its parent, feeds that token itself), and exact Counters.
package policytest

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"sync"

	"github.com/rollout-rl/rollout/policy"
)

// Dist gives the model's next-token probabilities after tokens (the prompt
// and everything sampled so far). The slice must have one non-negative entry
// per vocabulary id with a positive sum; it is normalised by the sampler.
// It must be a pure function of tokens and safe for concurrent use.
type Dist func(tokens []int) []float64

// Sampler is a policy.Sampler over a Dist. It is safe for concurrent use;
// its states, like every policy.State, are not.
type Sampler struct {
	vocab int
	dist  Dist

	mu       sync.Mutex
	counters policy.Counters
	steps    int
	maxBatch int
	live     int
}

var _ policy.Sampler = (*Sampler)(nil)

// New returns a Sampler over a vocabulary of vocab ids whose next-token
// distribution is dist.
func New(vocab int, dist Dist) (*Sampler, error) {
	if vocab < 1 {
		return nil, fmt.Errorf("policytest: vocab = %d, want >= 1", vocab)
	}
	if dist == nil {
		return nil, errors.New("policytest: dist is nil")
	}
	return &Sampler{vocab: vocab, dist: dist}, nil
}

// Fixed returns a Dist that ignores the context and always gives probs.
func Fixed(probs ...float64) Dist {
	p := append([]float64(nil), probs...)
	return func([]int) []float64 { return p }
}

type state struct {
	s         *Sampler
	tokens    []int
	pending   bool // the last token is sampled but not yet fed
	promptLen int
	stream    policy.Stream
	released  bool
}

// Prefill implements policy.Sampler: every prompt position counts as one
// prefill token.
func (s *Sampler) Prefill(prompt []int, stream policy.Stream) (policy.State, error) {
	if len(prompt) == 0 {
		return nil, errors.New("policytest: prefill: empty prompt")
	}
	for i, t := range prompt {
		if t < 0 || t >= s.vocab {
			return nil, fmt.Errorf("policytest: prefill: prompt token %d at %d outside vocabulary [0, %d)", t, i, s.vocab)
		}
	}
	st := &state{
		s:         s,
		tokens:    append([]int(nil), prompt...),
		promptLen: len(prompt),
		stream:    stream,
	}
	s.mu.Lock()
	s.counters.PrefillTokens += int64(len(prompt))
	s.live++
	s.mu.Unlock()
	return st, nil
}

// PrefillBatch prefills several prompts, as Prefill does for each, like
// policy.Engine's batched prefill.
func (s *Sampler) PrefillBatch(prompts [][]int, streams []policy.Stream) ([]policy.State, error) {
	if len(streams) != len(prompts) {
		return nil, fmt.Errorf("policytest: prefill: %d prompts but %d streams", len(prompts), len(streams))
	}
	out := make([]policy.State, len(prompts))
	for i, p := range prompts {
		st, err := s.Prefill(p, streams[i])
		if err != nil {
			for _, done := range out[:i] {
				done.Release()
			}
			return nil, fmt.Errorf("prompt %d: %w", i, err)
		}
		out[i] = st
	}
	return out, nil
}

// Step implements policy.Sampler. A state whose last token has not yet been
// fed through the model is fed first (one decode token); then one token is
// sampled with the uniform number of (stream, position).
func (s *Sampler) Step(states []policy.State, cfg policy.Sampling, out []policy.Token) error {
	if len(out) != len(states) {
		return fmt.Errorf("policytest: step: %d states but %d outputs", len(states), len(out))
	}
	if err := checkSampling(cfg); err != nil {
		return fmt.Errorf("policytest: step: %w", err)
	}
	sts := make([]*state, len(states))
	for i, ps := range states {
		st, ok := ps.(*state)
		if !ok || st.s != s {
			return fmt.Errorf("policytest: step: state %d does not belong to this sampler", i)
		}
		if st.released {
			return fmt.Errorf("policytest: step: state %d was released", i)
		}
		sts[i] = st
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, st := range sts {
		if st.pending {
			s.counters.DecodeTokens++
		}
		probs, err := s.next(st.tokens)
		if err != nil {
			return fmt.Errorf("policytest: step: state %d: %w", i, err)
		}
		tok := Sample(probs, cfg, Uniform(st.stream, len(st.tokens)))
		st.tokens = append(st.tokens, tok.ID)
		st.pending = true
		out[i] = tok
		s.counters.SampledTokens++
	}
	s.steps++
	if len(states) > s.maxBatch {
		s.maxBatch = len(states)
	}
	return nil
}

func (s *Sampler) next(tokens []int) ([]float64, error) {
	p := s.dist(tokens)
	if len(p) != s.vocab {
		return nil, fmt.Errorf("dist gave %d probabilities, want vocab %d", len(p), s.vocab)
	}
	sum := 0.0
	for i, v := range p {
		if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("dist gave probability %v for token %d", v, i)
		}
		sum += v
	}
	if sum <= 0 {
		return nil, errors.New("dist gave probabilities summing to 0")
	}
	q := make([]float64, len(p))
	for i, v := range p {
		q[i] = v / sum
	}
	return q, nil
}

// Counters implements policy.Sampler.
func (s *Sampler) Counters() policy.Counters {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counters
}

// Steps is the number of Step calls so far.
func (s *Sampler) Steps() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.steps
}

// MaxBatch is the largest number of states passed to one Step call.
func (s *Sampler) MaxBatch() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.maxBatch
}

// Live is the number of states created (by Prefill or Fork) and not yet
// released.
func (s *Sampler) Live() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live
}

// Tokens implements policy.State.
func (st *state) Tokens() []int { return st.tokens }

// PromptLen implements policy.State.
func (st *state) PromptLen() int { return st.promptLen }

// Fork implements policy.State. The child shares what the parent fed; a
// fork at the end of a parent whose last token is pending feeds that token
// itself, as policy.Engine does.

func (st *state) Fork(at int, stream policy.Stream) (policy.State, error) {
	if st.released {
		return nil, errors.New("policytest: fork of a released state")
	}
	if at < st.promptLen || at > len(st.tokens) {
		return nil, fmt.Errorf("policytest: fork at %d outside [%d, %d]", at, st.promptLen, len(st.tokens))
	}
	child := &state{
		s:         st.s,
		tokens:    st.tokens[:at:at],
		pending:   at == len(st.tokens) && st.pending,
		promptLen: st.promptLen,
		stream:    stream,
	}
	st.s.mu.Lock()
	st.s.live++
	st.s.mu.Unlock()
	return child, nil
}

// Release implements policy.State.
func (st *state) Release() {
	if st.released {
		return
	}
	st.released = true
	st.s.mu.Lock()
	st.s.live--
	st.s.mu.Unlock()
}

// Uniform is the uniform number in [0, 1) that the sampler uses for the token
// at position pos of a state with the given stream: a SplitMix64-style hash
// of (Seed, ID, pos), so it does not depend on batching or call order.
func Uniform(stream policy.Stream, pos int) float64 {
	h := mix(stream.Seed ^ 0x9e3779b97f4a7c15)
	h = mix(h ^ stream.ID)
	h = mix(h ^ uint64(pos))
	return float64(h>>11) / (1 << 53)
}

func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func checkSampling(cfg policy.Sampling) error {
	if cfg.Temperature < 0 || math.IsNaN(cfg.Temperature) {
		return fmt.Errorf("sampling temperature = %v, want >= 0", cfg.Temperature)
	}
	if cfg.TopK < 0 {
		return fmt.Errorf("sampling top_k = %d, want >= 0", cfg.TopK)
	}
	if cfg.TopP < 0 || cfg.TopP > 1 || math.IsNaN(cfg.TopP) {
		return fmt.Errorf("sampling top_p = %v, want in (0, 1]", cfg.TopP)
	}
	return nil
}

// Sample draws one token from the model probabilities probs (normalised)
// with the uniform number u, after temperature, top-k and top-p as
// policy.Sampling describes, by the inverse CDF over the kept tokens in
// id order. LogProb and Entropy are those of the sampling distribution.
func Sample(probs []float64, cfg policy.Sampling, u float64) policy.Token {
	q := SamplingDist(probs, cfg)
	if cfg.Temperature == 0 {
		best := 0
		for i, v := range q {
			if v > q[best] {
				best = i
			}
		}
		return policy.Token{ID: best}
	}
	id := -1
	acc := 0.0
	for i, v := range q {
		if v == 0 {
			continue
		}
		acc += v
		id = i
		if u < acc {
			break
		}
	}
	h := 0.0
	for _, v := range q {
		if v > 0 {
			h -= float64(v * math.Log(v))
		}
	}
	return policy.Token{ID: id, LogProb: float32(math.Log(q[id])), Entropy: float32(h)}
}

// SamplingDist returns the distribution tokens are drawn from: probs raised
// to 1/Temperature and renormalised, restricted to the TopK most probable
// ids, then to the smallest most-probable set whose mass reaches TopP, and
// renormalised. With Temperature 0 it is the one-hot arg max (lowest id on
// ties).
func SamplingDist(probs []float64, cfg policy.Sampling) []float64 {
	n := len(probs)
	q := make([]float64, n)
	if cfg.Temperature == 0 {
		best := 0
		for i, v := range probs {
			if v > probs[best] {
				best = i
			}
		}
		q[best] = 1
		return q
	}
	// Tempered probabilities via log space, stabilised by the max.
	maxLog := math.Inf(-1)
	for i, v := range probs {
		if v > 0 {
			q[i] = math.Log(v) / cfg.Temperature
			maxLog = math.Max(maxLog, q[i])
		}
	}
	sum := 0.0
	for i, v := range probs {
		if v > 0 {
			q[i] = math.Exp(q[i] - maxLog)
			sum += q[i]
		} else {
			q[i] = 0
		}
	}
	for i := range q {
		q[i] /= sum
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return q[order[a]] > q[order[b]] })
	keep := n
	if cfg.TopK > 0 && cfg.TopK < keep {
		keep = cfg.TopK
	}
	if cfg.TopP > 0 && cfg.TopP < 1 {
		kept := 0.0
		for _, i := range order[:keep] {
			kept += q[i]
		}
		mass := 0.0
		for i := 0; i < keep; i++ {
			mass += q[order[i]]
			if mass >= cfg.TopP*kept {
				keep = i + 1
				break
			}
		}
	}
	for _, i := range order[keep:] {
		q[i] = 0
	}
	sum = 0
	for _, v := range q {
		sum += v
	}
	for i := range q {
		q[i] /= sum
	}
	return q
}
