package task

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
)

// RouteParams are the parameters of the "route" task.
//
// A prompt is an undirected graph on the nodes a, b, c, ... (Nodes of
// them), written as its edges, then ":", the start, ">" and the goal, as
// in the "path" task. The response walks the route one hop at a time: for
// each node, the node, ":", all its neighbours in alphabetical order, ">"
// and the neighbour it moves to, hops separated by ";":
//
//	ab ac bd ce cf dg:a>f → "a:bc>c;c:aef>f"
//
// The graph is a route of RouteLen edges with dead-end branches hanging off
// Forks of its nodes (the start always among them), so the route is the
// only one without a revisit and the move at each fork is a decisive
// choice, while the neighbour lists and the copied node names around it
// are long low-entropy stretches. With the defaults responses are about 60
// characters long.
type RouteParams struct {
	// Nodes in the graph, in 6..26. Default 22.
	Nodes int `yaml:"nodes" json:"nodes"`
	// RouteLen is the number of hops from start to goal, in
	// 3..Nodes-Forks-1. Default 10.
	RouteLen int `yaml:"route_len" json:"route_len"`
	// Forks is the number of route nodes (the goal excepted) with a
	// dead-end branch, in 1..RouteLen. Default 3.
	Forks int `yaml:"forks" json:"forks"`
	// ExtraEdges added inside dead-end branches (where there is room), in
	// 0..Nodes. Default 2.
	ExtraEdges int `yaml:"extra_edges" json:"extra_edges"`
}

// DefaultRouteParams returns the defaults: 22 nodes, a route of 10 hops,
// 3 forks, 2 extra edges.
func DefaultRouteParams() RouteParams {
	return RouteParams{Nodes: 22, RouteLen: 10, Forks: 3, ExtraEdges: 2}
}

// Validate reports parameters out of range, naming the field.
func (p RouteParams) Validate() error {
	switch {
	case p.Nodes < 6 || p.Nodes > 26:
		return fmt.Errorf("route: nodes = %d, want 6..26", p.Nodes)
	case p.Forks < 1:
		return fmt.Errorf("route: forks = %d, want ≥ 1", p.Forks)
	case p.RouteLen < 3 || p.RouteLen > p.Nodes-p.Forks-1:
		return fmt.Errorf("route: route_len = %d, want 3..nodes-forks-1 (%d)", p.RouteLen, p.Nodes-p.Forks-1)
	case p.Forks > p.RouteLen:
		return fmt.Errorf("route: forks = %d, want 1..route_len (%d)", p.Forks, p.RouteLen)
	case p.ExtraEdges < 0 || p.ExtraEdges > p.Nodes:
		return fmt.Errorf("route: extra_edges = %d, want 0..nodes (%d)", p.ExtraEdges, p.Nodes)
	}
	return nil
}

// Route is the "route" task. The verifier walks the hops: the route they
// trace must begin at the start, follow edges, visit no node twice and end
// at the goal; the neighbour lists are checked for form (letters) only.
type Route struct{ p RouteParams }

// NewRoute builds the "route" task.
func NewRoute(p RouteParams) (*Route, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &Route{p: p}, nil
}

// Name returns "route".
func (t *Route) Name() string { return "route" }

// Params returns the task's parameters.
func (t *Route) Params() RouteParams { return t.p }

// maxEdges is the number of edges a graph has at most.
func (t *Route) maxEdges() int { return t.p.Nodes - 1 + t.p.ExtraEdges }

// MaxPromptLen is 3 characters an edge, less one, and 4 for ":s>g".
func (t *Route) MaxPromptLen() int { return 3*t.maxEdges() - 1 + 4 }

// MaxResponseLen bounds a generated demonstration with room to spare: 4
// characters a hop ("x:" ">y" ";") less one, the neighbour lists (2 per
// route node but the start's 1, Forks branch edges, ExtraEdges edges to
// the route), and RouteLen+8 more for wandering responses.
func (t *Route) MaxResponseLen() int {
	L := t.p.RouteLen
	return 4*L - 1 + 2*L - 1 + t.p.Forks + t.p.ExtraEdges + L + 8
}

