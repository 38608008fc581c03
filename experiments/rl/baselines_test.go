package rl

import (
	"testing"

	"github.com/rollout-rl/rollout/search"
)

// The thin-baseline metric counts one-leaf trees under tree_grpo and is
// not set for an estimator without the notion.
func TestThinBaselineMetrics(t *testing.T) {
	a := &search.Node{Tokens: []int{1, 2}}
	b := &search.Node{Parent: a, ForkAt: 1, Tokens: []int{3}}
	c := &search.Node{Tokens: []int{4}}
	g := search.NewGroup([]int{0}, "tree_grpo", []*search.Node{a, b, c})
	groups := []ScoredGroup{{Group: g}, {Group: g}}
	for _, tc := range []struct {
		advantage string
		want      float64
		set       bool
	}{{"tree_grpo", 2, true}, {"spo", 0, true}, {"grpo", 0, false}} {
		m := map[string]float64{}
		thinBaselineMetrics(groups, tc.advantage, m)
		if v, ok := m[ThinBaselinesMetric]; ok != tc.set || v != tc.want {
			t.Errorf("%s: metric %v (set %v), want %v (set %v)", tc.advantage, v, ok, tc.want, tc.set)
		}
	}
}
