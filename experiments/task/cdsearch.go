package task

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// CountdownSearchParams are the parameters of the "countdown_search" task.
//
// A prompt is a countdown prompt, Numbers numbers and a target:
// "4 7 9 2:23". The response is a depth-first search written out: one
// attempt after another, separated by ";". An attempt is a list of steps
// separated by ","; a step combines two numbers of the current pool,
// "x op y=z" (+ - * /, every division exact), and is followed by the pool
// it leaves in brackets, the new number first. An abandoned attempt — two
// numbers left and no operation on them reaching the target — ends with
// "!"; the last attempt ends with a step whose value is the target, then
// ":" and the target:
//
//	4 7 9 2:23 → "9+7=16[16 4 2],16*2=32[32 4]!;7*2=14[14 4 9],14+9=23:23"
//
// Each attempt starts again from the given numbers (the search backtracks
// to the root, copying the steps it keeps), so a response carries real
// choices: which two numbers and which operation come next, among several
// valid steps of which some lead to dead ends, while the arithmetic and the
// pools between the choices are determined by them.
type CountdownSearchParams struct {
	// Numbers given, in 3..5. Default 4.
	Numbers int `yaml:"numbers" json:"numbers"`
	// MinNumber is the smallest given number, ≥ 1. Default 1.
	MinNumber int `yaml:"min_number" json:"min_number"`
	// MaxNumber is the largest given number, ≤ 99. Default 9.
	MaxNumber int `yaml:"max_number" json:"max_number"`
	// MinTarget is the smallest target, ≥ 1. Default 10.
	MinTarget int `yaml:"min_target" json:"min_target"`
	// MaxTarget is the largest target, ≤ 9999. Default 60.
	MaxTarget int `yaml:"max_target" json:"max_target"`
	// MaxDeadEnds is the largest number of abandoned attempts in a
	// demonstration, in 0..8. Default 3.
	MaxDeadEnds int `yaml:"max_dead_ends" json:"max_dead_ends"`
	// MaxResponse is the longest response in characters, in 16..1000;
	// demonstrations are drawn to fit it. Default 120.
	MaxResponse int `yaml:"max_response" json:"max_response"`
	// NoPools leaves the pool "[...]" out after each step of the
	// demonstrations (the verifier accepts steps with and without it): a
	// shorter search whose characters are more often choices. Default
	// false. (Left out of the encodings when false, so configs without it
	// keep their run ids and cache keys.)
	NoPools bool `yaml:"no_pools,omitempty" json:"no_pools,omitempty"`
}

// DefaultCountdownSearchParams returns the defaults: 4 numbers in 1..9,
// targets in 10..60, at most 3 dead ends, responses of at most 120
// characters.
func DefaultCountdownSearchParams() CountdownSearchParams {
	return CountdownSearchParams{Numbers: 4, MinNumber: 1, MaxNumber: 9, MinTarget: 10, MaxTarget: 60, MaxDeadEnds: 3, MaxResponse: 120}
}

// Validate reports parameters out of range, naming the field.
func (p CountdownSearchParams) Validate() error {
	switch {
	case p.Numbers < 3 || p.Numbers > 5:
		return fmt.Errorf("countdown_search: numbers = %d, want 3..5", p.Numbers)
	case p.MinNumber < 1:
		return fmt.Errorf("countdown_search: min_number = %d, want ≥ 1", p.MinNumber)
	case p.MaxNumber < p.MinNumber || p.MaxNumber > 99:
		return fmt.Errorf("countdown_search: max_number = %d, want min_number (%d)..99", p.MaxNumber, p.MinNumber)
	case p.MinTarget < 1:
		return fmt.Errorf("countdown_search: min_target = %d, want ≥ 1", p.MinTarget)
	case p.MaxTarget < p.MinTarget || p.MaxTarget > 9999:
		return fmt.Errorf("countdown_search: max_target = %d, want min_target (%d)..9999", p.MaxTarget, p.MinTarget)
	case p.MaxDeadEnds < 0 || p.MaxDeadEnds > 8:
		return fmt.Errorf("countdown_search: max_dead_ends = %d, want 0..8", p.MaxDeadEnds)
	case p.MaxResponse < 16 || p.MaxResponse > 1000:
		return fmt.Errorf("countdown_search: max_response = %d, want 16..1000", p.MaxResponse)
	}
	return nil
}

