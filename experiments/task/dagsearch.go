package task

import (
	"fmt"
	"hash/fnv"
	"math/bits"
	"math/rand/v2"
	"strings"
)

// DAGSearchParams are the parameters of the "dag_search" task.
//
// A prompt is a directed graph in layers on lettered nodes, written as
// its edges in a random order ("ac": a to c), then ":", the start, ">" and
// the goal: "ab ac bd ce cf eg:a>g". The start is the only node of the
// first layer, the goal one node of the last; every edge goes from one layer to
// the next, so every route from start to goal is a shortest one, and there
// are usually several. Nodes without a way on (and the other nodes of the
// last layer) are dead ends. The response is a depth-first search written
// out: attempts separated by ";", each a route from the start as its
// nodes, an abandoned one ending with "!", the last one reaching the goal;
// then ":" and that route again:
//
//	ab ac bd ce cf eg:a>g → "abd!;acf!;aceg:aceg"
//
// The reasoning branches: at a node with several successors the next one
// is a real choice, and some choices are dead ends found only further on.
// Demonstrations drawn for pretraining (SampleDemo) take each choice
// uniformly among the successors not yet tried. A node's successors are
// the letters that follow it in the prompt's edges, which a small
// transformer can look up by matching the letter (a format of adjacency
// lists, "acf", asked for a second hop to read all of them and was not
// learnt by the tiny policy).
type DAGSearchParams struct {
	// Layers after the start's, in 2..6; the goal is in the last one.
	// Default 4.
	Layers int `yaml:"layers" json:"layers"`
	// Width is the number of nodes in each layer after the start's, in
	// 2..5, at most 25 nodes in all. Default 3.
	Width int `yaml:"width" json:"width"`
	// MaxDeadEnds is the largest number of abandoned attempts in a
	// demonstration, in 0..8. Default 3.
	MaxDeadEnds int `yaml:"max_dead_ends" json:"max_dead_ends"`
}

// DefaultDAGSearchParams returns the defaults: 4 layers of 3 nodes after
// the start, at most 3 dead ends in a demonstration.
func DefaultDAGSearchParams() DAGSearchParams {
	return DAGSearchParams{Layers: 4, Width: 3, MaxDeadEnds: 3}
}

// Validate reports parameters out of range, naming the field.
func (p DAGSearchParams) Validate() error {
	switch {
	case p.Layers < 2 || p.Layers > 6:
		return fmt.Errorf("dag_search: layers = %d, want 2..6", p.Layers)
	case p.Width < 2 || p.Width > 5:
		return fmt.Errorf("dag_search: width = %d, want 2..5", p.Width)
	case 1+p.Layers*p.Width > 26:
		return fmt.Errorf("dag_search: layers·width + 1 = %d nodes, want at most 26", 1+p.Layers*p.Width)
	case p.MaxDeadEnds < 0 || p.MaxDeadEnds > 8:
		return fmt.Errorf("dag_search: max_dead_ends = %d, want 0..8", p.MaxDeadEnds)
	}
	return nil
}

// DAGSearch is the "dag_search" task. The verifier walks every attempt;
// any search whose attempts follow edges from the start and whose last
// attempt reaches the goal is correct, whichever routes it tried.
type DAGSearch struct{ p DAGSearchParams }

// NewDAGSearch builds the "dag_search" task.
func NewDAGSearch(p DAGSearchParams) (*DAGSearch, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return &DAGSearch{p: p}, nil
}

// dagProblem is a parsed "dag_search" prompt: out[u] has bit v set when
// u→v is an edge (nodes 0..25 for a..z).
type dagProblem struct {
	out         [26]uint32
	start, goal int
}

// Name returns "dag_search".
func (t *DAGSearch) Name() string { return "dag_search" }

// Params returns the task's parameters.
func (t *DAGSearch) Params() DAGSearchParams { return t.p }

// MaxPromptLen is that of the most edges a graph has (Width from the
// start, at most three from every other node but the last layer's), two
// letters each and spaces between them, and 4 for ":s>g".
func (t *DAGSearch) MaxPromptLen() int {
	W, L := t.p.Width, t.p.Layers
	edges := W + (L-1)*W*min(3, W)
	return 3*edges - 1 + 4
}

