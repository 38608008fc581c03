package task

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// ChainParams are the parameters of the "chain" task.
//
// A prompt is a chain of additions and subtractions of one-digit numbers
// to a two-digit start, "v+d-d+d..." (MinOps..MaxOps operations, drawn per
// prompt), whose running value stays in 10..99. The response works it out
// one operation at a time, each step the chain so far rewritten with its
// first operation done: the value, the operation, "=", the new value and
// the operations still to do, the steps separated by spaces; the result
// is the value after the last step's "=":
//
//	47+8-5+9 → "47+8=55-5+9 55-5=50+9 50+9=59"
//
// A response of n operations is n² + 7n - 1 characters long (77 for 6,
// 119 for 8): each step's new value (two characters, computed from the
// four before it) is a decisive choice inside a long low-entropy stretch
// (the value and the operations, copied from the step before). No step
// needs to look anything up in the prompt but the first.
type ChainParams struct {
	// MinOps is the fewest operations in a chain, in 2..MaxOps. Default 6.
	MinOps int `yaml:"min_ops" json:"min_ops"`
	// MaxOps is the most operations in a chain, in MinOps..12. Default 8.
	MaxOps int `yaml:"max_ops" json:"max_ops"`
	// Detours is the most restatements (a step repeated without doing an
	// operation, pure waste) a response may hold and a drawn
	// demonstration holds, in 0..8 (see Chain.NeededLen); 0, the default,
	// is the plain task. (Left
	// out of the encodings when 0, so configs without it keep their run
	// ids and cache keys.)
	Detours int `yaml:"detours,omitempty" json:"detours,omitempty"`
}

// DefaultChainParams returns the defaults: chains of 6 to 8 operations
// (responses of 77 to 119 characters).
func DefaultChainParams() ChainParams { return ChainParams{MinOps: 6, MaxOps: 8} }

// chainMaxOps bounds MaxOps: a 12-operation response is 227 characters.
const chainMaxOps = 12

// Validate reports parameters out of range, naming the field.
func (p ChainParams) Validate() error {
	switch {
	case p.MinOps < 2:
		return fmt.Errorf("chain: min_ops = %d, want ≥ 2", p.MinOps)
	case p.MaxOps < p.MinOps || p.MaxOps > chainMaxOps:
		return fmt.Errorf("chain: max_ops = %d, want min_ops (%d)..%d", p.MaxOps, p.MinOps, chainMaxOps)
	case p.Detours < 0 || p.Detours > chainMaxDetours:
		return fmt.Errorf("chain: detours = %d, want 0..%d", p.Detours, chainMaxDetours)
	}
	return nil
}

// Chain is the "chain" task. The verifier checks the form of the steps
// (one per operation, each "v±d=w" followed by one operation fewer than
// the step before) and grades the result after the last "=": the values
// and the copied operations are not graded, so a response cannot skip the
// steps but is free in how it gets the result.
type Chain struct{ p ChainParams }

// NewChain builds the "chain" task.
func NewChain(p ChainParams) (*Chain, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &Chain{p: p}, nil
}

// chainOp is one operation: +d or -d.
type chainOp struct {
	minus bool
	d     int
}

// apply is v after the operation.
func (o chainOp) apply(v int) int {
	if o.minus {
		return v - o.d
	}
	return v + o.d
}

// chainProblem is a parsed "chain" prompt.
type chainProblem struct {
	start  int
	ops    []chainOp
	result string
}

// Name returns "chain".
func (t *Chain) Name() string { return "chain" }

// Params returns the task's parameters.
func (t *Chain) Params() ChainParams { return t.p }

// MaxPromptLen is 2 + 2·MaxOps.
func (t *Chain) MaxPromptLen() int { return 2 + 2*t.p.MaxOps }

// MaxResponseLen is the length of a correct response of MaxOps operations,
// n² + 7n - 1, plus two characters a step for values of three digits (a
// flawed demonstration's, or a policy's, values may leave 10..99).
func (t *Chain) MaxResponseLen() int {
	n := t.p.MaxOps
	return n*n + 9*n - 1 + t.p.Detours*chainRestatementLen(n)
}

// Prompt returns prompt i of a split.
func (t *Chain) Prompt(split Split, seed uint64, i int) (Prompt, error) {
	return drawPrompt(t.Name(), split, seed, i, func(rng *rand.Rand) (Prompt, error) {
		n := t.p.MinOps + rng.IntN(t.p.MaxOps-t.p.MinOps+1)
		q := &chainProblem{start: 10 + rng.IntN(90)}
		v := q.start
		for range n {
			o := chainOp{minus: rng.IntN(2) == 0, d: 1 + rng.IntN(9)}
			if o.apply(v) < 10 || o.apply(v) > 99 {
				o.minus = !o.minus // the other way stays in 10..99
			}
			v = o.apply(v)
			q.ops = append(q.ops, o)
		}
		return t.prompt(q), nil
	})
}

