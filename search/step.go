package search

import (
	"math"
	"slices"

	"github.com/rollout-rl/rollout/policy"
)

// Steps. A task says what a step of its responses is (a line, a clause,
// one operation of a chain) through the token ids that end one
// (Request.StepEnds): a step is a run of response tokens up to and
// including a step-end token, or up to the response's end. Step-level fork
// scores (step_entropy, step_random) and strategies (tree_grpo, arpo,
// pivot) fork only at the first token of a step, so a branch resamples a
// whole step. Without step ends every token is a step of its own.

// Step-level fork scores.
const (
	// ScoreStepEntropy is the mean entropy of the step that begins at the
	// position (DATPO's step-level entropy); positions inside a step are
	// not eligible.
	ScoreStepEntropy ForkScore = "step_entropy"
	// ScoreStepRandom is a uniform number at the first token of a step
	// (Tree-GRPO's random expansion of a step node); positions inside a
	// step are not eligible.
	ScoreStepRandom ForkScore = "step_random"
)

// StepStart reports whether the token at index i of n's tokens begins a
// step: it is the response's first token, or the token before it in the
// response ends a step. With no step ends every token begins one.
func (s ForkStream) StepStart(n *Node, i int) bool {
	if len(s.StepEnds) == 0 {
		return true
	}
	prev, ok := tokenBefore(n, i)
	return !ok || slices.Contains(s.StepEnds, prev)
}

// StepEnd returns the index in n's tokens just past the step that holds
// index i: past the first step-end token at or after i, or len(n.Tokens).
func (s ForkStream) StepEnd(n *Node, i int) int {
	if len(s.StepEnds) == 0 {
		return i + 1
	}
	for j := i; j < len(n.Tokens); j++ {
		if slices.Contains(s.StepEnds, n.Tokens[j]) {
			return j + 1
		}
	}
	return len(n.Tokens)
}

// tokenBefore returns the response token just before index i of n's
// tokens, false at the response's start.
func tokenBefore(n *Node, i int) (int, bool) {
	for m := n; m != nil; m = m.Parent {
		if i > 0 {
			return m.Tokens[i-1], true
		}
		i = m.ForkAt
	}
	return 0, false
}

// ScoreAttention is the mean attention the tokens of the step beginning
// at the position received from the later tokens of their response
// (AttnRL: branch at the steps later steps attend to most; Node.Attention);
// positions inside a step, and every position of a node without
// attention (a sampler that does not keep it), are not eligible. Being a
// sum over later tokens, it favours early steps.
const ScoreAttention ForkScore = "attention"

// attentionScore is the mean received attention of the step beginning at i.
func attentionScore(n *Node, i int, s ForkStream) float64 {
	if len(n.Attention) != len(n.Tokens) || !s.StepStart(n, i) {
		return notEligible
	}
	end := s.StepEnd(n, i)
	sum := 0.0
	for j := i; j < end; j++ {
		sum += float64(n.Attention[j])
	}
	return sum / float64(end-i)
}

// recordAttention copies the attention the tokens of p's finished node
// received, when p's state keeps it.
func (g *groupRun) recordAttention(p *path) {
	as, ok := p.state.(policy.AttentionState)
	if !ok {
		return
	}
	recv := as.AttentionReceived()
	n := p.node
	from := len(g.prompt.Tokens) + n.Start
	n.Attention = make([]float32, len(n.Tokens))
	if from < len(recv) {
		copy(n.Attention, recv[from:])
	}
}

// notEligible is the score of a position a fork score rules out.
var notEligible = math.Inf(-1)

// stepEntropyScore is the mean entropy over the step beginning at i.
func stepEntropyScore(n *Node, i int, s ForkStream) float64 {
	if !s.StepStart(n, i) {
		return notEligible
	}
	end := s.StepEnd(n, i)
	sum := 0.0
	for j := i; j < end; j++ {
		sum += float64(n.Entropies[j])
	}
	return sum / float64(end-i)
}

// stepRandomScore is uniform at the first token of a step.
func stepRandomScore(n *Node, i int, s ForkStream) float64 {
	if !s.StepStart(n, i) {
		return notEligible
	}
	return s.Uniform(n, i)
}
