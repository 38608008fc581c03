package task

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// allTasks builds every bundled task with its defaults and a few other
// parameter sets.
func allTasks(t testing.TB) []Task {
	t.Helper()
	var out []Task
	for _, name := range Names() {
		tk, err := New(name, nil)
		if err != nil {
			t.Fatalf("New(%q): %v", name, err)
		}
		out = append(out, tk)
	}
	extra := []struct {
		name   string
		params any
	}{
		{"add", AddParams{Digits: 1, Scratchpad: true}},
		{"add", AddParams{Digits: 5, Scratchpad: false}},
		{"countdown", CountdownParams{Numbers: 3, MinNumber: 1, MaxNumber: 20, MinTarget: 1, MaxTarget: 200}},
		{"path", &PathParams{Nodes: 12, RouteLen: 5, ExtraEdges: 3, AllowRevisit: true, LengthShaping: true}},
		{"path", PathParams{Nodes: 4, RouteLen: 2, ExtraEdges: 0}},
		{"long_add", LongAddParams{MinDigits: 2, MaxDigits: 30}},
		{"long_add", LongAddParams{MinDigits: 2, MaxDigits: 5, Rewrite: true}},
		{"chain", ChainParams{MinOps: 2, MaxOps: 2}},
		{"chain", ChainParams{MinOps: 2, MaxOps: 12}},
		{"chain", ChainParams{MinOps: 2, MaxOps: 12, Detours: 8}},
		{"countdown_search", CountdownSearchParams{Numbers: 3, MinNumber: 1, MaxNumber: 20, MinTarget: 1, MaxTarget: 200, MaxDeadEnds: 0, MaxResponse: 60}},
		{"countdown_search", CountdownSearchParams{Numbers: 3, MinNumber: 1, MaxNumber: 9, MinTarget: 10, MaxTarget: 60, MaxDeadEnds: 3, MaxResponse: 64, NoPools: true}},
		{"dag_search", DAGSearchParams{Layers: 2, Width: 2, MaxDeadEnds: 0}},
		{"dag_search", DAGSearchParams{Layers: 6, Width: 4, MaxDeadEnds: 8}},
	}
	for _, e := range extra {
		tk, err := New(e.name, e.params)
		if err != nil {
			t.Fatalf("New(%q, %+v): %v", e.name, e.params, err)
		}
		out = append(out, tk)
	}
	return out
}

