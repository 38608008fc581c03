package passrate

import (
	"math"
	"strings"
	"testing"
)

// TestMcNemarExact checks the exact test against values worked by hand:
// 2·Σ_{i≤k} C(n,i)/2ⁿ.
func TestMcNemarExact(t *testing.T) {
	for _, c := range []struct {
		b, c int
		want float64
	}{
		{0, 0, 1},
		{3, 3, 1},                  // an even split
		{0, 5, 2.0 / 32},           // 2·1/32
		{9, 1, 2 * 11.0 / 1024},    // 2·(1+10)/1024
		{2, 8, 2 * 56.0 / 1024},    // 2·(1+10+45)/1024
		{4, 5, 1},                  // capped at 1
		{0, 1, 1},                  // 2·1/2
		{100, 150, 0.001883300935}, // a large n, through Lgamma (the sum in exact integers: 2·Σ_{i≤100} C(250,i)/2²⁵⁰)
	} {
		if got := McNemarExact(c.b, c.c); math.Abs(got-c.want) > 1e-6*math.Max(1, c.want) && math.Abs(got-c.want) > 1e-9 {
			t.Errorf("McNemarExact(%d, %d) = %.10g, want %.10g", c.b, c.c, got, c.want)
		}
	}
}

// outcomes builds a method's outcomes: passes[i] says whether prompt i has
// a correct leaf, every prompt with leaves leaves and tokens tokens.
func outcomes(name, family, shape string, passes string, leaves int, tokens int64) Method {
	m := Method{Name: name, Family: family, Shape: shape}
	for _, c := range passes {
		o := Outcome{Tokens: tokens, Leaves: leaves}
		if c == '1' {
			o.Correct = 1
		}
		m.Outcomes = append(m.Outcomes, o)
	}
	return m
}

// TestComparePair checks a pair on hand-built outcomes: the difference of
// pass rates, the discordant counts, the tokens and an interval around the
// estimate; a method compared with itself differs by exactly 0.
func TestComparePair(t *testing.T) {
	a := outcomes("entropy(2,2,1,1)", "entropy", "2,2,1,1", "1111111100", 6, 300)
	b := outcomes("random(2,2,1,1)", "random", "2,2,1,1", "1100000011", 6, 320)
	p, err := ComparePair(a, b, DefaultBootstrap())
	if err != nil {
		t.Fatal(err)
	}
	if !near(p.DiffPass.Est, 0.4) || p.OnlyA != 6 || p.OnlyB != 2 || !near(p.DiffTokens, -20) {
		t.Errorf("pair %+v, want Δ 0.4, 6 and 2 discordant prompts, Δ tokens −20", p)
	}
	if want := McNemarExact(6, 2); !near(p.McNemarP, want) || p.McNemarP < 0.28 || p.McNemarP > 0.29 {
		t.Errorf("McNemar p = %g, want %g (= 2·37/256)", p.McNemarP, want)
	}
	if p.DiffPass.Lo > p.DiffPass.Est || p.DiffPass.Hi < p.DiffPass.Est || p.DiffPass.Lo >= p.DiffPass.Hi {
		t.Errorf("interval %+v does not bracket the estimate", p.DiffPass)
	}
	self, err := ComparePair(a, a, DefaultBootstrap())
	if err != nil {
		t.Fatal(err)
	}
	if self.DiffPass != (Interval{}) || self.McNemarP != 1 || self.OnlyA+self.OnlyB != 0 {
		t.Errorf("a method against itself: %+v", self)
	}
	if _, err := ComparePair(a, outcomes("short", "random", "2,2,1,1", "11", 6, 1), DefaultBootstrap()); err == nil || !strings.Contains(err.Error(), "2 prompts, want 10") {
		t.Errorf("pair of unequal prompt sets: %v", err)
	}
}

// TestForkScorePairs checks which methods are paired: every fork score
// against random of the same shape, and entropy against surprisal, in
// that order; random, segment trees and methods of another shape are not.
func TestForkScorePairs(t *testing.T) {
	ms := []Method{
		outcomes("entropy(2,2,1,1)", "entropy", "2,2,1,1", "1100", 6, 10),
		outcomes("surprisal(2,2,1,1)", "surprisal", "2,2,1,1", "1000", 6, 10),
		outcomes("random(2,2,1,1)", "random", "2,2,1,1", "0100", 6, 10),
		outcomes("entropy(6,2,1,2)", "entropy", "6,2,1,2", "1110", 30, 10),
		outcomes("random(6,2,1,2)", "random", "6,2,1,2", "1111", 30, 10),
		outcomes("segment(16,2,8)", "segment", "", "1111", 8, 10),
		outcomes("step_entropy(6,2,1,2)", "step_entropy", "6,2,1,2", "0001", 30, 10),
	}
	pairs, err := ForkScorePairs(ms, Bootstrap{Resamples: 100, Level: 0.95, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range pairs {
		got = append(got, p.A+" − "+p.B)
	}
	want := []string{"entropy(2,2,1,1) − random(2,2,1,1)", "entropy(2,2,1,1) − surprisal(2,2,1,1)",
		"surprisal(2,2,1,1) − random(2,2,1,1)", "entropy(6,2,1,2) − random(6,2,1,2)", "step_entropy(6,2,1,2) − random(6,2,1,2)"}
	if strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("pairs %q, want %q", got, want)
	}
	if !near(pairs[3].DiffPass.Est, -0.25) || pairs[3].OnlyB != 1 {
		t.Errorf("entropy(6,2,1,2) − random(6,2,1,2): %+v, want −0.25 with one prompt only random passes", pairs[3])
	}
	if !near(pairs[4].DiffPass.Est, -0.75) || pairs[4].OnlyA != 0 || pairs[4].OnlyB != 3 {
		t.Errorf("step_entropy(6,2,1,2) − random(6,2,1,2): %+v, want −0.75 with three prompts only random passes", pairs[4])
	}
}
