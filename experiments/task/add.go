package task

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// AddParams are the parameters of the "add" task.
//
// A prompt is "A+B" with two Digits-digit numbers (no leading zeros; with
// Digits 1, any of 0..9), e.g. "758+467". With Scratchpad the response
// first writes, from the lowest column up, each column's sum with its
// carry-in as two digits, then "=" and the sum: "15 12 12=1225" (8+7+0=15,
// 5+6+1=12, 7+4+1=12). Without it the response is the sum alone: "1225".
type AddParams struct {
	// Digits of each operand, in 1..18. Default 4.
	Digits int `yaml:"digits" json:"digits"`
	// Scratchpad writes the column sums before the answer. Default true.
	Scratchpad bool `yaml:"scratchpad" json:"scratchpad"`
}

// DefaultAddParams returns the defaults: 4 digits, with the scratchpad.
func DefaultAddParams() AddParams { return AddParams{Digits: 4, Scratchpad: true} }

// Validate reports parameters out of range, naming the field.
func (p AddParams) Validate() error {
	if p.Digits < 1 || p.Digits > 18 {
		return fmt.Errorf("add: digits = %d, want 1..18", p.Digits)
	}
	return nil
}

// Add is the "add" task. Only the final answer is graded; the scratchpad is
// free text the policy may use as it likes.
type Add struct{ p AddParams }

// NewAdd builds the "add" task.
func NewAdd(p AddParams) (*Add, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &Add{p: p}, nil
}

// addProblem is a parsed "add" prompt.
type addProblem struct {
	a, b uint64
	sum  string // decimal a+b
}

// Name returns "add".
func (t *Add) Name() string { return "add" }

// Params returns the task's parameters.
func (t *Add) Params() AddParams { return t.p }

// MaxPromptLen is 2·Digits+1.
func (t *Add) MaxPromptLen() int { return 2*t.p.Digits + 1 }

// MaxResponseLen is 4·Digits+1 with the scratchpad (3 characters a column,
// "=", Digits+1 answer digits), Digits+1 without.
func (t *Add) MaxResponseLen() int {
	if t.p.Scratchpad {
		return 4*t.p.Digits + 1
	}
	return t.p.Digits + 1
}

// Prompt returns prompt i of a split.
func (t *Add) Prompt(split Split, seed uint64, i int) (Prompt, error) {
	lo, hi := uint64(0), pow10(t.p.Digits)
	if t.p.Digits > 1 {
		lo = pow10(t.p.Digits - 1)
	}
	return drawPrompt(t.Name(), split, seed, i, func(rng *rand.Rand) (Prompt, error) {
		a := lo + rng.Uint64N(hi-lo)
		b := lo + rng.Uint64N(hi-lo)
		return t.prompt(a, b), nil
	})
}

func (t *Add) prompt(a, b uint64) Prompt {
	q := addProblem{a: a, b: b, sum: strconv.FormatUint(a+b, 10)}
	text := strconv.FormatUint(a, 10) + "+" + strconv.FormatUint(b, 10)
	return Prompt{Text: text, Demo: t.response(a, b, false, q.sum), problem: &q, parsedText: text}
}

// response writes the response for a+b with the given answer; noCarry
// writes the scratchpad of someone who forgets carries.
func (t *Add) response(a, b uint64, noCarry bool, answer string) string {
	if !t.p.Scratchpad {
		return answer
	}
	var sb strings.Builder
	cols := max(len(strconv.FormatUint(a, 10)), len(strconv.FormatUint(b, 10)))
	carry := uint64(0)
	for j := range cols {
		s := a%10 + b%10 + carry
		a, b = a/10, b/10
		if j > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteByte(byte('0' + s/10))
		sb.WriteByte(byte('0' + s%10))
		if !noCarry {
			carry = s / 10
		}
	}
	sb.WriteByte('=')
	sb.WriteString(answer)
	return sb.String()
}

