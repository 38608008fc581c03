package search

import (
	"errors"
	"fmt"
	"math"
)

// Estimator turns the rewards of a group's leaves into per-token
// advantages. Estimators are pure: they read the group and return values.
type Estimator interface {
	// Name is the estimator's name in configs.
	Name() string
	// Advantages returns, for every leaf in Group.Leaves order, one value
	// per token of the leaf's Response(). Every leaf must be scored.
	Advantages(g *Group) ([][]float64, error)
}

// SetAdvantages computes e's advantages for g and stores them in the
// leaves' Advantages.
func SetAdvantages(g *Group, e Estimator) error {
	adv, err := e.Advantages(g)
	if err != nil {
		return err
	}
	for i, n := range g.Leaves() {
		n.Advantages = adv[i]
	}
	return nil
}

// DefaultEpsilon is GRPO's ε, as in verl.
const DefaultEpsilon = 1e-6

// rewards checks that every leaf is scored and returns the rewards.
func rewards(g *Group) ([]float64, error) {
	leaves := g.Leaves()
	if len(leaves) == 0 {
		return nil, errors.New("group has no leaves")
	}
	r := make([]float64, len(leaves))
	for i, n := range leaves {
		if !n.Scored {
			return nil, fmt.Errorf("leaf %d has no reward", n.ID)
		}
		if math.IsNaN(n.Reward) || math.IsInf(n.Reward, 0) {
			return nil, fmt.Errorf("leaf %d has reward %v", n.ID, n.Reward)
		}
		r[i] = n.Reward
	}
	return r, nil
}

// perLeaf spreads one value per leaf over the leaf's response tokens.
func perLeaf(g *Group, v []float64) [][]float64 {
	out := make([][]float64, len(v))
	for i, n := range g.Leaves() {
		a := make([]float64, n.Start+len(n.Tokens))
		for j := range a {
			a[j] = v[i]
		}
		out[i] = a
	}
	return out
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// GRPO is A_i = (r_i − mean r) / (std r + ε) over all leaves of the group,
// with the sample standard deviation (n−1 in the denominator, torch.std as
// verl uses it). Like verl, a group of one leaf has mean 0 and std 1.
type GRPO struct{ Epsilon float64 }

// Name implements Estimator.
func (GRPO) Name() string { return "grpo" }

// Advantages implements Estimator.
func (e GRPO) Advantages(g *Group) ([][]float64, error) {
	r, err := rewards(g)
	if err != nil {
		return nil, fmt.Errorf("grpo: %w", err)
	}
	m, sd := 0.0, 1.0
	if len(r) > 1 {
		m = mean(r)
		ss := 0.0
		for _, x := range r {
			ss += float64((x - m) * (x - m))
		}
		sd = math.Sqrt(ss / float64(len(r)-1))
	}
	v := make([]float64, len(r))
	for i, x := range r {
		v[i] = (x - m) / (sd + e.Epsilon)
	}
	return perLeaf(g, v), nil
}

// DrGRPO is A_i = r_i − mean r (no std division); a group of one leaf has
// mean 0, as in verl.
type DrGRPO struct{}

// Name implements Estimator.
func (DrGRPO) Name() string { return "dr_grpo" }

// Advantages implements Estimator.
func (DrGRPO) Advantages(g *Group) ([][]float64, error) {
	r, err := rewards(g)
	if err != nil {
		return nil, fmt.Errorf("dr_grpo: %w", err)
	}
	m := 0.0
	if len(r) > 1 {
		m = mean(r)
	}
	v := make([]float64, len(r))
	for i, x := range r {
		v[i] = x - m
	}
	return perLeaf(g, v), nil
}

// RLOO is A_i = r_i − mean_{j≠i} r_j; a group of one leaf keeps its reward,
// as in verl.
type RLOO struct{}

// Name implements Estimator.
func (RLOO) Name() string { return "rloo" }

// Advantages implements Estimator.
func (RLOO) Advantages(g *Group) ([][]float64, error) {
	r, err := rewards(g)
	if err != nil {
		return nil, fmt.Errorf("rloo: %w", err)
	}
	v := make([]float64, len(r))
	if len(r) == 1 {
		v[0] = r[0]
		return perLeaf(g, v), nil
	}
	sum := 0.0
	for _, x := range r {
		sum += x
	}
	for i, x := range r {
		v[i] = x - (sum-x)/float64(len(r)-1)
	}
	return perLeaf(g, v), nil
}

// TreeRL is the tree advantage of TreeRL (Hou et al. 2025): for a segment s
// between forks, V(s) = mean reward of the leaves below s, G(s) = V(s) −
// V(root), L(s) = V(s) − V(parent(s)), A(s) = (G(s) + L(s)) / √|leaves(s)|
// (without the division when Reweight is false). Every token takes its
// segment's A.
//
// The root is the prompt: V(root) is the mean reward over all leaves of all
// the group's trees, and the parent of a tree's first segment is that root
// (so L = G there). TreeRL's code does the same: it hangs the M trees of a
// prompt under one virtual root before computing values.
type TreeRL struct{ Reweight bool }

// Name implements Estimator.
func (t TreeRL) Name() string {
	if t.Reweight {
		return "tree"
	}
	return "tree_nosqrt"
}

// Advantages implements Estimator.
func (t TreeRL) Advantages(g *Group) ([][]float64, error) {
	r, err := rewards(g)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.Name(), err)
	}
	vRoot := mean(r)
	return perSegment(g, func(s *Segment) float64 {
		vs, vp := segmentValue(s, vRoot), segmentValue(s.Parent, vRoot)
		v := (vs - vRoot) + (vs - vp)
		if t.Reweight {
			v /= math.Sqrt(float64(len(s.Leaves)))
		}
		return v
	}), nil
}

