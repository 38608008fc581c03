package stats

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"
)

// Holm returns Holm's step-down adjusted p-values of a family of tests, in
// the order given: with p sorted ascending as p₍₁₎ ≤ … ≤ p₍ₘ₎, the
// adjusted p₍ᵢ₎ is max over j ≤ i of min(1, (m−j+1)·p₍ⱼ₎). Rejecting every
// test whose adjusted p is below α controls the family-wise error rate at
// α (Holm 1979); the values are those of R's p.adjust(p, "holm") and
// statsmodels' multipletests(method="holm"). Ties keep their input order.
func Holm(ps []float64) []float64 {
	m := len(ps)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(ps[a], ps[b]) })
	out := make([]float64, m)
	running := 0.0
	for rank, i := range order {
		adj := math.Min(1, float64(m-rank)*ps[i])
		running = math.Max(running, adj)
		out[i] = running
	}
	return out
}

// PairedMDE is the minimum detectable effect of a two-sided paired t-test
// at level alpha with the given power, from n pairs whose differences have
// standard deviation sd: (t_{1−α/2, n−1} + t_{power, n−1}) · sd/√n. It is
// +Inf for fewer than two pairs.
func PairedMDE(sd float64, n int, alpha, power float64) float64 {
	if n < 2 {
		return math.Inf(1)
	}
	df := float64(n - 1)
	return (TQuantile(1-alpha/2, df) + TQuantile(power, df)) * sd / math.Sqrt(float64(n))
}

// SDUpperLimit is the one-sided upper confidence limit, at the given
// level, of the standard deviation σ of a normal population from the
// sample standard deviation sd of n values: sd · √((n−1)/χ²_{1−level, n−1}),
// since (n−1)·sd²/σ² is χ² with n−1 degrees of freedom. Planning a sample
// size from it instead of from sd (at level 0.8: Browne 1995; Kieser and
// Wassmer 1996) reaches the planned power with that probability, where sd
// itself falls short about half of the time, and more often the fewer
// the values: from 3 values the 80% limit is 2.12·sd. It is +Inf for
// fewer than two values, NaN for a level outside (0, 1).
func SDUpperLimit(sd float64, n int, level float64) float64 {
	if !(level > 0 && level < 1) {
		return math.NaN()
	}
	if n < 2 {
		return math.Inf(1)
	}
	df := float64(n - 1)
	return sd * math.Sqrt(df/distuv.ChiSquared{K: df}.Quantile(1-level))
}

// SDBelowProb is the probability that the sample standard deviation of n
// values from a normal population falls below the population's σ:
// P(χ²_{n−1} < n−1); 1 − e^{−1} ≈ 0.63 for 3 values, → 1/2 as n grows. It
// is NaN for fewer than two values.
func SDBelowProb(n int) float64 {
	if n < 2 {
		return math.NaN()
	}
	df := float64(n - 1)
	return distuv.ChiSquared{K: df}.CDF(df)
}

// maxPlannedPairs bounds PairsFor's answer: beyond it the effect is too
// small for the noise to plan for.
const maxPlannedPairs = 1_000_000

// PairsFor is the number of pairs (seeds) a two-sided paired t-test at
// level alpha needs to detect a true difference delta with the given
// power when the differences have standard deviation sd: the smallest
// n ≥ 2 with n ≥ ((t_{1−α/2, n−1} + t_{power, n−1}) · sd/delta)², found by
// iterating on the t degrees of freedom from the normal approximation.
// A zero sd needs 2 pairs; an error says when delta is not positive or
// the answer exceeds a million.
func PairsFor(sd, delta, alpha, power float64) (int, error) {
	switch {
	case !(delta > 0) || math.IsInf(delta, 0):
		return 0, fmt.Errorf("pairs for an effect of %v: want an effect > 0", delta)
	case !(sd >= 0) || math.IsInf(sd, 0):
		return 0, fmt.Errorf("pairs for an SD of %v: want a finite SD ≥ 0", sd)
	case !(alpha > 0 && alpha < 1) || !(power > 0 && power < 1):
		return 0, fmt.Errorf("pairs at α = %v, power %v: want both in (0, 1)", alpha, power)
	}
	if sd == 0 {
		return 2, nil
	}
	z := distuv.UnitNormal
	need := func(n int) float64 {
		if n < 2 {
			n = 2
		}
		df := float64(n - 1)
		q := (TQuantile(1-alpha/2, df) + TQuantile(power, df)) * sd / delta
		return q * q
	}
	q := (z.Quantile(1-alpha/2) + z.Quantile(power)) * sd / delta
	n := max(2, int(math.Ceil(q*q)))
	if q*q > maxPlannedPairs {
		return 0, fmt.Errorf("pairs for an effect of %g with SD %g: more than %d", delta, sd, maxPlannedPairs)
	}
	// need(n) decreases in n, so the least n with n ≥ need(n) is found by
	// stepping up from the normal approximation (which is below it).
	for float64(n) < need(n) {
		n++
		if n > maxPlannedPairs {
			return 0, fmt.Errorf("pairs for an effect of %g with SD %g: more than %d", delta, sd, maxPlannedPairs)
		}
	}
	for n > 2 && float64(n-1) >= need(n-1) {
		n--
	}
	return n, nil
}

