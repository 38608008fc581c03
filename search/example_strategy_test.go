package search_test

import (
	"context"
	"fmt"

	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/policytest"
	"github.com/rollout-rl/rollout/search"
)

// chainTree is a strategy defined outside package search: M responses per
// prompt, each forked once in each of depth rounds at its best position by
// fork score. It is an entropy tree with N = T = 1 and L = depth, so it
// builds on search.EntropyTree, which states its shape (Leaves,
// MaxGroupTokens), generates its groups and gives its remote form.
type chainTree struct{ search.EntropyTree }

// newChainTree parses and validates the parameters m, depth and score.
func newChainTree(p *search.Params) (search.Strategy, error) {
	t := chainTree{search.EntropyTree{M: p.Int("m", 4), N: 1, L: p.Int("depth", 3), T: 1,
		Score: search.ForkScore(p.String("score", "surprisal")), As: "chain_tree"}}
	return t, t.Validate()
}

// Validate names the strategy's own keys in its errors.
func (t chainTree) Validate() error {
	if t.L < 1 {
		return &search.ParamError{Strategy: t.Name(), Key: "depth", Value: fmt.Sprint(t.L), Msg: fmt.Sprintf("depth = %d, want >= 1", t.L)}
	}
	return t.EntropyTree.Validate()
}

// The registration line: from then on configs, rollout sample, the budget
// accounting and the remote sampler know chain_tree.
func init() { search.RegisterStrategy("chain_tree", newChainTree) }

// A strategy registered by another package is built, measured and run
// like a built-in one.
func ExampleRegisterStrategy() {
	fmt.Println(search.Names())
	st, err := search.NewStrategy("chain_tree", map[string]string{"m": "2", "depth": "2"})
	if err != nil {
		fmt.Println(err)
		return
	}
	bound, _ := search.MaxGroupTokens(st, 8, 0)
	fmt.Printf("%s: %d leaves a prompt, at most %d tokens a group\n", st.Name(), st.Leaves(), bound)

	sampler, _ := policytest.New(4, func(tokens []int) []float64 {
		return []float64{0.5, 0.3, 0.2, 0.005 * float64(len(tokens))}
	})
	groups, err := st.Generate(context.Background(), search.Request{
		Prompts: []search.Prompt{{Tokens: []int{0, 1}}}, Sampler: sampler,
		Sampling: policy.DefaultSampling, EOS: []int{3}, MaxTokens: 8, Seed: 1,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	g := groups[0]
	fmt.Printf("group of %s: %d leaves, %d forks, %d tokens\n", g.Strategy, len(g.Leaves()), g.Forks(), g.Usage.GeneratedTokens)

	for _, params := range []map[string]string{{"depth": "0"}, {"l": "2"}, {"m": "two"}} {
		_, err := search.NewStrategy("chain_tree", params)
		fmt.Println(err)
	}
	// Output:
	// [flat entropy_tree random_tree segment_tree tree_grpo arpo pivot chain_tree]
	// chain_tree: 6 leaves a prompt, at most 44 tokens a group
	// group of chain_tree: 6 leaves, 4 forks, 33 tokens
	// chain_tree: depth = 0, want >= 1
	// chain_tree: unknown parameter "l" (known: m, depth, score)
	// chain_tree: m = "two" is not an integer
}
