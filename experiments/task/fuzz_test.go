package task

import (
	"strings"
	"testing"
)

// fuzzVerify checks a verifier on a fuzzed response against a fixed prompt
// and on a fuzzed prompt text: no panic, a reward in [0, 1], a reason, an
// answer start inside the response.
func fuzzVerify(f *testing.F, tk Task, prompts []string, responses []string) {
	for _, p := range prompts {
		for _, r := range responses {
			f.Add(p, r)
		}
	}
	var generated []Prompt
	for i := range 7 {
		p, err := tk.Prompt(Train, 1, i)
		if err != nil {
			f.Fatal(err)
		}
		generated = append(generated, p)
	}
	f.Fuzz(func(t *testing.T, promptText, response string) {
		check := func(p Prompt) {
			v := tk.Verify(p, response)
			if v.Reward < 0 || v.Reward > 1 || v.Reason == "" {
				t.Fatalf("Verify(%q, %q) = %+v", p.Text, response, v)
			}
			if v.Reward > 0 && v.Answer == "" {
				t.Fatalf("Verify(%q, %q) = %+v: a reward without an answer", p.Text, response, v)
			}
			if at := tk.AnswerStart(p, response); at < 0 || at > len(response) {
				t.Fatalf("AnswerStart(%q, %q) = %d", p.Text, response, at)
			}
		}
		check(Prompt{Text: promptText})
		if p, err := tk.ParsePrompt(promptText); err == nil {
			check(p)
			if p.Demo != "" {
				if v := tk.Verify(p, p.Demo); v.Reward != 1 {
					t.Fatalf("prompt %q: demo %q graded %+v", promptText, p.Demo, v)
				}
			}
		}
		check(generated[len(response)%len(generated)])
	})
}

// nasty are responses every verifier must survive.
var nasty = []string{
	"", " ", "=", "==", "\x00", "\xff\xfe", "é", "ABC", "\n", strings.Repeat("9", 40),
	strings.Repeat("(", 40), strings.Repeat(")", 40), "-", "--1", "9223372036854775808",
}

func FuzzVerifyAdd(f *testing.F) {
	tk, _ := New("add", nil)
	fuzzVerify(f, tk,
		[]string{"758+467", "0+0", "999+999", "+", "1+", "99999999999999999999+1", "758+467+1"},
		append([]string{"15 12 12=1225", "15 12=", "=01225", "=1225 ", "=-1225", "1225"}, nasty...))
}

func FuzzVerifyCountdown(f *testing.F) {
	tk, _ := New("countdown", fourNumbers())
	fuzzVerify(f, tk,
		[]string{"4 7 9 7:23", "1 1 1 1:50", "4 7 9:23", "4 7 9 7:", ":", "9 9 9 9:10"},
		append([]string{
			"7+7+9=23", "7+7+9", "4/(7-7)", "(4+7)*7/9", "(7+7", "7+7)", "7*7*7*7*9",
			"4*7-9+4", "1+2", "07+9", "7=99999999999999999999", "7=-", "((((((7))))))",
			"9223372036854775807*9", "4 / 0",
		}, nasty...))
}

func FuzzVerifyPath(f *testing.F) {
	tk, _ := New("path", nil)
	fuzzVerify(f, tk,
		[]string{"ab ac bd ce cf dg:a>g", "ab cd:a>d", "ab:a>a", ":a>b", "aa:a>b", "ab ba:a>b"},
		append([]string{"abdg", "ag", "bdg", "abdbdg", "abdgx", "ab dg", "abdgabdga", "zzzz"}, nasty...))
}

func FuzzVerifyLongAdd(f *testing.F) {
	tk, _ := New("long_add", LongAddParams{MinDigits: 3, MaxDigits: 8})
	fuzzVerify(f, tk,
		[]string{"758+467", "999+999", "93050901+92409011", "758+4670", "058+467", "+", "758+467+1"},
		append([]string{
			"8+7+0>15 5+6+1>12 7+4+1>12=1225", "8+7+0>15 5+6+1>12 7+4+1>12=", "8+7+0>15 5+6+1>12=1225",
			"9+9+9>99 9+9+9>99 9+9+9>99=01225", "8+7+0>15  5+6+1>12 7+4+1>12=1225", "=1225", "8+7+0>1",
		}, nasty...))
}

