package task

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestLongAddVerify(t *testing.T) {
	tk, err := NewLongAdd(LongAddParams{MinDigits: 3, MaxDigits: 8})
	if err != nil {
		t.Fatal(err)
	}
	const pad = "8+7+0>15 5+6+1>12 7+4+1>12"
	long := "1+1+0>02 0+1+0>01 9+0+0>09 0+9+0>09 5+0+0>05 0+4+0>04 3+2+0>05 9+9+0>18=185459912"
	cases := []struct {
		prompt, response string
		reward           float64
		reason           Reason
		answer           string
	}{
		{"758+467", pad + "=1225", 1, Correct, "1225"},
		{"758+467", pad + "=01225", 1, Correct, "1225"},                    // leading zeros are fine
		{"758+467", "9+9+9>99 9+9+9>99 9+9+9>99=1225", 1, Correct, "1225"}, // the digits are not graded
		{"758+467", pad + "=1224", 0, WrongAnswer, "1224"},
		{"758+467", "8+7+0>15 5+6+0>11 7+4+1>12=1215", 0, WrongAnswer, "1215"}, // a forgotten carry, carried through
		{"758+467", pad + "=0", 0, WrongAnswer, "0"},
		{"93050901+92409011", long, 1, Correct, "185459912"},
		{"93050901+92409011", strings.Replace(long, "5+0+0>05", "5+0+0>06", 1), 1, Correct, "185459912"}, // a wrong column is not graded
		{"93050901+92409011", long[:len(long)-1] + "3", 0, WrongAnswer, "185459913"},
		{"758+467", "", 0, Empty, ""},
		{"758+467", "=1225", 0, ParseError, ""},                            // the scratchpad is required
		{"758+467", "8+7+0>15 5+6+1>12=1225", 0, ParseError, ""},           // a column short
		{"758+467", pad + " 0+0+1>01=1225", 0, ParseError, ""},             // a column too many
		{"758+467", "8+7+0>15  5+6+1>12 7+4+1>12=1225", 0, ParseError, ""}, // two spaces
		{"758+467", "8+7+0>1a 5+6+1>12 7+4+1>12=1225", 0, ParseError, ""},
		{"758+467", "8-7+0>15 5+6+1>12 7+4+1>12=1225", 0, ParseError, ""},
		{"758+467", pad, 0, ParseError, ""},            // truncated before the answer
		{"758+467", pad + "=", 0, ParseError, ""},      // truncated at the answer
		{"758+467", pad + "=12=25", 0, ParseError, ""}, // two markers
		{"758+467", pad + "=1225 ", 0, ParseError, ""},
		{"758+467", pad + "=12\x005", 0, BadChar, ""},
		{"758+467", pad + "=1225É", 0, BadChar, ""},
		{"758+467", pad + "=" + strings.Repeat("9", 54), 0, WrongAnswer, strings.Repeat("9", 54)},
		{"758+467", pad + "=" + strings.Repeat("9", 55), 0, TooLong, ""}, // longer than 10·8+1
	}
	for _, c := range cases {
		p, err := tk.ParsePrompt(c.prompt)
		if err != nil {
			t.Fatalf("ParsePrompt(%q): %v", c.prompt, err)
		}
		got := tk.Verify(p, c.response)
		want := Verdict{Reward: c.reward, Reason: c.reason, Answer: c.answer}
		if got != want {
			t.Errorf("Verify(%q, %q) = %+v, want %+v", c.prompt, c.response, got, want)
		}
	}
}