// CountdownSearch is the "countdown_search" task. The verifier replays
// every attempt against the pool of numbers; any search whose steps are
// right and whose last attempt reaches the target is correct, whichever
// steps it tried.
type CountdownSearch struct {
	p  CountdownSearchParams
	cd *Countdown // prompt format and solver
}

// NewCountdownSearch builds the "countdown_search" task.
func NewCountdownSearch(p CountdownSearchParams) (*CountdownSearch, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	cd, err := NewCountdown(CountdownParams{Numbers: p.Numbers, MinNumber: p.MinNumber, MaxNumber: p.MaxNumber, MinTarget: p.MinTarget, MaxTarget: p.MaxTarget})
	if err != nil {
		return nil, fmt.Errorf("countdown_search: %w", err)
	}
	return &CountdownSearch{p: p, cd: cd}, nil
}

// Name returns "countdown_search".
func (t *CountdownSearch) Name() string { return "countdown_search" }

// Params returns the task's parameters.
func (t *CountdownSearch) Params() CountdownSearchParams { return t.p }

// MaxPromptLen is that of the countdown prompt.
func (t *CountdownSearch) MaxPromptLen() int { return t.cd.MaxPromptLen() }

// MaxResponseLen is MaxResponse.
func (t *CountdownSearch) MaxResponseLen() int { return t.p.MaxResponse }

// StepEnds implements Stepper: a step ends at "," or ";" (the next one
// begins with a choice of numbers and operation).
func (t *CountdownSearch) StepEnds() string { return ",;" }

// searchMove is one step: a op b = val.
type searchMove struct {
	a, b, val int64
	op        byte
	i, j      int // pool indices of a and b
}

// moves lists the steps from pool, the larger operand first: a sum and a
// product of every pair, a positive difference, an exact quotient by more
// than 1.
func searchMoves(pool []int64) []searchMove {
	var out []searchMove
	for i := range pool {
		for j := i + 1; j < len(pool); j++ {
			a, b, ia, ib := pool[i], pool[j], i, j
			if a < b {
				a, b, ia, ib = b, a, j, i
			}
			out = append(out, searchMove{a, b, a + b, '+', ia, ib}, searchMove{a, b, a * b, '*', ia, ib})
			if a > b {
				out = append(out, searchMove{a, b, a - b, '-', ia, ib})
			}
			if b > 1 && a%b == 0 {
				out = append(out, searchMove{a, b, a / b, '/', ia, ib})
			}
		}
	}
	return out
}

// after is the pool a move leaves: its value first, then the numbers it
// did not use in their order.
func (m searchMove) after(pool []int64) []int64 {
	out := []int64{m.val}
	for k, v := range pool {
		if k != m.i && k != m.j {
			out = append(out, v)
		}
	}
	return out
}

// writeStep writes "a op b=val" and, unless last or pool is nil, the pool
// "[...]".
func writeStep(sb *strings.Builder, m searchMove, pool []int64, last bool) {
	sb.WriteString(strconv.FormatInt(m.a, 10))
	sb.WriteByte(m.op)
	sb.WriteString(strconv.FormatInt(m.b, 10))
	sb.WriteByte('=')
	sb.WriteString(strconv.FormatInt(m.val, 10))
	if !last && pool != nil {
		sb.WriteByte('[')
		for k, v := range pool {
			if k > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(strconv.FormatInt(v, 10))
		}
		sb.WriteByte(']')
	}
}

