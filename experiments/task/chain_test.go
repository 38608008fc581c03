package task

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestChainVerify(t *testing.T) {
	tk, err := NewChain(ChainParams{MinOps: 3, MaxOps: 9})
	if err != nil {
		t.Fatal(err)
	}
	const long = "61-4+1-5+7+9+3-2+8-2"
	const longDemo = "61-4=57+1-5+7+9+3-2+8-2 57+1=58-5+7+9+3-2+8-2 58-5=53+7+9+3-2+8-2 53+7=60+9+3-2+8-2 60+9=69+3-2+8-2 69+3=72-2+8-2 72-2=70+8-2 70+8=78-2 78-2=76"
	const demo = "47+8=55-5+9 55-5=50+9 50+9=59"
	cases := []struct {
		prompt, response string
		reward           float64
		reason           Reason
		answer           string
	}{
		{"47+8-5+9", demo, 1, Correct, "59"},
		{"47+8-5+9", demo[:len(demo)-2] + "059", 1, Correct, "59"},          // leading zeros are fine
		{"47+8-5+9", "1+1=1+1+1 9-9=9+9 0+0=59", 1, Correct, "59"},          // the steps are not graded
		{"47+8-5+9", "47+8=55-5+9 55-5=51+9 51+9=60", 0, WrongAnswer, "60"}, // a slip, carried through
		{"47+8-5+9", "47+8=55-5+9 55-5=40+9 40+9=49", 0, WrongAnswer, "49"}, // a slipped borrow
		{"47+8-5+9", "47+8=55-5+8 55-5=50+8 50+8=58", 0, WrongAnswer, "58"}, // an operation miscopied
		{"47+8-5+9", "47+8=55-5+9 55-5=50+9 50+9=0", 0, WrongAnswer, "0"},
		{"47+8-5+9", "47+8=155-5+9 155-5=150+9 150+9=159", 0, WrongAnswer, "159"}, // three-digit values are well formed
		{long, longDemo, 1, Correct, "76"},
		{long, strings.Replace(longDemo, "=60+9", "=61+9", 1), 1, Correct, "76"}, // a wrong step is not graded
		{long, longDemo[:len(longDemo)-1] + "5", 0, WrongAnswer, "75"},
		{"47+8-5+9", "", 0, Empty, ""},
		{"47+8-5+9", "=59", 0, ParseError, ""},                                 // the steps are required
		{"47+8-5+9", "47+8=55-5+9 55-5=59", 0, ParseError, ""},                 // a step short
		{"47+8-5+9", "47+8=55-5+9 55-5=50+9 50+9=59 59=59", 0, ParseError, ""}, // a step too many
		{"47+8-5+9", "47+8=55-5+9  55-5=50+9 50+9=59", 0, ParseError, ""},      // two spaces
		{"47+8-5+9", "47+8=55-5 55-5=50+9 50+9=59", 0, ParseError, ""},         // an operation left out of the rewrite
		{"47+8-5+9", "47+8=55-5+9+1 55-5=50+9 50+9=59", 0, ParseError, ""},     // one too many
		{"47+8-5+9", "47+8=55-5+9 55*5=50+9 50+9=59", 0, ParseError, ""},       // not + or -
		{"47+8-5+9", "47+8=55-5+9 55-=50+9 50+9=59", 0, ParseError, ""},        // an operation without its digit
		{"47+8-5+9", "47=55-5+9 55-5=50+9 50+9=59", 0, ParseError, ""},         // a step without its operation
		{"47+8-5+9", "+8=55-5+9 55-5=50+9 50+9=59", 0, ParseError, ""},         // a step without its value
		{"47+8-5+9", "47+8=-5+9 55-5=50+9 50+9=59", 0, ParseError, ""},         // a step without its new value
		{"47+8-5+9", "47+8=5555-5+9 55-5=50+9 50+9=59", 0, ParseError, ""},     // a value of four digits
		{"47+8-5+9", "47+8 55-5 50+9", 0, ParseError, ""},                      // no "="
		{"47+8-5+9", "47+8=55-5+9 55-5=50+9 50+9", 0, ParseError, ""},          // truncated before the answer
		{"47+8-5+9", "47+8=55-5+9 55-5=50+9 50+9=", 0, ParseError, ""},         // truncated at the answer
		{"47+8-5+9", "47+8=55-5+9 55-5=50+9 50+9=5=9", 0, ParseError, ""},      // two markers in a step
		{"47+8-5+9", "47+8=55-5+9 55-5=50+9 50+9=1059", 0, ParseError, ""},     // an answer of four digits
		{"47+8-5+9", demo + " ", 0, ParseError, ""},
		{"47+8-5+9", demo[:len(demo)-1] + "\x009", 0, BadChar, ""},
		{"47+8-5+9", demo + "É", 0, BadChar, ""},
		{"47+8-5+9", strings.Repeat("5", 162), 0, TooLong, ""}, // longer than 9²+9·9-1 = 161
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
	if v := tk.Verify(Prompt{Text: "47*8"}, "47+8=55"); v.Reason != BadPrompt {
		t.Errorf("Verify of a malformed prompt = %+v, want bad_prompt", v)
	}
}

func TestChainDemo(t *testing.T) {
	tk, _ := NewChain(ChainParams{MinOps: 2, MaxOps: 9})
	for _, c := range []struct{ prompt, demo string }{
		{"47+8-5+9", "47+8=55-5+9 55-5=50+9 50+9=59"},
		{"10+1-1", "10+1=11-1 11-1=10"},
		{"99-9+9", "99-9=90+9 90+9=99"},
		{"61-4+1-5+7+9+3-2+8-2", "61-4=57+1-5+7+9+3-2+8-2 57+1=58-5+7+9+3-2+8-2 58-5=53+7+9+3-2+8-2 53+7=60+9+3-2+8-2 60+9=69+3-2+8-2 69+3=72-2+8-2 72-2=70+8-2 70+8=78-2 78-2=76"},
	} {
		p, err := tk.ParsePrompt(c.prompt)
		if err != nil {
			t.Fatal(err)
		}
		if p.Demo != c.demo {
			t.Errorf("%q: demo %q, want %q", c.prompt, p.Demo, c.demo)
		}
		if at, want := tk.AnswerStart(p, p.Demo), strings.LastIndexByte(c.demo, '=')+1; at != want {
			t.Errorf("%q: AnswerStart = %d, want %d", c.prompt, at, want)
		}
	}
	p, _ := tk.ParsePrompt("47+8-5+9")
	for response, want := range map[string]int{
		"": 0, "47+8=55-5+9": 11, "=": 1, "==": 2, "===": 3, "====": 3, "47+8=55-5+9 55-5=50+9 50+9=5": 27, "47+8=55-5+9 55-5=50+9 50+9": 26,
	} {
		if got := tk.AnswerStart(p, response); got != want {
			t.Errorf("AnswerStart(%q) = %d, want %d", response, got, want)
		}
	}
	if got := tk.AnswerStart(Prompt{Text: "4"}, "47+8=55"); got != 7 {
		t.Errorf("AnswerStart of a malformed prompt = %d, want the response's length 7", got)
	}
}

func TestChainParsePromptErrors(t *testing.T) {
	tk, _ := NewChain(ChainParams{MinOps: 2, MaxOps: 4})
	for _, c := range []struct{ text, want string }{
		{"", "empty prompt"},
		{"4+8-5", "start of two digits"},
		{"07+8-5", "start of two digits"},
		{"47+8-", "not operations"},
		{"47+8*5", `operation 2 is "*5"`},
		{"47+8-0", `operation 2 is "-0"`},
		{"47++8-", `operation 1 is "++"`},
		{"15-9+1", "after operation 1 is 6, outside 10..99"},
		{"95+9-1", "after operation 1 is 104, outside 10..99"},
		{"47+8", "1 operations, want 2..4"},
		{"47+1+1+1+1+1", "longer than"},
	} {
		if _, err := tk.ParsePrompt(c.text); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParsePrompt(%q) = %v, want an error with %q", c.text, err, c.want)
		}
	}
	for _, p := range []ChainParams{{MinOps: 1, MaxOps: 4}, {MinOps: 5, MaxOps: 4}, {MinOps: 2, MaxOps: 13}} {
		if _, err := NewChain(p); err == nil {
			t.Errorf("NewChain(%+v) gave no error", p)
		}
	}
}

