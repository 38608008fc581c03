package task

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// CountdownParams are the parameters of the "countdown" task.
//
// A prompt lists Numbers numbers in MinNumber..MaxNumber, a colon and a
// target in MinTarget..MaxTarget: "4 7 9 2:23". The response is an
// arithmetic expression over the given numbers (+ - * /, parentheses, each
// number used at most once, every division exact), optionally followed by
// "=" and its value: "7*2+9=23" and "7*2+9" are right, "(9-2)*4-7=21" is
// wrong.
// Every generated prompt has a solution, and the target is never one of
// the numbers themselves.
type CountdownParams struct {
	// Numbers given, in 2..5. Default 3.
	Numbers int `yaml:"numbers" json:"numbers"`
	// MinNumber is the smallest given number, ≥ 1. Default 1.
	MinNumber int `yaml:"min_number" json:"min_number"`
	// MaxNumber is the largest given number, ≤ 999. Default 9.
	MaxNumber int `yaml:"max_number" json:"max_number"`
	// MinTarget is the smallest target, ≥ 1. Default 10.
	MinTarget int `yaml:"min_target" json:"min_target"`
	// MaxTarget is the largest target, ≤ 999999. Default 50.
	MaxTarget int `yaml:"max_target" json:"max_target"`
}

// DefaultCountdownParams returns the defaults: 3 numbers in 1..9, targets
// in 10..50.
func DefaultCountdownParams() CountdownParams {
	return CountdownParams{Numbers: 3, MinNumber: 1, MaxNumber: 9, MinTarget: 10, MaxTarget: 50}
}

// Validate reports parameters out of range, naming the field.
func (p CountdownParams) Validate() error {
	switch {
	case p.Numbers < 2 || p.Numbers > 5:
		return fmt.Errorf("countdown: numbers = %d, want 2..5", p.Numbers)
	case p.MinNumber < 1:
		return fmt.Errorf("countdown: min_number = %d, want ≥ 1", p.MinNumber)
	case p.MaxNumber < p.MinNumber || p.MaxNumber > 999:
		return fmt.Errorf("countdown: max_number = %d, want min_number (%d)..999", p.MaxNumber, p.MinNumber)
	case p.MinTarget < 1:
		return fmt.Errorf("countdown: min_target = %d, want ≥ 1", p.MinTarget)
	case p.MaxTarget < p.MinTarget || p.MaxTarget > 999999:
		return fmt.Errorf("countdown: max_target = %d, want min_target (%d)..999999", p.MaxTarget, p.MinTarget)
	}
	return nil
}

// Countdown is the "countdown" task. Many responses can be right; the
// verifier parses the expression with a recursive-descent parser and
// evaluates it in checked int64 arithmetic.
type Countdown struct{ p CountdownParams }

// NewCountdown builds the "countdown" task.
func NewCountdown(p CountdownParams) (*Countdown, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &Countdown{p: p}, nil
}

// countdownProblem is a parsed "countdown" prompt.
type countdownProblem struct {
	nums   []int64
	target int64
}

// Name returns "countdown".
func (t *Countdown) Name() string { return "countdown" }

// Params returns the task's parameters.
func (t *Countdown) Params() CountdownParams { return t.p }

// MaxPromptLen is the length of Numbers numbers of MaxNumber's width,
// separated by spaces, a colon and the widest target.
func (t *Countdown) MaxPromptLen() int {
	n := t.p.Numbers
	return n*decimalLen(int64(t.p.MaxNumber)) + n - 1 + 1 + decimalLen(int64(t.p.MaxTarget))
}

// MaxResponseLen is the length of an expression over all numbers with a
// pair of parentheses around every operation but the last, "=" and the
// widest target.
func (t *Countdown) MaxResponseLen() int {
	n := t.p.Numbers
	return n*decimalLen(int64(t.p.MaxNumber)) + (n - 1) + 2*(n-2) + 1 + decimalLen(int64(t.p.MaxTarget))
}