// demo runs a depth-first search over nums in an order drawn from rng: at
// each pool it finishes with a step that reaches the target (one drawn
// uniformly when several do), abandons the attempt when two numbers are
// left, and otherwise tries the steps in an order drawn uniformly. It
// returns "" when the search needs more than MaxDeadEnds dead ends or a
// longer response than MaxResponse.
func (t *CountdownSearch) demo(nums []int64, target int64, rng *rand.Rand) string {
	var sb strings.Builder
	type frame struct {
		m    searchMove
		pool []int64
	}
	var path []frame
	deadEnds := 0
	writePath := func() {
		if sb.Len() > 0 {
			sb.WriteByte(';')
		}
		for k, f := range path {
			if k > 0 {
				sb.WriteByte(',')
			}
			pool := f.pool
			if t.p.NoPools {
				pool = nil
			}
			writeStep(&sb, f.m, pool, false)
		}
	}
	var dfs func(pool []int64) bool
	dfs = func(pool []int64) bool {
		moves := searchMoves(pool)
		var finish []searchMove
		for _, m := range moves {
			if m.val == target {
				finish = append(finish, m)
			}
		}
		if len(finish) > 0 {
			writePath()
			if len(path) > 0 {
				sb.WriteByte(',')
			}
			writeStep(&sb, finish[rng.IntN(len(finish))], nil, true)
			return true
		}
		if len(pool) <= 2 {
			if len(path) > 0 {
				writePath()
				sb.WriteByte('!')
				deadEnds++
			}
			return false
		}
		for _, k := range rng.Perm(len(moves)) {
			if deadEnds > t.p.MaxDeadEnds || sb.Len() > t.p.MaxResponse {
				return false
			}
			m := moves[k]
			next := m.after(pool)
			path = append(path, frame{m, next})
			ok := dfs(next)
			path = path[:len(path)-1]
			if ok {
				return true
			}
		}
		return false
	}
	if !dfs(nums) || deadEnds > t.p.MaxDeadEnds {
		return ""
	}
	sb.WriteByte(':')
	sb.WriteString(strconv.FormatInt(target, 10))
	if sb.Len() > t.p.MaxResponse {
		return ""
	}
	return sb.String()
}

// demoTries is how many search orders are tried for one problem before
// another problem is drawn.
const demoTries = 16

// searchDemo is the demonstration of a problem: the first of demoTries
// search orders, drawn from a random stream keyed by the prompt text, that
// fits MaxDeadEnds and MaxResponse, or "" if none does. The order is a pure
// function of the text (ParsePrompt gives the generated demo back) yet
// differs from problem to problem, so the demonstrations differ at the
// choice points.
func (t *CountdownSearch) searchDemo(q *countdownProblem) string {
	h := fnv.New64a()
	h.Write([]byte(q.text()))
	rng := rand.New(rand.NewPCG(mix64(h.Sum64()), 0x5eed))
	for range demoTries {
		if d := t.demo(q.nums, q.target, rng); d != "" {
			return d
		}
	}
	return ""
}

// Prompt returns prompt i of a split: a solvable instance that takes two
// steps or more (the target is neither a given number nor one step away
// from them) and has a demonstration (see searchDemo; demonstrations lean
// towards lucky search orders).
func (t *CountdownSearch) Prompt(split Split, seed uint64, i int) (Prompt, error) {
	// As in countdown, a drawn set of numbers serves for a few targets
	// before new numbers are drawn: solving is the costly part.
	var nums, targets []int64
	uses := 0
	return drawPrompt(t.Name(), split, seed, i, func(rng *rand.Rand) (Prompt, error) {
		for tries := 0; tries < 1000; tries++ {
			if len(targets) == 0 || uses >= targetsPerDraw {
				nums = make([]int64, t.p.Numbers)
				for k := range nums {
					nums[k] = int64(t.p.MinNumber + rng.IntN(t.p.MaxNumber-t.p.MinNumber+1))
				}
				oneStep := map[int64]bool{}
				for _, m := range searchMoves(nums) {
					oneStep[m.val] = true
				}
				targets = targets[:0]
				for v := range t.cd.solve(nums) {
					if !slices.Contains(nums, v) && !oneStep[v] {
						targets = append(targets, v)
					}
				}
				slices.Sort(targets)
				uses = 0
				if len(targets) == 0 {
					continue
				}
			}
			uses++
			q := countdownProblem{nums: nums, target: targets[rng.IntN(len(targets))]}
			if d := t.searchDemo(&q); d != "" {
				text := q.text()
				return Prompt{Text: text, Demo: d, problem: &q, parsedText: text}, nil
			}
		}
		return Prompt{}, fmt.Errorf("no problem with a search of at most %d dead ends and %d characters in 1000 draws", t.p.MaxDeadEnds, t.p.MaxResponse)
	})
}

