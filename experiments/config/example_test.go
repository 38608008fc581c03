package config_test

import (
	"fmt"
	"log"

	"github.com/rollout-rl/rollout/experiments/config"
)

// A configuration with an ablation axis and seeds expands into runs.
func Example() {
	src := []byte(`name: demo
task: {name: add, params: {digits: 2}}
train: {steps: 10}
seeds: [1, 2]
ablate:
  rollout.strategy: [flat, entropy_tree]
`)
	f, err := config.Parse("demo.yaml", src, []string{"train.lr=3e-5"})
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range f.Runs() {
		fmt.Println(r.Variant, r.Seed, r.Config.Train.LR, r.Config.Rollout.Strategy)
	}
	_, err = config.Parse("bad.yaml", []byte("task: {name: add}\ntrain: {stpes: 3}\n"), nil)
	fmt.Println(err)
	// Output:
	// strategy=flat 1 3e-05 flat
	// strategy=flat 2 3e-05 flat
	// strategy=entropy_tree 1 3e-05 entropy_tree
	// strategy=entropy_tree 2 3e-05 entropy_tree
	// bad.yaml:2: train.stpes: unknown key; did you mean train.steps? (known here: advantage, async, bf16, clip_high, clip_low, correction, entropy_coef, epochs, filter_groups, is_high, is_low, kl_coef, loss_agg, lr, max_grad_norm, max_resample_rounds, max_staleness, minibatches, overlong, overlong_cache, prompts_per_step, save_final, steps, tis_cap, total_flops, total_tokens, tree_packing)
}