// Prompt returns prompt i of a split.
func (t *Route) Prompt(split Split, seed uint64, i int) (Prompt, error) {
	return drawPrompt(t.Name(), split, seed, i, func(rng *rand.Rand) (Prompt, error) {
		return t.generate(rng), nil
	})
}

// generate draws a graph: a route, dead-end branches off Forks route nodes
// (the start first), deepened with the spare nodes, and extra edges inside
// the branches, on randomly lettered nodes.
func (t *Route) generate(rng *rand.Rand) Prompt {
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
	forks := append([]int{0}, rng.Perm(L - 1)[:t.p.Forks-1]...)
	for f := range forks[1:] {
		forks[f+1]++ // route nodes 1..L-1
	}
	root := make([]int, n) // root[k]: the route node a branch node hangs from
	for k := L + 1; k < n; k++ {
		var at int
		switch j := k - L - 1; {
		case j < len(forks):
			at = forks[j] // each fork's first branch node
		case j < 2*len(forks):
			at = k - len(forks) // ... two nodes deep
		default:
			at = L + 1 + rng.IntN(k-L-1) // deepen or widen a branch
		}
		link(at, k)
		if at <= L {
			root[k] = at
		} else {
			root[k] = root[at]
		}
	}
	t.addExtraEdges(&q, label, root, rng)
	q.start, q.goal = label[0], label[L]
	q.shortest = L
	text := q.text()
	route := make([]int, L+1)
	for k := range route {
		route[k] = label[k]
	}
	return Prompt{Text: text, Demo: routeTrace(&q, route), problem: &q, parsedText: text}
}

// addExtraEdges adds ExtraEdges edges inside branches: between two branch
// nodes of the same branch, or a branch node and its route node.
func (t *Route) addExtraEdges(q *pathProblem, label, root []int, rng *rand.Rand) {
	L := t.p.RouteLen
	var cands [][2]int
	for u := L + 1; u < t.p.Nodes; u++ {
		if q.adj[label[u]]&(1<<label[root[u]]) == 0 {
			cands = append(cands, [2]int{u, root[u]})
		}
		for v := u + 1; v < t.p.Nodes; v++ {
			if root[u] == root[v] && q.adj[label[u]]&(1<<label[v]) == 0 {
				cands = append(cands, [2]int{u, v})
			}
		}
	}
	for e := 0; e < t.p.ExtraEdges && len(cands) > 0; e++ {
		k := rng.IntN(len(cands))
		u, v := label[cands[k][0]], label[cands[k][1]]
		q.adj[u] |= 1 << v
		q.adj[v] |= 1 << u
		cands = slices.Delete(cands, k, k+1)
	}
}

// routeTrace writes the hops of a route (node numbers, start first): for
// each node but the last, "x:" its neighbours ">y", joined by ";".
func routeTrace(q *pathProblem, route []int) string {
	var sb strings.Builder
	for k := 0; k+1 < len(route); k++ {
		if k > 0 {
			sb.WriteByte(';')
		}
		writeHop(&sb, route[k], q.adj[route[k]], route[k+1])
	}
	return sb.String()
}

// writeHop writes one hop "x:nbrs>y".
func writeHop(sb *strings.Builder, x int, nbrs uint32, y int) {
	sb.WriteByte(byte('a' + x))
	sb.WriteByte(':')
	for m := nbrs; m != 0; m &= m - 1 {
		sb.WriteByte(byte('a' + bits.TrailingZeros32(m)))
	}
	sb.WriteByte('>')
	sb.WriteByte(byte('a' + y))
}

