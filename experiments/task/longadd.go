package task

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
)

// LongAddParams are the parameters of the "long_add" task.
//
// A prompt is "A+B" with two numbers of the same number of digits, drawn
// per prompt in MinDigits..MaxDigits (no leading zeros), e.g. "758+467".
// The response works through the columns from the lowest up, each written
// as its two digits, its carry-in and its two-digit sum, "a+b+c>ss",
// separated by spaces; then "=" and the sum:
//
//	758+467 → "8+7+0>15 5+6+1>12 7+4+1>12=1225"
//
// A response of d-digit operands is 10·d or 10·d+1 characters long (61 to
// 81 for 6 to 8 digits), with Rewrite d²+13·d or one more (68 to 115 with
// the defaults, 4 to 6 digits): long low-entropy stretches (digits copied)
// around the few characters that decide the answer (each column's sum and
// carry).
type LongAddParams struct {
	// MinDigits of each operand, in 2..MaxDigits. Default 4.
	MinDigits int `yaml:"min_digits" json:"min_digits"`
	// MaxDigits of each operand, in MinDigits..30. Default 6.
	MaxDigits int `yaml:"max_digits" json:"max_digits"`
	// Rewrite begins each column's entry with the numbers still to add,
	// "A+B:", the column's digits being their last ones:
	// "758+467:8+7+0>15 75+46:5+6+1>12 7+4:7+4+1>12=1225". Responses are
	// then d²+13·d+1 characters long for d digits (69 for 4, 115 for
	// 6): copying the last line but one digit is easier to learn than
	// finding a column's digits in the prompt. Default true.
	Rewrite bool `yaml:"rewrite" json:"rewrite"`
}

// DefaultLongAddParams returns the defaults: operands of 4 to 6 digits,
// rewritten at each column (the tiny model learns it within minutes; it
// does not learn to find the columns of 6 to 8 digits in the prompt).
func DefaultLongAddParams() LongAddParams {
	return LongAddParams{MinDigits: 4, MaxDigits: 6, Rewrite: true}
}

// longAddMaxDigits bounds MaxDigits: a 30-digit response is 301 characters.
const longAddMaxDigits = 30

// Validate reports parameters out of range, naming the field.
func (p LongAddParams) Validate() error {
	switch {
	case p.MinDigits < 2:
		return fmt.Errorf("long_add: min_digits = %d, want ≥ 2", p.MinDigits)
	case p.MaxDigits < p.MinDigits || p.MaxDigits > longAddMaxDigits:
		return fmt.Errorf("long_add: max_digits = %d, want min_digits (%d)..%d", p.MaxDigits, p.MinDigits, longAddMaxDigits)
	}
	return nil
}

// LongAdd is the "long_add" task. The verifier grades the answer after "="
// and checks only the form of the scratchpad (one well-formed entry per
// column), so a response cannot skip the column-by-column work.
type LongAdd struct{ p LongAddParams }

// NewLongAdd builds the "long_add" task.
func NewLongAdd(p LongAddParams) (*LongAdd, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &LongAdd{p: p}, nil
}

// longAddProblem is a parsed "long_add" prompt: the operands' digits,
// lowest first, and the sum's decimal text.
type longAddProblem struct {
	a, b []byte // digit values, a[j] the j-th lowest
	sum  string
}

// longAddEntry is the width of one scratchpad entry, "a+b+c>ss".
const longAddEntry = 8

// Name returns "long_add".
func (t *LongAdd) Name() string { return "long_add" }

// Params returns the task's parameters.
func (t *LongAdd) Params() LongAddParams { return t.p }

// MaxPromptLen is 2·MaxDigits+1.
func (t *LongAdd) MaxPromptLen() int { return 2*t.p.MaxDigits + 1 }

// MaxResponseLen is 10·MaxDigits+1: MaxDigits entries of 8 characters,
// their separators, "=" and MaxDigits+1 answer digits; with Rewrite,
// MaxDigits²+3·MaxDigits more for the rewritten numbers.
func (t *LongAdd) MaxResponseLen() int {
	d := t.p.MaxDigits
	if t.p.Rewrite {
		return d*d + 13*d + 1
	}
	return 10*d + 1
}

// Prompt returns prompt i of a split.
func (t *LongAdd) Prompt(split Split, seed uint64, i int) (Prompt, error) {
	return drawPrompt(t.Name(), split, seed, i, func(rng *rand.Rand) (Prompt, error) {
		d := t.p.MinDigits + rng.IntN(t.p.MaxDigits-t.p.MinDigits+1)
		draw := func() []byte {
			x := make([]byte, d)
			for j := range x {
				x[j] = byte(rng.IntN(10))
			}
			x[d-1] = byte(1 + rng.IntN(9))
			return x
		}
		a := draw()
		return t.prompt(a, draw()), nil
	})
}

