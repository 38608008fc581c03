package task

import (
	"strings"
	"testing"
)

func TestDAGSearchVerify(t *testing.T) {
	tk, _ := NewDAGSearch(DefaultDAGSearchParams())
	p, err := tk.ParsePrompt("ab ac bd ce cf eg:a>g")
	if err != nil {
		t.Fatal(err)
	}
	cases := []verdictCase{
		{"abd!;acf!;aceg:aceg", 1, Correct, "aceg"},  // a search with two dead ends
		{"aceg:aceg", 1, Correct, "aceg"},            // no dead end
		{"a!;ab!;ab!;aceg:aceg", 1, Correct, "aceg"}, // any abandoned attempts
		{"abd!;aceg:acg", 0, WrongAnswer, ""},        // the route copied wrongly
		{"abd;aceg:aceg", 0, ParseError, ""},         // a dead end without "!"
		{"aceg!:aceg", 0, ParseError, ""},            // the last attempt abandoned
		{"bd!;aceg:aceg", 0, WrongStart, ""},         //
		{"acd!;aceg:aceg", 0, IllegalMove, ""},       // c-d is not an edge
		{"aca!;aceg:aceg", 0, RevisitedNode, ""},     //
		{"ga:ga", 0, WrongStart, ""},                 // edges are directed
		{"acf:acf", 0, NotAtGoal, ""},                //
		{"aceg", 0, ParseError, ""},                  // no answer
		{"aceg:", 0, WrongAnswer, ""},                // truncated answer
		{"aceg:aceg1", 0, ParseError, ""},            //
		{"aceg:aceg:aceg", 0, ParseError, ""},        //
		{"!;aceg:aceg", 0, ParseError, ""},           // an empty attempt
		{"a ceg:aceg", 0, ParseError, ""},            //
		{"", 0, Empty, ""},                           //
		{"ACEG:ACEG", 0, BadChar, ""},                //
		{strings.Repeat("a", 42), 0, TooLong, ""},    //
	}
	checkVerdicts(t, tk, p, cases)
	if at := tk.AnswerStart(p, "abd!;aceg:aceg"); at != 10 {
		t.Errorf("AnswerStart = %d, want 10", at)
	}
	if at := tk.AnswerStart(p, "abd!;ac"); at != 7 {
		t.Errorf("AnswerStart of a search not yet done = %d, want 7 (its length)", at)
	}
}

// TestDAGSearchDemos checks the generated prompts: every demo is graded
// correct, fits, takes at most MaxDeadEnds dead ends, a share of them
// backtrack, and the graphs have several routes to the goal.
func TestDAGSearchDemos(t *testing.T) {
	for _, params := range []DAGSearchParams{
		DefaultDAGSearchParams(),
		{Layers: 2, Width: 2, MaxDeadEnds: 1},
		{Layers: 6, Width: 4, MaxDeadEnds: 8},
	} {
		tk, err := NewDAGSearch(params)
		if err != nil {
			t.Fatal(err)
		}
		backtracked := 0
		const n = 100
		for i := range n {
			p := checkSearchDemo(t, tk, i, params.MaxDeadEnds, &backtracked)
			q, _ := tk.parse(p.Text)
			if reach, routes := q.reachesGoal(); !reach[q.start] || routes < 2 {
				t.Errorf("%q: %d routes to the goal, want ≥ 2", p.Text, routes)
			}
		}
		if params.MaxDeadEnds > 0 && backtracked < n/4 {
			t.Errorf("%+v: %d of %d demos backtrack, want ≥ %d", params, backtracked, n, n/4)
		}
	}
}

func TestDAGSearchParams(t *testing.T) {
	bad := []struct {
		p    DAGSearchParams
		want string
	}{
		{DAGSearchParams{Layers: 1, Width: 3}, "layers = 1"},
		{DAGSearchParams{Layers: 4, Width: 6}, "width = 6"},
		{DAGSearchParams{Layers: 6, Width: 5}, "31 nodes"},
		{DAGSearchParams{Layers: 4, Width: 3, MaxDeadEnds: -1}, "max_dead_ends = -1"},
	}
	for _, b := range bad {
		if _, err := New("dag_search", b.p); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("New(%+v) error %v, want one naming %q", b.p, err, b.want)
		}
	}
	tk, _ := New("dag_search", nil)
	for _, text := range []string{"ab:a>a", "ab ab:a>b", "aa:a>b", "abb:a>b", "abc bd:a>d", "ab  bc:a>c", "ab:a-b", "ab bc", "a bc:a>c", "ab:A>b", "ab1:a>b"} {
		if _, err := tk.ParsePrompt(text); err == nil {
			t.Errorf("ParsePrompt(%q) gave no error", text)
		}
	}
	if p, err := tk.ParsePrompt("ab cd:a>d"); err != nil || p.Demo != "" {
		t.Errorf("unreachable goal: demo %q, error %v; want no demo, no error", p.Demo, err)
	}
}
