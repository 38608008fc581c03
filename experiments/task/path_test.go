package task

import (
	"math/bits"
	"strings"
	"testing"
)

func TestPathVerify(t *testing.T) {
	strict, _ := NewPath(DefaultPathParams())
	loose, _ := NewPath(PathParams{Nodes: 8, RouteLen: 3, ExtraEdges: 1, AllowRevisit: true})
	shaped, _ := NewPath(PathParams{Nodes: 8, RouteLen: 3, ExtraEdges: 1, AllowRevisit: true, LengthShaping: true})
	// Route a-b-d-g; c is a dead end next to the start, two deep (e, f).
	const prompt = "ab ac bd ce cf dg:a>g"
	cases := []struct {
		task     *Path
		response string
		reward   float64
		reason   Reason
		answer   string
	}{
		{strict, "abdg", 1, Correct, "abdg"},
		{strict, "", 0, Empty, ""},
		{strict, "a", 0, NotAtGoal, "a"},
		{strict, "abd", 0, NotAtGoal, "abd"},           // truncated
		{strict, "ace", 0, NotAtGoal, "ace"},           // into the dead end
		{strict, "aceg", 0, IllegalMove, "aceg"},       // ... and a jump to the goal
		{strict, "ag", 0, IllegalMove, "ag"},           // no edge a-g
		{strict, "bdg", 0, WrongStart, "bdg"},          //
		{strict, "gdba", 0, WrongStart, "gdba"},        // backwards
		{strict, "abdbdg", 0, RevisitedNode, "abdbdg"}, //
		{strict, "abdgd", 0, RevisitedNode, "abdgd"},   // past the goal and back
		{strict, "abdgx", 0, IllegalMove, "abdgx"},     // x is not in the graph
		{strict, "abdz", 0, IllegalMove, "abdz"},       //
		{strict, "ab dg", 0, ParseError, ""},           // spaces
		{strict, "a-b-d-g", 0, ParseError, ""},         // separators
		{strict, "abdg\n", 0, ParseError, ""},          // trailing newline
		{strict, "12", 0, ParseError, ""},              //
		{strict, "ABDG", 0, BadChar, ""},               // uppercase
		{strict, "abd\x00", 0, BadChar, ""},            //
		{strict, "abdgabdga", 0, TooLong, ""},          // 9 > 8 nodes
		{loose, "abdg", 1, Correct, "abdg"},
		{loose, "acabdg", 1, Correct, "acabdg"},    // back out of the dead end
		{loose, "abdgdg", 1, Correct, "abdgdg"},    // ends at the goal
		{loose, "abdgd", 0, NotAtGoal, "abdgd"},    //
		{shaped, "abdg", 1, Correct, "abdg"},       //
		{shaped, "acabdg", 0.6, Correct, "acabdg"}, // 3 edges of 5
		{shaped, "abababdg", 3.0 / 7, Correct, "abababdg"},
	}
	for _, c := range cases {
		p, err := c.task.ParsePrompt(prompt)
		if err != nil {
			t.Fatal(err)
		}
		got := c.task.Verify(p, c.response)
		want := Verdict{Reward: c.reward, Reason: c.reason, Answer: c.answer}
		if got != want {
			t.Errorf("%+v Verify(%q) = %+v, want %+v", c.task.p, c.response, got, want)
		}
	}
}

