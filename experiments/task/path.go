package task

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
)

// PathParams are the parameters of the "path" task.
//
// A prompt is an undirected graph on the nodes a, b, c, ... (Nodes of
// them), written as its edges, then ":", the start, ">" and the goal:
// "ab ad bc be cf dg eh:a>f". The response is the route as its nodes, start
// first and goal last: "abcf".
//
// The graph is a route of RouteLen edges from start to goal with dead-end
// branches hanging off it (plus ExtraEdges edges inside the branches), so
// the route is the only one without a revisit. The start always has a
// dead-end neighbour, and with two or more spare nodes that branch is at
// least two nodes deep: a wrong first move cannot be seen to be wrong from
// its neighbour alone, and without revisits it cannot be undone.
type PathParams struct {
	// Nodes in the graph, in 4..26. Default 8.
	Nodes int `yaml:"nodes" json:"nodes"`
	// RouteLen is the number of edges from start to goal, in 2..Nodes-2.
	// Default 3.
	RouteLen int `yaml:"route_len" json:"route_len"`
	// ExtraEdges added inside dead-end branches (where there is room), in
	// 0..Nodes. Default 1.
	ExtraEdges int `yaml:"extra_edges" json:"extra_edges"`
	// AllowRevisit lets a route visit a node twice (backtrack out of a dead
	// end). Default false: a revisit is revisited_node.
	AllowRevisit bool `yaml:"allow_revisit" json:"allow_revisit"`
	// LengthShaping rewards a valid route with shortest/length (in edges)
	// instead of 1. Default false.
	LengthShaping bool `yaml:"length_shaping" json:"length_shaping"`
}

// DefaultPathParams returns the defaults: 8 nodes, a route of 3 edges, 1
// extra edge, no revisits, no length shaping.
func DefaultPathParams() PathParams {
	return PathParams{Nodes: 8, RouteLen: 3, ExtraEdges: 1}
}

// Validate reports parameters out of range, naming the field.
func (p PathParams) Validate() error {
	switch {
	case p.Nodes < 4 || p.Nodes > 26:
		return fmt.Errorf("path: nodes = %d, want 4..26", p.Nodes)
	case p.RouteLen < 2 || p.RouteLen > p.Nodes-2:
		return fmt.Errorf("path: route_len = %d, want 2..nodes-2 (%d)", p.RouteLen, p.Nodes-2)
	case p.ExtraEdges < 0 || p.ExtraEdges > p.Nodes:
		return fmt.Errorf("path: extra_edges = %d, want 0..nodes (%d)", p.ExtraEdges, p.Nodes)
	}
	return nil
}

// Path is the "path" task.
type Path struct{ p PathParams }

// NewPath builds the "path" task.
func NewPath(p PathParams) (*Path, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &Path{p: p}, nil
}

// pathProblem is a parsed "path" prompt. Nodes are 0..25 for a..z.
type pathProblem struct {
	adj         [26]uint32 // adj[u] has bit v set when u–v is an edge
	start, goal int
	shortest    int // edges on a shortest route, -1 if there is none
}

// Name returns "path".
func (t *Path) Name() string { return "path" }

// Params returns the task's parameters.
func (t *Path) Params() PathParams { return t.p }

// maxEdges is the number of edges a graph has at most: a spanning tree and
// the extra edges.
func (t *Path) maxEdges() int { return t.p.Nodes - 1 + t.p.ExtraEdges }

// MaxPromptLen is 3 characters an edge, less one, and 4 for ":s>g".
func (t *Path) MaxPromptLen() int { return 3*t.maxEdges() - 1 + 4 }

// MaxResponseLen is Nodes (a route without revisits), or 2·Nodes when
// revisits are allowed.
func (t *Path) MaxResponseLen() int {
	if t.p.AllowRevisit {
		return 2 * t.p.Nodes
	}
	return t.p.Nodes
}

// Prompt returns prompt i of a split.
func (t *Path) Prompt(split Split, seed uint64, i int) (Prompt, error) {
	return drawPrompt(t.Name(), split, seed, i, func(rng *rand.Rand) (Prompt, error) {
		return t.generate(rng), nil
	})
}