// SampleDemo implements DemoSampler: a search drawn from rng (the first
// of demoTries draws that fits MaxDeadEnds and MaxResponse), or p.Demo if
// none does. Each draw tries the steps at every pool in a uniformly drawn
// order, so the pair and the operation an attempt starts with are spread
// over every valid step.
func (t *CountdownSearch) SampleDemo(p Prompt, rng *rand.Rand) string {
	q, ok := problemOf(p, t.cd.parse)
	if !ok {
		return p.Demo
	}
	for range demoTries {
		if d := t.demo(q.nums, q.target, rng); d != "" {
			return d
		}
	}
	return p.Demo
}

// ParsePrompt reads a countdown prompt. The demo is the problem's
// demonstration, "" when the target is unreachable or no search order
// fits.
func (t *CountdownSearch) ParsePrompt(text string) (Prompt, error) {
	q, err := t.cd.parse(text)
	if err != nil {
		return Prompt{}, fmt.Errorf("countdown_search: %w", err)
	}
	return Prompt{Text: text, Demo: t.searchDemo(q), problem: q, parsedText: text}, nil
}

// AnswerStart is the position after the ":" that ends the search, where
// the claimed value begins.
func (t *CountdownSearch) AnswerStart(_ Prompt, response string) int {
	if i := strings.IndexByte(response, ':'); i >= 0 {
		return i + 1
	}
	return len(response)
}

// Verify replays the search. Every attempt starts from the given numbers;
// each step's operands must be in the current pool (unknown_number if the
// value was never there, reused_number if it was used up), its value
// right (wrong_answer), its division exact (inexact_division,
// division_by_zero) and its written pool, if any, the pool it leaves (as a
// multiset; wrong_answer otherwise). Every attempt but the last ends with
// "!", the last one does not; the value after ":" must be the last
// step's value. The response is correct when that value is the target. The
// answer is the last step's value.
func (t *CountdownSearch) Verify(p Prompt, response string) Verdict {
	q, ok := problemOf(p, t.cd.parse)
	if !ok {
		return Verdict{Reason: BadPrompt}
	}
	if v, ok := screen(response, t.MaxResponseLen()); !ok {
		return v
	}
	body, claimText, ok := strings.Cut(response, ":")
	if !ok || strings.IndexByte(claimText, ':') >= 0 {
		return Verdict{Reason: ParseError}
	}
	attempts := strings.Split(body, ";")
	var last int64
	for k, a := range attempts {
		final := k == len(attempts)-1
		abandoned := strings.HasSuffix(a, "!")
		if abandoned == final {
			return Verdict{Reason: ParseError}
		}
		v, reason := replayAttempt(strings.TrimSuffix(a, "!"), q.nums)
		if reason != "" {
			return Verdict{Reason: reason}
		}
		last = v
	}
	claim, ok := parseClaim(claimText)
	if !ok || strings.TrimSpace(claimText) != claimText {
		return Verdict{Reason: ParseError}
	}
	if claim != last {
		return Verdict{Reason: WrongAnswer}
	}
	ans := strconv.FormatInt(last, 10)
	if last == q.target {
		return Verdict{Reward: 1, Reason: Correct, Answer: ans}
	}
	return Verdict{Reason: WrongAnswer, Answer: ans}
}

