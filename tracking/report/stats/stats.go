// Package stats holds the small-sample statistics behind rollout's reports:
// mean, sample standard deviation and t-intervals over seeds, Welch's
// two-sample t-test and the paired t-test, with two-sided p-values from
// Student's t distribution (gonum's distuv.StudentsT); and a seeded
// percentile bootstrap interval for any statistic. For designs: Holm's
// step-down adjustment of a family of p-values, the power of a paired
// t-test (PairsFor: the pairs that detect an effect; PairedMDE: the
// effect n pairs detect), the upper confidence limit of a pilot's SD to
// plan them from (SDUpperLimit; SDBelowProb: how often a pilot's SD falls
// below σ) and the DerSimonian–Laird random-effects pool of
// estimates across studies (base policies).
//
// Edge cases have defined results instead of NaNs: a summary of fewer than
// two values has no interval (HasInterval is false), and a test whose
// standard error is zero reports t = 0, p = 1 when the means agree and
// t = ±Inf, p = 0 when they differ. Tests on fewer than two values per
// group return ErrTooFewSamples, tests on NaN or infinite values
// ErrNotFinite.
package stats

import (
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// DefaultLevel is the confidence level used by Summarize and the tests' intervals.
const DefaultLevel = 0.95

// ErrTooFewSamples is returned by the tests when a group has fewer than two values.
var ErrTooFewSamples = errors.New("too few samples")

// ErrNotFinite is returned by the tests when a value is NaN or infinite.
var ErrNotFinite = errors.New("value is NaN or infinite")

// checkFinite returns ErrNotFinite naming the first bad value.
func checkFinite(name string, xs []float64) error {
	for i, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("%s[%d] = %v: %w", name, i, x, ErrNotFinite)
		}
	}
	return nil
}

// Summary describes a sample: its size, mean, sample standard deviation
// (n−1 denominator) and a two-sided t-interval for the mean.
type Summary struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	Std    float64 `json:"std"`
	StdErr float64 `json:"stderr"`
	// Level is the confidence level of the interval, e.g. 0.95.
	Level float64 `json:"level"`
	// HalfWidth is t_{(1+Level)/2, N−1} · StdErr; zero when HasInterval is false.
	HalfWidth float64 `json:"half_width"`
	Lo        float64 `json:"lo"`
	Hi        float64 `json:"hi"`
	// HasInterval is false when N < 2: one value says nothing about spread.
	HasInterval bool `json:"has_interval"`
}

// Summarize returns the summary of xs with a 95% t-interval.
func Summarize(xs []float64) Summary {
	s, _ := SummarizeLevel(xs, DefaultLevel) // DefaultLevel is valid
	return s
}

// SummarizeLevel returns the summary of xs with a t-interval at the given
// confidence level, which must lie strictly between 0 and 1.
func SummarizeLevel(xs []float64, level float64) (Summary, error) {
	if !(level > 0 && level < 1) {
		return Summary{}, fmt.Errorf("confidence level %v: must be strictly between 0 and 1", level)
	}
	s := Summary{N: len(xs), Level: level}
	if s.N == 0 {
		return s, nil
	}
	s.Mean, s.Std = MeanStd(xs)
	s.Lo, s.Hi = s.Mean, s.Mean
	if s.N < 2 {
		return s, nil
	}
	s.StdErr = s.Std / math.Sqrt(float64(s.N))
	s.HalfWidth = TQuantile((1+level)/2, float64(s.N-1)) * s.StdErr
	s.Lo, s.Hi = s.Mean-s.HalfWidth, s.Mean+s.HalfWidth
	s.HasInterval = true
	return s, nil
}

