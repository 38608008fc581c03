// Package cost is a cost model of an RL step: the FLOPs and bytes each
// phase moves (prefill of the prompts, decoding of the responses, the
// scoring pass that sets π_old's log-probs, and the forward and backward
// passes of the update), as functions of the model's shape, the batch and
// the prompt and response lengths; a fit of a few per-phase constants to
// CPU time measured on this machine; and what the fitted model, or a
// roofline at a given hardware balance, says about generation's share of
// a step.
//
// FLOPs are counted as the rest of the project counts them
// (policy.Config.ForwardFLOPs: matrix products and attention, 2 FLOPs a
// multiply-add; a pass with gradients is three forward passes, as
// rl.Config.GradientPasses says). Bytes are a minimal-traffic estimate in
// float32: every pass reads the matrix weights once; a decoding step
// reads the keys and values of its context from the cache, a pass over
// whole sequences reads them once and writes and reads its attention
// scores; a row's activations are written and read once per layer
// (Step.Work lists the terms). A phase's time is then
//
//	t = FLOPs·SecPerFLOP + Bytes·SecPerByte + Calls·SecPerCall
//
// with three constants per phase fitted to measurements (Fit), or
// max(FLOPs/F, Bytes/B) on a roofline machine of peak F FLOP/s and B
// bytes/s (Roofline).
package cost

import (
	"fmt"

	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/policy"
)

// Phase is one part of an RL step.
type Phase int

// The phases of a step, in the order a step runs them.
const (
	Prefill Phase = iota // the prompts through the model, one batched pass
	Decode               // one batched pass per generated token (KV cache)
	Score                // π_old's (and π_ref's) log-probs: forward passes without gradients
	Update               // the optimizer steps: forward and backward passes, Adam
	NumPhases
)

// Phases lists every phase in order.
var Phases = []Phase{Prefill, Decode, Score, Update}

// String returns the phase's name as tables print it.
func (p Phase) String() string {
	switch p {
	case Prefill:
		return "prefill"
	case Decode:
		return "decode"
	case Score:
		return "score"
	case Update:
		return "update"
	}
	return fmt.Sprintf("phase(%d)", int(p))
}

// Generation reports whether the phase is part of generating the
// rollouts (prefill and decode), as against training on them.
func (p Phase) Generation() bool { return p == Prefill || p == Decode }

// ScoreChunk is the number of sequences one scoring pass carries (the RL
// loop's π_old pass runs its sequences in chunks of 64).
const ScoreChunk = 64

// Step is the shape of one RL step's work: Prompts prompts of PromptLen
// tokens prefilled, Batch responses of Response tokens decoded from them
// (each prompt's group forks from its prefill), then the Batch sequences
// of PromptLen+Response tokens scored and trained on.
type Step struct {
	Model     policy.Config
	Prompts   int // prompts prefilled, one per group
	Batch     int // responses sampled, scored and trained on
	PromptLen int // tokens of a prompt, BOS and SEP included
	Response  int // tokens of a response
	// Train gives the passes of the update: its scoring passes
	// (rl.Config.ScoringPasses), epochs and minibatches.
	Train rl.Config
}

// Validate reports a field out of range.
func (s Step) Validate() error {
	if err := s.Model.Validate(); err != nil {
		return err
	}
	switch {
	case s.Prompts < 1 || s.Batch < s.Prompts:
		return fmt.Errorf("cost: %d prompts and %d responses: want 1 ≤ prompts ≤ responses", s.Prompts, s.Batch)
	case s.PromptLen < 1 || s.Response < 1:
		return fmt.Errorf("cost: prompt length %d and response length %d: want both ≥ 1", s.PromptLen, s.Response)
	case s.Train.Epochs < 1 || s.Train.Minibatches < 1:
		return fmt.Errorf("cost: %d epochs of %d minibatches: want both ≥ 1", s.Train.Epochs, s.Train.Minibatches)
	}
	return nil
}

// Work is what a phase does: FLOPs, bytes moved, and calls (batched
// passes or optimizer steps, which carry a fixed overhead each).
type Work struct {
	FLOPs, Bytes, Calls float64
}

// Intensity is the phase's FLOPs per byte.
func (w Work) Intensity() float64 { return w.FLOPs / w.Bytes }

// The byte counts' units (float32 values).
const (
	f32 = 4
	// adamArrays is the arrays an Adam step reads or writes per parameter:
	// the parameter, its gradient and the two moments read, the parameter
	// and the moments written.
	adamArrays = 7
)

