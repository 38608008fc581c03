package task

import (
	"math/rand/v2"
	"strings"
	"testing"
)

func TestCountdownSearchVerify(t *testing.T) {
	tk, _ := NewCountdownSearch(DefaultCountdownSearchParams())
	p, err := tk.ParsePrompt("2 5 7 4:47")
	if err != nil {
		t.Fatal(err)
	}
	cases := []verdictCase{
		{"4+2=6[6 5 7],7-6=1[1 5]!;4+2=6[6 5 7],7*6=42[42 5],42+5=47:47", 1, Correct, "47"},                                      // a demonstration
		{"7*6=42,42+5=47:47", 0, UnknownNumber, ""},                                                                              // 6 is not given
		{"4+2=6,7*6=42,42+5=47:47", 1, Correct, "47"},                                                                            // pools may be left out
		{"2+4=6[5 7 6],6*7=42[5 42],5+42=47:47", 1, Correct, "47"},                                                               // any operand and pool order
		{"7*5=35[35 2 4],4*2=8[8 35],35+8=43[43]!;7*5=35,35+4=39[39 2]!;4+2=6[6 5 7],7*6=42[42 5],42+5=47:47", 1, Correct, "47"}, // dead ends of any depth
		{"7*5=35[35 2 4],35+4=39[39 2],39+2=41:41", 0, WrongAnswer, "41"},                                                        // wrong target, honest value
		{"4+2=6[6 5 7],7*6=42[42 5],42+5=47:46", 0, WrongAnswer, ""},                                                             // a wrong value claimed
		{"4+2=7[7 5 7],7*7=49[49 5],49-2=47:47", 0, WrongAnswer, ""},                                                             // a miscomputed step
		{"4+2=6[6 5 4],7*6=42[42 5],42+5=47:47", 0, WrongAnswer, ""},                                                             // a wrong pool
		{"4+2=6[6 5 7],6*2=12[12 5]!;4+2=6:6", 0, ReusedNumber, ""},                                                              // 2 is used up
		{"4+2=6[6 5 7],7*6=42[42 5],42+5=47!:47", 0, ParseError, ""},                                                             // the last attempt abandoned
		{"4+2=6[6 5 7];4+2=6[6 5 7],7*6=42[42 5],42+5=47:47", 0, ParseError, ""},                                                 // a dead end without "!"
		{"4+2=6[6 5 7],7*6=42[42 5],42+5=47", 0, ParseError, ""},                                                                 // no answer
		{"4+2=6[6 5 7],7*6=42[42 5],42+5=47:", 0, ParseError, ""},                                                                // truncated answer
		{"4+2=6[6 5 7],7*6=42[42 5],42+5=47:47:47", 0, ParseError, ""},                                                           //
		{"4+2=6[6 5 7],7*6=42[42 5],42+5=47: 47", 0, ParseError, ""},                                                             // a space
		{"7/2=3,3+4=7:7", 0, InexactDivision, ""},                                                                                //
		{"4-4=0[0 2 5 7],7/0=0:0", 0, ReusedNumber, ""},                                                                          // 4 is given once
		{"7-5=2[2 2 4],2/2=1[1 4],4/1=4[4],2/0=0:0", 0, ReusedNumber, ""},                                                        //
		{"5-7=-2:-2", 0, ParseError, ""},                                                                                         // no negative numbers in steps
		{"7-5=2,2-2=0[0 4],4/0=0:0", 0, DivisionByZero, ""},                                                                      //
		{"07+5=12:12", 0, ParseError, ""},                                                                                        // leading zero
		{"", 0, Empty, ""},                                                                                                       //
		{"4+2=6[6 5 7],", 0, ParseError, ""},                                                                                     // truncated
		{":47", 0, ParseError, ""},                                                                                               // no search
		{"4+2=6A:6", 0, BadChar, ""},                                                                                             //
		{strings.Repeat("7", 121), 0, TooLong, ""},                                                                               //
	}
	checkVerdicts(t, tk, p, cases)
	if at := tk.AnswerStart(p, "4+2=6[6 5 7],7*6=42[42 5],42+5=47:47"); at != 34 {
		t.Errorf("AnswerStart = %d, want 34", at)
	}
	if at := tk.AnswerStart(p, "4+2=6[6 5 7],"); at != 13 {
		t.Errorf("AnswerStart of a search not yet done = %d, want 13 (its length)", at)
	}
}