// ParsePrompt reads "A+B" with operands of 1..Digits digits.
func (t *Add) ParsePrompt(text string) (Prompt, error) {
	if err := checkPromptText(text, t.MaxPromptLen()); err != nil {
		return Prompt{}, fmt.Errorf("add prompt %q: %w", text, err)
	}
	as, bs, ok := strings.Cut(text, "+")
	if !ok {
		return Prompt{}, fmt.Errorf("add prompt %q: want A+B", text)
	}
	a, err := t.parseOperand(as)
	if err != nil {
		return Prompt{}, fmt.Errorf("add prompt %q: first operand: %w", text, err)
	}
	b, err := t.parseOperand(bs)
	if err != nil {
		return Prompt{}, fmt.Errorf("add prompt %q: second operand: %w", text, err)
	}
	return t.prompt(a, b), nil
}

func (t *Add) parseOperand(s string) (uint64, error) {
	switch {
	case s == "":
		return 0, errors.New("missing")
	case !allDigits(s):
		return 0, fmt.Errorf("%q is not a number", s)
	case len(s) > t.p.Digits:
		return 0, fmt.Errorf("%q has more than %d digits", s, t.p.Digits)
	case len(s) > 1 && s[0] == '0':
		return 0, fmt.Errorf("%q has a leading zero", s)
	}
	return strconv.ParseUint(s, 10, 64)
}

// answerPart returns the part of response that holds the answer: after the
// first "=", or, without the scratchpad and without "=", all of it.
func (t *Add) answerPart(response string) (string, int, bool) {
	if i := strings.IndexByte(response, '='); i >= 0 {
		return response[i+1:], i + 1, true
	}
	if !t.p.Scratchpad {
		return response, 0, true
	}
	return "", len(response), false
}

// AnswerStart is the position after the first "=" (0 without the
// scratchpad when there is no "=": the whole response is the answer).
func (t *Add) AnswerStart(_ Prompt, response string) int {
	_, at, _ := t.answerPart(response)
	return at
}

// Verify grades the answer after "=" (or, without the scratchpad, the whole
// response) against the sum; leading zeros are allowed. The scratchpad is
// not graded.
func (t *Add) Verify(p Prompt, response string) Verdict {
	q, ok := problemOf(p, problemFrom[*addProblem](t.ParsePrompt))
	if !ok {
		return Verdict{Reason: BadPrompt}
	}
	if v, ok := screen(response, t.MaxResponseLen()); !ok {
		return v
	}
	ans, _, ok := t.answerPart(response)
	if !ok || ans == "" || !allDigits(ans) {
		return Verdict{Reason: ParseError}
	}
	ans = strings.TrimLeft(ans, "0")
	if ans == "" {
		ans = "0"
	}
	if ans == q.sum {
		return Verdict{Reward: 1, Reason: Correct, Answer: ans}
	}
	return Verdict{Reason: WrongAnswer, Answer: ans}
}

// FlawedDemo makes one of the mistakes of a beginner: forgetting the
// carries, or slipping one digit of the answer.
func (t *Add) FlawedDemo(p Prompt, rng *rand.Rand) string {
	q, ok := problemOf(p, problemFrom[*addProblem](t.ParsePrompt))
	if !ok {
		return "?"
	}
	if rng.IntN(2) == 0 {
		// Forget every carry: digit-wise sums mod 10.
		var wrong uint64
		for a, b, m := q.a, q.b, uint64(1); a > 0 || b > 0; a, b, m = a/10, b/10, m*10 {
			wrong += (a%10 + b%10) % 10 * m
		}
		w := strconv.FormatUint(wrong, 10)
		if w != q.sum {
			return t.response(q.a, q.b, true, w)
		}
	}
	// Slip one digit of the answer by ±1, never writing a leading zero.
	d := []byte(q.sum)
	for {
		k := rng.IntN(len(d))
		up := rng.IntN(2) == 0
		switch {
		case up && d[k] < '9':
			d[k]++
		case !up && d[k] > '0' && !(k == 0 && d[k] == '1' && len(d) > 1):
			d[k]--
		default:
			continue
		}
		return t.response(q.a, q.b, false, string(d))
	}
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func pow10(n int) uint64 {
	p := uint64(1)
	for range n {
		p *= 10
	}
	return p
}