// prompt builds the prompt of two digit slices (lowest digit first).
func (t *LongAdd) prompt(a, b []byte) Prompt {
	demo := t.response(a, b, nil)
	_, ans, _ := strings.Cut(demo, "=")
	q := &longAddProblem{a: a, b: b, sum: ans}
	text := digitsText(a) + "+" + digitsText(b)
	return Prompt{Text: text, Demo: demo, problem: q, parsedText: text}
}

// digitsText writes digit values, lowest first, as a decimal number.
func digitsText(x []byte) string {
	out := make([]byte, len(x))
	for j, d := range x {
		out[len(x)-1-j] = '0' + d
	}
	return string(out)
}

// longAddSlip is a mistake made in one column of the scratchpad; the
// columns after it are worked out correctly from what was written.
type longAddSlip struct {
	col  int
	kind slipKind
	up   bool // the direction of a ±1 slip
	inB  bool // miscopy: the digit of B rather than of A
}

type slipKind uint8

const (
	slipCopy  slipKind = iota // a digit of the prompt copied ±1
	slipCarry                 // the carry-in forgotten (written 0)
	slipSum                   // the column's sum off by ±1
)

// response writes the scratchpad and the answer it leads to; slip, if not
// nil, is a mistake made on the way (and carried through).
func (t *LongAdd) response(a, b []byte, slip *longAddSlip) string {
	var sb strings.Builder
	carry := byte(0)
	sum := make([]byte, len(a)+1) // digits of the answer, lowest first
	for j := range a {
		x, y, c := a[j], b[j], carry
		if slip != nil && slip.col == j {
			switch slip.kind {
			case slipCopy:
				if slip.inB {
					y = nudge(y, slip.up)
				} else {
					x = nudge(x, slip.up)
				}
			case slipCarry:
				c = 0
			}
		}
		s := x + y + c
		if slip != nil && slip.col == j && slip.kind == slipSum {
			if slip.up && s < 19 || s == 0 {
				s++
			} else {
				s--
			}
		}
		if j > 0 {
			sb.WriteByte(' ')
		}
		if t.p.Rewrite {
			sb.WriteString(digitsText(a[j+1:]))
			sb.WriteByte('0' + x)
			sb.WriteByte('+')
			sb.WriteString(digitsText(b[j+1:]))
			sb.WriteByte('0' + y)
			sb.WriteByte(':')
		}
		sb.Write([]byte{'0' + x, '+', '0' + y, '+', '0' + c, '>', '0' + s/10, '0' + s%10})
		sum[j] = s % 10
		carry = s / 10
	}
	sum[len(a)] = carry
	ans := strings.TrimLeft(digitsText(sum), "0")
	if ans == "" {
		ans = "0"
	}
	sb.WriteByte('=')
	sb.WriteString(ans)
	return sb.String()
}

// nudge moves a digit one up or down, staying in 0..9.
func nudge(d byte, up bool) byte {
	if up && d < 9 || d == 0 {
		return d + 1
	}
	return d - 1
}

// ParsePrompt reads "A+B": two numbers of the same number of digits, in
// MinDigits..MaxDigits, without leading zeros.
func (t *LongAdd) ParsePrompt(text string) (Prompt, error) {
	if err := checkPromptText(text, t.MaxPromptLen()); err != nil {
		return Prompt{}, fmt.Errorf("long_add prompt %q: %w", text, err)
	}
	as, bs, ok := strings.Cut(text, "+")
	if !ok {
		return Prompt{}, fmt.Errorf("long_add prompt %q: want A+B", text)
	}
	a, err := t.parseOperand(as)
	if err != nil {
		return Prompt{}, fmt.Errorf("long_add prompt %q: first operand: %w", text, err)
	}
	b, err := t.parseOperand(bs)
	if err != nil {
		return Prompt{}, fmt.Errorf("long_add prompt %q: second operand: %w", text, err)
	}
	if len(a) != len(b) {
		return Prompt{}, fmt.Errorf("long_add prompt %q: operands of %d and %d digits, want the same number", text, len(a), len(b))
	}
	return t.prompt(a, b), nil
}