// TestCountdownSearchDemos checks the generated prompts: every demo is
// graded correct, fits the task, takes at most MaxDeadEnds dead ends, and
// the demonstrations differ at the choice points (many first steps for one
// problem), with a share of them backtracking.
func TestCountdownSearchDemos(t *testing.T) {
	for _, params := range []CountdownSearchParams{
		DefaultCountdownSearchParams(),
		{Numbers: 3, MinNumber: 1, MaxNumber: 20, MinTarget: 1, MaxTarget: 200, MaxDeadEnds: 1, MaxResponse: 40},
	} {
		tk, err := NewCountdownSearch(params)
		if err != nil {
			t.Fatal(err)
		}
		backtracked := 0
		const n = 100
		for i := range n {
			p := checkSearchDemo(t, tk, i, params.MaxDeadEnds, &backtracked)
			if SplitOf(p.Text) != Eval {
				t.Errorf("prompt %q is not an eval prompt", p.Text)
			}
			again, _ := tk.Prompt(Eval, 3, i)
			if again.Text != p.Text || again.Demo != p.Demo {
				t.Errorf("prompt %d differs on a second draw", i)
			}
		}
		if params.MaxDeadEnds > 0 && backtracked < n/5 {
			t.Errorf("%+v: %d of %d demos backtrack, want ≥ %d", params, backtracked, n, n/5)
		}
	}
	// Choice points: the first steps of the demonstrations of one set of
	// numbers, over its targets.
	tk, _ := NewCountdownSearch(DefaultCountdownSearchParams())
	first := map[string]bool{}
	for target := int64(10); target <= 60; target++ {
		q := countdownProblem{nums: []int64{2, 5, 7, 4}, target: target}
		if d := tk.searchDemo(&q); d != "" {
			step, _, _ := strings.Cut(d, "[")
			first[step] = true
		}
	}
	if len(first) < 8 {
		t.Errorf("demos of 2 5 7 4 begin with %d distinct steps %v, want ≥ 8", len(first), first)
	}
}

func TestCountdownSearchParams(t *testing.T) {
	bad := []struct {
		mut  func(*CountdownSearchParams)
		want string
	}{
		{func(p *CountdownSearchParams) { p.Numbers = 2 }, "numbers = 2"},
		{func(p *CountdownSearchParams) { p.MaxNumber = 100 }, "max_number = 100"},
		{func(p *CountdownSearchParams) { p.MinTarget = 0 }, "min_target = 0"},
		{func(p *CountdownSearchParams) { p.MaxTarget = 5 }, "max_target = 5"},
		{func(p *CountdownSearchParams) { p.MaxDeadEnds = 9 }, "max_dead_ends = 9"},
		{func(p *CountdownSearchParams) { p.MaxResponse = 8 }, "max_response = 8"},
	}
	for _, b := range bad {
		p := DefaultCountdownSearchParams()
		b.mut(&p)
		if _, err := New("countdown_search", p); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("New(%+v) error %v, want one naming %q", p, err, b.want)
		}
	}
	tk, _ := New("countdown_search", nil)
	if _, err := tk.ParsePrompt("2 5 7:47"); err == nil {
		t.Error("a prompt of 3 numbers parsed by a task of 4")
	}
	p, err := tk.ParsePrompt("1 1 1 1:60")
	if err != nil || p.Demo != "" {
		t.Errorf("unreachable target: demo %q, error %v; want no demo, no error", p.Demo, err)
	}
}

// checkSearchDemo draws eval prompt i of a task that writes a search out
// and checks its demonstration (graded right, at most maxDeadEnds dead
// ends marked "!", counted in backtracked when it has any; prompt and demo
// within the task's limits) and three flawed demonstrations (graded wrong,
// within the limit). It returns the prompt.
func checkSearchDemo(t *testing.T, tk Task, i, maxDeadEnds int, backtracked *int) Prompt {
	t.Helper()
	p, err := tk.Prompt(Eval, 3, i)
	if err != nil {
		t.Fatalf("%s prompt %d: %v", tk.Name(), i, err)
	}
	if v := tk.Verify(p, p.Demo); v.Reward != 1 {
		t.Fatalf("%s: demo %q of %q graded %+v", tk.Name(), p.Demo, p.Text, v)
	}
	if d := strings.Count(p.Demo, "!"); d > maxDeadEnds {
		t.Errorf("%s: demo %q has %d dead ends, want ≤ %d", tk.Name(), p.Demo, d, maxDeadEnds)
	} else if d > 0 {
		*backtracked++
	}
	if len(p.Demo) > tk.MaxResponseLen() || len(p.Text) > tk.MaxPromptLen() {
		t.Errorf("%s: %q -> %q does not fit", tk.Name(), p.Text, p.Demo)
	}
	for range 3 {
		if f := tk.FlawedDemo(p, rand.New(rand.NewPCG(uint64(i), 9))); tk.Verify(p, f).Reward >= 1 || len(f) > tk.MaxResponseLen() {
			t.Errorf("%s: flawed demo %q of %q is right or too long", tk.Name(), f, p.Text)
		}
	}
	return p
}
