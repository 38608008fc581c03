package policy

import (
	"fmt"
	"github.com/rollout-rl/rollout/policy/internal/kernel"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

// chiSquareP returns the p-value of observed counts against expected
// probabilities, pooling cells whose expectation is below 5.
func chiSquareP(counts []int, p []float64, n int) float64 {
	var stat, poolObs, poolExp float64
	cells := 0
	for i, c := range counts {
		e := p[i] * float64(n)
		if e == 0 {
			if c != 0 {
				return 0 // a token with zero probability was sampled
			}
			continue
		}
		if e < 5 {
			poolObs += float64(c)
			poolExp += e
			continue
		}
		stat += (float64(c) - e) * (float64(c) - e) / e
		cells++
	}
	if poolExp > 0 {
		stat += (poolObs - poolExp) * (poolObs - poolExp) / poolExp
		cells++
	}
	return distuv.ChiSquared{K: float64(cells - 1)}.Survival(stat)
}

// Sampled tokens follow the sampling distribution the policy reports,
// with and without temperature, top-k and top-p; LogProb and Entropy are
// those of that distribution.
func TestSamplerMatchesPolicyProbabilities(t *testing.T) {
	m := randomModel(t, testConfig, 21)
	const n = 20000
	for _, cfg := range []Sampling{
		DefaultSampling,
		{Temperature: 0.7, TopP: 1},
		{Temperature: 1, TopK: 5},
		{Temperature: 1.2, TopP: 0.8},
		{Temperature: 0.9, TopK: 8, TopP: 0.9},
	} {
		t.Run(fmt.Sprintf("T=%g,k=%d,p=%g", cfg.Temperature, cfg.TopK, cfg.TopP), func(t *testing.T) {
			e := NewEngine(m)
			root, err := e.Prefill([]int{BOS, 6, 7, SEP}, Stream{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			states := make([]State, n)
			for i := range states {
				if states[i], err = root.Fork(4, Stream{Seed: 5, ID: uint64(i)}); err != nil {
					t.Fatal(err)
				}
			}
			out := make([]Token, n)
			if err := e.Step(states, cfg, out); err != nil {
				t.Fatal(err)
			}
			p := make([]float64, testConfig.VocabSize)
			Distribution(p, root.(*state).nextLogits(), cfg)
			var h float64
			for _, v := range p {
				if v > 0 {
					h -= v * math.Log(v)
				}
			}
			counts := make([]int, len(p))
			for _, tok := range out {
				counts[tok.ID]++
				if math.Abs(float64(tok.LogProb)-math.Log(p[tok.ID])) > 1e-5 || math.Abs(float64(tok.Entropy)-h) > 1e-5 {
					t.Fatalf("token %d: logprob %v entropy %v, want %v %v", tok.ID, tok.LogProb, tok.Entropy, math.Log(p[tok.ID]), h)
				}
			}
			if pv := chiSquareP(counts, p, n); pv < 1e-3 {
				t.Fatalf("chi-square p-value %.2g: samples do not follow the distribution", pv)
			}
			// The test has power: a distribution one token's mass away fails it.
			q := append([]float64(nil), p...)
			hi, lo := 0, 0
			for i := range q {
				if q[i] > q[hi] {
					hi = i
				}
				if q[i] > 0 && (q[lo] == 0 || q[i] < q[lo]) {
					lo = i
				}
			}
			q[hi], q[lo] = q[hi]-0.03, q[lo]+0.03
			if pv := chiSquareP(counts, q, n); pv > 1e-3 {
				t.Fatalf("chi-square p-value %.2g against a wrong distribution", pv)
			}
		})
	}
}

func TestGreedyAndTruncation(t *testing.T) {
	logits := []float32{1, 3, 3, 0.5, -2}
	p := make([]float64, len(logits))
	Distribution(p, logits, Sampling{Temperature: 0})
	if p[1] != 1 {
		t.Fatalf("greedy: %v (ties go to the lower id)", p)
	}
	Distribution(p, logits, Sampling{Temperature: 1, TopK: 2})
	if p[0] != 0 || p[3] != 0 || math.Abs(p[1]-0.5) > 1e-12 {
		t.Fatalf("top-k 2: %v", p)
	}
	Distribution(p, logits, Sampling{Temperature: 1, TopP: 0.4})
	if p[1] != 1 {
		t.Fatalf("top-p 0.4 keeps only the first of the top pair (p=0.45 each): %v", p)
	}
	Distribution(p, logits, Sampling{Temperature: 1, TopP: 0.5})
	if p[0] != 0 || math.Abs(p[1]-0.5) > 1e-12 || math.Abs(p[2]-0.5) > 1e-12 {
		t.Fatalf("top-p 0.5 keeps the top pair: %v", p)
	}
	for _, bad := range []Sampling{{Temperature: -1}, {Temperature: 1, TopK: -1}, {Temperature: 1, TopP: 1.5}, {Temperature: math.NaN()}} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// divergenceSeqs are teacher-forced sequences for the int8 divergence:
// periodic ones (a 5-token motif repeated), which a trained model predicts
// confidently.
func divergenceSeqs(n, length, vocab int) [][]int {
	var seqs [][]int
	for i := range n {
		s := []int{BOS}
		for j := range length {
			s = append(s, 4+(i*7+j%5*13)%(vocab-4))
		}
		seqs = append(seqs, s)
	}
	return seqs
}

// outlierModel is the default initialisation with a few residual channels
// scaled up 20 times in the embeddings, like the outlier features of
// trained transformers, which make per-row activation quantization coarse
// for the other channels.
func outlierModel(t testing.TB, cfg Config, seed uint64) *Model {
	m, err := NewModel(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	emb := data(m.Embed)
	for tok := range cfg.VocabSize {
		for _, ch := range []int{3, 17, 40} {
			emb[tok*cfg.Dim+ch%cfg.Dim] *= 20
		}
	}
	return m
}

// trainedModel is the tiny model after 10 Adam steps on periodic
// sequences: peaked next-token distributions, as after pretraining.
func trainedModel(t *testing.T, cfg Config) *Model {
	m, err := NewModel(cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := NewTrainer(m, TrainConfig{LR: 3e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, MaxGradNorm: 1})
	if err != nil {
		t.Fatal(err)
	}
	trainSteps(t, m, tr, divergenceSeqs(4, 15, cfg.VocabSize), 10)
	return m
}

// int8Case is a model to measure the int8 engine's divergence on, with the
// bounds of its mean KL and mean |Δ log p|.
type int8Case struct {
	name        string
	model       func(t *testing.T) *Model
	maxKL, maxD float64
}

// checkInt8Divergence measures the int8 engine against the float32 one on
// each case and fails outside the bounds.
func checkInt8Divergence(t *testing.T, cases []int8Case) {
	cfg, _ := Size("tiny")
	seqs := divergenceSeqs(4, 40, cfg.VocabSize)
	mode := map[bool]string{true: "W8A8", false: "weight-only"}[kernel.W8A8()]
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := tc.model(t)
			d, err := MeasureDivergence(NewEngine(m), NewEngine(m, WithInt8()), seqs)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("kernel %s, %s int8 vs float32: mean KL %.3g, mean |Δlog p| %.3g over %d positions",
				kernel.Impl(), mode, d.MeanKL, d.MeanAbsLogProb, d.Positions)
			if d.Positions != 4*40 || d.MeanKL > tc.maxKL || d.MeanAbsLogProb > tc.maxD || d.MeanKL <= 0 {
				t.Fatalf("divergence %+v outside the bounds KL ≤ %g, |Δlog p| ≤ %g", d, tc.maxKL, tc.maxD)
			}
		})
	}
}

// The int8 engine stays close to the float32 one on random weights (the
// default initialisation; weights of std 0.25, whose logits are large and
// distributions peaked: a stress case) and on weights with outlier
// channels like a pretrained model's. The bounds are about three times the
// largest value measured on any kernel path (W8A8 on avx512vnni,
// weight-only elsewhere).
func TestInt8Divergence(t *testing.T) {
	cfg, _ := Size("tiny")
	checkInt8Divergence(t, []int8Case{
		{"default init", func(t *testing.T) *Model { m, _ := NewModel(cfg, 3); return m }, 3e-5, 0.01},
		{"scaled random", func(t *testing.T) *Model { return randomModel(t, cfg, 3) }, 0.12, 0.9},
		{"outlier channels", func(t *testing.T) *Model { return outlierModel(t, cfg, 3) }, 6e-5, 0.016},
	})
}

// The same on a briefly trained model (run on the active kernel path only:
// training is slow on the generic one).
func TestInt8DivergenceTrained(t *testing.T) {
	cfg, _ := Size("tiny")
	checkInt8Divergence(t, []int8Case{{"trained", func(t *testing.T) *Model { return trainedModel(t, cfg) }, 2.5e-5, 0.006}})
}

// The untruncated fast path of sampling gives the token, log-probability
// and entropy of the general path (Distribution, then −Σ p log p).
func TestSampleFullMatchesDistribution(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	var sc samplerScratch
	for trial := 0; trial < 200; trial++ {
		logits := make([]float32, 1+rng.IntN(70))
		for i := range logits {
			logits[i] = float32(3 * rng.NormFloat64())
		}
		if trial%7 == 0 {
			logits[0] = -80 // a token whose probability underflows
		}
		temp := 0.3 + 2*rng.Float64()
		u := rng.Float64()
		got := sc.sample(logits, Sampling{Temperature: temp, TopP: 1}, u)
		p := make([]float64, len(logits))
		Distribution(p, logits, Sampling{Temperature: temp})
		want, cum := -1, 0.0
		var h float64
		for i, v := range p {
			if v > 0 {
				h -= v * math.Log(v)
				if want < 0 || u >= cum {
					want = i
					cum += v
				}
			}
		}
		if got.ID != want {
			t.Fatalf("trial %d: token %d, want %d", trial, got.ID, want)
		}
		if d := math.Abs(float64(got.LogProb) - math.Log(p[want])); d > 1e-5 {
			t.Errorf("trial %d: log-prob %v, want %v", trial, got.LogProb, math.Log(p[want]))
		}
		if d := math.Abs(float64(got.Entropy) - h); d > 1e-5*math.Max(1, h) {
			t.Errorf("trial %d: entropy %v, want %v", trial, got.Entropy, h)
		}
	}
}
