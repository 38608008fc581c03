package stats

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestHolm(t *testing.T) {
	tests := []struct {
		name string
		p    []float64
		want []float64
	}{
		// R: p.adjust(c(0.01, 0.04, 0.03, 0.005), "holm")
		{"four", []float64{0.01, 0.04, 0.03, 0.005}, []float64{0.03, 0.06, 0.06, 0.02}},
		// Capped at 1 and monotone: p.adjust(c(0.5, 0.02, 0.3), "holm")
		{"capped", []float64{0.5, 0.02, 0.3}, []float64{0.6, 0.06, 0.6}},
		{"one", []float64{0.07}, []float64{0.07}},
		{"none", nil, []float64{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Holm(tc.p)
			if len(got) != len(tc.want) {
				t.Fatalf("Holm(%v) = %v, want %v", tc.p, got, tc.want)
			}
			for i := range got {
				if !near(got[i], tc.want[i], 1e-12) {
					t.Errorf("Holm(%v) = %v, want %v", tc.p, got, tc.want)
				}
			}
		})
	}
}

func TestPairsFor(t *testing.T) {
	tests := []struct {
		sd, delta float64
		want      int
	}{
		// (t_{.975,n−1} + t_{.8,n−1})·sd/Δ squared, least n above it: at
		// d = Δ/sd = 1 and 0.5 the same n as G*Power's matched-pairs
		// t-test (10 and 34).
		{1, 1, 10},
		{1, 0.5, 34},
		{0.05, 0.05, 10},
		{0, 0.1, 2},
	}
	for _, tc := range tests {
		got, err := PairsFor(tc.sd, tc.delta, 0.05, 0.8)
		if err != nil || got != tc.want {
			t.Errorf("PairsFor(%g, %g) = %d, %v; want %d", tc.sd, tc.delta, got, err, tc.want)
		}
		if tc.sd > 0 {
			// The design of n pairs detects Δ; one pair fewer does not.
			if mde := PairedMDE(tc.sd, got, 0.05, 0.8); mde > tc.delta {
				t.Errorf("PairedMDE(%g, %d) = %g > Δ %g", tc.sd, got, mde, tc.delta)
			}
			if mde := PairedMDE(tc.sd, got-1, 0.05, 0.8); mde <= tc.delta {
				t.Errorf("PairedMDE(%g, %d) = %g ≤ Δ %g: %d pairs would do", tc.sd, got-1, mde, tc.delta, got-1)
			}
		}
	}
	for _, bad := range [][2]float64{{1, 0}, {1, -1}, {-1, 1}, {math.NaN(), 1}, {1, 1e-6}} {
		if n, err := PairsFor(bad[0], bad[1], 0.05, 0.8); err == nil {
			t.Errorf("PairsFor(%g, %g) = %d, want an error", bad[0], bad[1], n)
		}
	}
}

func TestPairedMDE(t *testing.T) {
	// (t_{.975,4} + t_{.8,4}) · 1/√5 = (2.776445 + 0.940965)/√5.
	if got, want := PairedMDE(1, 5, 0.05, 0.8), (2.776445105+0.940964650)/math.Sqrt(5); !near(got, want, 1e-7) {
		t.Errorf("PairedMDE(1, 5) = %v, want %v", got, want)
	}
	if got := PairedMDE(1, 1, 0.05, 0.8); !math.IsInf(got, 1) {
		t.Errorf("PairedMDE with one pair = %v, want +Inf", got)
	}
}

