package search_test

import (
	"context"
	"fmt"

	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/policytest"
	"github.com/rollout-rl/rollout/search"
)

// confidence is a fork score defined outside package search: log p of the
// sampled token, so a tree forks where the policy was most sure (the
// opposite of surprisal).
func confidence(n *search.Node, i int, _ search.ForkStream) float64 {
	return float64(n.LogProbs[i])
}

// The registration line: entropy trees now take score: confidence.
func init() { search.RegisterForkScore("confidence", confidence) }

// A fork score registered by another package ranks fork positions like a
// built-in one.
func ExampleRegisterForkScore() {
	fmt.Println(search.ForkScores())
	st, err := search.NewStrategy("entropy_tree", map[string]string{"m": "1", "n": "1", "t": "1", "score": "confidence"})
	if err != nil {
		fmt.Println(err)
		return
	}
	sampler, _ := policytest.New(4, func(tokens []int) []float64 {
		return []float64{0.6, 0.3, 0.1, 0.02 * float64(len(tokens))}
	})
	groups, err := st.Generate(context.Background(), search.Request{
		Prompts: []search.Prompt{{Tokens: []int{0}}}, Sampler: sampler,
		Sampling: policy.DefaultSampling, EOS: []int{3}, MaxTokens: 8, Seed: 3,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	root, branch := groups[0].Nodes()[0], groups[0].Nodes()[1]
	fmt.Printf("root log p %.3f\n", root.LogProbs)
	fmt.Printf("forked at %d with score %.3f\n", branch.ForkAt, branch.ForkScore)
	_, err = search.NewStrategy("entropy_tree", map[string]string{"score": "vibes"})
	fmt.Println(err)
	// Output:
	// [entropy surprisal random step_entropy step_random attention confidence]
	// root log p [-0.531 -1.243 -0.569 -0.588 -0.606 -0.624 -0.642 -0.659]
	// forked at 2 with score -0.569
	// entropy_tree: score = "vibes", want entropy, surprisal, random, step_entropy, step_random, attention or confidence
}
