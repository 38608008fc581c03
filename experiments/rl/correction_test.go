package rl

import (
	"context"
	"math"
	"strings"
	"testing"
)

func TestCorrectionWeightsOfSequences(t *testing.T) {
	// ratios e^0.5, e^2, e^−1, e^−0.1 and their log-probs
	old := []float64{-1, -1, -2, -1.1}
	beh := []float64{-1.5, -3, -1, -1}
	r := func(i int) float64 { return math.Exp(old[i] - beh[i]) }
	cfg := func(mode string, lo, hi float64) Config {
		c := DefaultConfig()
		c.Correction, c.ISLow, c.ISHigh = mode, lo, hi
		return c
	}
	for _, tc := range []struct {
		name string
		c    Config
		want []float64
	}{
		{"none", cfg("none", 0, 0), []float64{1, 1, 1, 1}},
		{"tis", cfg("tis", 0, 0), []float64{r(0), 2, r(2), r(3)}},
		{"mis masks above C = 2", cfg("mis", 0, 0), []float64{r(0), 0, r(2), r(3)}},
		{"icepop [0.5, 5]", cfg("icepop", 0, 0), []float64{r(0), 0, 0, r(3)}},
		{"icepop [0.3, 10]", cfg("icepop", 0.3, 10), []float64{r(0), r(1), r(2), r(3)}},
		// geometric mean e^{(0.5+2−1−0.1)/4} = e^0.35
		{"geo_mask default band", cfg("geo_mask", 0, 0), []float64{0, 0, 0, 0}},
		{"geo_mask [1, 1.5]", cfg("geo_mask", 1, 1.5), []float64{1, 1, 1, 1}},
		{"geo_mask [1.5, 2]", cfg("geo_mask", 1.5, 2), []float64{0, 0, 0, 0}},
	} {
		got := correctionWeights(tc.c, old, beh)
		for i := range got {
			if math.Abs(got[i]-tc.want[i]) > 1e-12 {
				t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
				break
			}
		}
	}
	// agreement with the per-token weights of the token-level modes
	for _, mode := range []string{"none", "tis", "decoupled"} {
		w := correctionWeights(cfg(mode, 0, 0), old, beh)
		for i := range w {
			if w[i] != correctionWeight(mode, old[i], beh[i], 2) {
				t.Errorf("%s token %d: %v, want %v", mode, i, w[i], correctionWeight(mode, old[i], beh[i], 2))
			}
		}
	}
}

func TestMismatchMetrics(t *testing.T) {
	// Identical policies: χ² 0, ESS 1.
	same := []trainSeq{{old: []float64{-1, -2}, beh: []float64{-1, -2}, isW: []float64{1, 1}}}
	m := map[string]float64{}
	mismatchMetrics(same, "none", m)
	if m["mismatch/chi2"] != 0 || math.Abs(m["mismatch/ess"]-1) > 1e-12 {
		t.Errorf("no mismatch: %v", m)
	}
	if _, ok := m["is/masked_frac"]; ok {
		t.Error("is/masked_frac set without a masking correction")
	}
	// ratios 2 and 1/2: χ² = (1 + 1/4)/2, ESS = 2.5² / (2·4.25)
	off := []trainSeq{{old: []float64{math.Log(2), math.Log(0.5)}, beh: []float64{0, 0}, isW: []float64{0, 0.5}}}
	m = map[string]float64{}
	mismatchMetrics(off, "icepop", m)
	if math.Abs(m["mismatch/chi2"]-0.625) > 1e-12 || math.Abs(m["mismatch/ess"]-6.25/8.5) > 1e-12 || m["is/masked_frac"] != 0.5 {
		t.Errorf("ratios 2 and 1/2: %v", m)
	}
}

func TestCorrectionConfig(t *testing.T) {
	for _, mode := range []string{"mis", "icepop", "geo_mask"} {
		c := DefaultConfig()
		c.Correction = mode
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", mode, err)
		}
	}
	c := DefaultConfig()
	c.Correction, c.ISLow, c.ISHigh = "icepop", 2, 1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "train.is_high") {
		t.Errorf("band [2, 1]: %v", err)
	}
	c.ISLow, c.ISHigh = -1, 0
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "train.is_low") {
		t.Errorf("is_low −1: %v", err)
	}
}

// The mismatch metrics are logged in a quantized run (int8 sampling, a
// real sampler/learner mismatch) and a stale one, and a masking
// correction trains.
func TestMismatchMetricsInRuns(t *testing.T) {
	for _, tc := range []struct {
		name  string
		int8  bool
		train Config
	}{
		{"int8 icepop", true, Config{Steps: 1, PromptsPerStep: 2, FilterGroups: false, Correction: "icepop", LR: 1e-3}},
		{"stale geo_mask", false, Config{Steps: 2, PromptsPerStep: 2, FilterGroups: false, MaxStaleness: 1, Correction: "geo_mask", ISLow: 0.5, ISHigh: 2, LR: 1e-3}},
		{"stale mis", false, Config{Steps: 2, PromptsPerStep: 2, FilterGroups: false, MaxStaleness: 1, Correction: "mis", LR: 1e-3}},
	} {
		s := smallSetup(t, tc.train)
		s.Int8 = tc.int8
		loop, err := New(s)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]float64
		for i := 0; i < tc.train.Steps; i++ {
			res, err := loop.Step(context.Background())
			if err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
			m = res.Metrics
		}
		for _, k := range []string{"mismatch/kl", "mismatch/chi2", "mismatch/ess", "is/masked_frac", "actor/pg_loss"} {
			if _, ok := m[k]; !ok {
				t.Errorf("%s: no %s in %v", tc.name, k, m)
			}
		}
		if ess := m["mismatch/ess"]; !(ess > 0 && ess <= 1) {
			t.Errorf("%s: mismatch/ess %v, want in (0, 1]", tc.name, ess)
		}
		if tc.int8 && m["mismatch/chi2"] == 0 {
			t.Errorf("%s: int8 sampling shows no mismatch", tc.name)
		}
	}
}
