package passrate

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rollout-rl/rollout/search/record"
)

// Profile is the per-position entropy profile of a policy's responses and
// where the decisive choices are: the mean entropy of the sampling
// distribution at each response position (over i.i.d. samples), the mean
// entropy by the character before the position, and, from forked trees,
// how often a fork at a position changed the outcome (the branch's reward
// differs from the path it forked off). Random forks sample positions
// without regard to entropy, so their flip rate by position locates the
// decisive choices independently of the entropy.
type Profile struct {
	// EntropySum and Count are per response position (over i.i.d. leaves).
	EntropySum []float64
	Count      []int64
	// Lengths counts i.i.d. responses by length in tokens.
	Lengths []int64
	// ClassSum and ClassCount are per preceding character ("^" at the
	// first position).
	ClassSum   map[string]float64
	ClassCount map[string]int64
	// Forks and Flips count, per fork family and response position, the
	// forks made there and those whose branch's reward differs from its
	// parent's.
	Forks, Flips map[string][]int64
	// ReasoningSum and ReasoningCount are over the positions before each
	// i.i.d. response's answer (the task's AnswerStart), AnswerSum and
	// AnswerCount over the answer's positions and the end token: where
	// trees may fork and where they may not (see AddSplit).
	ReasoningSum, AnswerSum     float64
	ReasoningCount, AnswerCount int64
}

// NewProfile returns an empty profile.
func NewProfile() *Profile {
	return &Profile{ClassSum: map[string]float64{}, ClassCount: map[string]int64{},
		Forks: map[string][]int64{}, Flips: map[string][]int64{}}
}

// grow extends xs to hold index i.
func grow(xs []int64, i int) []int64 {
	for len(xs) <= i {
		xs = append(xs, 0)
	}
	return xs
}

// AddIID adds the entropies of a flat group's responses; text maps a
// token id to its character (for the class by preceding character).
func (p *Profile) AddIID(g *record.Group, text func(id int) string) error {
	for _, nd := range g.Nodes {
		if nd.Parent != -1 {
			return fmt.Errorf("entropy profile of prompt %q: node %d is a branch, want a flat group", g.Prompt, nd.ID)
		}
		if len(nd.Entropies) != len(nd.Tokens) {
			return fmt.Errorf("entropy profile of prompt %q: node %d has %d entropies for %d tokens", g.Prompt, nd.ID, len(nd.Entropies), len(nd.Tokens))
		}
		p.Lengths = grow(p.Lengths, len(nd.Tokens))
		p.Lengths[len(nd.Tokens)]++
		for i, h := range nd.Entropies {
			for len(p.EntropySum) <= i {
				p.EntropySum = append(p.EntropySum, 0)
			}
			p.Count = grow(p.Count, i)
			p.EntropySum[i] += float64(h)
			p.Count[i]++
			class := "^"
			if i > 0 {
				class = text(nd.Tokens[i-1])
			}
			p.ClassSum[class] += float64(h)
			p.ClassCount[class]++
		}
	}
	return nil
}

// AddSplit adds the entropies of a flat group's responses to the
// reasoning or the answer side: a token is reasoning when its text starts
// before answerStart(response text), the character position where the
// task says the response's answer begins; text maps a token id to its text.
func (p *Profile) AddSplit(g *record.Group, answerStart func(response string) int, text func(id int) string) error {
	for _, nd := range g.Nodes {
		if nd.Parent != -1 {
			return fmt.Errorf("entropy split of prompt %q: node %d is a branch, want a flat group", g.Prompt, nd.ID)
		}
		if len(nd.Entropies) != len(nd.Tokens) {
			return fmt.Errorf("entropy split of prompt %q: node %d has %d entropies for %d tokens", g.Prompt, nd.ID, len(nd.Entropies), len(nd.Tokens))
		}
		var sb strings.Builder
		starts := make([]int, len(nd.Tokens))
		for i, id := range nd.Tokens {
			starts[i] = sb.Len()
			sb.WriteString(text(id))
		}
		at := answerStart(sb.String())
		for i, h := range nd.Entropies {
			if starts[i] < at {
				p.ReasoningSum += float64(h)
				p.ReasoningCount++
			} else {
				p.AnswerSum += float64(h)
				p.AnswerCount++
			}
		}
	}
	return nil
}

