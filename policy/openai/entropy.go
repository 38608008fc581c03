package openai

import (
	"math"
	"slices"
)

// TopKEntropy estimates, in nats, the entropy of the distribution a
// position's top-k log-probabilities come from, and bounds the true entropy
// H from above. top holds the alternatives a server returned (the k most
// probable tokens, and possibly the sampled token as one more entry); k is
// the number asked for; vocab is the vocabulary size (0 when unknown).
//
// With p_1 ≥ … ≥ p_k the top-k probabilities, H_k = −Σ p_i log p_i their
// part of the entropy and r = 1 − Σ p_i the mass of the other tokens (the
// tail), every tail token has probability at most c = min(p_k, r), so the
// tail adds at least r·log(1/c) to the entropy, and at most r·log((V−k)/r)
// when it is spread evenly over the V−k other tokens:
//
//	est = H_k + r·log(1/c) ≤ H ≤ H_k + r·log((V−k)/r) = upper.
//
// The estimate is thus a lower bound, exact when the tail is as
// concentrated as the top-k allow, and at most r·log((V−k)·c/r) ≤ r·log V
// below H. Without a vocabulary size, upper is +Inf when r > 0. Entries
// beyond the k most probable (the sampled token, when it is not among them)
// add their own mass and entropy, but do not move the cap c.
func TopKEntropy(top map[string]float64, k, vocab int) (est, upper float64) {
	ps := make([]float64, 0, len(top))
	for _, lp := range top {
		if p := math.Exp(lp); p > 0 && !math.IsNaN(p) {
			ps = append(ps, p)
		}
	}
	slices.SortFunc(ps, func(a, b float64) int {
		switch {
		case a > b:
			return -1
		case a < b:
			return 1
		}
		return 0
	})
	var h, sum float64
	for _, p := range ps {
		h -= float64(p * math.Log(p))
		sum += p
	}
	r := 1 - sum
	if r <= 1e-9 || len(ps) == 0 {
		return h, h
	}
	c := r
	if k >= 1 && k <= len(ps) {
		c = min(c, ps[k-1])
	} else if len(ps) > 0 {
		c = min(c, ps[len(ps)-1])
	}
	est = h + float64(r*math.Log(1/c))
	upper = math.Inf(1)
	if rest := vocab - len(ps); vocab > 0 && rest > 0 {
		upper = h + float64(r*math.Log(float64(rest)/r))
	}
	return est, upper
}
