package task

import (
	"math/bits"
	"strings"
	"testing"
)

func TestRouteVerify(t *testing.T) {
	tk, err := NewRoute(RouteParams{Nodes: 8, RouteLen: 3, Forks: 1, ExtraEdges: 1})
	if err != nil {
		t.Fatal(err)
	}
	p, err := tk.ParsePrompt("ab ac bd ce cf dg:a>g")
	if err != nil {
		t.Fatal(err)
	}
	const demo = "a:bc>b;b:ad>d;d:bg>g"
	if p.Demo != demo {
		t.Fatalf("demo %q, want %q", p.Demo, demo)
	}
	cases := []verdictCase{
		{demo, 1, Correct, "abdg"},
		{"a:b>b;b:xyz>d;d:>g", 1, Correct, "abdg"}, // the neighbour lists are not graded
		{"a:bc>c;c:aef>f", 0, NotAtGoal, "acf"},    // the tempting dead end
		{"a:bc>c;c:aef>e", 0, NotAtGoal, "ace"},
		{"a:bc>c;c:aef>g", 0, IllegalMove, "acg"}, // a jump to the goal
		{"a:bc>b;b:ad>g", 0, IllegalMove, "abg"},  // a skipped node
		{"a:bc>z", 0, IllegalMove, "az"},          // not a node
		{"a:bc>b;b:ad>a", 0, RevisitedNode, "aba"},
		{"a:c>c;c:>a;a:>b;b:>d;d:>g", 0, RevisitedNode, "acabdg"}, // backing up is a revisit
		{"a:bc>c;c:aef>a;a:bc>b;b:ad>d;d:bg>g", 0, TooLong, ""},
		{demo + ";g:d>d", 0, RevisitedNode, "abdgd"},
		{"b:ad>d;d:bg>g", 0, WrongStart, "bdg"},
		{"a:bc>b;d:bg>g", 0, ParseError, ""}, // a hop that does not start where the last ended
		{"a:bc>b;", 0, ParseError, ""},       // truncated
		{"a:bc>b;;b:ad>d", 0, ParseError, ""},
		{"a:bc>", 0, ParseError, ""},
		{"a:bc>bb", 0, ParseError, ""},
		{"a:b1>b", 0, ParseError, ""},
		{"a>b;b>d;d>g", 0, ParseError, ""},
		{"abdg", 0, ParseError, ""},
		{" a:bc>b", 0, ParseError, ""},
		{"a:BC>b", 0, BadChar, ""},
		{"a:bc>b\x00", 0, BadChar, ""},
		{"", 0, Empty, ""},
		{strings.Repeat("a:bc>b;", 10), 0, TooLong, ""},
	}
	checkVerdicts(t, tk, p, cases)
	for response, want := range map[string]int{
		demo: len(demo), demo + ";g:d>d": len(demo), "": 0, "a:bg>b": 6, "a:bc>c;c:aef>g": 14, "a:bc>b;d:bg>g;x": 13,
	} {
		if got := tk.AnswerStart(p, response); got != want {
			t.Errorf("AnswerStart(%q) = %d, want %d", response, got, want)
		}
	}
}

func TestRouteParams(t *testing.T) {
	for _, p := range []RouteParams{
		{Nodes: 5, RouteLen: 3, Forks: 1}, {Nodes: 27, RouteLen: 3, Forks: 1},
		{Nodes: 20, RouteLen: 2, Forks: 1}, {Nodes: 20, RouteLen: 17, Forks: 3},
		{Nodes: 20, RouteLen: 5, Forks: 0}, {Nodes: 20, RouteLen: 5, Forks: 6},
		{Nodes: 20, RouteLen: 5, Forks: 2, ExtraEdges: -1}, {Nodes: 20, RouteLen: 5, Forks: 2, ExtraEdges: 21},
	} {
		if _, err := NewRoute(p); err == nil {
			t.Errorf("NewRoute(%+v) gave no error", p)
		}
	}
	tk, _ := NewRoute(DefaultRouteParams())
	for _, c := range []struct{ text, want string }{
		{"ab:a>z", "not a node"},
		{"ab ab:a>b", "appears twice"},
		{"ab:a>a", "start and goal"},
		{"ab bc", "want edges"},
	} {
		if _, err := tk.ParsePrompt(c.text); err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "route prompt") {
			t.Errorf("ParsePrompt(%q) = %v, want a route prompt error with %q", c.text, err, c.want)
		}
	}
	p, err := tk.ParsePrompt("ab cd:a>d")
	if err != nil || p.Demo != "" {
		t.Errorf("unreachable goal: %+v, %v", p, err)
	}
	if v := tk.Verify(p, "a:b>b"); v.Reason != NotAtGoal {
		t.Errorf("unreachable goal: %+v", v)
	}
}

// TestRouteGraphs checks the generated graphs of several parameter sets:
// the route is the only one without a revisit, exactly Forks of its nodes
// have a neighbour off it (the start among them), and the demos' lengths.
func TestRouteGraphs(t *testing.T) {
	for _, params := range []RouteParams{
		DefaultRouteParams(),
		{Nodes: 15, RouteLen: 6, Forks: 2, ExtraEdges: 0},
		{Nodes: 26, RouteLen: 10, Forks: 5, ExtraEdges: 4},
		{Nodes: 6, RouteLen: 3, Forks: 2, ExtraEdges: 6},
	} {
		tk, err := NewRoute(params)
		if err != nil {
			t.Fatal(err)
		}
		lo, hi := 1000, 0
		for i := range 200 {
			p, err := tk.Prompt(Split(i%2), 4, i)
			if err != nil {
				t.Fatal(err)
			}
			q := p.problem.(*pathProblem)
			if n := simplePaths(q, q.start, 1<<q.start); n != 1 {
				t.Fatalf("%+v %q: %d routes without a revisit, want 1", params, p.Text, n)
			}
			route := shortestRouteNodes(q)
			var on uint32
			for _, v := range route {
				on |= 1 << v
			}
			forks := 0
			for _, v := range route[:len(route)-1] {
				if q.adj[v]&^on != 0 {
					forks++
				}
			}
			if forks != params.Forks || q.adj[q.start]&^on == 0 {
				t.Fatalf("%+v %q: %d forks, want %d with the start", params, p.Text, forks, params.Forks)
			}
			lo, hi = min(lo, len(p.Demo)), max(hi, len(p.Demo))
		}
		t.Logf("%+v: demos of %d..%d characters (max %d), prompts ≤ %d", params, lo, hi, tk.MaxResponseLen(), tk.MaxPromptLen())
		if params == DefaultRouteParams() && (lo < 60 || hi > 75) {
			t.Errorf("default demos of %d..%d characters, want within 60..75", lo, hi)
		}
	}
}

// simplePaths counts the routes from u to q.goal that visit no node
// twice.
func simplePaths(q *pathProblem, u int, seen uint32) int {
	if u == q.goal {
		return 1
	}
	n := 0
	for next := q.adj[u] &^ seen; next != 0; next &= next - 1 {
		v := bits.TrailingZeros32(next)
		n += simplePaths(q, v, seen|1<<v)
	}
	return n
}