// generate draws a graph: a route, dead-end branches and extra edges
// inside the branches, on randomly lettered nodes.
func (t *Path) generate(rng *rand.Rand) Prompt {
	n, L := t.p.Nodes, t.p.RouteLen
	label := rng.Perm(n) // label[k] is the letter of the k-th node drawn
	var q pathProblem
	link := func(u, v int) {
		q.adj[label[u]] |= 1 << label[v]
		q.adj[label[v]] |= 1 << label[u]
	}
	for k := range L {
		link(k, k+1) // the route 0-1-...-L
	}
	root := make([]int, n) // root[k]: the route node a dead-end node hangs from
	for k := L + 1; k < n; k++ {
		var at int
		switch {
		case k == L+1:
			at = 0 // a dead end next to the start
		case k == L+2:
			at = L + 1 // ... two nodes deep
		case rng.IntN(2) == 0:
			at = L + 1 + rng.IntN(k-L-1) // deepen a branch
		default:
			at = rng.IntN(L) // a new branch off the route, not off the goal
		}
		link(at, k)
		if at <= L {
			root[k] = at
		} else {
			root[k] = root[at]
		}
	}
	// Extra edges inside branches: between two dead-end nodes of the same
	// branch, or a dead-end node and its route node.
	var cands [][2]int
	for u := L + 1; u < n; u++ {
		if q.adj[label[u]]&(1<<label[root[u]]) == 0 {
			cands = append(cands, [2]int{u, root[u]})
		}
		for v := u + 1; v < n; v++ {
			if root[u] == root[v] && q.adj[label[u]]&(1<<label[v]) == 0 {
				cands = append(cands, [2]int{u, v})
			}
		}
	}
	for e := 0; e < t.p.ExtraEdges && len(cands) > 0; e++ {
		k := rng.IntN(len(cands))
		link(cands[k][0], cands[k][1])
		cands = slices.Delete(cands, k, k+1)
	}
	q.start, q.goal = label[0], label[L]
	q.shortest = L
	text := q.text()
	route := make([]byte, L+1)
	for k := range route {
		route[k] = byte('a' + label[k])
	}
	return Prompt{Text: text, Demo: string(route), problem: &q, parsedText: text}
}

// text writes the edges in order (each edge smaller letter first), then
// ":s>g".
func (q pathProblem) text() string {
	var sb strings.Builder
	for u := range 26 {
		for v := u + 1; v < 26; v++ {
			if q.adj[u]&(1<<v) != 0 {
				if sb.Len() > 0 {
					sb.WriteByte(' ')
				}
				sb.WriteByte(byte('a' + u))
				sb.WriteByte(byte('a' + v))
			}
		}
	}
	sb.WriteByte(':')
	sb.WriteByte(byte('a' + q.start))
	sb.WriteByte('>')
	sb.WriteByte(byte('a' + q.goal))
	return sb.String()
}

// ParsePrompt reads "xy xy ...:s>g": edges between distinct nodes among
// the first Nodes letters, in any order, each once, at most
// Nodes-1+ExtraEdges of them. The demo is a shortest route (the
// alphabetically first), or "" if the goal cannot be reached.
func (t *Path) ParsePrompt(text string) (Prompt, error) {
	q, err := parseGraph("path", text, t.p.Nodes, t.maxEdges(), t.MaxPromptLen())
	if err != nil {
		return Prompt{}, err
	}
	route := q.shortestRoute()
	q.shortest = len(route) - 1
	return Prompt{Text: text, Demo: route, problem: q, parsedText: text}, nil
}

// parseGraph reads a graph prompt "xy xy ...:s>g" of the task called name:
// edges between distinct nodes among the first nodes letters, in any
// order, each once, at most maxEdges of them, the whole at most maxLen
// characters. The problem's shortest is left unset.
func parseGraph(name, text string, nodes, maxEdges, maxLen int) (*pathProblem, error) {
	if err := checkPromptText(text, maxLen); err != nil {
		return nil, fmt.Errorf("%s prompt %q: %w", name, text, err)
	}
	edgesText, ends, ok := strings.Cut(text, ":")
	if !ok || len(ends) != 3 || ends[1] != '>' {
		return nil, fmt.Errorf("%s prompt %q: want edges, then \":start>goal\"", name, text)
	}
	node := func(c byte) (int, error) {
		if c < 'a' || int(c-'a') >= nodes {
			return 0, fmt.Errorf("%q is not a node (a..%c)", c, 'a'+nodes-1)
		}
		return int(c - 'a'), nil
	}
	var q pathProblem
	fields := strings.Split(edgesText, " ")
	if len(fields) > maxEdges {
		return nil, fmt.Errorf("%s prompt %q: %d edges, more than %d", name, text, len(fields), maxEdges)
	}
	for _, f := range fields {
		if len(f) != 2 {
			return nil, fmt.Errorf("%s prompt %q: edge %q is not two letters", name, text, f)
		}
		u, err := node(f[0])
		if err != nil {
			return nil, fmt.Errorf("%s prompt %q: edge %q: %w", name, text, f, err)
		}
		v, err := node(f[1])
		if err != nil {
			return nil, fmt.Errorf("%s prompt %q: edge %q: %w", name, text, f, err)
		}
		if u == v {
			return nil, fmt.Errorf("%s prompt %q: edge %q is a loop", name, text, f)
		}
		if q.adj[u]&(1<<v) != 0 {
			return nil, fmt.Errorf("%s prompt %q: edge %q appears twice", name, text, f)
		}
		q.adj[u] |= 1 << v
		q.adj[v] |= 1 << u
	}
	var err error
	if q.start, err = node(ends[0]); err != nil {
		return nil, fmt.Errorf("%s prompt %q: start: %w", name, text, err)
	}
	if q.goal, err = node(ends[2]); err != nil {
		return nil, fmt.Errorf("%s prompt %q: goal: %w", name, text, err)
	}
	if q.start == q.goal {
		return nil, fmt.Errorf("%s prompt %q: start and goal are both %c", name, text, ends[0])
	}
	return &q, nil
}