// ParsePrompt reads "xy xy ...:s>g" as the "path" task does. The demo is
// the trace of a shortest route (the alphabetically first), or "" if the
// goal cannot be reached.
func (t *Route) ParsePrompt(text string) (Prompt, error) {
	q, err := parseGraph("route", text, t.p.Nodes, t.maxEdges(), t.MaxPromptLen())
	if err != nil {
		return Prompt{}, err
	}
	route := shortestRouteNodes(q)
	q.shortest = len(route) - 1
	demo := ""
	if len(route) > 1 {
		demo = routeTrace(q, route)
	}
	return Prompt{Text: text, Demo: demo, problem: q, parsedText: text}, nil
}

// shortestRouteNodes is the shortest route (see pathProblem.shortestRoute)
// as node numbers, nil if there is none.
func shortestRouteNodes(q *pathProblem) []int {
	s := q.shortestRoute()
	route := make([]int, len(s))
	for k := range s {
		route[k] = int(s[k] - 'a')
	}
	return route
}

// routeHop is one parsed hop "x:nbrs>y" and where it ends in the response.
type routeHop struct {
	from, to int
	end      int // the position just after y
}

// parseHops splits a response into hops. ok is false when a hop is not
// "x:letters>y" (x, y letters) or hops are not separated by single ";".
func parseHops(response string) (hops []routeHop, ok bool) {
	pos := 0
	for _, h := range strings.Split(response, ";") {
		pos += len(h) + 1
		if len(h) < 4 || h[1] != ':' || h[len(h)-2] != '>' || !lettersOnly(h[:1]) || !lettersOnly(h[2:len(h)-2]) || !lettersOnly(h[len(h)-1:]) {
			return hops, false
		}
		hops = append(hops, routeHop{from: int(h[0] - 'a'), to: int(h[len(h)-1] - 'a'), end: pos - 1})
	}
	return hops, true
}

func lettersOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return true
}

// AnswerStart is the position just after the hop that first reaches the
// goal: nothing written after it can make the route right.
func (t *Route) AnswerStart(p Prompt, response string) int {
	q, ok := problemOf(p, problemFrom[*pathProblem](t.ParsePrompt))
	if !ok {
		return len(response)
	}
	hops, _ := parseHops(response)
	for _, h := range hops {
		if h.to == q.goal {
			return h.end
		}
	}
	return len(response)
}

// Verify parses the hops (a malformed hop, or a hop that does not begin
// where the last one ended, is parse_error) and walks the route they
// trace: it must begin at the start, follow edges of the graph, visit no
// node twice and end at the goal. The answer is the route's nodes.
func (t *Route) Verify(p Prompt, response string) Verdict {
	q, ok := problemOf(p, problemFrom[*pathProblem](t.ParsePrompt))
	if !ok {
		return Verdict{Reason: BadPrompt}
	}
	if v, ok := screen(response, t.MaxResponseLen()); !ok {
		return v
	}
	hops, ok := parseHops(response)
	if !ok {
		return Verdict{Reason: ParseError}
	}
	route := []byte{byte('a' + hops[0].from)}
	for k, h := range hops {
		if k > 0 && h.from != hops[k-1].to {
			return Verdict{Reason: ParseError}
		}
		route = append(route, byte('a'+h.to))
	}
	bad := func(r Reason) Verdict { return Verdict{Reason: r, Answer: string(route)} }
	if hops[0].from != q.start {
		return bad(WrongStart)
	}
	visited := uint32(1) << q.start
	for _, h := range hops {
		if h.from >= 26 || h.to >= 26 || q.adj[h.from]&(1<<h.to) == 0 {
			return bad(IllegalMove)
		}
		if visited&(1<<h.to) != 0 {
			return bad(RevisitedNode)
		}
		visited |= 1 << h.to
	}
	if hops[len(hops)-1].to != q.goal {
		return bad(NotAtGoal)
	}
	return Verdict{Reward: 1, Reason: Correct, Answer: string(route)}
}