// prompt completes q with its result and builds its Prompt.
func (t *Chain) prompt(q *chainProblem) Prompt {
	demo := chainResponse(q.start, q.ops, nil)
	q.result = demo[strings.LastIndexByte(demo, '=')+1:]
	text := chainText(q.start, q.ops)
	return Prompt{Text: text, Demo: demo, problem: q, parsedText: text}
}

// chainText writes a value and operations, "v+d-d...".
func chainText(v int, ops []chainOp) string {
	var sb strings.Builder
	sb.WriteString(strconv.Itoa(v))
	writeChainOps(&sb, ops)
	return sb.String()
}

func writeChainOps(sb *strings.Builder, ops []chainOp) {
	for _, o := range ops {
		if o.minus {
			sb.WriteByte('-')
		} else {
			sb.WriteByte('+')
		}
		sb.WriteByte(byte('0' + o.d))
	}
}

// chainSlip is a mistake made at one step; the steps after it are worked
// out correctly from what was written.
type chainSlip struct {
	step  int  // the step (0-based) whose line carries the mistake
	value int  // added to the step's value (a miscalculation), or 0
	copy  bool // an operation still to do miscopied at this step
	at    int  // which of the remaining operations is miscopied
}

// chainResponse writes the steps of start and ops; slip, if not nil, is a
// mistake made on the way (and carried through). A value that would go
// below 0 stays at 0.
func chainResponse(start int, ops []chainOp, slip *chainSlip) string {
	ops = append([]chainOp(nil), ops...)
	var sb strings.Builder
	v := start
	for k := range ops {
		if k > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(strconv.Itoa(v))
		writeChainOps(&sb, ops[k:k+1])
		v = ops[k].apply(v)
		if slip != nil && slip.step == k {
			v += slip.value
			if slip.copy && k+1+slip.at < len(ops) {
				o := &ops[k+1+slip.at]
				if o.d == 1 || o.d == 9 {
					o.minus = !o.minus // a sign miscopied
				} else if slip.at%2 == 0 {
					o.d++
				} else {
					o.d--
				}
			}
		}
		v = max(v, 0)
		sb.WriteByte('=')
		sb.WriteString(strconv.Itoa(v))
		writeChainOps(&sb, ops[k+1:])
	}
	return sb.String()
}

// ParsePrompt reads "v+d-d...": a start of two digits (10..99), then
// MinOps..MaxOps operations "+d" or "-d" of one digit 1..9 each, the
// running value staying in 10..99.
func (t *Chain) ParsePrompt(text string) (Prompt, error) {
	if err := checkPromptText(text, t.MaxPromptLen()); err != nil {
		return Prompt{}, fmt.Errorf("chain prompt %q: %w", text, err)
	}
	q, err := t.parseChain(text)
	if err != nil {
		return Prompt{}, fmt.Errorf("chain prompt %q: %w", text, err)
	}
	return t.prompt(q), nil
}

// parseChain reads the start and the operations of a prompt text.
func (t *Chain) parseChain(text string) (*chainProblem, error) {
	if len(text) < 2 || !allDigits(text[:2]) || text[0] == '0' {
		return nil, errors.New("want a start of two digits, 10..99")
	}
	rest := text[2:]
	if len(rest)%2 != 0 {
		return nil, fmt.Errorf("%q after the start is not operations of the form +d or -d", rest)
	}
	q := &chainProblem{start: int(text[0]-'0')*10 + int(text[1]-'0')}
	v := q.start
	for k := 0; k < len(rest); k += 2 {
		op := rest[k : k+2]
		if (op[0] != '+' && op[0] != '-') || op[1] < '1' || op[1] > '9' {
			return nil, fmt.Errorf("operation %d is %q, want +d or -d with d in 1..9", k/2+1, op)
		}
		q.ops = append(q.ops, chainOp{minus: op[0] == '-', d: int(op[1] - '0')})
		if v = q.ops[len(q.ops)-1].apply(v); v < 10 || v > 99 {
			return nil, fmt.Errorf("the running value after operation %d is %d, outside 10..99", len(q.ops), v)
		}
	}
	if n := len(q.ops); n < t.p.MinOps || n > t.p.MaxOps {
		return nil, fmt.Errorf("%d operations, want %d..%d", n, t.p.MinOps, t.p.MaxOps)
	}
	return q, nil
}

