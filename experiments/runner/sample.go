package runner

import (
	"context"
	"fmt"

	"github.com/rollout-rl/rollout/experiments/config"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/search/record"
)

// SampleOptions says which prompt Sample samples, with which policy.
type SampleOptions struct {
	// Seed is the run seed: it draws the prompts and seeds the streams.
	Seed uint64
	// Step is the 0-based RL step whose random streams are used: the groups
	// of a run's step s (as `rollout trees RUN --step s` shows them) were
	// sampled at Step s−1.
	Step int
	// Split and Index pick the prompt: the Index-th prompt of the split
	// drawn with Seed (a run's step 1 trains on train prompts 0, 1, …).
	Split task.Split
	Index int
	// Prompt, when not empty, is sampled instead (its streams use id 0).
	Prompt string
	// Checkpoint is the policy; empty means the config's base policy (its
	// `checkpoint:`, or pretrained and cached under CacheDir).
	Checkpoint string
	// CacheDir holds base policies and reward models.
	CacheDir string
}

// Sample makes one rollout group of a config's rollout strategy on one
// prompt exactly as its runs do (the same request, streams, scoring,
// advantages and filtering rule), and returns its record. With the config's
// base policy, the seed of a run, Step 0 and the train split, the group
// equals group Index of the run's step 1.
func Sample(ctx context.Context, c config.Experiment, o SampleOptions) (*record.Group, error) {
	ckpt := o.Checkpoint
	if ckpt == "" {
		base, err := BasePolicy(ctx, c, o.CacheDir, nil)
		if err != nil {
			return nil, err
		}
		ckpt = base.Dir
	}
	var rmDir string
	if c.Reward.Model != 0 {
		var err error
		if rmDir, _, _, err = RewardModel(ctx, c, o.CacheDir, ckpt, nil); err != nil {
			return nil, err
		}
	}
	setup, err := NewSetup(c, o.Seed, ckpt, rmDir)
	if err != nil {
		return nil, err
	}
	var prompts []task.Prompt
	id := o.Index
	if o.Prompt != "" {
		p, err := setup.Task.ParsePrompt(o.Prompt)
		if err != nil {
			return nil, fmt.Errorf("prompt %q: %w", o.Prompt, err)
		}
		prompts, id = []task.Prompt{p}, 0
	} else if prompts, err = setup.Prompts(o.Split, []int{o.Index}); err != nil {
		return nil, err
	}
	groups, err := setup.Rollouts(ctx, o.Step, prompts, []int{id})
	if err != nil {
		return nil, err
	}
	return groups[0].Record(setup.Tokenizer), nil
}