func TestLongAddRewrite(t *testing.T) {
	tk, err := NewLongAdd(LongAddParams{MinDigits: 3, MaxDigits: 4, Rewrite: true})
	if err != nil {
		t.Fatal(err)
	}
	p, err := tk.ParsePrompt("758+467")
	if err != nil {
		t.Fatal(err)
	}
	const demo = "758+467:8+7+0>15 75+46:5+6+1>12 7+4:7+4+1>12=1225"
	if p.Demo != demo {
		t.Fatalf("demo %q, want %q", p.Demo, demo)
	}
	if n := tk.MaxResponseLen(); n != 69 {
		t.Errorf("MaxResponseLen = %d, want 4²+13·4+1 = 69", n)
	}
	for _, c := range []struct {
		response string
		reason   Reason
	}{
		{demo, Correct},
		{"111+111:8+7+0>15 11+11:5+6+1>12 1+1:7+4+1>12=1225", Correct}, // the digits are not graded
		{"758+467:8+7+0>15 75+46:5+6+1>12 7+4:7+4+1>12=1224", WrongAnswer},
		{"8+7+0>15 5+6+1>12 7+4+1>12=1225", ParseError},                     // the rewrite is required
		{"758+467:8+7+0>15 758+467:5+6+1>12 7+4:7+4+1>12=1225", ParseError}, // not shortened
		{"758+467:8+7+0>15 75+4:5+6+1>12 7+4:7+4+1>12=1225", ParseError},    // unequal widths
		{"758+467:8+7+0>15 75+46;5+6+1>12 7+4:7+4+1>12=1225", ParseError},
		{"758+467:8+7+0>15 75+46:5+6+1>12=1225", ParseError},
	} {
		if v := tk.Verify(p, c.response); v.Reason != c.reason {
			t.Errorf("Verify(%q) = %+v, want %s", c.response, v, c.reason)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	slipsInRewrite := 0
	for range 200 {
		f := tk.FlawedDemo(p, rng)
		if v := tk.Verify(p, f); v.Reason != WrongAnswer {
			t.Fatalf("flawed demo %q graded %+v", f, v)
		}
		for j, e := range strings.Split(f[:strings.IndexByte(f, '=')], " ") {
			if want := strings.Split(demo, " ")[j]; e != want && e[:strings.IndexByte(e, ':')] != want[:strings.IndexByte(want, ':')] {
				slipsInRewrite++
				break
			}
		}
	}
	if slipsInRewrite < 20 {
		t.Errorf("%d of 200 flawed demos miscopy a rewritten number, want ≥ 20", slipsInRewrite)
	}
}

func TestLongAddDemo(t *testing.T) {
	tk, _ := NewLongAdd(LongAddParams{MinDigits: 3, MaxDigits: 8})
	for _, c := range []struct{ prompt, demo string }{
		{"758+467", "8+7+0>15 5+6+1>12 7+4+1>12=1225"},
		{"100+200", "0+0+0>00 0+0+0>00 1+2+0>03=300"},
		{"999+999", "9+9+0>18 9+9+1>19 9+9+1>19=1998"},
		{"93050901+92409011", "1+1+0>02 0+1+0>01 9+0+0>09 0+9+0>09 5+0+0>05 0+4+0>04 3+2+0>05 9+9+0>18=185459912"},
	} {
		p, err := tk.ParsePrompt(c.prompt)
		if err != nil {
			t.Fatal(err)
		}
		if p.Demo != c.demo {
			t.Errorf("%q: demo %q, want %q", c.prompt, p.Demo, c.demo)
		}
		if at, want := tk.AnswerStart(p, p.Demo), strings.IndexByte(c.demo, '=')+1; at != want {
			t.Errorf("%q: AnswerStart = %d, want %d", c.prompt, at, want)
		}
	}
	p, _ := tk.ParsePrompt("758+467")
	for response, want := range map[string]int{"": 0, "8+7+0>15": 8, "=": 1, "8+7+0>15 5+6+1>12 7+4+1>12=1": 27} {
		if got := tk.AnswerStart(p, response); got != want {
			t.Errorf("AnswerStart(%q) = %d, want %d", response, got, want)
		}
	}
}

func TestLongAddParsePromptErrors(t *testing.T) {
	tk, _ := NewLongAdd(LongAddParams{MinDigits: 3, MaxDigits: 5})
	for _, c := range []struct{ text, want string }{
		{"", "empty prompt"},
		{"758-467", "want A+B"},
		{"758+", "second operand: missing"},
		{"75+467", `"75" has 2 digits, want 3..5`},
		{"758+4670", "operands of 3 and 4 digits"},
		{"058+467", "leading zero"},
		{"758+46a", "not a number"},
		{"758+467+1", "not a number"},
		{"123456+123456", "longer than"},
	} {
		if _, err := tk.ParsePrompt(c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParsePrompt(%q) = %v, want an error with %q", c.text, err, c.want)
		}
	}
	for _, p := range []LongAddParams{{MinDigits: 1, MaxDigits: 4}, {MinDigits: 5, MaxDigits: 4}, {MinDigits: 2, MaxDigits: 31}} {
		if _, err := NewLongAdd(p); err == nil {
			t.Errorf("NewLongAdd(%+v) gave no error", p)
		}
	}
}

// TestLongAddLengths checks the response lengths: 68 to 115 characters
// with the defaults, 60 to 81 for 6 to 8 digits without the rewrite, the
// ends of each range reached.
func TestLongAddLengths(t *testing.T) {
	for _, c := range []struct {
		params LongAddParams
		lo, hi int
	}{
		{DefaultLongAddParams(), 68, 115},
		{LongAddParams{MinDigits: 6, MaxDigits: 8}, 60, 81},
	} {
		tk, _ := NewLongAdd(c.params)
		lo, hi := 1000, 0
		for i := range 400 {
			p, err := tk.Prompt(Train, 1, i)
			if err != nil {
				t.Fatal(err)
			}
			lo, hi = min(lo, len(p.Demo)), max(hi, len(p.Demo))
		}
		if lo != c.lo || hi != c.hi || hi != tk.MaxResponseLen() {
			t.Errorf("%+v: demo lengths %d..%d (max %d), want %d..%d", c.params, lo, hi, tk.MaxResponseLen(), c.lo, c.hi)
		}
	}
}

// TestFlawedBeforeAnswer checks where flawed demonstrations of the long
// tasks go wrong: the first character where a flawed demo leaves the
// correct one lies before the answer start (where tree search may fork)
// in most of them, spread over the reasoning rather than bunched at its
// start.
func TestFlawedBeforeAnswer(t *testing.T) {
	for _, c := range []struct {
		name   string
		params any
	}{{"long_add", nil}, {"long_add", LongAddParams{MinDigits: 6, MaxDigits: 8}}, {"chain", nil}} {
		name := c.name
		tk, err := New(name, c.params)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(7, 7))
		before, n := 0, 400
		var thirds [3]int // where in the reasoning the first slip lies
		for i := range n {
			p, err := tk.Prompt(Train, 2, i)
			if err != nil {
				t.Fatal(err)
			}
			f := tk.FlawedDemo(p, rng)
			k := 0
			for k < len(f) && k < len(p.Demo) && f[k] == p.Demo[k] {
				k++
			}
			at := min(tk.AnswerStart(p, f), tk.AnswerStart(p, p.Demo))
			if k < at {
				before++
				thirds[min(2, 3*k/at)]++
			}
		}
		if share := float64(before) / float64(n); share < 0.8 {
			t.Errorf("%s: %.0f%% of flawed demos go wrong before the answer, want ≥ 80%%", name, 100*share)
		}
		for j, c := range thirds {
			if c < before/8 {
				t.Errorf("%s: %d of %d first slips in third %d of the reasoning: %v", name, c, before, j, thirds)
			}
		}
		t.Logf("%s: %d of %d flawed demos go wrong before the answer; by third of the reasoning %v", name, before, n, thirds)
	}
}
