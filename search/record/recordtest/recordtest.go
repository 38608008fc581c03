// Package recordtest builds rollout-group records for tests of the packages
// that store, export and show them.
package recordtest

import (
	"fmt"

	"github.com/rollout-rl/rollout/search/record"
)

// Flat makes a flat group of leaves responses of n tokens each, with
// values derived from seed so that groups differ.
func Flat(seed, leaves, n int) record.Group {
	g := record.Group{
		Prompt:   fmt.Sprintf("prompt %d: 12+34=", seed),
		Strategy: "flat",
		Usage:    record.Usage{Budget: 0, GeneratedTokens: int64(leaves * n), PrefillTokens: 8, FLOPs: int64(leaves*n) * 1_740_000},
		Filtered: seed%5 == 0,
		Nodes:    make([]record.Node, leaves),
		Leaves:   make([]record.Leaf, leaves),
	}
	for i := range leaves {
		nd := record.Node{ID: i, Parent: -1, Tokens: make([]int, n), LogProbs: make([]float32, n), Entropies: make([]float32, n)}
		for j := range n {
			nd.Tokens[j] = (seed*7 + i*3 + j) % 64
			nd.LogProbs[j] = -float32((seed+i+j)%13) / 7
			nd.Entropies[j] = float32((seed*i+j)%11) / 5
		}
		g.Nodes[i] = nd
		adv := make([]float64, n)
		for j := range adv {
			adv[j] = float64(i%3) - 1
		}
		g.Leaves[i] = record.Leaf{Node: i, Text: fmt.Sprintf("%d", 46+i%2), Reward: float64(i % 2), Scored: true, Reason: "exact", Advantages: adv}
	}
	return g
}

// Tree is a hand-made tree: root r (4 tokens), child a forks at 2,
// child b of a forks at 1; leaves at r, a and b.
func Tree() record.Group {
	return record.Group{
		Prompt: "3 4 7 → 21", Strategy: "entropy_tree",
		Usage: record.Usage{Budget: 100, GeneratedTokens: 9, PrefillTokens: 5, FLOPs: 123},
		Nodes: []record.Node{
			{ID: 0, Parent: -1, ForkAt: 0, Iteration: 0, Tokens: []int{1, 2, 3, 4}, LogProbs: []float32{-.1, -.2, -.3, -.4}, Entropies: []float32{.1, .2, .3, .4}},
			{ID: 1, Parent: 0, ForkAt: 2, Iteration: 1, Tokens: []int{5, 6, 7}, LogProbs: []float32{-.5, -.6, -.7}, Entropies: []float32{.5, .6, .7}},
			{ID: 2, Parent: 1, ForkAt: 1, Iteration: 1, Tokens: []int{8, 9}, LogProbs: []float32{-.8, -.9}, Entropies: []float32{.8, .9}},
		},
		Leaves: []record.Leaf{
			{Node: 0, Text: "r", Reward: 0, Scored: true, Reason: "wrong", Advantages: []float64{-1, -1, -1, -1}},
			{Node: 1, Text: "a", Reward: 1, Scored: true, Reason: "exact", Advantages: []float64{.5, .5, .5, .5, .5}},
			{Node: 2, Text: "b\t\"q\"", Reward: 1, Scored: true, Reason: "exact", Advantages: []float64{.5, .5, .7, .7, .7}},
		},
	}
}