// Pooled is a random-effects estimate pooled over studies (here: base
// policies), each with its own estimate and standard error.
type Pooled struct {
	// Estimate is Σ w_b d_b / Σ w_b with w_b = 1/(s_b² + τ²).
	Estimate float64 `json:"estimate"`
	// StdErr is 1/√Σ w_b; Lo and Hi bound the interval Estimate ± z·StdErr
	// at Level.
	StdErr float64 `json:"stderr"`
	Lo     float64 `json:"lo"`
	Hi     float64 `json:"hi"`
	Level  float64 `json:"level"`
	// P is the two-sided p-value of Estimate = 0 (normal).
	P float64 `json:"p"`
	// Tau2 is the between-study variance τ² (DerSimonian–Laird), Q is
	// Cochran's heterogeneity statistic with K−1 degrees of freedom and I2
	// is max(0, (Q − (K−1))/Q).
	Tau2 float64 `json:"tau2"`
	Q    float64 `json:"q"`
	I2   float64 `json:"i2"`
	K    int     `json:"k"`
}

// DerSimonianLaird pools estimates d (each with standard error se > 0)
// with random effects: τ² = max(0, (Q − (K−1)) / (Σw − Σw²/Σw)) from
// Cochran's Q = Σ w (d − d̄_w)² under the fixed-effect weights w = 1/se²,
// then weights 1/(se² + τ²). The interval is normal at the given level
// (DerSimonian & Laird 1986; metafor's rma(method="DL")). It needs at
// least one estimate; with one, τ² is 0.
func DerSimonianLaird(d, se []float64, level float64) (Pooled, error) {
	k := len(d)
	switch {
	case k == 0:
		return Pooled{}, fmt.Errorf("pooling no estimates: %w", ErrTooFewSamples)
	case len(se) != k:
		return Pooled{}, fmt.Errorf("pooling %d estimates with %d standard errors", k, len(se))
	case !(level > 0 && level < 1):
		return Pooled{}, fmt.Errorf("pooling at level %v: want it in (0, 1)", level)
	}
	if err := checkFinite("d", d); err != nil {
		return Pooled{}, fmt.Errorf("pooling: %w", err)
	}
	for i, s := range se {
		if !(s > 0) || math.IsInf(s, 0) {
			return Pooled{}, fmt.Errorf("pooling: se[%d] = %v: want a finite standard error > 0", i, s)
		}
	}
	var sw, sw2, swd float64
	for i := range d {
		w := 1 / (se[i] * se[i])
		sw, sw2, swd = sw+w, sw2+w*w, swd+w*d[i]
	}
	fixed := swd / sw
	var q float64
	for i := range d {
		q += (d[i] - fixed) * (d[i] - fixed) / (se[i] * se[i])
	}
	tau2 := 0.0
	if k > 1 {
		tau2 = math.Max(0, (q-float64(k-1))/(sw-sw2/sw))
	}
	var rw, rwd float64
	for i := range d {
		w := 1 / (se[i]*se[i] + tau2)
		rw, rwd = rw+w, rwd+w*d[i]
	}
	p := Pooled{Estimate: rwd / rw, StdErr: 1 / math.Sqrt(rw), Level: level, Tau2: tau2, Q: q, K: k}
	z := distuv.UnitNormal.Quantile((1 + level) / 2)
	p.Lo, p.Hi = p.Estimate-z*p.StdErr, p.Estimate+z*p.StdErr
	p.P = TwoSidedPNormal(p.Estimate / p.StdErr)
	if q > 0 {
		p.I2 = math.Max(0, (q-float64(k-1))/q)
	}
	return p, nil
}

// HartungKnapp is the Hartung–Knapp interval of p, the random-effects
// estimate DerSimonianLaird pooled from d and se, at p's level:
// p.Estimate ± t_{K−1}·SE_HK with SE_HK² = Σ w_b (d_b − p.Estimate)² /
// ((K−1) Σ w_b) under the random-effects weights w_b = 1/(se_b² + τ²)
// (Hartung & Knapp 2001; metafor's rma(method="DL", test="knha")). With
// few studies the normal interval is too narrow; this one allows for the
// few, and for the spread of the estimates around the pooled one (it
// shrinks when they agree more closely than their standard errors say).
// It needs K ≥ 2.
func HartungKnapp(d, se []float64, p Pooled) (lo, hi float64, err error) {
	k := len(d)
	switch {
	case k < 2:
		return 0, 0, fmt.Errorf("Hartung–Knapp interval of %d estimates (need at least 2): %w", k, ErrTooFewSamples)
	case len(se) != k:
		return 0, 0, fmt.Errorf("Hartung–Knapp interval of %d estimates with %d standard errors", k, len(se))
	case !(p.Level > 0 && p.Level < 1):
		return 0, 0, fmt.Errorf("Hartung–Knapp interval at level %v: want it in (0, 1)", p.Level)
	}
	var sw, swr float64
	for i := range d {
		w := 1 / (se[i]*se[i] + p.Tau2)
		sw += w
		swr += w * (d[i] - p.Estimate) * (d[i] - p.Estimate)
	}
	half := TQuantile((1+p.Level)/2, float64(k-1)) * math.Sqrt(swr/(float64(k-1)*sw))
	return p.Estimate - half, p.Estimate + half, nil
}
