package policy

import (
	"fmt"
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

// The int8 engine stays close to the float32 one: on the tiny shape with
// the default initialisation, mean KL below 1e-4 nats and mean |Δ log p|
// below 0.01.
func TestInt8Divergence(t *testing.T) {
	cfg, _ := Size("tiny")
	m, err := NewModel(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	seqs := [][]int{}
	for i := 0; i < 4; i++ {
		s := []int{BOS}
		for j := 0; j < 40; j++ {
			s = append(s, 4+(i*7+j*13)%60)
		}
		seqs = append(seqs, s)
	}
	d, err := MeasureDivergence(NewEngine(m), NewEngine(m, WithInt8()), seqs)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("int8 vs float32: mean KL %.3g, mean |Δlog p| %.3g over %d positions", d.MeanKL, d.MeanAbsLogProb, d.Positions)
	if d.Positions != 4*40 || d.MeanKL > 1e-4 || d.MeanAbsLogProb > 0.01 || d.MeanKL <= 0 {
		t.Fatalf("divergence %+v outside the bound", d)
	}
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