// AnswerStart is the position after the n-th "=" of a chain of n
// operations, the last step's (len(response) when there is none, or the
// prompt does not parse).
func (t *Chain) AnswerStart(p Prompt, response string) int {
	q, ok := problemOf(p, problemFrom[*chainProblem](t.ParsePrompt))
	if !ok {
		return len(response)
	}
	seen := 0
	for i := 0; i < len(response); i++ {
		if response[i] == '=' {
			if seen++; seen == len(q.ops) {
				return i + 1
			}
		}
	}
	return len(response)
}

// Verify checks the form of the steps (see Chain) and grades the result
// after the last step's "=" against the chain's value; leading zeros are
// allowed.
func (t *Chain) Verify(p Prompt, response string) Verdict {
	q, ok := problemOf(p, problemFrom[*chainProblem](t.ParsePrompt))
	if !ok {
		return Verdict{Reason: BadPrompt}
	}
	if v, ok := screen(response, t.MaxResponseLen()); !ok {
		return v
	}
	steps := response
	if t.p.Detours > 0 {
		if steps, ok = dropRestatements(response, t.p.Detours); !ok {
			return Verdict{Reason: ParseError}
		}
	}
	ans, ok := chainSteps(steps, len(q.ops))
	if !ok {
		return Verdict{Reason: ParseError}
	}
	ans = strings.TrimLeft(ans, "0")
	if ans == "" {
		ans = "0"
	}
	if ans == q.result {
		return Verdict{Reward: 1, Reason: Correct, Answer: ans}
	}
	return Verdict{Reason: WrongAnswer, Answer: ans}
}

// chainValue reports whether s is a value of 1 to 3 digits.
func chainValue(s string) bool { return s != "" && len(s) <= 3 && allDigits(s) }

// chainSteps reads the n steps of a chain of n operations, separated by
// single spaces: step k (from 1) a value, an operation "+d" or "-d" (d a
// digit), "=", a value and n-k operations, values of 1 to 3 digits. It
// returns the last step's value; ok is false when the form is wrong.
func chainSteps(response string, n int) (result string, ok bool) {
	steps := strings.Split(response, " ")
	if len(steps) != n {
		return "", false
	}
	for k, step := range steps {
		left, right, ok := strings.Cut(step, "=")
		if !ok || len(left) < 3 || !chainValue(left[:len(left)-2]) || !chainOps(left[len(left)-2:]) {
			return "", false
		}
		ops := 2 * (n - 1 - k) // the characters of the operations left
		if len(right) <= ops || !chainValue(right[:len(right)-ops]) || !chainOps(right[len(right)-ops:]) {
			return "", false
		}
		result = right
	}
	return result, true
}

// chainOps reports whether s is operations "+d" or "-d", d a digit.
func chainOps(s string) bool {
	if len(s)%2 != 0 {
		return false
	}
	for j := 0; j < len(s); j += 2 {
		if (s[j] != '+' && s[j] != '-') || s[j+1] < '0' || s[j+1] > '9' {
			return false
		}
	}
	return true
}

// FlawedDemo makes one slip at a step drawn uniformly and carries it
// through to a consistent but wrong result: the step's value off by one or
// by ten (a slipped carry or borrow), or an operation still to do
// miscopied (its digit off by one, or its sign flipped) in the step's
// rewritten chain. Only a slip at the last step lies in the answer.
func (t *Chain) FlawedDemo(p Prompt, rng *rand.Rand) string {
	q, ok := problemOf(p, problemFrom[*chainProblem](t.ParsePrompt))
	if !ok {
		return "?"
	}
	n := len(q.ops)
	for range 8 {
		slip := &chainSlip{step: rng.IntN(n)}
		switch k := rng.IntN(3); {
		case k == 0 && slip.step < n-1:
			slip.copy, slip.at = true, rng.IntN(n-1-slip.step)
		case k == 1:
			slip.value = []int{-10, 10}[rng.IntN(2)]
		default:
			slip.value = []int{-1, 1}[rng.IntN(2)]
		}
		if r := chainResponse(q.start, q.ops, slip); t.Verify(p, r).Reward < 1 {
			return r
		}
	}
	// Eight slips that all came out right (only a value held at 0 can undo
	// one): the right steps with the result off by one.
	demo := chainResponse(q.start, q.ops, nil)
	at := strings.LastIndexByte(demo, '=') + 1
	v, _ := strconv.Atoi(demo[at:])
	return demo[:at] + strconv.Itoa(v+1)
}