// segmentValue is V(s), the mean reward of the leaves below segment s, or
// vRoot, the value of the prompt, when s is nil.
func segmentValue(s *Segment, vRoot float64) float64 {
	if s == nil {
		return vRoot
	}
	sum := 0.0
	for _, l := range s.Leaves {
		sum += l.Reward
	}
	return sum / float64(len(s.Leaves))
}

// perSegment gives every token of every leaf the value adv(s) of its
// segment s (Group.Segments), computed once per segment.
func perSegment(g *Group, adv func(s *Segment) float64) [][]float64 {
	_, paths := g.Segments()
	memo := map[*Segment]float64{}
	out := make([][]float64, len(g.Leaves()))
	for i, leaf := range g.Leaves() {
		a := make([]float64, 0, leaf.Start+len(leaf.Tokens))
		for _, s := range paths[leaf.ID] {
			v, ok := memo[s]
			if !ok {
				v = adv(s)
				memo[s] = v
			}
			for j := s.From; j < s.To; j++ {
				a = append(a, v)
			}
		}
		out[i] = a
	}
	return out
}

// TreePO is TreePO's subgroup advantage: for leaf i with segments s_1..s_k
// (root first), the mean over depths d = 0..k of r_i − mean of the leaves
// sharing i's first d segments (depth 0: all leaves of the group), skipping
// depths d > 0 where that set is i alone. Every token of the leaf takes the
// leaf's value.
type TreePO struct{}

// Name implements Estimator.
func (TreePO) Name() string { return "tree_subgroup" }

// Advantages implements Estimator.
func (TreePO) Advantages(g *Group) ([][]float64, error) {
	r, err := rewards(g)
	if err != nil {
		return nil, fmt.Errorf("tree_subgroup: %w", err)
	}
	_, paths := g.Segments()
	all := mean(r)
	v := make([]float64, len(r))
	for i, leaf := range g.Leaves() {
		sum, n := r[i]-all, 1
		for _, s := range paths[leaf.ID] {
			if len(s.Leaves) < 2 {
				continue
			}
			m := 0.0
			for _, l := range s.Leaves {
				m += l.Reward
			}
			sum += r[i] - m/float64(len(s.Leaves))
			n++
		}
		v[i] = sum / float64(n)
	}
	return perLeaf(g, v), nil
}
