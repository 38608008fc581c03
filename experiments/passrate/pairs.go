package passrate

import (
	"fmt"
	"math"
)

// Pair is a paired comparison of two methods' pass rates on the same
// prompts, A against B (differences are A − B): by a percentile bootstrap
// interval over prompts and by the exact McNemar test on the prompts only
// one of them passes.
type Pair struct {
	A, B string
	// DiffPass is A's pass rate minus B's, with its bootstrap interval
	// (prompts resampled together: paired).
	DiffPass Interval
	// DiffTokens is A's mean generated tokens per prompt minus B's (the
	// pair is compared at the same shape, not at matched tokens).
	DiffTokens float64
	// OnlyA and OnlyB count the prompts passed by A and not by B, and the
	// other way round (McNemar's discordant pairs).
	OnlyA, OnlyB int
	// McNemarP is the exact two-sided McNemar p-value: the probability,
	// were either method as likely as the other to be the one that passes
	// a discordant prompt, of a split at least as uneven.
	McNemarP float64
}

// ComparePair compares methods a and b (same prompts, in the same order).
func ComparePair(a, b Method, bs Bootstrap) (Pair, error) {
	if err := a.validate(len(a.Outcomes)); err != nil {
		return Pair{}, err
	}
	if err := b.validate(len(a.Outcomes)); err != nil {
		return Pair{}, err
	}
	p := Pair{A: a.Name, B: b.Name}
	all := make([]int, len(a.Outcomes))
	for i := range all {
		all[i] = i
		switch pa, pb := a.Outcomes[i].Correct > 0, b.Outcomes[i].Correct > 0; {
		case pa && !pb:
			p.OnlyA++
		case pb && !pa:
			p.OnlyB++
		}
	}
	var err error
	p.DiffPass, err = bs.interval(len(all), func(idx []int) float64 { return passRate(a.Outcomes, idx) - passRate(b.Outcomes, idx) })
	if err != nil {
		return Pair{}, fmt.Errorf("%s against %s: %w", a.Name, b.Name, err)
	}
	p.DiffTokens = meanTokens(a.Outcomes, all) - meanTokens(b.Outcomes, all)
	p.McNemarP = McNemarExact(p.OnlyA, p.OnlyB)
	return p, nil
}

// McNemarExact is the exact two-sided McNemar p-value of b and c
// discordant pairs: twice the binomial(b+c, 1/2) probability of at most
// min(b, c), capped at 1 (1 when there is no discordant pair).
func McNemarExact(b, c int) float64 {
	n, k := b+c, min(b, c)
	if n == 0 {
		return 1
	}
	lgN, _ := math.Lgamma(float64(n + 1))
	tail := 0.0
	for i := 0; i <= k; i++ {
		lgI, _ := math.Lgamma(float64(i + 1))
		lgR, _ := math.Lgamma(float64(n - i + 1))
		tail += math.Exp(lgN - lgI - lgR - float64(float64(n)*math.Ln2))
	}
	return math.Min(1, 2*tail)
}

// ForkScorePairs compares, at each tree shape, every fork score with
// random forks of the same shape (the baseline of a fork rule), and
// entropy forks with surprisal forks: A is the method of the score, B the
// one it is compared with. Methods without a shape (i.i.d., segment trees)
// are not paired. Pairs come in the methods' order, each method's pair
// with random first.
func ForkScorePairs(methods []Method, bs Bootstrap) ([]Pair, error) {
	var pairs []Pair
	for _, a := range methods {
		if a.Shape == "" || a.Family == "random" {
			continue
		}
		against := []string{"random"}
		if a.Family == "entropy" {
			against = append(against, "surprisal")
		}
		for _, fam := range against {
			for _, b := range methods {
				if b.Family != fam || b.Shape != a.Shape {
					continue
				}
				p, err := ComparePair(a, b, bs)
				if err != nil {
					return nil, err
				}
				pairs = append(pairs, p)
			}
		}
	}
	return pairs, nil
}