// MeanStd returns the mean and the sample standard deviation (n−1
// denominator) of xs, computed in two passes for accuracy. The standard
// deviation of fewer than two values is 0; the mean of no values is 0.
func MeanStd(xs []float64) (mean, std float64) {
	n := len(xs)
	if n == 0 {
		return 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(n)
	if n < 2 {
		return mean, 0
	}
	var ss, comp float64
	for _, x := range xs {
		d := x - mean
		ss += d * d
		comp += d
	}
	// Corrected two-pass algorithm (Chan, Golub & LeVeque).
	v := (ss - comp*comp/float64(n)) / float64(n-1)
	if v < 0 {
		v = 0
	}
	return mean, math.Sqrt(v)
}

// TQuantile returns the p-quantile of Student's t distribution with df
// degrees of freedom.
func TQuantile(p, df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}

// TwoSidedP returns the two-sided p-value P(|T| ≥ |t|) for T ~ t(df).
func TwoSidedP(t, df float64) float64 {
	if math.IsInf(t, 0) {
		return 0
	}
	p := 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(math.Abs(t))
	return math.Min(1, p)
}

// TwoSidedPNormal returns the two-sided p-value P(|Z| ≥ |z|) for a
// standard normal Z.
func TwoSidedPNormal(z float64) float64 {
	return math.Min(1, 2*distuv.UnitNormal.Survival(math.Abs(z)))
}

// TestKind names a t-test.
type TestKind string

// The t-tests this package runs.
const (
	// Welch is the two-sample t-test with unequal variances and
	// Welch–Satterthwaite degrees of freedom.
	Welch TestKind = "welch"
	// Paired is the one-sample t-test on paired differences.
	Paired TestKind = "paired"
)

// TestResult is the outcome of a two-sided t-test of mean(a) − mean(b) = 0.
type TestResult struct {
	Kind TestKind `json:"kind"`
	// Diff is mean(a) − mean(b) (for a paired test, the mean difference).
	Diff   float64 `json:"diff"`
	StdErr float64 `json:"stderr"`
	T      float64 `json:"t"`
	DF     float64 `json:"df"`
	P      float64 `json:"p"`
	// Lo and Hi bound the 95% confidence interval of Diff.
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
	N1 int     `json:"n1"`
	N2 int     `json:"n2"`
}

// WelchTest runs Welch's two-sample t-test of mean(a) = mean(b), with
// Welch–Satterthwaite degrees of freedom. Both samples need at least two
// values. When both variances are zero the degrees of freedom are
// len(a)+len(b)−2.
func WelchTest(a, b []float64) (TestResult, error) {
	n1, n2 := len(a), len(b)
	if n1 < 2 || n2 < 2 {
		return TestResult{}, fmt.Errorf("welch t-test with %d and %d values (need at least 2 each): %w", n1, n2, ErrTooFewSamples)
	}
	if err := checkFinite("a", a); err != nil {
		return TestResult{}, fmt.Errorf("welch t-test: %w", err)
	}
	if err := checkFinite("b", b); err != nil {
		return TestResult{}, fmt.Errorf("welch t-test: %w", err)
	}
	m1, s1 := MeanStd(a)
	m2, s2 := MeanStd(b)
	v1, v2 := s1*s1/float64(n1), s2*s2/float64(n2)
	r := TestResult{Kind: Welch, Diff: m1 - m2, StdErr: math.Sqrt(v1 + v2), N1: n1, N2: n2}
	if v1+v2 > 0 {
		r.DF = (v1 + v2) * (v1 + v2) / (v1*v1/float64(n1-1) + v2*v2/float64(n2-1))
	} else {
		r.DF = float64(n1 + n2 - 2)
	}
	finish(&r)
	return r, nil
}

// PairedTest runs the paired t-test of mean(a−b) = 0; a[i] and b[i] form a
// pair (e.g. the same seed under two variants). It needs at least two pairs.
func PairedTest(a, b []float64) (TestResult, error) {
	if len(a) != len(b) {
		return TestResult{}, fmt.Errorf("paired t-test: %d values against %d, need equal lengths", len(a), len(b))
	}
	n := len(a)
	if n < 2 {
		return TestResult{}, fmt.Errorf("paired t-test with %d pairs (need at least 2): %w", n, ErrTooFewSamples)
	}
	if err := checkFinite("a", a); err != nil {
		return TestResult{}, fmt.Errorf("paired t-test: %w", err)
	}
	if err := checkFinite("b", b); err != nil {
		return TestResult{}, fmt.Errorf("paired t-test: %w", err)
	}
	d := make([]float64, n)
	for i := range a {
		d[i] = a[i] - b[i]
	}
	m, s := MeanStd(d)
	r := TestResult{Kind: Paired, Diff: m, StdErr: s / math.Sqrt(float64(n)), DF: float64(n - 1), N1: n, N2: n}
	finish(&r)
	return r, nil
}

// finish fills T, P and the interval from Diff, StdErr and DF.
func finish(r *TestResult) {
	switch {
	case r.StdErr > 0:
		r.T = r.Diff / r.StdErr
		r.P = TwoSidedP(r.T, r.DF)
		hw := TQuantile((1+DefaultLevel)/2, r.DF) * r.StdErr
		r.Lo, r.Hi = r.Diff-hw, r.Diff+hw
	case r.Diff == 0:
		r.T, r.P = 0, 1
		r.Lo, r.Hi = 0, 0
	default:
		r.T = math.Inf(1)
		if r.Diff < 0 {
			r.T = math.Inf(-1)
		}
		r.P = 0
		r.Lo, r.Hi = r.Diff, r.Diff
	}
}