// MeanReasoningEntropy and MeanAnswerEntropy are the mean entropy a
// position before and from the answer (see AddSplit); 0 without positions.
func (p *Profile) MeanReasoningEntropy() float64 { return meanOr0(p.ReasoningSum, p.ReasoningCount) }

// MeanAnswerEntropy: see MeanReasoningEntropy.
func (p *Profile) MeanAnswerEntropy() float64 { return meanOr0(p.AnswerSum, p.AnswerCount) }

func meanOr0(s float64, n int64) float64 {
	if n == 0 {
		return 0
	}
	return s / float64(n)
}

// AddForks counts a tree group's forks under family: each branch node at
// its fork position in the response, and whether its leaf's reward
// differs from its parent's leaf's (every node ends one leaf).
func (p *Profile) AddForks(family string, g *record.Group) error {
	reward := make(map[int]float64, len(g.Leaves))
	for _, l := range g.Leaves {
		reward[l.Node] = l.Reward
	}
	start := make(map[int]int, len(g.Nodes))
	for _, nd := range g.Nodes {
		if nd.Parent == -1 {
			start[nd.ID] = 0
			continue
		}
		ps, ok := start[nd.Parent]
		if !ok {
			return fmt.Errorf("forks of prompt %q: node %d comes before its parent %d", g.Prompt, nd.ID, nd.Parent)
		}
		pos := ps + nd.ForkAt
		start[nd.ID] = pos
		rn, okN := reward[nd.ID]
		rp, okP := reward[nd.Parent]
		if !okN || !okP {
			return fmt.Errorf("forks of prompt %q: node %d or its parent %d ends no leaf", g.Prompt, nd.ID, nd.Parent)
		}
		p.Forks[family] = grow(p.Forks[family], pos)
		p.Flips[family] = grow(p.Flips[family], pos)
		p.Forks[family][pos]++
		if rn != rp {
			p.Flips[family][pos]++
		}
	}
	return nil
}

// MeanEntropy is the mean entropy at each response position (NaN-free:
// positions no response reached are left out of the slice's end).
func (p *Profile) MeanEntropy() []float64 {
	out := make([]float64, len(p.EntropySum))
	for i, s := range p.EntropySum {
		out[i] = s / float64(p.Count[i])
	}
	return out
}

// MeanLength is the mean i.i.d. response length in tokens.
func (p *Profile) MeanLength() float64 {
	var n, s int64
	for l, c := range p.Lengths {
		n += c
		s += int64(l) * c
	}
	if n == 0 {
		return 0
	}
	return float64(s) / float64(n)
}

// Class is the entropy after one preceding character.
type Class struct {
	// After is the preceding character ("^": the first position).
	After string
	// Mean is the mean entropy (nats), Share the share of all entropy, and
	// Positions the number of positions.
	Mean, Share float64
	Positions   int64
}

// Classes lists the classes by their share of the total entropy, largest
// first.
func (p *Profile) Classes() []Class {
	total := 0.0
	for _, s := range p.ClassSum {
		total += s
	}
	var out []Class
	for k, s := range p.ClassSum {
		c := Class{After: k, Mean: s / float64(p.ClassCount[k]), Positions: p.ClassCount[k]}
		if total > 0 {
			c.Share = s / total
		}
		out = append(out, c)
	}
	slices.SortFunc(out, func(a, b Class) int {
		return cmp.Or(cmp.Compare(b.Share, a.Share), cmp.Compare(a.After, b.After))
	})
	return out
}

// FlipRate is, per response position, the share of a family's forks there
// that changed the outcome, binned by bin positions; positions with fewer
// than minForks forks in their bin are NaN.
func (p *Profile) FlipRate(family string, bin int, minForks int64) (centers, rates []float64) {
	forks, flips := p.Forks[family], p.Flips[family]
	for lo := 0; lo < len(forks); lo += bin {
		var f, fl int64
		for i := lo; i < min(lo+bin, len(forks)); i++ {
			f += forks[i]
			fl += flips[i]
		}
		centers = append(centers, float64(lo)+float64(float64(bin-1)/2))
		if f < minForks {
			rates = append(rates, math.NaN())
			continue
		}
		rates = append(rates, float64(fl)/float64(f))
	}
	return centers, rates
}