func TestDerSimonianLaird(t *testing.T) {
	// Reference values computed by hand from the DL formulas (Q, τ², the
	// random-effects weights, a normal 95% interval), as metafor's
	// rma(yi, sei=se, method="DL") reports them.
	d := []float64{0.05, -0.01, 0.03, 0.002}
	se := []float64{0.010, 0.012, 0.015, 0.008}
	got, err := DerSimonianLaird(d, se, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	want := Pooled{Estimate: 0.017752598010261793, StdErr: 0.01408018237132776, Lo: -0.009844052333296393, Hi: 0.04534924835381998,
		Level: 0.95, P: 0.2073731311584166, Tau2: 0.0006641427363164043, Q: 20.187825724411095, I2: 0.8513955865800643, K: 4}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"estimate", got.Estimate, want.Estimate}, {"stderr", got.StdErr, want.StdErr}, {"lo", got.Lo, want.Lo}, {"hi", got.Hi, want.Hi},
		{"p", got.P, want.P}, {"tau2", got.Tau2, want.Tau2}, {"Q", got.Q, want.Q}, {"I2", got.I2, want.I2}} {
		if !near(c.got, c.want, 1e-9*math.Max(1, math.Abs(c.want))) {
			t.Errorf("%s = %.17g, want %.17g", c.name, c.got, c.want)
		}
	}
	// Homogeneous estimates: τ² = 0, the fixed-effect estimate.
	hom, err := DerSimonianLaird([]float64{0.024, 0.004, 0.031, 0.012}, []float64{0.010, 0.020, 0.012, 0.015}, 0.95)
	if err != nil || hom.Tau2 != 0 || !near(hom.Estimate, 0.02170930232558139, 1e-12) || !near(hom.StdErr, 0.006469966392206305, 1e-12) {
		t.Errorf("homogeneous: %+v, %v; want τ² 0, estimate 0.0217093, SE 0.00646997", hom, err)
	}
	for _, bad := range []struct{ d, se []float64 }{{nil, nil}, {[]float64{1}, []float64{0}}, {[]float64{1, 2}, []float64{1}}, {[]float64{math.NaN()}, []float64{1}}} {
		if _, err := DerSimonianLaird(bad.d, bad.se, 0.95); err == nil {
			t.Errorf("DerSimonianLaird(%v, %v): want an error", bad.d, bad.se)
		}
	}
}

