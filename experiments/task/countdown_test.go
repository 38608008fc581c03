package task

import (
	"math"
	"strings"
	"testing"
)

func TestCountdownVerify(t *testing.T) {
	tk, _ := NewCountdown(fourNumbers()) // max response 14
	p, err := tk.ParsePrompt("4 7 9 7:23")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		response string
		reward   float64
		reason   Reason
		answer   string
	}{
		{"9*4-7-7+1=23", 0, UnknownNumber, ""},
		{"4*7-9+4=23", 0, ReusedNumber, ""},
		{"7+7+9=23", 1, Correct, "23"},
		{"7+7+9", 1, Correct, "23"},           // the value may be left out
		{"9+7+7", 1, Correct, "23"},           // many answers are right
		{"(9-7)*7+4-9", 0, WrongAnswer, "9"},  // ... 9 is given once: see below
		{"9*4-7-(7-1)", 0, UnknownNumber, ""}, // 1 is not given
		{"(4+7)*7/9", 0, InexactDivision, ""}, // 77/9
		{"4*7-9+4", 0, ReusedNumber, ""},      // 4 twice
		{"7*7-9*4+9", 0, ReusedNumber, ""},    // 9 twice
		{"7 + 7 + 9 = 23", 1, Correct, "23"},  // spaces
		{"((7+7))+9=23", 1, Correct, "23"},    // redundant parentheses
		{"7+7+9=24", 0, WrongAnswer, ""},      // a wrong value claimed
		{"7+7+9=023", 1, Correct, "23"},       // leading zeros in the value
		{"7+7+4=18", 0, WrongAnswer, "18"},    // wrong target, honest value
		{"7-9=-2", 0, WrongAnswer, "-2"},      // negative values are fine
		{"7/(9-9)", 0, ReusedNumber, ""},      // 9 twice comes first
		{"4/(7-7)=23", 0, DivisionByZero, ""}, // x/0
		{"", 0, Empty, ""},                    //
		{"7+", 0, ParseError, ""},             // truncated
		{"(7+7", 0, ParseError, ""},           // unbalanced
		{"7+7)", 0, ParseError, ""},           // unbalanced
		{")(", 0, ParseError, ""},             //
		{"-7+9", 0, ParseError, ""},           // no unary minus
		{"7++9", 0, ParseError, ""},           //
		{"07+9", 0, ParseError, ""},           // leading zero
		{"7+7+9=", 0, ParseError, ""},         // truncated value
		{"7+7+9==23", 0, ParseError, ""},      //
		{"=23", 0, ParseError, ""},            // no expression
		{"23", 0, UnknownNumber, ""},          // the target is not given
		{"7x7", 0, ParseError, ""},            //
		{"7*7", 0, WrongAnswer, "49"},         //
		{"7+7+9=23\n", 0, ParseError, ""},     // trailing newline
		{"7+7+9=23A", 0, BadChar, ""},         // uppercase
		{"7+7+9=23\x00", 0, BadChar, ""},      // NUL
		{"99999999999999999999", 0, TooLong, ""},
		{"999999999999", 0, UnknownNumber, ""}, // huge literal
		{"7=99999999999", 0, WrongAnswer, ""},  // huge claimed value
		{"7=-99999999999", 0, WrongAnswer, ""}, // huge negative claim
		{"(((((((7))))))", 0, ParseError, ""},  // unbalanced, deep
		{"((((((7))))))", 0, WrongAnswer, "7"}, // balanced, deep
		{strings.Repeat("(", 15), 0, TooLong, ""},
	}
	for _, c := range cases {
		if c.response == "(9-7)*7+4-9" {
			c.reason, c.answer = ReusedNumber, "" // 9 is given once
		}
		got := tk.Verify(p, c.response)
		want := Verdict{Reward: c.reward, Reason: c.reason, Answer: c.answer}
		if got != want {
			t.Errorf("Verify(%q) = %+v, want %+v", c.response, got, want)
		}
	}
}