// Prompt returns prompt i of a split, a solvable instance whose demo is the
// shortest solution found.
func (t *Countdown) Prompt(split Split, seed uint64, i int) (Prompt, error) {
	// A drawn set of numbers serves for a few targets before new numbers
	// are drawn: solving is the costly part, and a split takes one target
	// in evalOneIn.
	var nums []int64
	var targets []int64
	var best map[int64]string
	uses := 0
	return drawPrompt(t.Name(), split, seed, i, func(rng *rand.Rand) (Prompt, error) {
		for tries := 0; len(targets) == 0 || uses >= targetsPerDraw; tries++ {
			if tries == 1000 {
				return Prompt{}, fmt.Errorf("no solvable numbers in 1000 draws: no target in %d..%d is reachable", t.p.MinTarget, t.p.MaxTarget)
			}
			nums = make([]int64, t.p.Numbers)
			for k := range nums {
				nums[k] = int64(t.p.MinNumber + rng.IntN(t.p.MaxNumber-t.p.MinNumber+1))
			}
			best = t.solve(nums)
			targets = targets[:0]
			for v := range best {
				if !slices.Contains(nums, v) {
					targets = append(targets, v)
				}
			}
			slices.Sort(targets)
			uses = 0
		}
		uses++
		target := targets[rng.IntN(len(targets))]
		q := countdownProblem{nums: nums, target: target}
		text := q.text()
		return Prompt{Text: text, Demo: best[target] + "=" + strconv.FormatInt(target, 10), problem: &q, parsedText: text}, nil
	})
}

// targetsPerDraw is how many targets are drawn for one set of numbers.
const targetsPerDraw = 4

func (q countdownProblem) text() string {
	var sb strings.Builder
	for k, v := range q.nums {
		if k > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(strconv.FormatInt(v, 10))
	}
	sb.WriteByte(':')
	sb.WriteString(strconv.FormatInt(q.target, 10))
	return sb.String()
}

// solved is a partial result of the solver: a value and the expression
// tree that makes it. The text is written only for the best expressions.
type solved struct {
	val  int64
	op   byte // 0 for a given number
	a, b *solved
	prec int8 // 3: a number, 2: a product or quotient, 1: a sum or difference
	used int8 // numbers used
	size int  // length of the expression's text
}

// sizeIn is the length of s's text as an operand that needs parentheses
// below precedence min.
func (s *solved) sizeIn(min int8) int {
	if s.prec < min {
		return s.size + 2
	}
	return s.size
}

// text writes the expression with the parentheses it needs.
func (s *solved) text() string {
	var sb strings.Builder
	s.write(&sb, 0)
	return sb.String()
}

func (s *solved) write(sb *strings.Builder, min int8) {
	if s.prec < min {
		sb.WriteByte('(')
		defer sb.WriteByte(')')
	}
	switch s.op {
	case 0:
		sb.WriteString(strconv.FormatInt(s.val, 10))
	case '+':
		s.a.write(sb, 0)
		sb.WriteByte('+')
		s.b.write(sb, 0)
	case '-':
		s.a.write(sb, 0)
		sb.WriteByte('-')
		s.b.write(sb, 2)
	case '*':
		s.a.write(sb, 2)
		sb.WriteByte('*')
		s.b.write(sb, 2)
	case '/':
		s.a.write(sb, 2)
		sb.WriteByte('/')
		s.b.write(sb, 3)
	}
}