// MaxResponseLen has room for MaxDeadEnds+2 full attempts (each Layers+1
// nodes, "!" and ";") and the answer.
func (t *DAGSearch) MaxResponseLen() int {
	route := t.p.Layers + 1
	return (t.p.MaxDeadEnds+2)*(route+2) + 1 + route
}

// StepEnds implements Stepper: every character, one node chosen.
func (t *DAGSearch) StepEnds() string { return "" }

// Prompt returns prompt i of a split.
func (t *DAGSearch) Prompt(split Split, seed uint64, i int) (Prompt, error) {
	return drawPrompt(t.Name(), split, seed, i, func(rng *rand.Rand) (Prompt, error) {
		for range 1000 {
			q := t.generate(rng)
			if d := t.searchDemo(q); d != "" {
				text := q.text(rng)
				return Prompt{Text: text, Demo: d, problem: q, parsedText: text}, nil
			}
		}
		return Prompt{}, fmt.Errorf("no graph with a search of at most %d dead ends in 1000 draws", t.p.MaxDeadEnds)
	})
}

// generate draws a layered graph: each node of a layer (but the last) gets
// one to three successors in the next; the start gets two or more. Nodes
// are lettered at random. A graph where the goal cannot be reached, or
// where no choice leads to a dead end, is drawn again.
func (t *DAGSearch) generate(rng *rand.Rand) *dagProblem {
	W, L := t.p.Width, t.p.Layers
	for {
		label := rng.Perm(1 + L*W)
		node := func(layer, k int) int { // layer 0 is the start's
			if layer == 0 {
				return label[0]
			}
			return label[1+(layer-1)*W+k]
		}
		q := &dagProblem{start: node(0, 0), goal: node(L, rng.IntN(W))}
		for layer := 0; layer < L; layer++ {
			n := W
			if layer == 0 {
				n = 1
			}
			for k := range n {
				out := 1 + rng.IntN(3)
				if layer == 0 {
					out = 2 + rng.IntN(W-1)
				} else if rng.IntN(4) == 0 {
					out = 0 // a dead end
				}
				for _, j := range rng.Perm(W)[:min(out, W)] {
					q.out[node(layer, k)] |= 1 << node(layer+1, j)
				}
			}
		}
		reach, routes := q.reachesGoal()
		dead := false // a dead end the search can walk into
		var seen uint32
		stack := []int{q.start}
		for len(stack) > 0 {
			u := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for v := q.out[u]; v != 0; v &= v - 1 {
				w := bits.TrailingZeros32(v)
				dead = dead || !reach[w]
				if seen&(1<<w) == 0 {
					seen |= 1 << w
					stack = append(stack, w)
				}
			}
		}
		if reach[q.start] && dead && routes >= 2 {
			return q
		}
	}
}

// reachesGoal returns, for each node, whether the goal can be reached from
// it, and the number of routes from the start to the goal.
func (q *dagProblem) reachesGoal() (reach [26]bool, routes int) {
	var count [26]int
	var done [26]bool
	var visit func(u int) int
	visit = func(u int) int {
		if u == q.goal {
			return 1
		}
		if done[u] {
			return count[u]
		}
		done[u] = true
		for v := q.out[u]; v != 0; v &= v - 1 {
			count[u] += visit(bits.TrailingZeros32(v))
		}
		return count[u]
	}
	routes = visit(q.start)
	for u := range 26 {
		reach[u] = u == q.goal || done[u] && count[u] > 0
	}
	return reach, routes
}

// text writes the edges in an order drawn from rng, then ":s>g".
func (q *dagProblem) text(rng *rand.Rand) string {
	var edges []string
	for u := range 26 {
		for v := q.out[u]; v != 0; v &= v - 1 {
			edges = append(edges, string([]byte{byte('a' + u), byte('a' + bits.TrailingZeros32(v))}))
		}
	}
	rng.Shuffle(len(edges), func(i, j int) { edges[i], edges[j] = edges[j], edges[i] })
	return strings.Join(edges, " ") + ":" + string(rune('a'+q.start)) + ">" + string(rune('a'+q.goal))
}

