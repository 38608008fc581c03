package record_test

import (
	"fmt"

	"github.com/rollout-rl/rollout/search/record"
)

// A remote group: the server counted 9 completion tokens but returned 7,
// leaving out the end-of-sequence token of each of the two responses it
// ended. The record states those 2 separately, so its usage is always the
// nodes' tokens plus the unheld ones; a local group's nodes hold their EOS
// and it has none unheld.
func ExampleGroup_HeldTokens() {
	g := record.Group{
		Strategy: "entropy_tree",
		Usage:    record.Usage{GeneratedTokens: 9, UnheldTokens: 2},
		Nodes: []record.Node{
			{ID: 0, Parent: -1, Finish: record.FinishEOS, Tokens: []int{4, 5, 6, 7}},
			{ID: 1, Parent: 0, ForkAt: 1, Finish: record.FinishEOS, Tokens: []int{8, 9, 10}},
		},
		Leaves: []record.Leaf{{Node: 0}, {Node: 1}},
	}
	fmt.Printf("generated %d = held %d + unheld %d; %d fork, %d unique responses\n",
		g.Usage.GeneratedTokens, g.HeldTokens(), g.Usage.UnheldTokens, g.Forks(), g.UniqueResponses())
	// Output: generated 9 = held 7 + unheld 2; 1 fork, 2 unique responses
}
