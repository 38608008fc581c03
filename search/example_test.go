package search_test

import (
	"context"
	"fmt"
	"os"

	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/policytest"
	"github.com/rollout-rl/rollout/search"
)

// Generate a small entropy tree for one prompt, score its leaves, compute
// TreeRL advantages and print the tree.
func Example() {
	// A toy policy over {a, b, c, EOS}: EOS gets likelier as the response grows.
	sampler, _ := policytest.New(4, func(tokens []int) []float64 {
		n := float64(len(tokens))
		return []float64{0.5, 0.3, 0.2, 0.02 * n}
	})
	strategy, err := search.NewStrategy("entropy_tree", map[string]string{"m": "2", "n": "1", "t": "2"})
	if err != nil {
		fmt.Println(err)
		return
	}
	tiny, _ := policy.Size("tiny") // forward FLOPs counted as for the tiny model
	groups, err := strategy.Generate(context.Background(), search.Request{
		Prompts:   []search.Prompt{{Tokens: []int{0, 1}, ID: 0}},
		Sampler:   sampler,
		Sampling:  policy.DefaultSampling,
		EOS:       []int{3},
		MaxTokens: 8,
		Budget:    40,
		Seed:      1,
		FLOPs:     tiny.ForwardFLOPs,
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	g := groups[0]
	for _, leaf := range g.Leaves() {
		// The task's verifier would score here: reward responses that hold a "c".
		r := 0.0
		for _, t := range leaf.Response() {
			if t == 2 {
				r = 1
			}
		}
		leaf.SetOutcome(r, "")
	}
	est, _ := search.NewEstimator("tree")
	if err := search.SetAdvantages(g, est); err != nil {
		fmt.Println(err)
		return
	}
	text := func(tokens []int) string {
		s := ""
		for _, t := range tokens {
			s += string("abc$"[t])
		}
		return s
	}
	_ = g.Record(text(g.Prompt), text).WriteText(os.Stdout, text)
	fmt.Printf("advantages of leaf 2: %.3f\n", g.Leaves()[2].Advantages)
	// Output:
	// prompt "ab"
	// strategy entropy_tree: 2 trees, 4 leaves, 1 forks, 4 unique responses
	// budget: generated 14 (limit 40), prefill 2, decode 10, FLOPs 20779008, 1 forks missing
	// tree 0
	//   #0 it 0, 8 tok, length, reward 1: "acbbbaba"
	//     @6 score 1.289 → #2 it 1, 2 tok, length, reward 1: "acbbba|ab"
	//     @6 score 1.289 → #3 it 1, 2 tok, length, reward 1: "acbbba|ca"
	// tree 1
	//   #1 it 0, 2 tok, eos, reward 0: "b$"
	// advantages of leaf 2: [0.289 0.289 0.289 0.289 0.289 0.289 0.250 0.250]
}