// searchDemo is the demonstration of a problem: a depth-first search whose
// order of successors is drawn from a random stream keyed by the graph
// (not its edge order), so that it is a pure function of the problem, or
// "" when it needs more than MaxDeadEnds dead ends.
func (t *DAGSearch) searchDemo(q *dagProblem) string {
	h := fnv.New64a()
	for _, o := range q.out {
		h.Write([]byte{byte(o), byte(o >> 8), byte(o >> 16), byte(o >> 24)})
	}
	h.Write([]byte{byte(q.start), byte(q.goal)})
	return t.demo(q, rand.New(rand.NewPCG(mix64(h.Sum64()), 0xda9)))
}

// SampleDemo implements DemoSampler: a depth-first search whose order of
// successors at every node is drawn uniformly from rng (the first of
// demoTries draws within MaxDeadEnds dead ends), or p.Demo if none fits.
func (t *DAGSearch) SampleDemo(p Prompt, rng *rand.Rand) string {
	q, ok := problemOf(p, t.parse)
	if !ok {
		return p.Demo
	}
	for range demoTries {
		if d := t.demo(q, rng); d != "" {
			return d
		}
	}
	return p.Demo
}

// demo is a depth-first search from the start that tries the successors of
// each node in an order drawn from rng, written out, or "" when it needs
// more than MaxDeadEnds dead ends.
func (t *DAGSearch) demo(q *dagProblem, rng *rand.Rand) string {
	var sb strings.Builder
	var path []byte
	deadEnds := 0
	var onPath uint32 // a parsed graph may have cycles: a route never revisits
	var dfs func(u int) bool
	dfs = func(u int) bool {
		path = append(path, byte('a'+u))
		onPath |= 1 << u
		defer func() { path, onPath = path[:len(path)-1], onPath&^(1<<u) }()
		if u == q.goal {
			if sb.Len() > 0 {
				sb.WriteByte(';')
			}
			sb.Write(path)
			sb.WriteByte(':')
			sb.Write(path)
			return true
		}
		var next []int
		for v := q.out[u] &^ onPath; v != 0; v &= v - 1 {
			next = append(next, bits.TrailingZeros32(v))
		}
		if len(next) == 0 {
			if sb.Len() > 0 {
				sb.WriteByte(';')
			}
			sb.Write(path)
			sb.WriteByte('!')
			deadEnds++
			return false
		}
		for _, k := range rng.Perm(len(next)) {
			if deadEnds > t.p.MaxDeadEnds || sb.Len() > t.MaxResponseLen() {
				return false
			}
			if dfs(next[k]) {
				return true
			}
		}
		return false
	}
	if !dfs(q.start) || deadEnds > t.p.MaxDeadEnds || sb.Len() > t.MaxResponseLen() {
		return ""
	}
	return sb.String()
}

// ParsePrompt reads edges "uv" separated by spaces (no edge twice or to
// itself), ":", the start, ">" and the goal. It does not check that the
// graph is layered; the demo is "" when the goal cannot be reached within
// MaxDeadEnds dead ends.
func (t *DAGSearch) ParsePrompt(text string) (Prompt, error) {
	q, err := t.parse(text)
	if err != nil {
		return Prompt{}, err
	}
	return Prompt{Text: text, Demo: t.searchDemo(q), problem: q, parsedText: text}, nil
}

func (t *DAGSearch) parse(text string) (*dagProblem, error) {
	if err := checkPromptText(text, t.MaxPromptLen()); err != nil {
		return nil, fmt.Errorf("dag_search prompt %q: %w", text, err)
	}
	edges, ends, ok := strings.Cut(text, ":")
	if !ok || len(ends) != 3 || ends[1] != '>' || !isLower(ends[0]) || !isLower(ends[2]) || ends[0] == ends[2] {
		return nil, fmt.Errorf("dag_search prompt %q: want edges, then \":s>g\" with two different nodes", text)
	}
	q := &dagProblem{start: int(ends[0] - 'a'), goal: int(ends[2] - 'a')}
	for _, e := range strings.Split(edges, " ") {
		if len(e) != 2 || !isLower(e[0]) || !isLower(e[1]) {
			return nil, fmt.Errorf("dag_search prompt %q: %q is not an edge of two node letters", text, e)
		}
		u, v := int(e[0]-'a'), int(e[1]-'a')
		if u == v || q.out[u]&(1<<v) != 0 {
			return nil, fmt.Errorf("dag_search prompt %q: edge %q twice or from a node to itself", text, e)
		}
		q.out[u] |= 1 << v
	}
	return q, nil
}

