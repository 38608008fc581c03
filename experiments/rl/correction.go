package rl

import "github.com/rollout-rl/rollout/policy/portmath"

// Off-policy corrections of stale or quantized rollouts (train.correction),
// beside the per-token weights of correctionWeight: with the ratio
// r_t = π_old(y_t) / π_behave(y_t) of a response's tokens,
//
//	mis       w_t = r_t if r_t ≤ C, else 0 (masked IS: a token too far off is dropped, not truncated; C = train.tis_cap)
//	icepop    w_t = r_t if lo ≤ r_t ≤ hi, else 0 (IcePop: tokens whose ratio leaves the band are masked; default band [0.5, 5])
//	geo_mask  w_t = 1 if lo ≤ (Π_t r_t)^(1/T) ≤ hi, else 0 for the whole response (geometric sequence-level masking, verl's; default band [0.999, 1.001])
//
// where [lo, hi] is [train.is_low, train.is_high], each the mode's default
// when 0.

// MaskingCorrections are the corrections that mask tokens or responses.
var MaskingCorrections = []string{"mis", "icepop", "geo_mask"}

// isBand returns the ratio band [lo, hi] of icepop and geo_mask.
func (c Config) isBand() (lo, hi float64) {
	lo, hi = c.ISLow, c.ISHigh
	switch c.Correction {
	case "icepop":
		if lo == 0 {
			lo = 0.5
		}
		if hi == 0 {
			hi = 5
		}
	case "geo_mask":
		if lo == 0 {
			lo = 0.999
		}
		if hi == 0 {
			hi = 1.001
		}
	}
	return lo, hi
}

// correctionWeights returns w_t for every token of one response, from its
// π_old and behaviour log-probabilities.
func correctionWeights(c Config, old, beh []float64) []float64 {
	w := make([]float64, len(old))
	lo, hi := c.isBand()
	switch c.Correction {
	case "mis":
		for t := range w {
			if r := portmath.ExpAMD64(old[t] - beh[t]); r <= c.TISCap {
				w[t] = r
			}
		}
	case "icepop":
		for t := range w {
			if r := portmath.ExpAMD64(old[t] - beh[t]); r >= lo && r <= hi {
				w[t] = r
			}
		}
	case "geo_mask":
		if len(w) == 0 {
			return w
		}
		sum := 0.0
		for t := range w {
			sum += old[t] - beh[t]
		}
		if g := portmath.ExpAMD64(sum / float64(len(w))); g >= lo && g <= hi {
			for t := range w {
				w[t] = 1
			}
		}
	default:
		for t := range w {
			w[t] = correctionWeight(c.Correction, old[t], beh[t], c.TISCap)
		}
	}
	return w
}

// mismatchMetrics sets the step's mismatch between the sampler (π_behave)
// and the learner (π_old) over every response token, from the ratios
// r_t = π_old/π_behave at the sampled tokens: mismatch/chi2, the χ²
// divergence E_behave[(r − 1)²], and mismatch/ess, the effective sample
// size of the ratios as a share of the tokens, (Σ r)² / (n·Σ r²) (1 when
// the two agree); with a masking correction, is/masked_frac, the share of
// tokens whose weight is 0. (mismatch/kl is set beside them.) They are
// set in runs where the sampler and the learner differ by design: int8
// sampling, stale rollouts (train.max_staleness > 0 or train.async > 0) or a
// correction on.
func mismatchMetrics(seqs []trainSeq, correction string, m map[string]float64) {
	var n, masked int
	var chi2, sum, sumSq float64
	for _, d := range seqs {
		for t := range d.beh {
			r := portmath.ExpAMD64(d.old[t] - d.beh[t])
			chi2 += float64((r - 1) * (r - 1))
			sum += r
			sumSq += float64(r * r)
			if d.isW[t] == 0 {
				masked++
			}
			n++
		}
	}
	if n == 0 {
		return
	}
	m["mismatch/chi2"] = chi2 / float64(n)
	m["mismatch/ess"] = sum * sum / (float64(n) * sumSq)
	for _, mc := range MaskingCorrections {
		if correction == mc {
			m["is/masked_frac"] = float64(masked) / float64(n)
		}
	}
}
