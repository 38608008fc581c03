package task

import (
	"math"
	"strconv"
)

// An arithmetic expression of the countdown task, parsed by recursive
// descent:
//
//	expr   = term { ("+" | "-") term }
//	term   = factor { ("*" | "/") factor }
//	factor = number | "(" expr ")"
//
// Spaces between tokens are skipped. There is no unary minus. Every number
// must be one of the given numbers, each given one used at most once.

// maxExprDepth bounds the nesting of parentheses, so that no input can
// exhaust the stack.
const maxExprDepth = 64

// exprNode is a node of a parsed expression: a number (op 0) or a binary
// operation.
type exprNode struct {
	op          byte
	val         int64
	left, right *exprNode
}

// exprParser holds the state of one parse.
type exprParser struct {
	s     string
	pos   int
	nums  []int64
	used  []bool
	usage Reason // first unknown or reused number; syntax errors take precedence
}

// parseExpr parses s. reason is "" on success, else ParseError,
// UnknownNumber or ReusedNumber.
func parseExpr(s string, nums []int64) (*exprNode, Reason) {
	p := &exprParser{s: s, nums: nums, used: make([]bool, len(nums))}
	n, ok := p.expr(0)
	p.skipSpaces()
	if !ok || p.pos != len(p.s) {
		return nil, ParseError
	}
	if p.usage != "" {
		return nil, p.usage
	}
	return n, ""
}

func (p *exprParser) skipSpaces() {
	for p.pos < len(p.s) && p.s[p.pos] == ' ' {
		p.pos++
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (p *exprParser) peek() byte {
	p.skipSpaces()
	if p.pos < len(p.s) {
		return p.s[p.pos]
	}
	return 0
}

func (p *exprParser) expr(depth int) (*exprNode, bool) {
	left, ok := p.term(depth)
	for ok {
		c := p.peek()
		if c != '+' && c != '-' {
			break
		}
		p.pos++
		var right *exprNode
		right, ok = p.term(depth)
		left = &exprNode{op: c, left: left, right: right}
	}
	return left, ok
}

func (p *exprParser) term(depth int) (*exprNode, bool) {
	left, ok := p.factor(depth)
	for ok {
		c := p.peek()
		if c != '*' && c != '/' {
			break
		}
		p.pos++
		var right *exprNode
		right, ok = p.factor(depth)
		left = &exprNode{op: c, left: left, right: right}
	}
	return left, ok
}

func (p *exprParser) factor(depth int) (*exprNode, bool) {
	c := p.peek()
	switch {
	case c == '(':
		if depth >= maxExprDepth {
			return nil, false
		}
		p.pos++
		n, ok := p.expr(depth + 1)
		if !ok || p.peek() != ')' {
			return nil, false
		}
		p.pos++
		return n, true
	case c >= '0' && c <= '9':
		start := p.pos
		for p.pos < len(p.s) && p.s[p.pos] >= '0' && p.s[p.pos] <= '9' {
			p.pos++
		}
		return p.number(p.s[start:p.pos])
	}
	return nil, false
}

// number checks a literal against the given numbers and takes one of them.
func (p *exprParser) number(lit string) (*exprNode, bool) {
	if len(lit) > 1 && lit[0] == '0' {
		return nil, false // a leading zero is no way to write a given number
	}
	v, err := strconv.ParseInt(lit, 10, 64)
	if err != nil {
		p.noteUsage(UnknownNumber) // beyond int64: larger than any given number
		return &exprNode{}, true
	}
	seen := false
	for k, n := range p.nums {
		if n != v {
			continue
		}
		seen = true
		if !p.used[k] {
			p.used[k] = true
			return &exprNode{val: v}, true
		}
	}
	if seen {
		p.noteUsage(ReusedNumber)
	} else {
		p.noteUsage(UnknownNumber)
	}
	return &exprNode{val: v}, true
}

func (p *exprParser) noteUsage(r Reason) {
	if p.usage == "" {
		p.usage = r
	}
}

// eval computes the expression's value in checked int64 arithmetic.
// reason is "" on success, else DivisionByZero, InexactDivision or
// Overflow, for the leftmost innermost failing operation.
func (n *exprNode) eval() (int64, Reason) {
	if n.op == 0 {
		return n.val, ""
	}
	a, r := n.left.eval()
	if r != "" {
		return 0, r
	}
	b, r := n.right.eval()
	if r != "" {
		return 0, r
	}
	switch n.op {
	case '+':
		if b > 0 && a > math.MaxInt64-b || b < 0 && a < math.MinInt64-b {
			return 0, Overflow
		}
		return a + b, ""
	case '-':
		if b < 0 && a > math.MaxInt64+b || b > 0 && a < math.MinInt64+b {
			return 0, Overflow
		}
		return a - b, ""
	case '*':
		if a == 0 || b == 0 {
			return 0, ""
		}
		c := a * b
		if c/b != a || a == -1 && b == math.MinInt64 || b == -1 && a == math.MinInt64 {
			return 0, Overflow
		}
		return c, ""
	case '/':
		if b == 0 {
			return 0, DivisionByZero
		}
		if b == -1 && a == math.MinInt64 {
			return 0, Overflow
		}
		if a%b != 0 {
			return 0, InexactDivision
		}
		return a / b, ""
	}
	return 0, ParseError
}
