package policytest

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/rollout-rl/rollout/policy"
)

func mustNew(t *testing.T, vocab int, d Dist) *Sampler {
	t.Helper()
	s, err := New(vocab, d)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// chiSquareP returns the p-value of observed counts against probabilities.
func chiSquareP(t *testing.T, counts []int, probs []float64) float64 {
	t.Helper()
	total := 0
	for _, c := range counts {
		total += c
	}
	stat, dof := 0.0, -1
	for i, p := range probs {
		if p == 0 {
			if counts[i] != 0 {
				t.Fatalf("token %d has probability 0 but was sampled %d times", i, counts[i])
			}
			continue
		}
		e := p * float64(total)
		d := float64(counts[i]) - e
		stat += d * d / e
		dof++
	}
	return distuv.ChiSquared{K: float64(dof)}.Survival(stat)
}

func TestSamplesItsDistribution(t *testing.T) {
	model := []float64{0.5, 0.2, 0.15, 0.1, 0.05, 0}
	cases := []struct {
		name string
		cfg  policy.Sampling
	}{
		{"plain", policy.DefaultSampling},
		{"temperature 0.7", policy.Sampling{Temperature: 0.7, TopP: 1}},
		{"top-k 3", policy.Sampling{Temperature: 1, TopK: 3}},
		{"top-p 0.8", policy.Sampling{Temperature: 1.3, TopP: 0.8}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := mustNew(t, len(model), Fixed(model...))
			root, err := s.Prefill([]int{0, 1}, policy.Stream{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			const n = 4000
			states := make([]policy.State, n)
			for i := range states {
				if states[i], err = root.Fork(2, policy.Stream{Seed: 7, ID: uint64(i)}); err != nil {
					t.Fatal(err)
				}
			}
			out := make([]policy.Token, n)
			if err := s.Step(states, tc.cfg, out); err != nil {
				t.Fatal(err)
			}
			want := SamplingDist(model, tc.cfg)
			counts := make([]int, len(model))
			for _, tok := range out {
				counts[tok.ID]++
				if got := float64(tok.LogProb); math.Abs(got-math.Log(want[tok.ID])) > 1e-5 {
					t.Fatalf("logprob of %d = %v, want %v", tok.ID, got, math.Log(want[tok.ID]))
				}
			}
			if p := chiSquareP(t, counts, want); p < 0.001 {
				t.Errorf("counts %v against %v: chi-square p = %g", counts, want, p)
			}
		})
	}
}

func TestSamplingDist(t *testing.T) {
	model := []float64{0.1, 0.4, 0.3, 0.2}
	cases := []struct {
		name string
		cfg  policy.Sampling
		want []float64
	}{
		{"plain", policy.DefaultSampling, model},
		{"greedy", policy.Sampling{}, []float64{0, 1, 0, 0}},
		{"top-k 2", policy.Sampling{Temperature: 1, TopK: 2}, []float64{0, 4.0 / 7, 3.0 / 7, 0}},
		{"top-p 0.7", policy.Sampling{Temperature: 1, TopP: 0.7}, []float64{0, 4.0 / 7, 3.0 / 7, 0}},
		{"top-p 0.71", policy.Sampling{Temperature: 1, TopP: 0.71}, []float64{0, 4.0 / 9, 3.0 / 9, 2.0 / 9}},
		{"top-k 3 then top-p 0.44 of the rest", policy.Sampling{Temperature: 1, TopK: 3, TopP: 0.44}, []float64{0, 1, 0, 0}},
		{"temperature 0.5", policy.Sampling{Temperature: 0.5, TopP: 1}, []float64{0.01 / 0.30, 0.16 / 0.30, 0.09 / 0.30, 0.04 / 0.30}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := SamplingDist(model, tc.cfg)
			for i := range got {
				if math.Abs(got[i]-tc.want[i]) > 1e-12 {
					t.Fatalf("got %v, want %v", got, tc.want)
				}
			}
		})
	}
}

func TestEntropyAndGreedy(t *testing.T) {
	s := mustNew(t, 4, Fixed(0.25, 0.25, 0.25, 0.25))
	st, err := s.Prefill([]int{1}, policy.Stream{})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]policy.Token, 1)
	if err := s.Step([]policy.State{st}, policy.DefaultSampling, out); err != nil {
		t.Fatal(err)
	}
	if got := float64(out[0].Entropy); math.Abs(got-math.Log(4)) > 1e-6 {
		t.Errorf("entropy = %v, want log 4", got)
	}
	if got := float64(out[0].LogProb); math.Abs(got+math.Log(4)) > 1e-6 {
		t.Errorf("logprob = %v, want -log 4", got)
	}
	g := mustNew(t, 3, Fixed(0.2, 0.5, 0.3))
	st, _ = g.Prefill([]int{1}, policy.Stream{})
	if err := g.Step([]policy.State{st}, policy.Sampling{}, out); err != nil {
		t.Fatal(err)
	}
	if out[0] != (policy.Token{ID: 1}) {
		t.Errorf("greedy token = %+v, want {ID:1}", out[0])
	}
}