// solve returns, for every value in MinTarget..MaxTarget reachable from two
// or more of nums, its shortest expression (ties: the smallest string).
// Intermediate values stay positive and divisions exact, so the
// expressions are what a person would write.
func (t *Countdown) solve(nums []int64) map[int64]string {
	best := make(map[int64]*solved)
	lo, hi := int64(t.p.MinTarget), int64(t.p.MaxTarget)
	record := func(c *solved) {
		if c.val < lo || c.val > hi {
			return
		}
		old, ok := best[c.val]
		if !ok || c.size < old.size || c.size == old.size && c.text() < old.text() {
			best[c.val] = c
		}
	}
	items := make([]*solved, len(nums))
	for k, v := range nums {
		items[k] = &solved{val: v, prec: 3, used: 1, size: decimalLen(v)}
	}
	var rec func(items []*solved)
	rec = func(items []*solved) {
		if len(items) < 2 {
			return
		}
		next := make([]*solved, 0, len(items)-1)
		for i, a := range items {
			for j, b := range items {
				if i == j {
					continue
				}
				next = next[:0]
				for k := range items {
					if k != i && k != j {
						next = append(next, items[k])
					}
				}
				next = append(next, nil)
				try := func(c *solved) {
					c.a, c.b, c.used = a, b, a.used+b.used
					record(c)
					next[len(next)-1] = c
					rec(next)
				}
				if i < j { // commutative operations once per pair
					try(&solved{val: a.val + b.val, op: '+', prec: 1, size: a.size + 1 + b.size})
					try(&solved{val: a.val * b.val, op: '*', prec: 2, size: a.sizeIn(2) + 1 + b.sizeIn(2)})
				}
				if a.val > b.val {
					try(&solved{val: a.val - b.val, op: '-', prec: 1, size: a.size + 1 + b.sizeIn(2)})
				}
				if b.val > 1 && a.val%b.val == 0 {
					try(&solved{val: a.val / b.val, op: '/', prec: 2, size: a.sizeIn(2) + 1 + b.sizeIn(3)})
				}
			}
		}
	}
	rec(items)
	out := make(map[int64]string, len(best))
	for v, s := range best {
		out[v] = s.text()
	}
	return out
}

// ParsePrompt reads "N N ... N:T" with Numbers numbers in
// MinNumber..MaxNumber and a target in MinTarget..MaxTarget. The demo is
// the shortest solution, or "" if there is none.
func (t *Countdown) ParsePrompt(text string) (Prompt, error) {
	q, err := t.parse(text)
	if err != nil {
		return Prompt{}, err
	}
	p := Prompt{Text: text, problem: q, parsedText: text}
	if slices.Contains(q.nums, q.target) {
		p.Demo = strconv.FormatInt(q.target, 10) + "=" + strconv.FormatInt(q.target, 10)
	} else if e, ok := t.solve(q.nums)[q.target]; ok {
		p.Demo = e + "=" + strconv.FormatInt(q.target, 10)
	}
	return p, nil
}

// parse reads a prompt text without solving it.
func (t *Countdown) parse(text string) (*countdownProblem, error) {
	numsText, targetText, ok := strings.Cut(text, ":")
	fields := strings.Split(numsText, " ")
	// The count of numbers first: a prompt of more numbers than the
	// task's is also longer than its prompts, and the count says why.
	if ok && len(fields) != t.p.Numbers {
		return nil, fmt.Errorf("countdown prompt %q: %d numbers, want %d (the task's parameter numbers)", text, len(fields), t.p.Numbers)
	}
	if err := checkPromptText(text, t.MaxPromptLen()); err != nil {
		return nil, fmt.Errorf("countdown prompt %q: %w", text, err)
	}
	if !ok {
		return nil, fmt.Errorf("countdown prompt %q: want numbers, \":\" and the target", text)
	}
	var q countdownProblem
	for _, f := range fields {
		v, err := parseBounded(f, t.p.MinNumber, t.p.MaxNumber)
		if err != nil {
			return nil, fmt.Errorf("countdown prompt %q: number: %w", text, err)
		}
		q.nums = append(q.nums, v)
	}
	target, err := parseBounded(targetText, t.p.MinTarget, t.p.MaxTarget)
	if err != nil {
		return nil, fmt.Errorf("countdown prompt %q: target: %w", text, err)
	}
	q.target = target
	return &q, nil
}

// parseBounded reads a decimal without sign or leading zeros in lo..hi.
func parseBounded(s string, lo, hi int) (int64, error) {
	if s == "" || !allDigits(s) || len(s) > 1 && s[0] == '0' || len(s) > 9 {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, err)
	}
	if v < int64(lo) || v > int64(hi) {
		return 0, fmt.Errorf("%d is outside %d..%d", v, lo, hi)
	}
	return v, nil
}

// AnswerStart is the position after "=", where the value begins; the
// expression before it is the work.
func (t *Countdown) AnswerStart(_ Prompt, response string) int {
	if i := strings.IndexByte(response, '='); i >= 0 {
		return i + 1
	}
	return len(response)
}

