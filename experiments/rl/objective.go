package rl

import (
	"math"

	"github.com/nlpodyssey/spago/mat"

	"github.com/rollout-rl/rollout/policy/portmath"
)

// This file is the policy-gradient objective, written out in one place as
// PPO-clip per token (Schulman et al. 2017) with DAPO's asymmetric clip,
// an optional KL penalty to a reference policy (the k3 estimator) and an
// entropy bonus:
//
//	ρ_t  = π_θ(y_t) / π_old(y_t)
//	pg_t = −w_t · min(ρ_t·A_t, clip(ρ_t, 1−ε_low, 1+ε_high)·A_t)
//	kl_t = exp(r_t) − r_t − 1,  r_t = log π_ref(y_t) − log π_θ(y_t)
//	L    = Σ_t a_t · (pg_t + β·kl_t − c_H·H_t)
//
// where w_t is the off-policy correction weight (1, TIS's min(π_old/π_behave,
// C) or AReaL's decoupled π_prox/π_behave), a_t the aggregation weight of the
// token (token_mean, seq_mean_token_mean or seq_mean_token_sum_norm) and H_t
// the entropy of π_θ at the token's position.

// tokenTerm is one response token's constants in the objective.
type tokenTerm struct {
	row    int     // row of the token's log-probability in the batch
	oldLP  float64 // log π_old: the policy before this step's updates
	behLP  float64 // log π_behave: the sampler's log-probability
	refLP  float64 // log π_ref, when the KL term is on
	adv    float64 // advantage A_t
	agg    float64 // aggregation weight a_t
	isW    float64 // correction weight w_t
	masked bool    // a padded position: no term
}

// objectiveConfig is the objective's coefficients.
type objectiveConfig struct {
	clipLow, clipHigh float64
	klCoef            float64
	entropyCoef       float64
}

// objectiveStats are the objective's diagnostics over its tokens.
type objectiveStats struct {
	tokens   int
	pgLoss   float64 // Σ a_t·pg_t
	clipped  int     // tokens whose clipped term was the minimum
	ppoKL    float64 // mean of log π_old − log π_θ
	klRef    float64 // mean k3
	entropy  float64 // mean H_t
	isWeight float64 // mean w_t
}

// objective is the loss as a spago function of the per-row log-probs and
// entropies of the current policy.
type objective struct {
	logProbs  mat.Tensor // [rows, 1] log π_θ
	entropies mat.Tensor // [rows, 1] H, or nil when the bonus is off
	terms     []tokenTerm
	cfg       objectiveConfig

	clip  []bool    // per term: the clipped branch is active
	ratio []float64 // per term: ρ_t
	stats objectiveStats
}

func (o *objective) Operands() []mat.Tensor {
	if o.entropies == nil {
		return []mat.Tensor{o.logProbs}
	}
	return []mat.Tensor{o.logProbs, o.entropies}
}

// Forward computes L and the diagnostics.
func (o *objective) Forward() (mat.Tensor, error) {
	lp := mat.Data[float32](o.logProbs.Value())
	var ent []float32
	if o.entropies != nil {
		ent = mat.Data[float32](o.entropies.Value())
	}
	o.clip = make([]bool, len(o.terms))
	o.ratio = make([]float64, len(o.terms))
	var loss float64
	s := objectiveStats{}
	for i, t := range o.terms {
		if t.masked {
			continue
		}
		logp := float64(lp[t.row])
		rho := portmath.ExpAMD64(logp - t.oldLP)
		o.ratio[i] = rho
		unclipped := rho * t.adv
		clipped := math.Min(math.Max(rho, 1-o.cfg.clipLow), 1+o.cfg.clipHigh) * t.adv
		pg := float64(-t.isW * math.Min(unclipped, clipped))
		o.clip[i] = clipped < unclipped
		term := pg
		if o.cfg.klCoef != 0 {
			r := t.refLP - logp
			k3 := portmath.ExpAMD64(r) - r - 1
			term += float64(o.cfg.klCoef * k3)
			s.klRef += k3
		}
		if ent != nil {
			term -= float64(o.cfg.entropyCoef * float64(ent[t.row]))
			s.entropy += float64(ent[t.row])
		}
		loss += float64(t.agg * term)
		s.tokens++
		s.pgLoss += float64(t.agg * pg)
		s.ppoKL += t.oldLP - logp
		s.isWeight += t.isW
		if o.clip[i] {
			s.clipped++
		}
	}
	if s.tokens > 0 {
		n := float64(s.tokens)
		s.ppoKL /= n
		s.klRef /= n
		s.entropy /= n
		s.isWeight /= n
	}
	o.stats = s
	return mat.Scalar(float32(loss)), nil
}

// Backward sends ∂L/∂log π_θ and ∂L/∂H to the rows of the operands.
func (o *objective) Backward(gy mat.Tensor) error {
	g := float64(mat.Data[float32](gy)[0])
	lp := mat.Data[float32](o.logProbs.Value())
	glp := make([]float32, len(lp))
	var gent []float32
	if o.entropies != nil {
		gent = make([]float32, len(lp))
	}
	for i, t := range o.terms {
		if t.masked {
			continue
		}
		var d float64
		if !o.clip[i] { // ∂(−w·ρ·A)/∂log π_θ = −w·ρ·A
			d = -t.isW * o.ratio[i] * t.adv
		}
		if o.cfg.klCoef != 0 { // ∂k3/∂log π_θ = 1 − exp(r)
			d += float64(o.cfg.klCoef * (1 - portmath.ExpAMD64(t.refLP-float64(lp[t.row]))))
		}
		glp[t.row] += float32(g * t.agg * d)
		if gent != nil {
			gent[t.row] += float32(-g * t.agg * o.cfg.entropyCoef)
		}
	}
	if o.logProbs.RequiresGrad() {
		o.logProbs.AccGrad(mat.NewDense[float32](mat.WithShape(len(glp), 1), mat.WithBacking(glp)))
	}
	if gent != nil && o.entropies.RequiresGrad() {
		o.entropies.AccGrad(mat.NewDense[float32](mat.WithShape(len(gent), 1), mat.WithBacking(gent)))
	}
	return nil
}

// correctionWeight is w_t for a correction mode: 1 for none, TIS's
// min(π_old/π_behave, C), or AReaL's decoupled π_prox/π_behave (π_prox is
// π_old here: the policy at the start of the step).
func correctionWeight(mode string, oldLP, behLP, tisCap float64) float64 {
	switch mode {
	case "tis":
		return math.Min(portmath.ExpAMD64(oldLP-behLP), tisCap)
	case "decoupled":
		return portmath.ExpAMD64(oldLP - behLP)
	}
	return 1
}

// aggregationWeights returns a_t for every token of every sequence, given
// the sequences' response lengths and the maximum response length.
func aggregationWeights(mode string, lens []int, maxTokens int) [][]float64 {
	out := make([][]float64, len(lens))
	total := 0
	for _, l := range lens {
		total += l
	}
	for i, l := range lens {
		out[i] = make([]float64, l)
		var w float64
		switch mode {
		case "token_mean":
			w = 1 / float64(total)
		case "seq_mean_token_mean":
			w = 1 / float64(len(lens)*l)
		case "seq_mean_token_sum_norm":
			w = 1 / float64(len(lens)*maxTokens)
		}
		for j := range out[i] {
			out[i][j] = w
		}
	}
	return out
}
