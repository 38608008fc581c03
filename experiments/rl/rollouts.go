package rl

import (
	"context"
	"fmt"

	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/search"
)

// Request returns the sampling request for the prompts of a split at the
// given indices, drawn with the setup's seed, at RL step `step` (0-based:
// the step that samples them), and the prompts themselves. It is the one
// way a sampling request is built: the RL loop, `rollout sample` and the
// test-time compute sweep use it, so a group is the same wherever it is
// made. The strategy field of the setup is not used.
func (s *Setup) Request(step int, split task.Split, indices []int) (search.Request, []task.Prompt, error) {
	req := search.Request{
		Sampling:  s.Sampling,
		EOS:       []int{policy.EOS},
		MaxTokens: s.Task.MaxResponseLen() + 1,
		Budget:    s.Budget,
		Seed:      s.Seed,
		Step:      uint64(step),
		FLOPs:     s.Policy.Config.ForwardFLOPs,
		Prompts:   make([]search.Prompt, len(indices)),
	}
	prompts := make([]task.Prompt, len(indices))
	for i, idx := range indices {
		p, err := s.Task.Prompt(split, s.Seed, idx)
		if err != nil {
			return search.Request{}, nil, fmt.Errorf("rl: %w", err)
		}
		ids, err := s.Tokenizer.EncodePrompt(p.Text)
		if err != nil {
			return search.Request{}, nil, fmt.Errorf("rl: prompt %q: %w", p.Text, err)
		}
		prompts[i] = p
		req.Prompts[i] = search.Prompt{Tokens: ids, ID: uint64(idx), AnswerStart: AnswerStart(s.Task, s.Tokenizer, p)}
	}
	if s.Int8 {
		req.Sampler = policy.NewEngine(s.Policy, policy.WithInt8())
	} else {
		req.Sampler = policy.NewEngine(s.Policy)
	}
	return req, prompts, nil
}

// Rollouts generates, scores and computes the advantages (train.advantage)
// of the groups of the prompts of a split at the given indices at RL step
// `step`, exactly as the RL loop's step does, and marks the groups the loop
// would filter (train.filter_groups and all rewards equal).
func (s *Setup) Rollouts(ctx context.Context, step int, split task.Split, indices []int) ([]ScoredGroup, error) {
	est, err := search.ByName(s.Train.Advantage)
	if err != nil {
		return nil, fmt.Errorf("rl: %w", err)
	}
	req, prompts, err := s.Request(step, split, indices)
	if err != nil {
		return nil, err
	}
	groups, err := s.Strategy.Generate(ctx, req)
	if err != nil {
		return nil, fmt.Errorf("rl: generate: %w", err)
	}
	out := make([]ScoredGroup, len(groups))
	for i, g := range groups {
		if err := Score(s.Task, s.Reward, s.Tokenizer, prompts[i], g, est); err != nil {
			return nil, err
		}
		out[i] = ScoredGroup{Group: g, Prompt: prompts[i], Filtered: s.Train.FilterGroups && allEqual(g.Rewards())}
	}
	return out, nil
}