// FlawedDemo makes one of the mistakes of the task, each before the goal
// is reached: at a fork drawn among the route's forks, a move into the dead
// end, followed down the branch and then either a stop where it ends, a
// jump to the goal along an edge that does not exist, or a back-up to the
// fork (a revisit) and on along the route (a single step back when that
// is too long); or a hop that skips a route
// node; or a neighbour list that names a node that is not a neighbour, and
// a move to it.
func (t *Route) FlawedDemo(p Prompt, rng *rand.Rand) string {
	q, ok := problemOf(p, problemFrom[*pathProblem](t.ParsePrompt))
	if !ok || q.shortest < 1 {
		return "a:b>c"
	}
	route := shortestRouteNodes(q)
	var r string
	switch k := rng.IntN(10); {
	case k < 6:
		r = t.wrongTurn(q, route, rng)
	case k < 8:
		r = t.skipNode(q, route, rng)
	default:
		r = t.badNeighbour(q, route, rng)
	}
	if r == "" || len(r) > t.MaxResponseLen() || t.Verify(p, r).Reward >= 1 {
		// Stop at once: the first hop into a dead end, or a hop to itself.
		var sb strings.Builder
		writeHop(&sb, q.start, q.adj[q.start], q.start)
		return sb.String()
	}
	return r
}

// wrongTurn leaves the route at a fork for a dead end (see FlawedDemo).
func (t *Route) wrongTurn(q *pathProblem, route []int, rng *rand.Rand) string {
	var onRoute uint32
	for _, v := range route {
		onRoute |= 1 << v
	}
	var forks []int // positions on the route with a neighbour off it
	for k, v := range route[:len(route)-1] {
		if q.adj[v]&^onRoute != 0 {
			forks = append(forks, k)
		}
	}
	if len(forks) == 0 {
		return ""
	}
	f := forks[rng.IntN(len(forks))]
	walk := slices.Clone(route[:f+1])
	visited := onRoute // the dead end never rejoins the route but at its fork
	u := route[f]
	for next := q.adj[u] &^ visited; next != 0; next = q.adj[u] &^ visited {
		u = nthBit(next, rng.IntN(bits.OnesCount32(next)))
		walk = append(walk, u)
		visited |= 1 << u
	}
	switch rng.IntN(3) {
	case 0: // stop where the branch ends: not at the goal
	case 1: // jump to the goal along an edge that does not exist
		walk = append(walk, q.goal)
	default:
		// Back up (a revisit) to the fork and go on along the route, or,
		// when that is too long, stop one step back.
		back := slices.Clone(walk[f : len(walk)-1])
		slices.Reverse(back)
		full := append(append(slices.Clone(walk), back...), route[f+1:]...)
		if r := routeTrace(q, full); len(r) <= t.MaxResponseLen() {
			return r
		}
		walk = append(walk, back[0])
	}
	return routeTrace(q, walk)
}

// skipNode writes the route with one node left out: a hop along an edge
// that does not exist.
func (t *Route) skipNode(q *pathProblem, route []int, rng *rand.Rand) string {
	if len(route) < 3 {
		return ""
	}
	k := 1 + rng.IntN(len(route)-2)
	return routeTrace(q, slices.Delete(slices.Clone(route), k, k+1))
}

// badNeighbour lists, at a route node, a node that is not its neighbour
// and moves to it.
func (t *Route) badNeighbour(q *pathProblem, route []int, rng *rand.Rand) string {
	k := rng.IntN(len(route) - 1)
	u := route[k]
	var visited uint32
	for _, v := range route[:k+1] {
		visited |= 1 << v
	}
	others := (uint32(1)<<t.p.Nodes - 1) &^ q.adj[u] &^ visited
	if others == 0 {
		return ""
	}
	w := nthBit(others, rng.IntN(bits.OnesCount32(others)))
	var sb strings.Builder
	sb.WriteString(routeTrace(q, route[:k+1]))
	if k > 0 {
		sb.WriteByte(';')
	}
	writeHop(&sb, u, q.adj[u]|1<<w, w)
	return sb.String()
}
