package search

import "strings"

// ForkScore names a way to rank the positions an entropy tree may fork
// at: one of ForkScores (the built-in ones below, or one registered with
// RegisterForkScore).
type ForkScore string

// Fork scores.
const (
	// ScoreEntropy is the entropy of the sampling distribution at the
	// position (EPTree's wording).
	ScoreEntropy ForkScore = "entropy"
	// ScoreSurprisal is −log p of the sampled token (what TreeRL's code does).
	ScoreSurprisal ForkScore = "surprisal"
	// ScoreRandom is a uniform number from a counter-based stream of its own.
	ScoreRandom ForkScore = "random"
)

// ScoreFunc scores the token at index i of node n's Tokens as a fork
// position: the higher, the sooner it is forked; −∞ rules the position
// out. It must be a pure
// function of the node's tokens, log-probabilities and entropies and of
// s, so that trees do not depend on the batch.
type ScoreFunc func(n *Node, i int, s ForkStream) float64

// ForkStream is the random stream of a group's fork scores, fixed by the
// request's seed and step and the prompt's id, and the step ends of the
// request (Request.StepEnds) for step-level scores.
type ForkStream struct {
	Seed, Step, PromptID uint64
	StepEnds             []int
}

// Uniform returns a number in [0, 1) drawn for position i of node n: the
// same for the same stream, node and position.
func (s ForkStream) Uniform(n *Node, i int) float64 {
	return uniform(s.Seed, streamID(s.Step, s.PromptID, forkScoreTag), n.ID, i)
}

func entropyScore(n *Node, i int, _ ForkStream) float64   { return float64(n.Entropies[i]) }
func surprisalScore(n *Node, i int, _ ForkStream) float64 { return -float64(n.LogProbs[i]) }
func randomScore(n *Node, i int, s ForkStream) float64    { return s.Uniform(n, i) }

// validForkScore reports whether score is registered, and otherwise the
// message naming the known ones ("want entropy, surprisal or random").
func validForkScore(score ForkScore) (bool, string) {
	if _, ok := forkScores.lookup(string(score)); ok {
		return true, ""
	}
	names := forkScores.names()
	want := names[len(names)-1]
	if len(names) > 1 {
		want = strings.Join(names[:len(names)-1], ", ") + " or " + want
	}
	return false, "want " + want
}
