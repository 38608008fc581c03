package search

import "context"

// StepTree is Tree-GRPO's tree search (Ji et al., "Tree Search for LLM
// Agent Reinforcement Learning", ICLR 2026), registered as tree_grpo:
// nodes are whole steps (Request.StepEnds). It samples M responses per
// prompt, the roots of M trees, then L rounds: in every tree it expands N
// steps chosen uniformly at random among the steps not yet expanded
// (before the answer, never a response's first or last token), sampling
// one new continuation from the start of each to the end. Leaves per
// prompt: M·(1 + L·N).
//
// Expected budget: a branch from a uniformly chosen step costs half a
// response on average, so a tree of responses of B tokens costs
// E[B_tree] = B + L·N·B/2 and a prompt M·B + M·L·N·B/2; the worst case
// (MaxGroupTokens) is every branch forked after its parent's first token.
// Unlike the paper, a step is expanded at most once (a second expansion of
// the same step would be another sibling at the same fork).
type StepTree struct {
	M, N, L int
}

// DefaultStepTree returns the defaults M, N, L = 4, 2, 1 (12 leaves a
// prompt).
func DefaultStepTree() StepTree { return StepTree{M: 4, N: 2, L: 1} }

// newStepTree is tree_grpo's constructor: keys m, n, l.
func newStepTree(p *Params) (Strategy, error) {
	d := DefaultStepTree()
	s := StepTree{M: p.Int("m", d.M), N: p.Int("n", d.N), L: p.Int("l", d.L)}
	return s, s.Validate()
}

// Name implements Strategy.
func (StepTree) Name() string { return "tree_grpo" }

// tree is the strategy as the entropy tree it runs: T = 1, random scores
// at the first token of a step.
func (s StepTree) tree() EntropyTree {
	return EntropyTree{M: s.M, N: s.N, L: s.L, T: 1, Score: ScoreStepRandom, As: s.Name()}
}

// Validate checks the parameters; an error is a *ParamError.
func (s StepTree) Validate() error { return s.tree().Validate() }

// Leaves implements Strategy: M·(1 + L·N).
func (s StepTree) Leaves() int { return s.tree().Leaves() }

// MaxGroupTokens implements Strategy: M roots of maxTokens and M·L·N
// branches of at most maxTokens−1.
func (s StepTree) MaxGroupTokens(maxTokens int) int64 { return s.tree().MaxGroupTokens(maxTokens) }

// MaxForks implements ForkBudget: N.
func (s StepTree) MaxForks() int { return s.N }

// Generate implements Strategy.
func (s StepTree) Generate(ctx context.Context, req Request) ([]*Group, error) {
	return s.tree().Generate(ctx, req)
}