func FuzzVerifyLongAddRewrite(f *testing.F) {
	tk, _ := New("long_add", LongAddParams{MinDigits: 3, MaxDigits: 5, Rewrite: true})
	fuzzVerify(f, tk,
		[]string{"758+467", "99999+99999", "758+4670", "+", "1+1"},
		append([]string{
			"758+467:8+7+0>15 75+46:5+6+1>12 7+4:7+4+1>12=1225", "758+467:8+7+0>15 75+46:5+6+1>12 7+4:7+4+1>12=",
			"758+467:8+7+0>15 75+46:5+6+1>12 :7+4+1>12=1225", "+:8+7+0>15", ":", " : ",
		}, nasty...))
}

func FuzzVerifyChain(f *testing.F) {
	tk, _ := New("chain", ChainParams{MinOps: 2, MaxOps: 4})
	fuzzVerify(f, tk,
		[]string{"47+8-5+9", "47+8", "10-1", "99+1+1", "47+8-5+9+1-1", "07+8-5", "47+0-5", "47*8-5", "4+8-5", "+", ""},
		append([]string{
			"47+8=55-5+9 55-5=50+9 50+9=59", "47+8=55-5+9 55-5=50+9 50+9=", "47+8=55-5+9 55-5=59", "=59", "47+8=55-5+9  55-5=50+9 50+9=59", "47+8=55-5+9 55-5=50+9 50+9=059", "1+1=1+1+1 1+1=1+1 1+1=1",
			"47+8=5555-5+9 55-5=50+9 50+9=59", "47+8=55-5+ 55-5=50+9 50+9=59", "47+8=55-5+9 55-5=50 50+9=59", "=55-5+9 =50+9 =59", " =", "=", "0+0=0-0+0 0-0=0+0 0+0=0", "47+8=55-5+9 55-5=50+9 50+9=59=",
		}, nasty...))
}

func FuzzVerifyCountdownSearch(f *testing.F) {
	tk, _ := New("countdown_search", nil)
	fuzzVerify(f, tk,
		[]string{"2 5 7 4:47", "1 1 1 1:60", "2 5 7:47", "2 5 7 4:", ":", "9 9 9 9:10"},
		append([]string{
			"4+2=6[6 5 7],7-6=1[1 5]!;4+2=6[6 5 7],7*6=42[42 5],42+5=47:47", "7*6=42,42+5=47:47",
			"4+2=6[6 5 7]!;:47", "4+2=6[6 5 7", "4+2=6[]", "4+2=6[6  5 7]", "4/0=0:0", "9/2=4:4", ";;:", "!:", "[]:",
			"999999999*999999999=1:1", "4+2=6:6:6", "4+2=6!", "7-9=-2:-2", "+=:", "2+5=7[7 7 4],7*7=49[49 4],49-4=45:45",
		}, nasty...))
}

func FuzzVerifyDAGSearch(f *testing.F) {
	tk, _ := New("dag_search", nil)
	fuzzVerify(f, tk,
		[]string{"ab ac bd ce cf eg:a>g", "abc bd cef eg:a>g", "ab cd:a>d", "ab:a>a", ":a>b", "aa:a>b", "ab ba:a>b", "ab ab:a>b", "abb:a>b"},
		append([]string{
			"abd!;acf!;aceg:aceg", "aceg:aceg", "aceg!:aceg", ";:", "!:", "a:a", "abab:abab", "abd!;;aceg:aceg",
			"aceg:", ":aceg", "aceg:aceg:", "zz!;aceg:aceg",
		}, nasty...))
}

func FuzzVerifyChainDetours(f *testing.F) {
	tk, _ := New("chain", ChainParams{MinOps: 3, MaxOps: 8, Detours: 3})
	fuzzVerify(f, tk,
		[]string{"47+8-5+9", "99-9-9-9", "10+1+1", "47+8-5+9+1+1+1+1+1"},
		append([]string{
			"47+8=55-5+9 55-5+9 55-5=50+9 50+9=59", "47+8=55-5+9 55-5=50+9 50+9 50+9 50+9 50+9=59",
			"47+8=55-5+9 55-5 55-5=50+9 50+9=59", " ", "  ", "=", "47+8=55-5+9 55-5=50+9 50+9=59 59",
			"55-5+9 47+8=55-5+9 55-5=50+9 50+9=59",
		}, nasty...))
}