// TestChainLengths checks the response lengths: 77 to 119 characters with
// the defaults (both ends reached), the longest within MaxResponseLen, and
// every running value of every prompt in 10..99.
func TestChainLengths(t *testing.T) {
	tk, _ := NewChain(DefaultChainParams())
	lo, hi := 1000, 0
	for i := range 400 {
		p, err := tk.Prompt(Eval, 1, i)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tk.ParsePrompt(p.Text); err != nil {
			t.Fatalf("prompt %d %q does not parse: %v", i, p.Text, err)
		}
		if v := tk.Verify(p, p.Demo); v.Reward != 1 {
			t.Fatalf("prompt %q: demo %q graded %+v", p.Text, p.Demo, v)
		}
		lo, hi = min(lo, len(p.Demo)), max(hi, len(p.Demo))
	}
	if lo != 77 || hi != 119 || tk.MaxResponseLen() < hi {
		t.Errorf("demo lengths %d..%d (max %d), want 77..119", lo, hi, tk.MaxResponseLen())
	}
}

// TestChainFlawed checks the flawed demonstrations: wrong, well formed,
// within MaxResponseLen, each of the three kinds of slip present, and the
// first slip spread over the steps rather than in the answer.
func TestChainFlawed(t *testing.T) {
	tk, _ := NewChain(DefaultChainParams())
	rng := rand.New(rand.NewPCG(3, 4))
	var kinds struct{ off1, off10, copied int }
	inAnswer := 0
	const n = 600
	for i := range n {
		p, err := tk.Prompt(Train, 5, i)
		if err != nil {
			t.Fatal(err)
		}
		f := tk.FlawedDemo(p, rng)
		if v := tk.Verify(p, f); v.Reason != WrongAnswer || len(f) > tk.MaxResponseLen() {
			t.Fatalf("prompt %q: flawed demo %q graded %+v (%d characters)", p.Text, f, v, len(f))
		}
		k := 0
		for k < len(f) && k < len(p.Demo) && f[k] == p.Demo[k] {
			k++
		}
		if k >= tk.AnswerStart(p, p.Demo) {
			inAnswer++
			continue
		}
		// The first differing step: a value or a copied operation.
		start := strings.LastIndexAny(p.Demo[:k], " =") + 1
		end := start + strings.IndexAny(p.Demo[start:]+" ", "+- ")
		want, got := p.Demo[start:end], f[start:start+strings.IndexAny(f[start:]+" ", "+- =")]
		switch {
		case k >= end:
			kinds.copied++
		case len(want) == len(got) && want[0] != got[0]:
			kinds.off10++
		default:
			kinds.off1++
		}
	}
	t.Logf("%d flawed demos: %+v first slips before the answer, %d in it", n, kinds, inAnswer)
	if kinds.off1 < n/10 || kinds.off10 < n/10 || kinds.copied < n/10 {
		t.Errorf("slips by kind %+v of %d, want each ≥ %d", kinds, n, n/10)
	}
	if inAnswer > n/5 {
		t.Errorf("%d of %d flawed demos go wrong only in the answer, want ≤ %d", inAnswer, n, n/5)
	}
}