// parseOperand reads a number of MinDigits..MaxDigits digits into digit
// values, lowest first.
func (t *LongAdd) parseOperand(s string) ([]byte, error) {
	switch {
	case s == "":
		return nil, errors.New("missing")
	case !allDigits(s):
		return nil, fmt.Errorf("%q is not a number", s)
	case len(s) < t.p.MinDigits || len(s) > t.p.MaxDigits:
		return nil, fmt.Errorf("%q has %d digits, want %d..%d", s, len(s), t.p.MinDigits, t.p.MaxDigits)
	case s[0] == '0':
		return nil, fmt.Errorf("%q has a leading zero", s)
	}
	x := make([]byte, len(s))
	for j := range x {
		x[j] = s[len(s)-1-j] - '0'
	}
	return x, nil
}

// AnswerStart is the position after the first "=" (len(response) when
// there is none).
func (t *LongAdd) AnswerStart(_ Prompt, response string) int {
	if i := strings.IndexByte(response, '='); i >= 0 {
		return i + 1
	}
	return len(response)
}

// Verify checks the form of the scratchpad, one "d+d+d>dd" entry per column
// separated by spaces (the digits are not graded), and grades the answer
// after "=" against the sum; leading zeros are allowed.
func (t *LongAdd) Verify(p Prompt, response string) Verdict {
	q, ok := problemOf(p, problemFrom[*longAddProblem](t.ParsePrompt))
	if !ok {
		return Verdict{Reason: BadPrompt}
	}
	if v, ok := screen(response, t.MaxResponseLen()); !ok {
		return v
	}
	pad, ans, ok := strings.Cut(response, "=")
	if !ok || !t.scratchpadForm(pad, len(q.a)) || ans == "" || !allDigits(ans) {
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

// scratchpadForm reports whether pad is cols entries "d+d+d>dd" separated
// by single spaces, each, with Rewrite, after "A+B:" of cols-j digits
// each in entry j.
func (t *LongAdd) scratchpadForm(pad string, cols int) bool {
	entries := strings.Split(pad, " ")
	if len(entries) != cols {
		return false
	}
	for j, e := range entries {
		if t.p.Rewrite {
			w := cols - j
			if len(e) != 2*w+2+longAddEntry || !allDigits(e[:w]) || e[w] != '+' || !allDigits(e[w+1:2*w+1]) || e[2*w+1] != ':' {
				return false
			}
			e = e[2*w+2:]
		}
		if len(e) != longAddEntry {
			return false
		}
		for k, want := range "d+d+d>dd" {
			c := e[k]
			if want == 'd' && (c < '0' || c > '9') || want != 'd' && rune(c) != want {
				return false
			}
		}
	}
	return true
}

// FlawedDemo makes one slip in one column of the scratchpad, a column drawn
// uniformly, and carries it through to a consistent but wrong answer: a
// digit of the prompt miscopied by one, a forgotten carry, or a column sum
// off by one (with Rewrite, a miscopied digit shows in the rewritten
// number too). One flawed demo in ten has a right scratchpad and a slipped
// answer digit instead. Every slip but the last is made before the answer
// starts.
func (t *LongAdd) FlawedDemo(p Prompt, rng *rand.Rand) string {
	q, ok := problemOf(p, problemFrom[*longAddProblem](t.ParsePrompt))
	if !ok {
		return "?"
	}
	if rng.IntN(10) > 0 {
		slip := &longAddSlip{col: rng.IntN(len(q.a)), kind: slipKind(rng.IntN(3)), up: rng.IntN(2) == 0, inB: rng.IntN(2) == 0}
		if slip.kind == slipCarry && !hasCarryInto(q.a, q.b, slip.col) {
			slip.kind = slipSum // no carry to forget in that column
		}
		if r := t.response(q.a, q.b, slip); t.Verify(p, r).Reward < 1 {
			return r
		}
	}
	// A right scratchpad, then one answer digit slipped by one (never a
	// leading zero).
	demo := t.response(q.a, q.b, nil)
	at := strings.IndexByte(demo, '=') + 1
	d := []byte(demo[at:])
	for k := rng.IntN(len(d)); ; k = (k + 1) % len(d) {
		switch {
		case d[k] < '9' && (k > 0 || len(d) == 1 || d[k] > '0'):
			d[k]++
		case d[k] > '1' || d[k] == '1' && (k > 0 || len(d) == 1):
			d[k]--
		default:
			continue
		}
		return demo[:at] + string(d)
	}
}

// hasCarryInto reports whether column col of a+b receives a carry.
func hasCarryInto(a, b []byte, col int) bool {
	carry := byte(0)
	for j := 0; j < col; j++ {
		carry = (a[j] + b[j] + carry) / 10
	}
	return carry == 1
}