func isLower(c byte) bool { return c >= 'a' && c <= 'z' }

// AnswerStart is the position after ":", where the route is repeated.
func (t *DAGSearch) AnswerStart(_ Prompt, response string) int {
	if i := strings.IndexByte(response, ':'); i >= 0 {
		return i + 1
	}
	return len(response)
}

// Verify walks every attempt: each begins at the start (wrong_start) and
// follows edges (illegal_move; a node twice in one attempt is
// revisited_node); every attempt but the last ends with "!", the last one
// does not and ends at the goal (not_at_goal); the route after ":" must be
// the last attempt (wrong_answer). The answer is that route.
func (t *DAGSearch) Verify(p Prompt, response string) Verdict {
	q, ok := problemOf(p, t.parse)
	if !ok {
		return Verdict{Reason: BadPrompt}
	}
	if v, ok := screen(response, t.MaxResponseLen()); !ok {
		return v
	}
	body, answer, ok := strings.Cut(response, ":")
	if !ok {
		return Verdict{Reason: ParseError}
	}
	attempts := strings.Split(body, ";")
	for k, a := range attempts {
		final := k == len(attempts)-1
		if strings.HasSuffix(a, "!") == final {
			return Verdict{Reason: ParseError}
		}
		a = strings.TrimSuffix(a, "!")
		if a == "" {
			return Verdict{Reason: ParseError}
		}
		var seen uint32
		for i := 0; i < len(a); i++ {
			if !isLower(a[i]) {
				return Verdict{Reason: ParseError}
			}
			u := int(a[i] - 'a')
			switch {
			case i == 0 && u != q.start:
				return Verdict{Reason: WrongStart}
			case seen&(1<<u) != 0:
				return Verdict{Reason: RevisitedNode}
			case i > 0 && q.out[a[i-1]-'a']&(1<<u) == 0:
				return Verdict{Reason: IllegalMove}
			}
			seen |= 1 << u
		}
		if final && int(a[len(a)-1]-'a') != q.goal {
			return Verdict{Reason: NotAtGoal}
		}
	}
	last := strings.TrimSuffix(attempts[len(attempts)-1], "!")
	if answer != last {
		if strings.Trim(answer, "abcdefghijklmnopqrstuvwxyz") != "" {
			return Verdict{Reason: ParseError}
		}
		return Verdict{Reason: WrongAnswer}
	}
	return Verdict{Reward: 1, Reason: Correct, Answer: last}
}

// FlawedDemo makes a plausible mistake in a correct search: a node
// replaced by another (an edge that is not there, or a route that stops
// short of the goal), or the final route copied wrongly.
func (t *DAGSearch) FlawedDemo(p Prompt, rng *rand.Rand) string {
	q, ok := problemOf(p, t.parse)
	if !ok {
		return "a:a"
	}
	demo := t.searchDemo(q)
	if demo == "" {
		return string(rune('a'+q.start)) + ":" + string(rune('a'+q.start))
	}
	for range 20 {
		b := []byte(demo)
		var letters []int
		for k, c := range b {
			if isLower(c) && k > 0 && b[k-1] != ';' && b[k-1] != ':' {
				letters = append(letters, k)
			}
		}
		if len(letters) == 0 {
			break
		}
		k := letters[rng.IntN(len(letters))]
		b[k] = byte('a' + rng.IntN(1+t.p.Layers*t.p.Width))
		r := string(b)
		if rng.IntN(3) == 0 { // the search stops at a dead end as if it were the goal
			if i := strings.LastIndexByte(demo, '!'); i >= 0 {
				route := demo[strings.LastIndexByte(demo[:i], ';')+1 : i]
				r = demo[:i] + ":" + route
			}
		}
		if len(r) <= t.MaxResponseLen() && t.Verify(p, r).Reward < 1 {
			return r
		}
	}
	body, _, _ := strings.Cut(demo, ":")
	return body + ":" + body[:len(body)-1]
}