// shortestRoute finds a shortest route by breadth-first search, preferring
// smaller letters; "" if there is none.
func (q pathProblem) shortestRoute() string {
	prev := [26]int{}
	for k := range prev {
		prev[k] = -1
	}
	seen := uint32(1) << q.start
	queue := []int{q.start}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		if u == q.goal {
			var route []byte
			for v := u; v != -1; v = prev[v] {
				route = append(route, byte('a'+v))
			}
			slices.Reverse(route)
			return string(route)
		}
		for next := q.adj[u] &^ seen; next != 0; next &= next - 1 {
			v := bits.TrailingZeros32(next)
			seen |= 1 << v
			prev[v] = u
			queue = append(queue, v)
		}
	}
	return ""
}

// AnswerStart is the position just after the route first reaches the
// goal: nothing written after it can make the route right.
func (t *Path) AnswerStart(p Prompt, response string) int {
	q, ok := problemOf(p, problemFrom[*pathProblem](t.ParsePrompt))
	if !ok {
		return len(response)
	}
	if i := strings.IndexByte(response, byte('a'+q.goal)); i >= 0 {
		return i + 1
	}
	return len(response)
}

// Verify walks the route: it must be letters only, begin at the start,
// follow edges of the graph, visit no node twice (unless AllowRevisit)
// and end at the goal. The answer is the route itself.
func (t *Path) Verify(p Prompt, response string) Verdict {
	q, ok := problemOf(p, problemFrom[*pathProblem](t.ParsePrompt))
	if !ok {
		return Verdict{Reason: BadPrompt}
	}
	if v, ok := screen(response, t.MaxResponseLen()); !ok {
		return v
	}
	for i := 0; i < len(response); i++ {
		if c := response[i]; c < 'a' || c > 'z' {
			return Verdict{Reason: ParseError}
		}
	}
	bad := func(r Reason) Verdict { return Verdict{Reason: r, Answer: response} }
	if int(response[0]-'a') != q.start {
		return bad(WrongStart)
	}
	visited := uint32(1) << q.start
	for i := 1; i < len(response); i++ {
		u, v := int(response[i-1]-'a'), int(response[i]-'a')
		if q.adj[u]&(1<<v) == 0 {
			return bad(IllegalMove)
		}
		if visited&(1<<v) != 0 && !t.p.AllowRevisit {
			return bad(RevisitedNode)
		}
		visited |= 1 << v
	}
	if int(response[len(response)-1]-'a') != q.goal {
		return bad(NotAtGoal)
	}
	reward := 1.0
	if t.p.LengthShaping && q.shortest > 0 {
		reward = float64(q.shortest) / float64(len(response)-1)
	}
	return Verdict{Reward: reward, Reason: Correct, Answer: response}
}

// FlawedDemo makes the tempting mistake: a first move into a dead end,
// followed down the branch, then either a jump to the goal along an edge
// that does not exist or a stop where the branch ends. Sometimes it skips
// a node of the right route instead.
func (t *Path) FlawedDemo(p Prompt, rng *rand.Rand) string {
	q, ok := problemOf(p, problemFrom[*pathProblem](t.ParsePrompt))
	if !ok {
		return "a"
	}
	demo := p.Demo
	if len(demo) >= 3 && rng.IntN(4) == 0 {
		k := 1 + rng.IntN(len(demo)-2) // skip demo[k]
		r := demo[:k] + demo[k+1:]
		if t.Verify(p, r).Reward < 1 {
			return r
		}
	}
	var onRoute uint32
	for i := 0; i < len(demo); i++ {
		onRoute |= 1 << (demo[i] - 'a')
	}
	route := []byte{byte('a' + q.start)}
	visited := uint32(1) << q.start
	u := q.start
	for len(route) < t.p.Nodes-1 {
		next := q.adj[u] &^ visited
		if len(route) == 1 {
			next &^= onRoute // the tempting wrong first move
		}
		if next == 0 {
			break
		}
		v := nthBit(next, rng.IntN(bits.OnesCount32(next)))
		route = append(route, byte('a'+v))
		visited |= 1 << v
		u = v
		if v == q.goal {
			break
		}
	}
	if u != q.goal && rng.IntN(2) == 0 {
		route = append(route, byte('a'+q.goal))
	}
	r := string(route)
	if len(r) > t.MaxResponseLen() || t.Verify(p, r).Reward >= 1 {
		return string(byte('a' + q.start)) // stops at once: not_at_goal
	}
	return r
}

// nthBit returns the index of the n-th set bit of x (n from 0).
func nthBit(x uint32, n int) int {
	for range n {
		x &= x - 1
	}
	return bits.TrailingZeros32(x)
}
