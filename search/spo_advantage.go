package search

import "fmt"

// SPO is the segment advantage of Segment Policy Optimization (Guo et al.
// 2025, SPO-tree): the value of a state on a segment boundary is the Monte
// Carlo estimate of the rollouts through it, V = mean reward of the leaves
// below it, and a segment's advantage is the change of value across it,
//
//	A(s) = V(end of s) − V(start of s),
//
// which every token of s takes. The segments are the pieces between forks
// (Group.Segments): the end of s is reached by s's leaves, its start by
// its parent segment's leaves (the prompt, reached by every leaf of the
// group, for a tree's first segment). On a flat group it is r_i − mean r
// (Dr. GRPO's advantage); unlike TreeRL's it has no global term and no
// √ reweighting.
type SPO struct{}

// Name implements Estimator.
func (SPO) Name() string { return "spo" }

// Advantages implements Estimator.
func (SPO) Advantages(g *Group) ([][]float64, error) {
	r, err := rewards(g)
	if err != nil {
		return nil, fmt.Errorf("spo: %w", err)
	}
	vRoot := mean(r)
	return perSegment(g, func(s *Segment) float64 {
		return segmentValue(s, vRoot) - segmentValue(s.Parent, vRoot)
	}), nil
}

// ThinBaselines implements ThinBaselines: the boundary states whose value
// baseline rests on a single rollout. A fork state is always reached by
// at least two, so only the prompt of a one-leaf group counts.
func (SPO) ThinBaselines(g *Group) int {
	if len(g.Leaves()) < 2 {
		return 1
	}
	return 0
}
