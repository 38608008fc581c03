package stats

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// BootstrapCI returns the percentile bootstrap confidence interval of a
// statistic of xs (e.g. the mean): resamples draws of len(xs) values with
// replacement from a PCG stream seeded with seed, so the same inputs give
// the same interval. It needs at least one value and resamples ≥ 100.
func BootstrapCI(xs []float64, statistic func([]float64) float64, level float64, resamples int, seed uint64) (lo, hi float64, err error) {
	if len(xs) == 0 {
		return 0, 0, fmt.Errorf("bootstrap of no values: %w", ErrTooFewSamples)
	}
	if !(level > 0 && level < 1) {
		return 0, 0, fmt.Errorf("confidence level %v: must be strictly between 0 and 1", level)
	}
	if resamples < 100 {
		return 0, 0, fmt.Errorf("bootstrap with %d resamples: want at least 100", resamples)
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	sample := make([]float64, len(xs))
	stat := make([]float64, resamples)
	for r := range stat {
		for i := range sample {
			sample[i] = xs[rng.IntN(len(xs))]
		}
		stat[r] = statistic(sample)
	}
	slices.Sort(stat)
	alpha := (1 - level) / 2
	return quantileSorted(stat, alpha), quantileSorted(stat, 1-alpha), nil
}

// Mean returns the arithmetic mean of xs (0 for none).
func Mean(xs []float64) float64 {
	m, _ := MeanStd(xs)
	return m
}

// quantileSorted is the linearly interpolated p-quantile of sorted values
// (type 7 of Hyndman & Fan, the default of R and NumPy).
func quantileSorted(s []float64, p float64) float64 {
	h := p * float64(len(s)-1)
	i := int(h)
	if i >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[i] + (h-float64(i))*(s[i+1]-s[i])
}