func TestPathParsePrompt(t *testing.T) {
	tk, _ := NewPath(DefaultPathParams())
	for _, c := range []struct{ text, demo string }{
		{"ab ac bd ce cf dg:a>g", "abdg"},
		{"dg cf ce bd ac ab:g>a", "gdba"}, // any edge order, backwards
		{"ab bc cd ad:a>c", "abc"},        // a cycle: the alphabetically first shortest route
		{"ab cd:a>d", ""},                 // no route
	} {
		p, err := tk.ParsePrompt(c.text)
		if err != nil {
			t.Errorf("ParsePrompt(%q): %v", c.text, err)
			continue
		}
		if p.Demo != c.demo {
			t.Errorf("ParsePrompt(%q) demo %q, want %q", c.text, p.Demo, c.demo)
		}
	}
	for _, c := range []struct{ text, want string }{
		{"", "empty prompt"},
		{"ab ac bd", "want edges"},
		{"ab ac bd:a-d", "want edges"},
		{"ab ac bd:ad", "want edges"},
		{":a>b", `edge "" is not two letters`},
		{"ab  ac:a>c", `edge "" is not two letters`},
		{"abc:a>c", `edge "abc" is not two letters`},
		{"aa:a>b", "is a loop"},
		{"ab ba:a>b", "appears twice"},
		{"ai:a>i", `'i' is not a node (a..h)`},
		{"a1:a>b", `'1' is not a node`},
		{"ab:a>a", "start and goal are both a"},
		{"ab:x>b", "start:"},
		{"ab:a>x", "goal:"},
		{"ab ac ad ae af ag ah bc bd:a>b", "longer than"},
		{"ab:a>B", "not in the alphabet"},
	} {
		_, err := tk.ParsePrompt(c.text)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParsePrompt(%q) = %v, want an error with %q", c.text, err, c.want)
		}
	}
}

func TestPathAnswerStart(t *testing.T) {
	tk, _ := NewPath(DefaultPathParams())
	p, _ := tk.ParsePrompt("ab ac bd ce cf dg:a>g")
	for _, c := range []struct {
		response string
		want     int
	}{
		{"abdg", 4}, {"abd", 3}, {"agx", 2}, {"", 0}, {"abdgdg", 4},
	} {
		if got := tk.AnswerStart(p, c.response); got != c.want {
			t.Errorf("AnswerStart(%q) = %d, want %d", c.response, got, c.want)
		}
	}
}

// TestPathGenerated checks the structure of generated graphs: the demo is
// the only route without revisits, and the start has a dead-end neighbour
// whose branch goes on (so one look ahead does not tell it is dead).
func TestPathGenerated(t *testing.T) {
	for _, params := range []PathParams{DefaultPathParams(), {Nodes: 12, RouteLen: 4, ExtraEdges: 4}, {Nodes: 5, RouteLen: 3}} {
		tk, err := NewPath(params)
		if err != nil {
			t.Fatal(err)
		}
		deep := 0
		for i := range 300 {
			p, err := tk.Prompt(Train, 1, i)
			if err != nil {
				t.Fatal(err)
			}
			q := *p.problem.(*pathProblem)
			if n := countSimpleRoutes(q, q.start, 1<<q.start); n != 1 {
				t.Fatalf("%+v %q: %d simple routes, want 1", params, p.Text, n)
			}
			if len(p.Demo) != params.RouteLen+1 {
				t.Fatalf("%+v %q: demo %q, want %d nodes", params, p.Text, p.Demo, params.RouteLen+1)
			}
			decoys := q.adj[q.start] &^ (1 << (p.Demo[1] - 'a'))
			if decoys == 0 {
				t.Fatalf("%+v %q: the start has no dead-end neighbour", params, p.Text)
			}
			for ; decoys != 0; decoys &= decoys - 1 {
				u := bits.TrailingZeros32(decoys)
				if q.adj[u]&^(1<<q.start) != 0 {
					deep++
					break
				}
			}
			nodes := 0
			for u := range 26 {
				if q.adj[u] != 0 {
					nodes++
				}
			}
			if nodes != params.Nodes {
				t.Fatalf("%+v %q: %d nodes with edges, want %d", params, p.Text, nodes, params.Nodes)
			}
		}
		if spare := params.Nodes - params.RouteLen - 1; spare >= 2 && deep != 300 {
			t.Errorf("%+v: a deep dead end next to the start in %d of 300 prompts, want all", params, deep)
		}
	}
}

// countSimpleRoutes counts the routes without revisits from u to the goal.
func countSimpleRoutes(q pathProblem, u int, visited uint32) int {
	if u == q.goal {
		return 1
	}
	n := 0
	for next := q.adj[u] &^ visited; next != 0; next &= next - 1 {
		v := bits.TrailingZeros32(next)
		n += countSimpleRoutes(q, v, visited|1<<v)
	}
	return n
}
