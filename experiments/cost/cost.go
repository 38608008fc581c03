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
// (Step.Work lists the terms). A phase's time is then a sum of terms,
// each the work of one kind times its fitted cost (Term):
//
//	t = Σ_k Work.Terms[k]·Coef[k]
//
// — the FLOPs of the products with the weight matrices, the FLOPs of
// attention over the context, the weights read once per pass (what
// makes a product of few rows slower per FLOP than one of many), the
// activations each row writes and reads, the optimizer's reads and
// writes, and a fixed cost per call — with the constants fitted per
// phase to measurements (Fit), or max(FLOPs/F, Bytes/B) on a roofline
// machine of peak F FLOP/s and B bytes/s (Roofline).
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

// Term is one kind of work a phase's time is fitted on.
type Term int

// The terms of a phase's time, each counted by Step.Work.
const (
	MatmulFLOPs     Term = iota // FLOPs of the products with the weight matrices (2·matrix weights per row)
	AttentionFLOPs              // FLOPs of attention over the context (4·layers·dim per row and context position)
	WeightBytes                 // bytes of matrix weights read, once per pass
	ActivationBytes             // bytes of activations a row writes and reads (actBytes per row)
	OptimizerBytes              // bytes an optimizer step reads and writes (7 float32 per parameter)
	Calls                       // batched passes or optimizer steps, a fixed overhead each
	NumTerms
)

// String returns the term's name as tables print it.
func (t Term) String() string {
	switch t {
	case MatmulFLOPs:
		return "matmul FLOPs"
	case AttentionFLOPs:
		return "attention FLOPs"
	case WeightBytes:
		return "weight bytes"
	case ActivationBytes:
		return "activation bytes"
	case OptimizerBytes:
		return "optimizer bytes"
	case Calls:
		return "calls"
	}
	return fmt.Sprintf("term(%d)", int(t))
}

// Work is what a phase does: FLOPs, bytes moved, and calls (batched
// passes or optimizer steps, which carry a fixed overhead each), and the
// same work split into the terms the fit weighs (FLOPs is the sum of the
// two FLOP terms; Bytes counts the weights, activations and optimizer
// terms and, besides them, the reads of keys and values and the writes
// of the cache, which the attention term stands for in time).
type Work struct {
	FLOPs, Bytes, Calls float64
	Terms               [NumTerms]float64
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

// span is the work of some positions of one sequence, besides reading
// the weights: their FLOPs in products with the weights and in
// attention, the bytes they move, and of those the activations'.
type span struct {
	matmul, attention, bytes, act float64
}

// rows sums, over the positions at contexts lo..hi, their forward FLOPs
// (policy.Config.ForwardFLOPs, split into the products with the weights
// and attention) and the bytes they move besides the weights: the
// activations, the attention's reads of the context (as attend says),
// and their own keys and values written (KV cache) when write is set.
func rows(c policy.Config, lo, hi int, attend int, write bool) span {
	kv, act, sc := kvBytes(c), actBytes(c), scoresBytes(c)
	var s span
	for ctx := lo; ctx <= hi; ctx++ {
		f := float64(c.ForwardFLOPs(ctx))
		mm := 2 * float64(c.MatmulParams())
		s.matmul += mm
		s.attention += f - mm
		s.bytes += act
		s.act += act
		if attend == fromCache {
			s.bytes += kv * float64(ctx)
		} else {
			s.bytes += kv + sc*float64(ctx)
		}
		if write {
			s.bytes += kv
		}
	}
	return s
}

// work returns n copies of the span run in passes passes (each reading
// the weights w once) and calls calls.
func (s span) work(n, passes, w, calls float64) Work {
	out := Work{
		FLOPs: n * (s.matmul + s.attention),
		Bytes: passes*w + n*s.bytes,
		Calls: calls,
	}
	out.Terms[MatmulFLOPs] = n * s.matmul
	out.Terms[AttentionFLOPs] = n * s.attention
	out.Terms[WeightBytes] = passes * w
	out.Terms[ActivationBytes] = n * s.act
	out.Terms[Calls] = calls
	return out
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

	out[Prefill] = rows(c, 1, s.PromptLen, fromScores, true).work(float64(s.Prompts), 1, w, 1)

	passes := float64(s.Response - 1)
	out[Decode] = rows(c, s.PromptLen+1, s.PromptLen+s.Response-1, fromCache, true).work(float64(s.Batch), passes, w, float64(s.Response))

	seq := rows(c, 1, s.PromptLen+s.Response, fromScores, false)
	sp := float64(s.Train.ScoringPasses())
	chunks := float64((s.Batch + ScoreChunk - 1) / ScoreChunk)
	out[Score] = seq.work(sp*float64(s.Batch), sp*chunks, w, sp*chunks)

	gp := float64(s.Train.GradientPasses())
	steps := float64(s.Train.Epochs * s.Train.Minibatches)
	adam := adamArrays * f32 * float64(c.NumParams())
	out[Update] = seq.work(gp*float64(s.Batch), gp*float64(s.Train.Minibatches), w, steps)
	out[Update].Bytes += steps * adam
	out[Update].Terms[OptimizerBytes] = steps * adam
	return out
}

// Total sums the phases' work.
func Total(w [NumPhases]Work) Work {
	var t Work
	for _, p := range w {
		t.FLOPs += p.FLOPs
		t.Bytes += p.Bytes
		t.Calls += p.Calls
		for k, x := range p.Terms {
			t.Terms[k] += x
		}
	}
	return t
}
