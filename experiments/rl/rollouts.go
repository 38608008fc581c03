package rl

import (
	"context"
	"fmt"

	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/search"
)

// Prompts returns the prompts of a split at the given indices, drawn with
// the setup's seed: the prompts the loop trains on are the train split's
// indices 0, 1, 2, … in order.
func (s *Setup) Prompts(split task.Split, indices []int) ([]task.Prompt, error) {
	out := make([]task.Prompt, len(indices))
	for i, idx := range indices {
		p, err := s.Task.Prompt(split, s.Seed, idx)
		if err != nil {
			return nil, fmt.Errorf("rl: %w", err)
		}
		out[i] = p
	}
	return out, nil
}

// Request returns the sampling request for prompts at RL step `step`
// (0-based: the step that samples them); ids[i] is the id that seeds the
// random streams of prompts[i] (the loop uses the prompt's index in its
// split). It is the one way a sampling request is built: the RL loop,
// `rollout sample` and the test-time compute sweep use it, so a group is
// the same wherever it is made. The setup's strategy is not used.
func (s *Setup) Request(step int, prompts []task.Prompt, ids []int) (search.Request, error) {
	req, _, err := s.request(step, prompts, ids, nil)
	return req, err
}

// request is Request with a sampler over prev's KV caches and scratch
// buffers (policy.WithCachesFrom; nil: fresh ones), which samples the same
// bits as a fresh engine. It returns that sampler too.
func (s *Setup) request(step int, prompts []task.Prompt, ids []int, prev *policy.Engine) (search.Request, *policy.Engine, error) {
	if len(ids) != len(prompts) {
		return search.Request{}, nil, fmt.Errorf("rl: %d prompts and %d ids", len(prompts), len(ids))
	}
	req := search.Request{
		Sampling:  s.Sampling,
		EOS:       []int{policy.EOS},
		MaxTokens: s.ResponseCap(),
		Budget:    s.Budget,
		Seed:      s.Seed,
		Step:      uint64(step),
		FLOPs:     s.Policy.Config.ForwardFLOPs,
		Prompts:   make([]search.Prompt, len(prompts)),
	}
	stepEnds, err := s.Tokenizer.Encode(task.StepEnds(s.Task))
	if err != nil {
		return search.Request{}, nil, fmt.Errorf("rl: step ends of task %s: %w", s.Task.Name(), err)
	}
	req.StepEnds = stepEnds
	for i, p := range prompts {
		toks, err := s.Tokenizer.EncodePrompt(p.Text)
		if err != nil {
			return search.Request{}, nil, fmt.Errorf("rl: prompt %q: %w", p.Text, err)
		}
		req.Prompts[i] = search.Prompt{Tokens: toks, ID: uint64(ids[i]), AnswerStart: AnswerStart(s.Task, s.Tokenizer, p), Failed: failed(s.Task, s.Tokenizer, p)}
	}
	opts := []policy.EngineOption{policy.WithCachesFrom(prev)}
	if s.Int8 {
		opts = append(opts, policy.WithInt8())
	}
	engine := policy.NewEngine(s.Policy, opts...)
	req.Sampler = engine
	return req, engine, nil
}

// Rollouts generates, scores and computes the advantages (train.advantage)
// of the groups of prompts (with stream ids as in Request) at RL step
// `step`, exactly as the RL loop's step does, and marks the groups the loop
// would filter (train.filter_groups and all rewards equal).
func (s *Setup) Rollouts(ctx context.Context, step int, prompts []task.Prompt, ids []int) ([]ScoredGroup, error) {
	out, _, err := s.rollouts(ctx, step, prompts, ids, nil, nil)
	return out, err
}

// rollouts is Rollouts on an engine over prev's caches (nil: fresh ones),
// with forks[i] capping prompt i's forks (search.Prompt.LimitForks; nil:
// no cap); it returns that engine, whose scratch buffers serve the next
// call (its KV caches are dropped once the groups are made).
func (s *Setup) rollouts(ctx context.Context, step int, prompts []task.Prompt, ids []int, prev *policy.Engine, forks []int) ([]ScoredGroup, *policy.Engine, error) {
	est, err := search.NewEstimator(s.Train.Advantage)
	if err != nil {
		return nil, nil, fmt.Errorf("rl: %w", err)
	}
	req, engine, err := s.request(step, prompts, ids, prev)
	if err != nil {
		return nil, nil, err
	}
	for i := range forks {
		req.Prompts[i].LimitForks, req.Prompts[i].Forks = true, forks[i]
	}
	groups, err := s.Strategy.Generate(ctx, req)
	if err != nil {
		return nil, nil, fmt.Errorf("rl: generate: %w", err)
	}
	// The groups are made: their caches would only hold memory through
	// the update. The next call's engine allocates anew.
	engine.FreeCaches()
	out := make([]ScoredGroup, len(groups))
	for i, g := range groups {
		if err := ScoreWithPenalty(s.Task, s.Reward, s.Tokenizer.ResponseText, prompts[i], g, est, s.overlongPenalty()); err != nil {
			return nil, nil, err
		}
		out[i] = ScoredGroup{Group: g, Prompt: prompts[i], Filtered: s.Train.FilterGroups && allEqual(g.Rewards())}
		if s.Reward != nil {
			leaves := g.Leaves()
			ps, texts := make([]task.Prompt, len(leaves)), make([]string, len(leaves))
			for k, leaf := range leaves {
				ps[k], texts[k] = prompts[i], s.Tokenizer.ResponseText(leaf.Response())
			}
			out[i].ScoreFLOPs = s.Reward.ScoringFLOPs(ps, texts)
		}
	}
	return out, engine, nil
}

// failed reports whether a response to p fails t's verifier (reward below
// 1), for strategies that resample failed responses (search.Prompt.Failed).
func failed(t task.Task, tok *policy.Tokenizer, p task.Prompt) func([]int) bool {
	return func(resp []int) bool { return t.Verify(p, ResponseText(tok, resp)).Reward < 1 }
}
