package search

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/rollout-rl/rollout/policy"
)

// Strategy generates the rollouts of a training step: one Group per prompt
// of the request, in prompt order. A strategy is a value that knows
// itself: its constructor (RegisterStrategy) parses and validates its
// parameters, it states the shape of its groups, and it generates them.
// A strategy that a remote policy can run also implements Remote. The
// built-in strategies plan their groups on the package's batched engine; a
// strategy from another package generates by building on them (see the
// examples) or by driving Request.Sampler itself.
type Strategy interface {
	// Name is the strategy's name in configs and tables.
	Name() string
	// Leaves is the number of leaves (responses) of a group when nothing
	// limits it: no budget, no response ending before a fork.
	Leaves() int
	// MaxGroupTokens is the most tokens one group can generate with
	// responses of at most maxTokens (≥ 1) tokens and no budget: the sum
	// of the longest possible lengths of every response and branch the
	// strategy may start. The package function MaxGroupTokens caps it by
	// a budget.
	MaxGroupTokens(maxTokens int) int64
	// Generate samples the groups of every prompt of req together, one
	// batched policy step per token.
	Generate(ctx context.Context, req Request) ([]*Group, error)
}

// Remote is implemented by a strategy that a remote policy (package
// search/remote) can run. A completions server samples whole responses,
// so its groups are an entropy tree's schedule: M responses, then L times
// the N best positions of every tree by fork score, each forked T times.
type Remote interface {
	// RemoteTree returns the strategy as that schedule (a flat group of N
	// is M = N, L = 0), or the error of its validation.
	RemoteTree() (EntropyTree, error)
}

// Prompt is one prompt of a request.
type Prompt struct {
	Tokens []int
	// ID seeds the prompt's random streams with Request.Seed and
	// Request.Step; ids must be distinct within a request. Give the same id
	// to the same draw of a step (e.g. its index among the step's prompts),
	// whatever batch it is generated in.
	ID uint64
	// AnswerStart, if not nil, replaces Request.AnswerStart for this
	// prompt (for tasks whose answer marker depends on the prompt).
	AnswerStart func(response []int) int
	// Failed, if not nil, reports whether a response fails the prompt's
	// verifier; strategies that resample failed responses (pivot) call it
	// on finished responses. Nil counts every response as failed.
	Failed func(response []int) bool
	// LimitForks, if set, caps the forks of the prompt's group at Forks
	// (0: none): the fork positions per tree and round of a strategy with
	// a fork budget (ForkBudget). A difficulty-adaptive caller sets it.
	LimitForks bool
	Forks      int
}

// ForkBudget is implemented by strategies whose forks a prompt may cap
// (Prompt.LimitForks): entropy trees and tree_grpo.
type ForkBudget interface {
	// MaxForks is the fork positions per tree and round when nothing caps
	// them (an entropy tree's N).
	MaxForks() int
}

// Request is what a strategy generates from.
type Request struct {
	// Prompts are generated together; one group each.
	Prompts []Prompt
	// Sampler is the policy.
	Sampler policy.Sampler
	// Sampling is passed to every Step.
	Sampling policy.Sampling
	// EOS lists the token ids that end a response (the id is kept as the
	// response's last token).
	EOS []int
	// MaxTokens is the maximum response length (tokens after the prompt).
	MaxTokens int
	// Budget is the per-prompt limit on generated tokens, 0 for none. It is
	// never exceeded and never truncates a response: a response or branch
	// starts only if the remaining budget covers its longest possible
	// length, MaxTokens minus the tokens it shares.
	Budget int64
	// Seed and Step select the random streams: the stream of a branch is a
	// fixed hash of (Seed, Step, Prompt.ID, branch id).
	Seed, Step uint64
	// AnswerStart returns the index in a response where its answer begins
	// (len(response) if it has not begun); trees never fork at or after it.
	// Nil means the answer never begins.
	AnswerStart func(response []int) int
	// StepEnds lists the token ids that end a step of a response (a task's
	// newline, ';', ...): step-level fork scores and strategies fork only
	// at a step's first token. Nil makes every token a step.
	StepEnds []int
	// FLOPs returns the forward FLOPs of one position attending to ctx
	// positions (itself included), e.g. policy.Config.ForwardFLOPs; nil counts no FLOPs.
	FLOPs func(ctx int) int64
}

// validate checks the parts of a request every strategy needs.
func (r *Request) validate() error {
	if r.Sampler == nil {
		return errors.New("request: sampler is nil")
	}
	if len(r.Prompts) == 0 {
		return errors.New("request: no prompts")
	}
	if r.MaxTokens < 1 {
		return fmt.Errorf("request: max_tokens = %d, want >= 1", r.MaxTokens)
	}
	if r.Budget < 0 {
		return fmt.Errorf("request: budget = %d, want >= 0 (0: no limit)", r.Budget)
	}
	if r.Budget > 0 && r.Budget < int64(r.MaxTokens) {
		return fmt.Errorf("request: budget = %d is smaller than one max-length response (max_tokens = %d)", r.Budget, r.MaxTokens)
	}
	ids := map[uint64]int{}
	for i, p := range r.Prompts {
		if len(p.Tokens) == 0 {
			return fmt.Errorf("request: prompt %d is empty", i)
		}
		if j, ok := ids[p.ID]; ok {
			return fmt.Errorf("request: prompts %d and %d have the same id %d", j, i, p.ID)
		}
		ids[p.ID] = i
	}
	return nil
}

// ParamError is a strategy parameter that is unknown, unparsable or out of
// range: the strategy, the parameter's key and value, and a message that
// names them ("t = 0, want >= 1"). It renders as "entropy_tree: t = 0,
// want >= 1".
type ParamError struct {
	Strategy string
	Key      string
	Value    string
	Msg      string
}

// Error implements error.
func (e *ParamError) Error() string { return e.Strategy + ": " + e.Msg }

// rangeError is the ParamError of an integer parameter out of range.
func rangeError(strategy, key string, v int, want string) *ParamError {
	return &ParamError{Strategy: strategy, Key: key, Value: strconv.Itoa(v), Msg: fmt.Sprintf("%s = %d, %s", key, v, want)}
}