// Verify parses and evaluates the expression. It is right when its value is
// the target and, if a value is written after "=", that value is the
// expression's. The answer is the expression's value ("" when the written
// value disagrees with it).
func (t *Countdown) Verify(p Prompt, response string) Verdict {
	q, ok := problemOf(p, t.parse)
	if !ok {
		return Verdict{Reason: BadPrompt}
	}
	if v, ok := screen(response, t.MaxResponseLen()); !ok {
		return v
	}
	exprText, claimText, hasClaim := strings.Cut(response, "=")
	e, reason := parseExpr(exprText, q.nums)
	if reason != "" {
		return Verdict{Reason: reason}
	}
	var claim int64
	if hasClaim {
		c, ok := parseClaim(claimText)
		if !ok {
			return Verdict{Reason: ParseError}
		}
		claim = c
	}
	val, reason := e.eval()
	if reason != "" {
		return Verdict{Reason: reason}
	}
	if hasClaim && claim != val {
		return Verdict{Reason: WrongAnswer}
	}
	ans := strconv.FormatInt(val, 10)
	if val == q.target {
		return Verdict{Reward: 1, Reason: Correct, Answer: ans}
	}
	return Verdict{Reason: WrongAnswer, Answer: ans}
}

// parseClaim reads the value after "=": an optional "-" and at most 18
// digits (spaces around allowed); a longer number cannot be a value the
// expression has.
func parseClaim(s string) (int64, bool) {
	s = strings.Trim(s, " ")
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	if s == "" || !allDigits(s) {
		return 0, false
	}
	s = strings.TrimLeft(s, "0")
	if s == "" {
		return 0, true
	}
	if len(s) > 18 {
		return math.MinInt64, true // no value of an expression over ≤ 5 numbers ≤ 999 is that large
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// FlawedDemo makes a plausible mistake on a solution: a wrong operator, a
// number that is not given or used twice, or a value claimed wrongly.
func (t *Countdown) FlawedDemo(p Prompt, rng *rand.Rand) string {
	q, ok := problemOf(p, t.parse)
	if !ok || p.Demo == "" {
		return "0=0"
	}
	expr, _, _ := strings.Cut(p.Demo, "=")
	target := strconv.FormatInt(q.target, 10)
	for range 20 {
		b := []byte(expr)
		switch rng.IntN(3) {
		case 0: // a wrong operator
			var ops []int
			for k, c := range b {
				if strings.IndexByte("+-*/", c) >= 0 {
					ops = append(ops, k)
				}
			}
			if len(ops) == 0 {
				continue
			}
			k := ops[rng.IntN(len(ops))]
			b[k] = "+-*/"[(strings.IndexByte("+-*/", b[k])+1+rng.IntN(3))%4]
		case 1: // a number off by one, or another given number in its place
			var starts []int
			for k := range b {
				if b[k] >= '0' && b[k] <= '9' && (k == 0 || b[k-1] < '0' || b[k-1] > '9') {
					starts = append(starts, k)
				}
			}
			if len(starts) == 0 {
				continue
			}
			k := starts[rng.IntN(len(starts))]
			end := k
			for end < len(b) && b[end] >= '0' && b[end] <= '9' {
				end++
			}
			v, _ := strconv.ParseInt(string(b[k:end]), 10, 64)
			w := v + 1
			if rng.IntN(2) == 0 {
				w = q.nums[rng.IntN(len(q.nums))]
			} else if v > 1 && rng.IntN(2) == 0 {
				w = v - 1
			}
			b = slices.Concat(b[:k], []byte(strconv.FormatInt(w, 10)), b[end:])
		case 2: // the right expression, its value claimed off by one
			r := expr + "=" + strconv.FormatInt(q.target+1-2*int64(rng.IntN(2)), 10)
			if len(r) <= t.MaxResponseLen() {
				return r
			}
			continue // target+1 has a digit more
		}
		// The flawed expression, claiming the target as the right one would.
		r := string(b) + "=" + target
		if len(r) <= t.MaxResponseLen() && t.Verify(p, r).Reward < 1 {
			return r
		}
	}
	return expr + "=" + strconv.FormatInt(q.target-1, 10) // no longer than the target
}

func decimalLen(v int64) int { return len(strconv.FormatInt(v, 10)) }