// TestDefaultsFit checks the sequence length each task needs with its
// defaults: the short tasks fit the tiny model's 64 positions, the long
// ones the max_seq their example configs give.
func TestDefaultsFit(t *testing.T) {
	for name, maxSeq := range map[string]int{"add": 64, "countdown": 64, "path": 64, "long_add": 160, "chain": 160, "countdown_search": 160, "dag_search": 160} {
		tk, err := New(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := CheckFits(tk, maxSeq); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	if len(Names()) != 7 {
		t.Errorf("Names() = %v: a task without a length check here", Names())
	}
	tk, err := New("add", AddParams{Digits: 12, Scratchpad: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckFits(tk, 64); err == nil {
		t.Errorf("12-digit add with scratchpad fits 64 positions, want an error")
	}
}

func TestNewErrors(t *testing.T) {
	cases := []struct {
		name   string
		params any
		want   string // in the error
	}{
		{"sub", nil, `unknown task "sub"`},
		{"route", nil, `unknown task "route"`}, // retired: its base policies stayed at 0%
		{"add", CountdownParams{}, "parameters of type task.CountdownParams"},
		{"add", AddParams{Digits: 0}, "digits = 0"},
		{"add", AddParams{Digits: 19}, "digits = 19"},
		{"countdown", CountdownParams{Numbers: 1, MinNumber: 1, MaxNumber: 9, MinTarget: 1, MaxTarget: 9}, "numbers = 1"},
		{"countdown", CountdownParams{Numbers: 6, MinNumber: 1, MaxNumber: 9, MinTarget: 1, MaxTarget: 9}, "numbers = 6"},
		{"countdown", CountdownParams{Numbers: 3, MinNumber: 0, MaxNumber: 9, MinTarget: 1, MaxTarget: 9}, "min_number = 0"},
		{"countdown", CountdownParams{Numbers: 3, MinNumber: 5, MaxNumber: 4, MinTarget: 1, MaxTarget: 9}, "max_number = 4"},
		{"countdown", CountdownParams{Numbers: 3, MinNumber: 1, MaxNumber: 1000, MinTarget: 1, MaxTarget: 9}, "max_number = 1000"},
		{"countdown", CountdownParams{Numbers: 3, MinNumber: 1, MaxNumber: 9, MinTarget: 0, MaxTarget: 9}, "min_target = 0"},
		{"countdown", CountdownParams{Numbers: 3, MinNumber: 1, MaxNumber: 9, MinTarget: 10, MaxTarget: 9}, "max_target = 9"},
		{"path", PathParams{Nodes: 3, RouteLen: 2}, "nodes = 3"},
		{"path", PathParams{Nodes: 27, RouteLen: 2}, "nodes = 27"},
		{"path", PathParams{Nodes: 8, RouteLen: 7}, "route_len = 7"},
		{"path", PathParams{Nodes: 8, RouteLen: 1}, "route_len = 1"},
		{"path", PathParams{Nodes: 8, RouteLen: 3, ExtraEdges: -1}, "extra_edges = -1"},
	}
	for _, c := range cases {
		_, err := New(c.name, c.params)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%q, %+v) = %v, want an error with %q", c.name, c.params, err, c.want)
		}
	}
}

func TestDefaultParams(t *testing.T) {
	for _, name := range Names() {
		p, err := DefaultParams(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := New(name, p); err != nil {
			t.Errorf("New(%q, DefaultParams) = %v", name, err)
		}
	}
	if _, err := DefaultParams("nope"); err == nil {
		t.Error("DefaultParams(nope) gave no error")
	}
}

func TestSplit(t *testing.T) {
	for _, s := range []Split{Train, Eval} {
		got, err := ParseSplit(s.String())
		if err != nil || got != s {
			t.Errorf("ParseSplit(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseSplit("test"); err == nil {
		t.Error("ParseSplit(test) gave no error")
	}
	tk, _ := New("add", nil)
	if _, err := tk.Prompt(Split(7), 1, 0); err == nil {
		t.Error("Prompt with split 7 gave no error")
	}
	if _, err := tk.Prompt(Train, 1, -1); err == nil {
		t.Error("Prompt with index -1 gave no error")
	}
}

func TestPromptsDeterministic(t *testing.T) {
	for _, tk := range allTasks(t) {
		for _, split := range []Split{Train, Eval} {
			// Draw in two different orders: each index has its own stream.
			first := make(map[int]Prompt)
			for i := range 50 {
				p, err := tk.Prompt(split, 42, i)
				if err != nil {
					t.Fatalf("%s: %v", tk.Name(), err)
				}
				first[i] = p
			}
			for i := 49; i >= 0; i-- {
				p, err := tk.Prompt(split, 42, i)
				if err != nil {
					t.Fatal(err)
				}
				if p.Text != first[i].Text || p.Demo != first[i].Demo {
					t.Fatalf("%s %s prompt %d: %q/%q then %q/%q", tk.Name(), split, i, first[i].Text, first[i].Demo, p.Text, p.Demo)
				}
			}
			// Another seed gives other prompts.
			same := 0
			for i := range 50 {
				p, _ := tk.Prompt(split, 43, i)
				if p.Text == first[i].Text {
					same++
				}
			}
			if same > 10 {
				t.Errorf("%s %s: seeds 42 and 43 share %d of 50 prompts", tk.Name(), split, same)
			}
		}
	}
}

// TestSplitsDisjoint draws thousands of prompts from each split, over
// several seeds, and checks that no text is in both.
func TestSplitsDisjoint(t *testing.T) {
	for _, name := range Names() {
		tk, err := New(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		n := 2000
		if name == "countdown" || name == "countdown_search" {
			n = 600 // its generator solves each instance: ~0.3 ms a prompt
		}
		texts := [2]map[string]bool{{}, {}}
		for _, split := range []Split{Train, Eval} {
			for seed := range uint64(2) {
				for i := range n {
					p, err := tk.Prompt(split, seed, i)
					if err != nil {
						t.Fatal(err)
					}
					if SplitOf(p.Text) != split {
						t.Fatalf("%s: %s prompt %q belongs to %s", name, split, p.Text, SplitOf(p.Text))
					}
					texts[split][p.Text] = true
				}
			}
		}
		for text := range texts[Eval] {
			if texts[Train][text] {
				t.Errorf("%s: %q is in train and eval", name, text)
			}
		}
		if len(texts[Train]) < n || len(texts[Eval]) < n/2 {
			t.Errorf("%s: only %d distinct train and %d eval prompts of %d each", name, len(texts[Train]), len(texts[Eval]), 2*n)
		}
		t.Logf("%s: %d distinct train, %d distinct eval prompts", name, len(texts[Train]), len(texts[Eval]))
	}
}

// TestDemos checks every task's prompts and demonstrations: in the
// alphabet, within the lengths, demo correct, answer start inside the
// response, parsing the text gives the same prompt and verdicts.
func TestDemos(t *testing.T) {
	for _, tk := range allTasks(t) {
		rng := rand.New(rand.NewPCG(1, 1))
		for i := range 300 {
			p, err := tk.Prompt(Split(i%2), 9, i)
			if err != nil {
				t.Fatal(err)
			}
			name := tk.Name() + " " + p.Text
			if badCharIndex(p.Text) >= 0 || badCharIndex(p.Demo) >= 0 {
				t.Fatalf("%s: character outside the alphabet in %q or %q", name, p.Text, p.Demo)
			}
			if len(p.Text) > tk.MaxPromptLen() || len(p.Demo) > tk.MaxResponseLen() {
				t.Fatalf("%s: prompt %d > %d or demo %q %d > %d", name, len(p.Text), tk.MaxPromptLen(), p.Demo, len(p.Demo), tk.MaxResponseLen())
			}
			v := tk.Verify(p, p.Demo)
			if v.Reward != 1 || v.Reason != Correct || v.Answer == "" {
				t.Fatalf("%s: demo %q graded %+v", name, p.Demo, v)
			}
			if at := tk.AnswerStart(p, p.Demo); at < 0 || at > len(p.Demo) {
				t.Fatalf("%s: AnswerStart(%q) = %d", name, p.Demo, at)
			}
			parsed, err := tk.ParsePrompt(p.Text)
			if err != nil {
				t.Fatalf("%s: ParsePrompt: %v", name, err)
			}
			if parsed == p { // Prompts compare without panicking; these are distinct parses
				t.Fatalf("%s: two parses compare equal", name)
			}
			if parsed.Text != p.Text || parsed.Demo != p.Demo {
				t.Fatalf("%s: parsed demo %q, generated %q", name, parsed.Demo, p.Demo)
			}
			for range 3 {
				f := tk.FlawedDemo(p, rng)
				fv := tk.Verify(p, f)
				if fv.Reward >= 1 || badCharIndex(f) >= 0 || len(f) > tk.MaxResponseLen() || f == "" {
					t.Fatalf("%s: flawed demo %q graded %+v", name, f, fv)
				}
				// A Prompt with the text alone grades the same.
				if bare := tk.Verify(Prompt{Text: p.Text}, f); bare != fv {
					t.Fatalf("%s: %q graded %+v with the text alone, %+v with the parsed prompt", name, f, bare, fv)
				}
			}
		}
	}
}

// TestFlawedShare checks that flawed demos are mostly well formed answers
// that are wrong (not garbage), so pretraining on them teaches plausible
// mistakes.
func TestFlawedShare(t *testing.T) {
	for _, tk := range allTasks(t)[:len(Names())] {
		rng := rand.New(rand.NewPCG(3, 3))
		reasons := map[Reason]int{}
		for i := range 400 {
			p, err := tk.Prompt(Train, 5, i)
			if err != nil {
				t.Fatal(err)
			}
			reasons[tk.Verify(p, tk.FlawedDemo(p, rng)).Reason]++
		}
		if reasons[ParseError]+reasons[BadChar]+reasons[Empty]+reasons[TooLong] > 0 || reasons[Correct] > 0 {
			t.Errorf("%s: flawed demo reasons %v", tk.Name(), reasons)
		}
		t.Logf("%s: flawed demo reasons %v", tk.Name(), reasons)
	}
}

// TestAnswerDeterminesReward checks the majority-voting contract: two
// responses with the same non-empty answer get the same reward.
func TestAnswerDeterminesReward(t *testing.T) {
	for _, tk := range allTasks(t) {
		rng := rand.New(rand.NewPCG(2, 2))
		for i := range 40 {
			p, err := tk.Prompt(Train, 3, i)
			if err != nil {
				t.Fatal(err)
			}
			reward := map[string]float64{}
			pool := []string{p.Demo, tk.FlawedDemo(p, rng)}
			for range 400 {
				r := mutate(pool[rng.IntN(len(pool))], rng)
				if len(pool) < 50 {
					pool = append(pool, r)
				}
				v := tk.Verify(p, r)
				if v.Reward < 0 || v.Reward > 1 || v.Reason == "" {
					t.Fatalf("%s: %q graded %+v", tk.Name(), r, v)
				}
				if v.Answer == "" {
					continue
				}
				if old, ok := reward[v.Answer]; ok && old != v.Reward {
					t.Fatalf("%s %q: answer %q has rewards %v and %v (response %q)", tk.Name(), p.Text, v.Answer, old, v.Reward, r)
				}
				reward[v.Answer] = v.Reward
			}
		}
	}
}

// mutate changes, inserts or deletes one character of s, drawing from the
// characters the tasks use.
func mutate(s string, rng *rand.Rand) string {
	const chars = "0123456789abcdefgh+-*/=() "
	c := chars[rng.IntN(len(chars))]
	k := rng.IntN(len(s) + 1)
	switch rng.IntN(3) {
	case 0:
		return s[:k] + string(c) + s[k:]
	case 1:
		if k < len(s) {
			return s[:k] + s[k+1:]
		}
	}
	if k < len(s) {
		return s[:k] + string(c) + s[k+1:]
	}
	return s + string(c)
}

func TestVerifyBadPrompt(t *testing.T) {
	for _, tk := range allTasks(t)[:len(Names())] {
		for _, text := range []string{"", "garbage", "ABC"} {
			v := tk.Verify(Prompt{Text: text}, "1")
			if v.Reason != BadPrompt || v.Reward != 0 {
				t.Errorf("%s: Verify on prompt %q = %+v, want bad_prompt", tk.Name(), text, v)
			}
			if _, err := tk.ParsePrompt(text); err == nil {
				t.Errorf("%s: ParsePrompt(%q) gave no error", tk.Name(), text)
			}
		}
	}
}

// TestFlawedDemoOddPrompts checks that FlawedDemo survives prompts built
// by hand: a garbage text, or a good text with a garbage demo.
func TestFlawedDemoOddPrompts(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for _, tk := range allTasks(t) {
		good, err := tk.Prompt(Train, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []Prompt{
			{Text: "garbage"},
			{Text: good.Text, Demo: "()=+-"},
			{Text: good.Text, Demo: "\xff"},
			{Text: good.Text},
		} {
			for range 20 {
				if f := tk.FlawedDemo(p, rng); f == "" {
					t.Errorf("%s: FlawedDemo(%+v) is empty", tk.Name(), p)
				}
			}
		}
	}
}

// TestConcurrentUse checks that one task serves several goroutines (run
// with -race): the same prompts and verdicts as one goroutine alone.
func TestConcurrentUse(t *testing.T) {
	for _, tk := range allTasks(t)[:3] {
		want := make([]Verdict, 40)
		for i := range want {
			p, err := tk.Prompt(Eval, 8, i)
			if err != nil {
				t.Fatal(err)
			}
			want[i] = tk.Verify(p, p.Demo[:len(p.Demo)-1])
		}
		errs := make(chan string, 4*len(want))
		done := make(chan bool)
		for range 4 {
			go func() {
				defer func() { done <- true }()
				for i := range want {
					p, err := tk.Prompt(Eval, 8, i)
					if err != nil {
						errs <- err.Error()
						return
					}
					if got := tk.Verify(p, p.Demo[:len(p.Demo)-1]); got != want[i] {
						errs <- tk.Name() + ": verdicts differ across goroutines"
					}
				}
			}()
		}
		for range 4 {
			<-done
		}
		close(errs)
		for e := range errs {
			t.Error(e)
		}
	}
}

// verdictCase is a response and the verdict its task must give it.
type verdictCase struct {
	response string
	reward   float64
	reason   Reason
	answer   string
}

// checkVerdicts grades each case's response to p with tk and reports every
// verdict that is not the case's.
func checkVerdicts(t *testing.T, tk Task, p Prompt, cases []verdictCase) {
	t.Helper()
	for _, c := range cases {
		got := tk.Verify(p, c.response)
		want := Verdict{Reward: c.reward, Reason: c.reason, Answer: c.answer}
		if got != want {
			t.Errorf("Verify(%q) = %+v, want %+v", c.response, got, want)
		}
	}
}
