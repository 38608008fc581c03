package rl

import (
	"errors"
	"fmt"

	"github.com/rollout-rl/rollout/experiments/config/field"
	"github.com/rollout-rl/rollout/search"
)

// Check reports the errors of s that New would report and that need no
// model: the training config, rollout.max_tokens, the advantage estimator,
// rollout.adaptive, and train.total_tokens and eval.every_tokens that one
// group's longest possible cost would not fit in. It reads s's Task,
// Strategy, Budget, MaxTokens, Adaptive, EvalEveryTokens and Train only,
// so a command can check a config before it records anything or loads a
// policy (the worst case in FLOPs needs the policy: New checks it).
func (s *Setup) Check() error {
	if err := s.Train.Validate(); err != nil {
		return err
	}
	if s.Task == nil || s.Strategy == nil {
		return errors.New("rl: setup needs a task and a strategy")
	}
	if err := s.checkMaxTokens(); err != nil {
		return err
	}
	if _, err := search.NewEstimator(s.Train.Advantage); err != nil {
		return err
	}
	if err := checkAdaptive(*s); err != nil {
		return err
	}
	_, err := s.groupMax()
	return err
}

// setGroupMax sets the loop's bound on a group's cost when a token limit
// needs it (Setup.groupMax).
func (l *Loop) setGroupMax() error {
	gm, err := l.s.groupMax()
	l.groupMax = gm
	return err
}

// groupMax computes a group's longest possible cost when train.total_tokens
// or eval.every_tokens needs it (0 when neither is set), and checks that
// one group fits in each (an error naming the key is a *field.Error).
func (s *Setup) groupMax() (int64, error) {
	total, every := s.Train.TotalTokens, s.EvalEveryTokens
	if every < 0 {
		return 0, fmt.Errorf("rl: eval.every_tokens = %d, want ≥ 0", every)
	}
	if total == 0 && every == 0 {
		return 0, nil
	}
	gm, err := search.MaxGroupTokens(s.Strategy, s.ResponseCap(), s.Budget)
	if err != nil {
		return 0, fmt.Errorf("rl: train.total_tokens and eval.every_tokens need a bound on a group's cost: %w", err)
	}
	for _, lim := range []struct {
		key string
		v   int64
	}{{"train.total_tokens", total}, {"eval.every_tokens", every}} {
		if lim.v > 0 && lim.v < gm {
			return 0, &field.Error{Key: lim.key, Value: lim.v, Msg: fmt.Sprintf("below one group's longest possible cost, %d tokens (strategy %s, responses up to %d tokens, rollout.budget %d): no step could fit",
				gm, s.Strategy.Name(), s.ResponseCap(), s.Budget)}
		}
	}
	return gm, nil
}