// replayAttempt checks one attempt's steps against a pool that starts as
// nums and returns the last step's value, or the reason it is wrong.
func replayAttempt(a string, nums []int64) (int64, Reason) {
	if a == "" {
		return 0, ParseError
	}
	pool := slices.Clone(nums)
	var val int64
	for _, step := range strings.Split(a, ",") {
		expr, poolText, hasPool := strings.Cut(step, "[")
		if hasPool {
			if !strings.HasSuffix(poolText, "]") {
				return 0, ParseError
			}
			poolText = strings.TrimSuffix(poolText, "]")
		}
		lhs, rhs, ok := strings.Cut(expr, "=")
		if !ok {
			return 0, ParseError
		}
		opAt := strings.IndexAny(lhs, "+-*/")
		if opAt < 0 {
			return 0, ParseError
		}
		a, okA := parseSearchNum(lhs[:opAt])
		b, okB := parseSearchNum(lhs[opAt+1:])
		z, okZ := parseSearchNum(rhs)
		if !okA || !okB || !okZ {
			return 0, ParseError
		}
		for _, x := range []int64{a, b} {
			k := slices.Index(pool, x)
			if k < 0 {
				if slices.Contains(nums, x) {
					return 0, ReusedNumber
				}
				return 0, UnknownNumber
			}
			pool = slices.Delete(pool, k, k+1)
		}
		switch lhs[opAt] {
		case '+':
			val = a + b
		case '-':
			val = a - b
		case '*':
			val = a * b
		case '/':
			if b == 0 {
				return 0, DivisionByZero
			}
			if a%b != 0 {
				return 0, InexactDivision
			}
			val = a / b
		}
		if val != z {
			return 0, WrongAnswer
		}
		pool = append([]int64{val}, pool...)
		if hasPool {
			var written []int64
			for _, f := range strings.Split(poolText, " ") {
				v, ok := parseSearchNum(f)
				if !ok {
					return 0, ParseError
				}
				written = append(written, v)
			}
			a, b := slices.Clone(pool), written
			slices.Sort(a)
			slices.Sort(b)
			if !slices.Equal(a, b) {
				return 0, WrongAnswer
			}
		}
	}
	return val, ""
}

// parseSearchNum reads a decimal without sign or leading zeros, of at
// most 9 digits (so that products stay inside int64).
func parseSearchNum(s string) (int64, bool) {
	if s == "" || len(s) > 9 || !allDigits(s) || len(s) > 1 && s[0] == '0' {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// FlawedDemo makes a plausible mistake in a correct search: a step's value
// off by one, an operand that is not in the pool, a pool written wrongly,
// or the final value claimed off by one.
func (t *CountdownSearch) FlawedDemo(p Prompt, rng *rand.Rand) string {
	q, ok := problemOf(p, t.cd.parse)
	if !ok {
		return "1+1=2:2"
	}
	demo := t.searchDemo(q)
	if demo == "" {
		return "1+1=2:2"
	}
	body, _, _ := strings.Cut(demo, ":")
	for range 20 {
		b := body
		switch rng.IntN(3) {
		case 0: // a number (operand, value or pool entry) off by one
			var starts []int
			for k := 0; k < len(b); k++ {
				if isDigit(b[k]) && (k == 0 || !isDigit(b[k-1])) {
					starts = append(starts, k)
				}
			}
			if len(starts) == 0 {
				continue
			}
			k := starts[rng.IntN(len(starts))]
			end := k
			for end < len(b) && isDigit(b[end]) {
				end++
			}
			v, _ := strconv.ParseInt(b[k:end], 10, 64)
			w := v + 1
			if v > 1 && rng.IntN(2) == 0 {
				w = v - 1
			}
			b = b[:k] + strconv.FormatInt(w, 10) + b[end:]
		case 1: // an operator swapped
			var ops []int
			for k := 1; k < len(b); k++ {
				if strings.IndexByte("+-*/", b[k]) >= 0 {
					ops = append(ops, k)
				}
			}
			if len(ops) == 0 {
				continue
			}
			k := ops[rng.IntN(len(ops))]
			b = b[:k] + string("+-*/"[(strings.IndexByte("+-*/", b[k])+1+rng.IntN(3))%4]) + b[k+1:]
		case 2: // the right search, the value claimed off by one
			r := body + ":" + strconv.FormatInt(q.target+1-2*int64(rng.IntN(2)), 10)
			if len(r) <= t.MaxResponseLen() {
				return r
			}
			continue
		}
		r := b + ":" + strconv.FormatInt(q.target, 10)
		if len(r) <= t.MaxResponseLen() && t.Verify(p, r).Reward < 1 {
			return r
		}
	}
	return body + ":" + strconv.FormatInt(q.target-1, 10)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
