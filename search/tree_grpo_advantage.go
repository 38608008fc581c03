package search

import (
	"fmt"
	"math"
)

// TreeGRPO is the advantage of Tree-GRPO (Ji et al., "Tree Search for LLM
// Agent Reinforcement Learning", ICLR 2026): the sum of an intra-tree and
// an inter-tree group-relative advantage of each leaf,
//
//	A_i = (r_i − mean_tree r) / (std_tree r + ε) + (r_i − mean_all r) / (std_all r + ε),
//
// with the sample standard deviation as in GRPO; the intra-tree group is
// the leaves of the leaf's tree, the inter-tree group every leaf of the
// prompt's trees. Every token of a leaf takes its value. The intra-tree
// term alone collapses when a tree has few leaves: a tree of one leaf has
// no intra-tree baseline, so its term is 0 (counted by ThinBaselines); a
// group of one leaf has no inter-tree baseline either (mean 0, std 1, as
// GRPO's).
type TreeGRPO struct{ Epsilon float64 }

// Name implements Estimator.
func (TreeGRPO) Name() string { return "tree_grpo" }

// Advantages implements Estimator.
func (e TreeGRPO) Advantages(g *Group) ([][]float64, error) {
	r, err := rewards(g)
	if err != nil {
		return nil, fmt.Errorf("tree_grpo: %w", err)
	}
	inter := groupRelative(r, e.Epsilon, 1)
	byTree := make([][]float64, len(g.Trees))
	for _, n := range g.Leaves() {
		byTree[n.Tree] = append(byTree[n.Tree], n.Reward)
	}
	intra := make([][]float64, len(g.Trees))
	for t, rs := range byTree {
		intra[t] = groupRelative(rs, e.Epsilon, 0)
	}
	next := make([]int, len(g.Trees))
	v := make([]float64, len(r))
	for i, n := range g.Leaves() {
		v[i] = inter[i] + intra[n.Tree][next[n.Tree]]
		next[n.Tree]++
	}
	return perLeaf(g, v), nil
}

// ThinBaselines implements ThinBaselines: the trees of g with a single
// leaf, whose intra-tree baseline is missing (and the group itself, if it
// has a single leaf).
func (TreeGRPO) ThinBaselines(g *Group) int {
	n := 0
	for _, t := range g.Trees {
		if len(t.Nodes) < 2 {
			n++
		}
	}
	if len(g.Leaves()) < 2 {
		n++
	}
	return n
}

// groupRelative is GRPO's (x − mean) / (std + ε) over xs, with the sample
// standard deviation; a group of one takes single as its value's
// advantage scale: 1 gives the value itself (mean 0, std 1, as verl), 0
// gives 0 (no baseline, no signal).
func groupRelative(xs []float64, eps, single float64) []float64 {
	out := make([]float64, len(xs))
	if len(xs) == 1 {
		out[0] = single * xs[0]
		return out
	}
	m := mean(xs)
	ss := 0.0
	for _, x := range xs {
		ss += float64((x - m) * (x - m))
	}
	sd := math.Sqrt(ss / float64(len(xs)-1))
	for i, x := range xs {
		out[i] = (x - m) / (sd + eps)
	}
	return out
}

// ThinBaselines is implemented by estimators whose baselines are estimated
// from groups of rollouts that can be too small (a sibling group of one):
// the RL loop logs a warning and the metric adv/thin_baselines when a step
// has any.
type ThinBaselines interface {
	// ThinBaselines counts the baselines of g estimated from a single
	// rollout.
	ThinBaselines(g *Group) int
}
