package search_test

import (
	"fmt"

	"github.com/rollout-rl/rollout/search"
)

// reinforce is an advantage estimator defined outside package search:
// REINFORCE without a baseline, every token of a leaf takes its reward.
type reinforce struct{}

// Name implements search.Estimator.
func (reinforce) Name() string { return "reinforce" }

// Advantages implements search.Estimator.
func (reinforce) Advantages(g *search.Group) ([][]float64, error) {
	out := make([][]float64, len(g.Leaves()))
	for i, leaf := range g.Leaves() {
		if !leaf.Scored {
			return nil, fmt.Errorf("reinforce: leaf %d has no reward", leaf.ID)
		}
		out[i] = make([]float64, len(leaf.Response()))
		for j := range out[i] {
			out[i][j] = leaf.Reward
		}
	}
	return out, nil
}

// The registration line: configs now take train.advantage: reinforce.
func init() { search.RegisterEstimator("reinforce", func() search.Estimator { return reinforce{} }) }

// An estimator registered by another package is found by name like a
// built-in one.
func ExampleRegisterEstimator() {
	fmt.Println(search.EstimatorNames())
	est, err := search.NewEstimator("reinforce")
	if err != nil {
		fmt.Println(err)
		return
	}
	g := search.NewGroup([]int{0}, "flat", []*search.Node{{Tokens: []int{1, 2}}, {Tokens: []int{3}}})
	g.Leaves()[0].SetOutcome(1, "correct")
	g.Leaves()[1].SetOutcome(0, "wrong")
	if err := search.SetAdvantages(g, est); err != nil {
		fmt.Println(err)
		return
	}
	for _, leaf := range g.Leaves() {
		fmt.Println(leaf.Advantages)
	}
	// Output:
	// [grpo dr_grpo rloo tree tree_nosqrt tree_subgroup tree_grpo spo reinforce]
	// [1 1]
	// [0]
}