func TestExprEval(t *testing.T) {
	big := int64(math.MaxInt64/2 + 1)
	cases := []struct {
		expr   string
		nums   []int64
		val    int64
		reason Reason
	}{
		{"1+2*3", []int64{1, 2, 3}, 7, ""},
		{"(1+2)*3", []int64{1, 2, 3}, 9, ""},
		{"8/4/2", []int64{8, 4, 2}, 1, ""},    // left associative
		{"8-4-2", []int64{8, 4, 2}, 2, ""},    // left associative
		{"2-8", []int64{2, 8}, -6, ""},        //
		{"6/(2-8)", []int64{6, 2, 8}, -1, ""}, // exact negative division
		{"7/(2-8)", []int64{7, 2, 8}, 0, InexactDivision},
		{"4/(2-2)", []int64{4, 2, 2}, 0, DivisionByZero},
		{"0*0", []int64{0, 0}, 0, ""},
		{"9223372036854775807+1", []int64{math.MaxInt64, 1}, 0, Overflow},
		{"1-9223372036854775807-9", []int64{math.MaxInt64, 1, 9}, 0, Overflow},
		{"4611686018427387904*2", []int64{big, 2}, 0, Overflow},
		{"4611686018427387904*4611686018427387904", []int64{big, big}, 0, Overflow},
		{"(1-4611686018427387904-4611686018427387904)/(1-2)", []int64{1, big, big, 1, 2}, math.MaxInt64, ""}, // just fits
		{"(0-4611686018427387904-4611686018427387904)/(1-2)", []int64{0, big, big, 1, 2}, 0, Overflow},       // MinInt64 / -1
		{"(0-4611686018427387904-4611686018427387904)*(1-2)", []int64{0, big, big, 1, 2}, 0, Overflow},       // MinInt64 * -1
		{"(1+1", []int64{1, 1}, 0, ParseError},
		{"1+1)", []int64{1, 1}, 0, ParseError},
		{"", nil, 0, ParseError},
		{"1 1", []int64{1, 1}, 0, ParseError},
		{"2+2", []int64{2}, 0, ReusedNumber},
		{"2+3", []int64{2}, 0, UnknownNumber},
		{"2+3+(", []int64{2}, 0, ParseError},                                                 // syntax before usage
		{strings.Repeat("(", 70) + "1" + strings.Repeat(")", 70), []int64{1}, 0, ParseError}, // too deep
		{strings.Repeat("(", 60) + "1" + strings.Repeat(")", 60), []int64{1}, 1, ""},
	}
	for _, c := range cases {
		e, reason := parseExpr(c.expr, c.nums)
		var val int64
		if reason == "" {
			val, reason = e.eval()
		}
		if val != c.val || reason != c.reason {
			t.Errorf("%q over %v = %d, %q; want %d, %q", c.expr, c.nums, val, reason, c.val, c.reason)
		}
	}
}

func TestCountdownSolver(t *testing.T) {
	tk, _ := NewCountdown(CountdownParams{Numbers: 4, MinNumber: 1, MaxNumber: 100, MinTarget: 1, MaxTarget: 100000})
	const any = "any" // some correct demo
	cases := []struct {
		prompt, demo string // demo "" means unsolvable
	}{
		{"4 7 9 7:23", "7+7+9=23"},     // the shortest solution
		{"2 3 5 7:210", "2*3*5*7=210"}, // all four numbers
		{"6 2 8 4:1", "2*4/8=1"},       // exact division
		{"100 75 3 6:318", any},        // 3*(100+6)
		{"4 7 9 7:9", "9=9"},           // the target is a given number
		{"1 1 1 1:99999", ""},          // out of reach
		{"2 2 2 2:99", ""},             // out of reach
		{"7 7 7 7:98", "7*(7+7)=98"},   // parentheses
		{"3 5 8 9:91", any},            // 8*9+5*3+... or whatever the solver finds
	}
	for _, c := range cases {
		p, err := tk.ParsePrompt(c.prompt)
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case c.demo == "" && p.Demo != "":
			t.Errorf("%q: demo %q for an unsolvable prompt", c.prompt, p.Demo)
		case c.demo != "" && c.demo != any && p.Demo != c.demo:
			t.Errorf("%q: demo %q, want %q", c.prompt, p.Demo, c.demo)
		case c.demo != "" && tk.Verify(p, p.Demo).Reward != 1:
			t.Errorf("%q: demo %q graded %+v", c.prompt, p.Demo, tk.Verify(p, p.Demo))
		}
	}
}

func TestCountdownParsePromptErrors(t *testing.T) {
	tk, _ := NewCountdown(fourNumbers())
	for _, c := range []struct{ text, want string }{
		{"", "empty prompt"},
		{"4 7 9 7", "want numbers"},
		{"4 7 9:23", "3 numbers, want 4"},
		{"4 7 9 7 1:23", "5 numbers, want 4 (the task's parameter numbers)"},
		{"44 7 9 7:23", "longer than"},
		{"4 7 9 0:23", "0 is outside 1..9"},
		{"4 7 9 x:23", `"x" is not a number`},
		{"4 7  9:23", `"" is not a number`},
		{"4 7 9 7:5", "5 is outside 10..50"},
		{"4 7 9 7:", `"" is not a number`},
		{"4 7 9 7:02", "not a number"},
		{"4 7 9 7:2A", "not in the alphabet"},
	} {
		_, err := tk.ParsePrompt(c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParsePrompt(%q) = %v, want an error with %q", c.text, err, c.want)
		}
	}
}

func TestCountdownAnswerStart(t *testing.T) {
	tk, _ := NewCountdown(fourNumbers())
	p, _ := tk.ParsePrompt("4 7 9 7:23")
	for _, c := range []struct {
		response string
		want     int
	}{
		{"7+7+9=23", 6}, {"7+7+9", 5}, {"", 0}, {"=", 1},
	} {
		if got := tk.AnswerStart(p, c.response); got != c.want {
			t.Errorf("AnswerStart(%q) = %d, want %d", c.response, got, c.want)
		}
	}
}

// fourNumbers is the countdown setting the hand-written cases use: four
// numbers (the default is three).
func fourNumbers() CountdownParams {
	p := DefaultCountdownParams()
	p.Numbers = 4
	return p
}