func TestHartungKnapp(t *testing.T) {
	// Reference: the random-effects weights of TestDerSimonianLaird's
	// estimates, SE_HK = √(Σw(d − μ)²/((K−1)Σw)) = 0.0136595…, and
	// t_{0.975, 3} = 3.18245 (metafor's rma(method="DL", test="knha")).
	d := []float64{0.05, -0.01, 0.03, 0.002}
	se := []float64{0.010, 0.012, 0.015, 0.008}
	p, err := DerSimonianLaird(d, se, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi, err := HartungKnapp(d, se, p)
	if err != nil || !near(lo, -0.025718039428939674, 1e-9) || !near(hi, 0.06122323544946326, 1e-9) {
		t.Errorf("HartungKnapp = [%.17g, %.17g], %v; want [-0.0257180394, 0.0612232354]", lo, hi, err)
	}
	if !(lo < p.Lo && hi > p.Hi) {
		t.Errorf("Hartung–Knapp [%g, %g] not wider than the normal [%g, %g] here", lo, hi, p.Lo, p.Hi)
	}
	one, _ := DerSimonianLaird([]float64{0.01}, []float64{0.01}, 0.95)
	if _, _, err := HartungKnapp([]float64{0.01}, []float64{0.01}, one); err == nil {
		t.Error("HartungKnapp of one estimate: want an error")
	}
	if _, _, err := HartungKnapp(d, se[:3], p); err == nil {
		t.Error("HartungKnapp with too few standard errors: want an error")
	}
}

func ExampleDerSimonianLaird() {
	// A paired difference on each of three base policies, with its SE.
	p, _ := DerSimonianLaird([]float64{0.024, 0.004, 0.031}, []float64{0.010, 0.020, 0.012}, 0.95)
	fmt.Printf("pooled %+.4f [%+.4f, %+.4f], τ² %.2g\n", p.Estimate, p.Lo, p.Hi, p.Tau2)
	// Output: pooled +0.0239 [+0.0099, +0.0380], τ² 0
}

// SDUpperLimit against hand computations: χ²_{0.2} with 2 degrees of
// freedom is −2·ln 0.8 (its CDF is 1 − e^{−x/2}), so from 3 values the 80%
// limit is sd/√(−ln 0.8); the others are the 0.2 quantiles of χ²_{n−1}
// solved from its closed-form CDF (1 − e^{−x/2}·Σ_{j<df/2} (x/2)^j/j! for
// even df, erf(√(x/2)) for df 1), matching the printed tables (0.0642,
// 1.649, 3.070, 6.179).
func TestSDUpperLimit(t *testing.T) {
	for _, tc := range []struct {
		n     int
		level float64
		want  float64 // the factor on sd
	}{
		{2, 0.8, math.Sqrt(1 / 0.06418475466730157)},
		{3, 0.8, 1 / math.Sqrt(-math.Log(0.8))},
		{5, 0.8, math.Sqrt(4 / 1.6487766180659689)},
		{7, 0.8, math.Sqrt(6 / 3.0700884052892863)},
		{11, 0.8, math.Sqrt(10 / 6.179079256039391)},
		// At level 0.5 the limit is sd·√(df/median of χ²_df): for df 2 the
		// median is 2·ln 2.
		{3, 0.5, 1 / math.Sqrt(math.Ln2)},
	} {
		got := SDUpperLimit(0.04, tc.n, tc.level)
		if want := 0.04 * tc.want; math.Abs(got-want) > 1e-9*want {
			t.Errorf("SDUpperLimit(0.04, %d, %g) = %.12g, want %.12g", tc.n, tc.level, got, want)
		}
	}
	if got := SDUpperLimit(0.04, 1, 0.8); !math.IsInf(got, 1) {
		t.Errorf("one value: %v, want +Inf", got)
	}
	for _, level := range []float64{0, 1, -0.5, math.NaN()} {
		if got := SDUpperLimit(0.04, 3, level); !math.IsNaN(got) {
			t.Errorf("level %v: %v, want NaN", level, got)
		}
	}
}

// The 80% upper limit from 3-value pilots covers the true σ in 80% of
// them, where the pilot's own SD does in e^{−1} ≈ 37% (sd ≥ σ when
// 2·sd²/σ², a χ²₂, is at least 2): it falls below σ in 63% of pilots.
func TestSDUpperLimitCoverage(t *testing.T) {
	const sigma, trials = 0.03, 20000
	rng := rand.New(rand.NewPCG(3, 5))
	var covered, pointCovered int
	xs := make([]float64, 3)
	for range trials {
		for i := range xs {
			xs[i] = 0.1 + sigma*rng.NormFloat64()
		}
		_, sd := MeanStd(xs)
		if SDUpperLimit(sd, len(xs), 0.8) >= sigma {
			covered++
		}
		if sd >= sigma {
			pointCovered++
		}
	}
	if got := float64(covered) / trials; math.Abs(got-0.8) > 0.015 {
		t.Errorf("the 80%% limit covers σ in %.3f of 3-value pilots, want 0.80", got)
	}
	if got, want := float64(pointCovered)/trials, math.Exp(-1); math.Abs(got-want) > 0.015 {
		t.Errorf("the pilot SD is at least σ in %.3f of 3-value pilots, want e^−1 = %.3f", got, want)
	}
}

func TestSDBelowProb(t *testing.T) {
	for _, tc := range []struct {
		n    int
		want float64
	}{
		// χ²₂ has CDF 1 − e^{−x/2}; χ²₄ has 1 − e^{−x/2}(1 + x/2); χ²₁ has erf(√(x/2)).
		{2, math.Erf(math.Sqrt(0.5))},
		{3, 1 - math.Exp(-1)},
		{5, 1 - 3*math.Exp(-2)},
	} {
		if got := SDBelowProb(tc.n); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("SDBelowProb(%d) = %.15g, want %.15g", tc.n, got, tc.want)
		}
	}
	if got := SDBelowProb(1000); !(got > 0.5 && got < 0.51) {
		t.Errorf("SDBelowProb(1000) = %v, want just above 1/2", got)
	}
	if got := SDBelowProb(1); !math.IsNaN(got) {
		t.Errorf("SDBelowProb(1) = %v, want NaN", got)
	}
}

func ExampleSDUpperLimit() {
	// σ_d = 0.02 from a 3-seed pilot: plan from its 80% upper limit.
	ucl := SDUpperLimit(0.02, 3, 0.8)
	n, _ := PairsFor(0.02, 0.03, 0.05, 0.8)
	nUCL, _ := PairsFor(ucl, 0.03, 0.05, 0.8)
	fmt.Printf("σ_UCL %.4f: %d seeds from the pilot's σ_d, %d from its upper limit\n", ucl, n, nUCL)
	// Output: σ_UCL 0.0423: 6 seeds from the pilot's σ_d, 18 from its upper limit
}