// weightBytes is what one pass reads of the matrix weights.
func weightBytes(c policy.Config) float64 { return f32 * float64(c.MatmulParams()) }

// kvBytes is one position's keys and values over all layers.
func kvBytes(c policy.Config) float64 { return f32 * 2 * float64(c.Layers*c.Dim) }

// actBytes is one row's activations written and read in a pass: per
// layer the residual stream, the norm's output, q, k, v, the attention's
// output and its projection (about ten rows of dim with the residual
// additions) and the FFN's gate, up and product (three of hidden); then
// the logits, written and read.
func actBytes(c policy.Config) float64 {
	return f32 * float64(c.Layers*(10*c.Dim+3*c.Hidden)+2*c.VocabSize)
}

// scoresBytes is what one row's attention scores move per position of
// its context: written and read once, per head and layer.
func scoresBytes(c policy.Config) float64 { return f32 * 2 * float64(c.Layers*c.Heads) }

// How a pass reads its attention context: a decoding step reads the
// keys and values of every position of its state's cache; a pass over
// whole sequences (prefill, scoring, training) reads each sequence's keys
// and values once, as matrices, and writes and reads the rows' attention
// scores.
const (
	fromCache = iota
	fromScores
)

// rows sums, over the positions at contexts lo..hi, their forward FLOPs
// (policy.Config.ForwardFLOPs) and the bytes they move besides the
// weights: the activations, the attention's reads of the context (as
// attend says), and their own keys and values written (KV cache) when
// write is set.
func rows(c policy.Config, lo, hi int, attend int, write bool) (flops, bytes float64) {
	kv, act, sc := kvBytes(c), actBytes(c), scoresBytes(c)
	for ctx := lo; ctx <= hi; ctx++ {
		flops += float64(c.ForwardFLOPs(ctx))
		bytes += act
		if attend == fromCache {
			bytes += kv * float64(ctx)
		} else {
			bytes += kv + sc*float64(ctx)
		}
		if write {
			bytes += kv
		}
	}
	return flops, bytes
}

// Work returns each phase's work, indexed by Phase:
//
//   - prefill: the Prompts prompts in one pass (the weights read once),
//     every position writing its keys and values;
//   - decode: Response steps of one pass each over the Batch states; the
//     last token sampled is not run through the model, so Response−1
//     passes, the token at context PromptLen+t for t = 1 … Response−1;
//   - score: rl.Config.ScoringPasses passes over the Batch sequences of
//     PromptLen+Response tokens, in chunks of ScoreChunk sequences;
//   - update: per epoch and minibatch a forward and backward pass
//     (rl.Config.GradientPasses forward passes per epoch) and an Adam
//     step over every parameter.
func (s Step) Work() [NumPhases]Work {
	c := s.Model
	w := weightBytes(c)
	var out [NumPhases]Work

	f, b := rows(c, 1, s.PromptLen, fromScores, true)
	out[Prefill] = Work{FLOPs: float64(s.Prompts) * f, Bytes: w + float64(s.Prompts)*b, Calls: 1}

	f, b = rows(c, s.PromptLen+1, s.PromptLen+s.Response-1, fromCache, true)
	passes := float64(s.Response - 1)
	out[Decode] = Work{FLOPs: float64(s.Batch) * f, Bytes: passes*w + float64(s.Batch)*b, Calls: float64(s.Response)}

	f, b = rows(c, 1, s.PromptLen+s.Response, fromScores, false)
	seqF, seqB := float64(s.Batch)*f, float64(s.Batch)*b
	sp := float64(s.Train.ScoringPasses())
	chunks := float64((s.Batch + ScoreChunk - 1) / ScoreChunk)
	out[Score] = Work{FLOPs: sp * seqF, Bytes: sp * (chunks*w + seqB), Calls: sp * chunks}

	gp := float64(s.Train.GradientPasses())
	steps := float64(s.Train.Epochs * s.Train.Minibatches)
	adam := adamArrays * f32 * float64(c.NumParams())
	out[Update] = Work{
		FLOPs: gp * seqF,
		Bytes: gp*(float64(s.Train.Minibatches)*w+seqB) + steps*adam,
		Calls: steps,
	}
	return out
}

// Total sums the phases' work.
func Total(w [NumPhases]Work) Work {
	var t Work
	for _, p := range w {
		t.FLOPs += p.FLOPs
		t.Bytes += p.Bytes
		t.Calls += p.Calls
	}
	return t
}
