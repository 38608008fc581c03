package policy

import (
	"fmt"
	"math"
	"slices"

	"github.com/rollout-rl/rollout/policy/portmath"
)

// Validate reports a sampling setting out of range.
func (s Sampling) Validate() error {
	switch {
	case s.Temperature < 0 || math.IsNaN(s.Temperature) || math.IsInf(s.Temperature, 0):
		return fmt.Errorf("sampling temperature %g must be 0 (greedy) or positive", s.Temperature)
	case s.TopK < 0:
		return fmt.Errorf("sampling top_k %d must be 0 (off) or positive", s.TopK)
	case s.TopP < 0 || s.TopP > 1 || math.IsNaN(s.TopP):
		return fmt.Errorf("sampling top_p %g must be in (0, 1] (0 or 1: off)", s.TopP)
	}
	return nil
}

// mix is the splitmix64 finaliser: a bijective scramble of 64 bits.
func mix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// uniform is the counter-based uniform number in [0, 1) of a stream at a
// position: a pure function of its arguments.
func uniform(s Stream, pos int) float64 {
	return float64(mix(mix(mix(s.Seed)^s.ID)^uint64(pos))>>11) * 0x1p-53
}

// samplerScratch holds the buffers of one sampling call.
type samplerScratch struct {
	p   []float64
	idx []int
}

// Distribution writes into p (len(p) == len(logits)) the sampling
// distribution that cfg makes of the logits: softmax(logits/T), restricted
// to the top-k tokens, then to the smallest set of most probable tokens
// whose mass reaches top-p, renormalised. Greedy puts all mass on the arg
// max. Ties are broken towards the lower token id.
func Distribution(p []float64, logits []float32, cfg Sampling) {
	var sc samplerScratch
	sc.distribution(p, logits, cfg)
}

func (sc *samplerScratch) distribution(p []float64, logits []float32, cfg Sampling) {
	if cfg.Temperature == 0 {
		best := 0
		for i, z := range logits {
			if z > logits[best] {
				best = i
			}
		}
		clear(p)
		p[best] = 1
		return
	}
	mx := math.Inf(-1)
	for _, z := range logits {
		mx = math.Max(mx, float64(z)/cfg.Temperature)
	}
	var sum float64
	for i, z := range logits {
		p[i] = portmath.Exp(float64(z)/cfg.Temperature - mx)
		sum += p[i]
	}
	for i := range p {
		p[i] /= sum
	}
	truncK := cfg.TopK > 0 && cfg.TopK < len(p)
	truncP := cfg.TopP > 0 && cfg.TopP < 1
	if !truncK && !truncP {
		return
	}
	sc.idx = sc.idx[:0]
	for i := range p {
		sc.idx = append(sc.idx, i)
	}
	slices.SortStableFunc(sc.idx, func(a, b int) int {
		switch {
		case p[a] > p[b]:
			return -1
		case p[a] < p[b]:
			return 1
		}
		return 0
	})
	keep := len(p)
	if truncK {
		keep = cfg.TopK
	}
	if truncP {
		var cum float64
		for j, i := range sc.idx[:keep] {
			cum += p[i]
			if cum >= cfg.TopP {
				keep = j + 1
				break
			}
		}
	}
	var kept float64
	for _, i := range sc.idx[:keep] {
		kept += p[i]
	}
	for _, i := range sc.idx[keep:] {
		p[i] = 0
	}
	for _, i := range sc.idx[:keep] {
		p[i] /= kept
	}
}

// sample draws a token from the sampling distribution of the logits with
// the uniform number u, by inverse CDF in token-id order.
func (sc *samplerScratch) sample(logits []float32, cfg Sampling, u float64) Token {
	if cap(sc.p) < len(logits) {
		sc.p = make([]float64, len(logits))
	}
	p := sc.p[:len(logits)]
	truncK := cfg.TopK > 0 && cfg.TopK < len(p)
	truncP := cfg.TopP > 0 && cfg.TopP < 1
	if cfg.Temperature > 0 && !truncK && !truncP {
		return sampleFull(p, logits, cfg.Temperature, u)
	}
	sc.distribution(p, logits, cfg)
	if cfg.Temperature == 0 {
		for i, v := range p {
			if v == 1 {
				return Token{ID: i}
			}
		}
	}
	id, cum := -1, 0.0
	for i, v := range p {
		if v == 0 {
			continue
		}
		id = i
		cum += v
		if u < cum {
			break
		}
	}
	var h float64
	for _, v := range p {
		if v > 0 {
			h -= float64(v * portmath.Log(v))
		}
	}
	return Token{ID: id, LogProb: float32(portmath.Log(p[id])), Entropy: float32(h)}
}

// sampleFull is sample for plain softmax(logits/T) (no top-k, no top-p):
// the same probabilities as Distribution, with the entropy computed as
// log Σe^x − E_p[x] (x = z/T − max) instead of one logarithm per token.
func sampleFull(p []float64, logits []float32, temp, u float64) Token {
	mx := math.Inf(-1)
	for _, z := range logits {
		mx = math.Max(mx, float64(z)/temp)
	}
	var sum, ex float64 // Σ e^x and Σ e^x·x
	for i, z := range logits {
		x := float64(z)/temp - mx
		e := portmath.Exp(x)
		p[i] = e
		sum += e
		if e > 0 {
			ex += float64(e * x)
		}
	}
	for i := range p {
		p[i] /= sum
	}
	id, cum := -1, 0.0
	for i, v := range p {
		if v == 0 {
			continue
		}
		id = i
		cum += v
		if u < cum {
			break
		}
	}
	logSum := portmath.Log(sum)
	return Token{ID: id, LogProb: float32(portmath.Log(p[id])), Entropy: float32(logSum - ex/sum)}
}
