package task

import (
	"math/rand/v2"
	"strings"
)

// chainMaxDetours bounds ChainParams.Detours.
const chainMaxDetours = 8

// chainRestatementLen is the longest restatement with its space in a chain
// of n operations: a value of up to three digits and n-1 operations.
func chainRestatementLen(n int) int { return 1 + 3 + 2*(n-1) }

// NeededLen is the length of p's response with every step worked out
// right and no restatement, 0 when p does not parse.
//
// The "chain" task with Detours > 0 is a test bed for length caps: its
// correct responses differ in length, and the over-long part of a
// response is waste, never needed work.
//
// A restatement repeats, as a step of its own, the chain the step before
// left (the text after its "="), without doing an operation:
//
//	47+8-5+9 → "47+8=55-5+9 55-5+9 55-5=50+9 50+9=59"
//
// The verifier accepts at most Detours restatements, each an exact copy
// of what it restates (anything else is parse_error), and grades the rest
// as the plain task does. A drawn demonstration (SampleDemo) holds a
// number of restatements drawn uniformly in 0..Detours, after steps drawn
// uniformly, so the pretrained policy writes correct responses of varying
// length. The work a response needs is the same with or without them:
// NeededLen is the length of the prompt's response with every step worked
// out right and no restatement (its Demo, n² + 7n - 1 characters for n
// operations), and NeededMaxLen the longest of these over the task's
// prompts. A cap of NeededMaxLen characters (NeededMaxLen+1 tokens with
// the end token) is one the task allows: it cuts restatements only, never
// a response that does the work without them. (A correct response can be
// shorter than NeededLen only by writing intermediate values, which the
// verifier does not grade, of one digit.)
func (t *Chain) NeededLen(p Prompt) int {
	q, ok := problemOf(p, problemFrom[*chainProblem](t.ParsePrompt))
	if !ok {
		return 0
	}
	n := len(q.ops)
	return n*n + 7*n - 1
}

// NeededMaxLen is the longest NeededLen of the task's prompts, that of a
// chain of MaxOps operations.
func (t *Chain) NeededMaxLen() int {
	n := t.p.MaxOps
	return n*n + 7*n - 1
}

// SampleDemo implements DemoSampler: with Detours > 0, p's demo with a
// number of restatements drawn uniformly in 0..Detours, each after a step
// drawn uniformly (the last step's result is never restated: it is the
// answer); p.Demo, without drawing, for the plain task.
func (t *Chain) SampleDemo(p Prompt, rng *rand.Rand) string {
	if t.p.Detours == 0 || p.Demo == "" {
		return p.Demo
	}
	steps := strings.Split(p.Demo, " ")
	if len(steps) < 2 {
		return p.Demo
	}
	after := make([]int, len(steps)-1) // restatements after each step but the last
	for range rng.IntN(t.p.Detours + 1) {
		after[rng.IntN(len(after))]++
	}
	var sb strings.Builder
	for k, step := range steps {
		if k > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(step)
		if k < len(after) {
			_, left, _ := strings.Cut(step, "=")
			for range after[k] {
				sb.WriteByte(' ')
				sb.WriteString(left)
			}
		}
	}
	return sb.String()
}

// dropRestatements removes from response the steps without "=" that
// repeat exactly what the step before left (after its "="); ok is false
// when there are more than most, or one that is not an exact copy.
func dropRestatements(response string, most int) (string, bool) {
	steps := strings.Split(response, " ")
	kept := steps[:0:0]
	left, dropped := "", 0
	for _, step := range steps {
		if strings.IndexByte(step, '=') >= 0 {
			_, left, _ = strings.Cut(step, "=")
			kept = append(kept, step)
			continue
		}
		if step != left || left == "" {
			return "", false
		}
		if dropped++; dropped > most {
			return "", false
		}
	}
	return strings.Join(kept, " "), true
}
