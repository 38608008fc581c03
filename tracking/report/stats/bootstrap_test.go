package stats

import (
	"math"
	"testing"
)

func TestBootstrapCI(t *testing.T) {
	lo, hi, err := BootstrapCI(sleep1, Mean, 0.95, 20000, 1)
	if err != nil {
		t.Fatal(err)
	}
	// The bootstrap interval of the mean is close to, and a little narrower
	// than, the t-interval [-0.530, 2.030] (it uses the 1/n variance and
	// normal-like tails).
	if !(lo > -0.53 && lo < -0.1 && hi < 2.03 && hi > 1.6) || !(lo < 0.75 && hi > 0.75) {
		t.Errorf("bootstrap CI [%v, %v] of mean 0.75", lo, hi)
	}
	lo2, hi2, _ := BootstrapCI(sleep1, Mean, 0.95, 20000, 1)
	if lo2 != lo || hi2 != hi {
		t.Error("same seed, different interval")
	}
	tests := []struct {
		name      string
		xs        []float64
		level     float64
		resamples int
		lo, hi    float64
		err       bool
	}{
		{"one value", []float64{3}, 0.95, 1000, 3, 3, false},
		{"constant", []float64{2, 2, 2}, 0.95, 1000, 2, 2, false},
		{"empty", nil, 0.95, 1000, 0, 0, true},
		{"bad level", []float64{1, 2}, 1.5, 1000, 0, 0, true},
		{"few resamples", []float64{1, 2}, 0.95, 10, 0, 0, true},
	}
	for _, tc := range tests {
		lo, hi, err := BootstrapCI(tc.xs, Mean, tc.level, tc.resamples, 7)
		if (err != nil) != tc.err || !tc.err && (lo != tc.lo || hi != tc.hi) {
			t.Errorf("%s: [%v, %v] %v", tc.name, lo, hi, err)
		}
	}
}

func TestQuantileSorted(t *testing.T) {
	s := []float64{1, 2, 3, 4}
	// numpy.quantile([1, 2, 3, 4], [0, 0.25, 0.5, 1]) = [1, 1.75, 2.5, 4]
	for p, want := range map[float64]float64{0: 1, 0.25: 1.75, 0.5: 2.5, 1: 4} {
		if got := quantileSorted(s, p); math.Abs(got-want) > 1e-12 {
			t.Errorf("q(%v) = %v, want %v", p, got, want)
		}
	}
}
