package task

import (
	"strings"
	"testing"
)

func TestAddVerify(t *testing.T) {
	scratch, _ := NewAdd(AddParams{Digits: 3, Scratchpad: true})
	plain, _ := NewAdd(AddParams{Digits: 3, Scratchpad: false})
	cases := []struct {
		task     *Add
		response string
		reward   float64
		reason   Reason
		answer   string
	}{
		{scratch, "15 12 12=1225", 1, Correct, "1225"},
		{scratch, "=1225", 1, Correct, "1225"},             // the scratchpad is not graded
		{scratch, "99 99 99=1225", 1, Correct, "1225"},     // ... even when it is wrong
		{scratch, "15 12=01225", 1, Correct, "1225"},       // leading zeros are fine
		{scratch, "15 12 12=1224", 0, WrongAnswer, "1224"}, // off by one
		{scratch, "15 12 12=0", 0, WrongAnswer, "0"},
		{scratch, "15 12 12=000", 0, WrongAnswer, "0"},
		{scratch, "", 0, Empty, ""},
		{scratch, "15 12 1", 0, ParseError, ""},    // truncated before the answer
		{scratch, "15 12 12=", 0, ParseError, ""},  // truncated at the answer
		{scratch, "1225", 0, ParseError, ""},       // the answer needs its marker
		{scratch, "15=12=1225", 0, ParseError, ""}, // two markers
		{scratch, "=1225 ", 0, ParseError, ""},     // trailing space
		{scratch, "=12a5", 0, ParseError, ""},      // letters in the answer
		{scratch, "=-1225", 0, ParseError, ""},     // signs are not digits
		{scratch, "=1225\x00", 0, BadChar, ""},     // NUL
		{scratch, "15 12=1225X", 0, BadChar, ""},   // uppercase
		{scratch, "=12é", 0, BadChar, ""},          // multi-byte
		{scratch, "=" + strings.Repeat("9", 12), 0, WrongAnswer, strings.Repeat("9", 12)},
		{scratch, "=" + strings.Repeat("9", 13), 0, TooLong, ""}, // longer than 4·3+1
		{scratch, strings.Repeat("=", 100), 0, TooLong, ""},
		{plain, "1225", 1, Correct, "1225"},
		{plain, "=1225", 0, TooLong, ""}, // the marker counts
		{plain, "=999", 0, WrongAnswer, "999"},
		{plain, "1226", 0, WrongAnswer, "1226"},
		{plain, "12 5", 0, ParseError, ""},
		{plain, "12251", 0, TooLong, ""}, // longer than 3+1
	}
	for _, c := range cases {
		p, err := c.task.ParsePrompt("758+467")
		if err != nil {
			t.Fatal(err)
		}
		got := c.task.Verify(p, c.response)
		want := Verdict{Reward: c.reward, Reason: c.reason, Answer: c.answer}
		if got != want {
			t.Errorf("scratchpad=%v Verify(%q) = %+v, want %+v", c.task.p.Scratchpad, c.response, got, want)
		}
	}
}

func TestAddDemoAndAnswerStart(t *testing.T) {
	cases := []struct {
		params AddParams
		prompt string
		demo   string
	}{
		{AddParams{Digits: 3, Scratchpad: true}, "758+467", "15 12 12=1225"},
		{AddParams{Digits: 3, Scratchpad: true}, "100+200", "00 00 03=300"},
		{AddParams{Digits: 3, Scratchpad: true}, "999+1", "10 10 10=1000"},
		{AddParams{Digits: 1, Scratchpad: true}, "0+0", "00=0"},
		{AddParams{Digits: 3, Scratchpad: false}, "758+467", "1225"},
	}
	for _, c := range cases {
		tk, err := NewAdd(c.params)
		if err != nil {
			t.Fatal(err)
		}
		p, err := tk.ParsePrompt(c.prompt)
		if err != nil {
			t.Fatal(err)
		}
		if p.Demo != c.demo {
			t.Errorf("%+v %q: demo %q, want %q", c.params, c.prompt, p.Demo, c.demo)
		}
	}
	tk, _ := NewAdd(DefaultAddParams())
	plain, _ := NewAdd(AddParams{Digits: 3})
	p, _ := tk.ParsePrompt("758+467")
	for _, c := range []struct {
		task     *Add
		response string
		want     int
	}{
		{tk, "15 12 12=1225", 9},
		{tk, "15 12", 5},
		{tk, "", 0},
		{tk, "=", 1},
		{plain, "1225", 0},
		{plain, "", 0},
	} {
		if got := c.task.AnswerStart(p, c.response); got != c.want {
			t.Errorf("AnswerStart(%q) = %d, want %d", c.response, got, c.want)
		}
	}
}

func TestAddParsePromptErrors(t *testing.T) {
	tk, _ := NewAdd(AddParams{Digits: 3, Scratchpad: true})
	for _, c := range []struct{ text, want string }{
		{"", "empty prompt"},
		{"758-467", "want A+B"},
		{"758+", "second operand: missing"},
		{"+467", "first operand: missing"},
		{"75a+467", `"75a" is not a number`},
		{"7581+46", "more than 3 digits"},
		{"058+467", "leading zero"},
		{"758+467+1", "longer than"},
		{"7+4+1", `"4+1" is not a number`},
		{"758+4\n7", "not a number"},
		{"758+46A", "not in the alphabet"},
	} {
		_, err := tk.ParsePrompt(c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParsePrompt(%q) = %v, want an error with %q", c.text, err, c.want)
		}
	}
	for _, text := range []string{"0+0", "1+999", "12+34"} {
		if _, err := tk.ParsePrompt(text); err != nil {
			t.Errorf("ParsePrompt(%q) = %v", text, err)
		}
	}
}