// TestBatchIndependence checks that what a state samples depends only on its
// stream and tokens, never on the batch it is stepped in.
func TestBatchIndependence(t *testing.T) {
	dist := func(tokens []int) []float64 {
		p := make([]float64, 8)
		for i := range p {
			p[i] = 1 + float64((tokens[len(tokens)-1]*3+i*5)%7)
		}
		return p
	}
	run := func(batches [][]int) map[int][]int {
		s := mustNew(t, 8, dist)
		states := make([]policy.State, 6)
		for i := range states {
			st, err := s.Prefill([]int{i % 3}, policy.Stream{Seed: 3, ID: uint64(i)})
			if err != nil {
				t.Fatal(err)
			}
			states[i] = st
		}
		for _, b := range batches {
			batch := make([]policy.State, len(b))
			for j, i := range b {
				batch[j] = states[i]
			}
			if err := s.Step(batch, policy.DefaultSampling, make([]policy.Token, len(b))); err != nil {
				t.Fatal(err)
			}
		}
		got := map[int][]int{}
		for i, st := range states {
			got[i] = st.Tokens()
		}
		return got
	}
	// Every state is stepped 3 times, in different batches and orders.
	a := run([][]int{{0, 1, 2, 3, 4, 5}, {0, 1, 2, 3, 4, 5}, {0, 1, 2, 3, 4, 5}})
	b := run([][]int{{5}, {3, 1}, {0, 2, 4, 5, 3}, {1}, {4, 2, 0}, {5, 4, 3, 2, 1, 0}})
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("samples depend on batching:\n%v\n%v", a, b)
	}
}

func TestCountersAndSharedPrefix(t *testing.T) {
	s := mustNew(t, 4, Fixed(0.7, 0.1, 0.1, 0.1))
	root, err := s.Prefill([]int{1, 2, 3}, policy.Stream{ID: 1})
	if err != nil {
		t.Fatal(err)
	}
	step := func(sts ...policy.State) {
		t.Helper()
		if err := s.Step(sts, policy.DefaultSampling, make([]policy.Token, len(sts))); err != nil {
			t.Fatal(err)
		}
	}
	step(root) // samples position 3; nothing to feed
	step(root) // feeds 3, samples 4
	step(root) // feeds 4, samples 5 (pending)
	// a fork before the pending token shares fed positions: no extra decode.
	a, _ := root.Fork(4, policy.Stream{ID: 2})
	// forks at the end feed the pending token themselves, as the engine does.
	b, _ := root.Fork(6, policy.Stream{ID: 3})
	c, _ := root.Fork(6, policy.Stream{ID: 4})
	step(a, b, c) // b and c feed position 5; samples 3 tokens
	want := policy.Counters{PrefillTokens: 3, DecodeTokens: 4, SampledTokens: 6}
	if got := s.Counters(); got != want {
		t.Errorf("counters = %+v, want %+v", got, want)
	}
	step(root) // root feeds its own pending token 5
	if got := s.Counters().DecodeTokens; got != 5 {
		t.Errorf("decode tokens after stepping root = %d, want 5", got)
	}
	if got := a.Tokens()[:4]; fmt.Sprint(got) != fmt.Sprint(root.Tokens()[:4]) {
		t.Errorf("fork does not share the prefix: %v vs %v", got, root.Tokens())
	}
	if s.Live() != 4 || s.Steps() != 5 || s.MaxBatch() != 3 {
		t.Errorf("live %d steps %d max batch %d, want 4 5 3", s.Live(), s.Steps(), s.MaxBatch())
	}
	for _, st := range []policy.State{root, a, b, c, c} {
		st.Release()
	}
	if s.Live() != 0 {
		t.Errorf("live after release = %d, want 0", s.Live())
	}
	if err := s.Step([]policy.State{a}, policy.DefaultSampling, make([]policy.Token, 1)); err == nil {
		t.Error("step of a released state: no error")
	}
}

func TestErrors(t *testing.T) {
	if _, err := New(0, Fixed(1)); err == nil {
		t.Error("New(0): no error")
	}
	s := mustNew(t, 2, func([]int) []float64 { return []float64{1} })
	if _, err := s.Prefill(nil, policy.Stream{}); err == nil {
		t.Error("empty prompt: no error")
	}
	if _, err := s.Prefill([]int{2}, policy.Stream{}); err == nil {
		t.Error("token outside vocabulary: no error")
	}
	st, _ := s.Prefill([]int{1}, policy.Stream{})
	if err := s.Step([]policy.State{st}, policy.DefaultSampling, make([]policy.Token, 1)); err == nil {
		t.Error("dist of wrong length: no error")
	}
	if _, err := st.Fork(2, policy.Stream{}); err == nil {
		t.Error("fork beyond the tokens: no error")
	}
	if err := s.Step([]policy.State{st}, policy.Sampling{Temperature: -1}, make([]policy.Token, 1)); err == nil {
		t.Error("negative temperature: no error")
	}
}

func ExampleSampler() {
	// A two-token vocabulary: 0 with probability 0.9, 1 with 0.1.
	s, _ := New(2, Fixed(0.9, 0.1))
	st, _ := s.Prefill([]int{1}, policy.Stream{Seed: 1})
	out := make([]policy.Token, 1)
	for i := 0; i < 3; i++ {
		_ = s.Step([]policy.State{st}, policy.DefaultSampling, out)
	}
	fmt.Println(st.Tokens(), s.Counters())
	// Output: [1 0 0 0] {1 2 3}
}
