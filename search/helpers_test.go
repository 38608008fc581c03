package search_test

import (
	"context"
	"math"
	"testing"

	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/policytest"
	"github.com/rollout-rl/rollout/search"
)

const (
	vocab  = 8
	eos    = 7
	marker = 6 // the answer begins at the first marker token
)

// hashDist is a context-dependent distribution with varied, almost surely
// distinct entropies: a hash of the tokens sets each probability and the
// sharpness. eosWeight scales the EOS probability (0: never), markerWeight
// the answer marker's.
func hashDist(eosWeight, markerWeight float64) policytest.Dist {
	return func(tokens []int) []float64 {
		h := uint64(1469598103934665603)
		for _, t := range tokens {
			h = (h ^ uint64(t+1)) * 1099511628211
		}
		u := func(j int) float64 {
			z := h + uint64(j)*0x9e3779b97f4a7c15
			z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
			z = (z ^ (z >> 27)) * 0x94d049bb133111eb
			z ^= z >> 31
			return float64(z>>11) / (1 << 53)
		}
		sharp := 0.3 + 4*u(0)
		p := make([]float64, vocab)
		for j := range p {
			p[j] = math.Exp(sharp * u(j+1))
		}
		p[eos] *= eosWeight
		p[marker] *= markerWeight
		return p
	}
}

func answerStart(resp []int) int {
	for i, t := range resp {
		if t == marker {
			return i
		}
	}
	return len(resp)
}

func newSampler(t testing.TB, d policytest.Dist) *policytest.Sampler {
	t.Helper()
	s, err := policytest.New(vocab, d)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func prompts(n int) []search.Prompt {
	out := make([]search.Prompt, n)
	for i := range out {
		out[i] = search.Prompt{Tokens: []int{i % 5, (i + 2) % 5, 3}, ID: uint64(i)}
	}
	return out
}

func request(s policy.Sampler, ps []search.Prompt, maxTokens int) search.Request {
	return search.Request{
		Prompts:     ps,
		Sampler:     s,
		Sampling:    policy.DefaultSampling,
		EOS:         []int{eos},
		MaxTokens:   maxTokens,
		Seed:        42,
		Step:        3,
		AnswerStart: answerStart,
	}
}

func generate(t testing.TB, st search.Strategy, req search.Request) []*search.Group {
	t.Helper()
	gs, err := st.Generate(context.Background(), req)
	if err != nil {
		t.Fatalf("%s: %v", st.Name(), err)
	}
	return gs
}
