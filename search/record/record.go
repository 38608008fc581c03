// Package record is the lossless record of one rollout group: the form in
// which a group leaves live sampling and is stored, exported, read back and
// printed. It imports nothing of the project, so the store (tracking) can
// keep groups without importing the policy, and every reader of a group —
// `rollout sample`, `rollout trees`, `rollout export`, the store — shares one
// JSON encoding (Group.AppendJSON), one binary codec (Group.AppendBinary,
// Decode) and one text renderer (Group.WriteText).
//
// A group is a forest of trees. A Node is one branch: the tokens one
// decoding state sampled from its fork point to the end of its response. A
// child shares its parent's tokens [0, ForkAt) and samples the token at index
// ForkAt anew. A Leaf is a finished response: the path from its tree's root
// to its node. Groups made by package search have one leaf per node, but the
// record does not rely on it.
package record

import (
	"fmt"
	"slices"
	"strconv"
)

// Finish says why a node's response ended: FinishEOS, FinishLength, a
// server's own reason (remote groups), or empty when unknown (stores
// written before it was recorded). It is the one finish type of the
// project: search.Finish is this type.
type Finish string

// Finish reasons of a node's response.
const (
	FinishEOS    Finish = "eos"    // an end-of-sequence token was sampled
	FinishLength Finish = "length" // the response reached the length cap
)

// Group is everything generated for one prompt by one strategy, scored.
type Group struct {
	// Prompt is the prompt's text; PromptTokens its token ids (BOS and SEP
	// included); PromptID the id that seeded its random streams.
	Prompt       string
	PromptTokens []int
	PromptID     uint64
	// Strategy names the strategy that made the group.
	Strategy string
	// Usage is the group's exact cost (the JSON key "budget", kept so
	// that stored and exported groups read as before).
	Usage Usage
	// MissingForks counts branches the strategy asked for but could not make
	// without breaking a rule (see search.Group.MissingForks).
	MissingForks int
	// Filtered is true when the group was dropped from the update (all
	// rewards equal under dynamic sampling).
	Filtered bool
	Nodes    []Node
	Leaves   []Leaf
}

// Usage is what a group cost, counted exactly, and the per-prompt budget
// it was generated under. The project says Usage for a cost and Budget for
// a limit: search.Usage is this type; Usage.Budget, search.Request.Budget
// and remote.Sampler.Budget are limits.
type Usage struct {
	// Budget is the per-prompt limit in generated tokens; 0 means none.
	Budget int64
	// GeneratedTokens counts sampled tokens, a shared prefix once.
	GeneratedTokens int64
	// PrefillTokens counts prompt positions run through the model.
	PrefillTokens int64
	// DecodeTokens counts sampled tokens fed back through the model.
	DecodeTokens int64
	// FLOPs are the forward FLOPs of the prefill and decode positions.
	FLOPs int64
	// SkippedBranches counts responses and branches not started because the
	// budget left could not cover their longest possible length.
	SkippedBranches int
	// UnheldTokens counts generated tokens that no node holds: the
	// end-of-sequence tokens (and tokens cut with a stop string) that a
	// completions server counts in its usage but does not return. It is 0
	// for local groups, whose nodes hold every token they sampled, EOS
	// included. GeneratedTokens is always the group's held tokens
	// (Group.HeldTokens) plus UnheldTokens.
	UnheldTokens int64
}

// Unspent is the part of the budget not generated; 0 without a budget.
func (u Usage) Unspent() int64 {
	if u.Budget <= 0 {
		return 0
	}
	return u.Budget - u.GeneratedTokens
}

// HeldTokens counts the tokens the group's nodes hold, a shared prefix
// once: Usage.GeneratedTokens − Usage.UnheldTokens.
func (g *Group) HeldTokens() int64 {
	var n int64
	for i := range g.Nodes {
		n += int64(len(g.Nodes[i].Tokens))
	}
	return n
}

// Node is one branch of a rollout tree.
type Node struct {
	// ID identifies the node within its group.
	ID int
	// Parent is the parent node's ID, −1 for a root.
	Parent int
	// ForkAt is the index in the parent's Tokens where this node's first
	// token replaces the parent's; 0 for a root.
	ForkAt int
	// Iteration is the round that made the node: 0 for roots.
	Iteration int
	// ForkScore is the score of the position the node forked at (entropy,
	// surprisal or a random draw), when HasForkScore.
	ForkScore    float64
	HasForkScore bool
	// Finish says why the node's response ended (FinishEOS, FinishLength;
	// empty when unknown, as in stores written before it was recorded).
	Finish Finish
	// Tokens, LogProbs and Entropies are per sampled token: id,
	// log-probability and entropy (nats) of the sampling distribution.
	Tokens    []int
	LogProbs  []float32
	Entropies []float32
}

// Leaf is a finished response: the path from its tree's root to Node.
type Leaf struct {
	// Node is the ID of the node the response ends in.
	Node int
	// Text is the response's text as the verifier read it.
	Text string
	// Reward is the response's reward, when Scored.
	Reward float64
	Scored bool
	// Terms are the unweighted terms the reward was mixed from (verifier,
	// model, format, length), in that order; empty when the reward is the
	// verifier's alone.
	Terms []Term
	// Reason is the verifier's reason.
	Reason string
	// Advantages holds one value per token of the whole root-to-leaf path
	// (constant along each segment between forks for the tree estimators).
	Advantages []float64
}

// Term is one named term of a mixed reward.
type Term struct {
	Name  string
	Value float64
}

// Index returns the position in g.Nodes of the node with the given ID, −1
// if there is none.
func (g *Group) Index(id int) int {
	if id >= 0 && id < len(g.Nodes) && g.Nodes[id].ID == id {
		return id
	}
	for i := range g.Nodes {
		if g.Nodes[i].ID == id {
			return i
		}
	}
	return -1
}

// Path returns the tokens, log-probabilities and entropies of the response
// that ends at node id, from its tree's root, appended to the given slices
// (which may be nil) so callers can reuse memory. It fails on a parent link
// that is missing or forms a cycle, or a fork outside its parent's tokens.
func (g *Group) Path(id int, tokens []int, logprobs, entropies []float32) ([]int, []float32, []float32, error) {
	var chainBuf [16]int
	chain := chainBuf[:0]
	for cur := id; cur != -1; {
		if len(chain) > len(g.Nodes) {
			return nil, nil, nil, fmt.Errorf("node %d: parent links form a cycle", id)
		}
		i := g.Index(cur)
		if i < 0 {
			return nil, nil, nil, fmt.Errorf("node %d: no node %d in the group", id, cur)
		}
		chain = append(chain, i)
		cur = g.Nodes[i].Parent
	}
	for k := len(chain) - 1; k >= 0; k-- {
		n := &g.Nodes[chain[k]]
		end := len(n.Tokens)
		if k > 0 {
			end = g.Nodes[chain[k-1]].ForkAt
			if end < 0 || end > len(n.Tokens) {
				return nil, nil, nil, fmt.Errorf("node %d forks at %d, but its parent %d has %d tokens", g.Nodes[chain[k-1]].ID, end, n.ID, len(n.Tokens))
			}
		}
		tokens = append(tokens, n.Tokens[:end]...)
		logprobs = appendPadded(logprobs, n.LogProbs, end)
		entropies = appendPadded(entropies, n.Entropies, end)
	}
	return tokens, logprobs, entropies, nil
}

// appendPadded appends src[:n], padding with NaN where src is shorter.
func appendPadded(dst, src []float32, n int) []float32 {
	if len(src) >= n {
		return append(dst, src[:n]...)
	}
	dst = append(dst, src...)
	for i := len(src); i < n; i++ {
		dst = append(dst, nan32)
	}
	return dst
}

// Forks counts the distinct fork positions: (parent, ForkAt) pairs with at
// least one child.
func (g *Group) Forks() int {
	return CountForks(len(g.Nodes), func(i int) (int, int) { return g.Nodes[i].Parent, g.Nodes[i].ForkAt })
}

// CountForks counts the distinct fork positions among n nodes, node i
// forking off parent at index at (parent < 0 for a root): the one count
// behind Group.Forks and search.Group.Forks.
func CountForks(n int, fork func(i int) (parent, at int)) int {
	type pos struct{ parent, at int }
	seen := map[pos]bool{}
	for i := range n {
		if p, at := fork(i); p >= 0 {
			seen[pos{p, at}] = true
		}
	}
	return len(seen)
}

// Trees counts the roots.
func (g *Group) Trees() int {
	n := 0
	for _, nd := range g.Nodes {
		if nd.Parent < 0 {
			n++
		}
	}
	return n
}

// UniqueResponses counts the distinct responses among the leaves (a leaf
// whose path cannot be built counts as its own response).
func (g *Group) UniqueResponses() int {
	var toks []int
	return CountUnique(len(g.Leaves), func(i int) ([]int, bool) {
		var err error
		toks, _, _, err = g.Path(g.Leaves[i].Node, toks[:0], nil, nil)
		return toks, err == nil
	})
}

// CountUnique counts the distinct token sequences among n responses:
// response(i) returns the tokens of the i-th (which the caller may reuse
// after the call), or false for one that cannot be built, which counts as
// its own. It is the one count behind Group.UniqueResponses and
// search.Group.UniqueResponses.
func CountUnique(n int, response func(i int) ([]int, bool)) int {
	seen := map[string]bool{}
	unbuilt := 0
	var b []byte
	for i := range n {
		toks, ok := response(i)
		if !ok {
			unbuilt++
			continue
		}
		b = b[:0]
		for _, t := range toks {
			b = strconv.AppendInt(b, int64(t), 10)
			b = append(b, ',')
		}
		seen[string(b)] = true
	}
	return len(seen) + unbuilt
}

// Validate checks the group's structure: unique node IDs, parents that
// exist, come before their children and form no cycle, fork positions
// within the parent's tokens, per-token arrays as long as the tokens (or
// empty), and leaves on existing nodes with one advantage per path token
// (or none).
func (g *Group) Validate() error {
	index := make(map[int]int, len(g.Nodes))
	pathLen := make([]int, len(g.Nodes))
	for i := range g.Nodes {
		n := &g.Nodes[i]
		if _, dup := index[n.ID]; dup {
			return fmt.Errorf("node id %d appears twice", n.ID)
		}
		index[n.ID] = i
		if len(n.LogProbs) != 0 && len(n.LogProbs) != len(n.Tokens) || len(n.Entropies) != 0 && len(n.Entropies) != len(n.Tokens) {
			return fmt.Errorf("node %d: %d tokens, %d logprobs, %d entropies", n.ID, len(n.Tokens), len(n.LogProbs), len(n.Entropies))
		}
		if n.Parent == -1 {
			if n.ForkAt != 0 {
				return fmt.Errorf("node %d: a root with fork_at %d", n.ID, n.ForkAt)
			}
			pathLen[i] = len(n.Tokens)
			continue
		}
		p, ok := index[n.Parent]
		if !ok || p == i {
			return fmt.Errorf("node %d: parent %d is not an earlier node of the group", n.ID, n.Parent)
		}
		if n.ForkAt < 0 || n.ForkAt > len(g.Nodes[p].Tokens) {
			return fmt.Errorf("node %d: fork_at %d outside its parent %d's %d tokens", n.ID, n.ForkAt, n.Parent, len(g.Nodes[p].Tokens))
		}
		pathLen[i] = pathLen[p] - len(g.Nodes[p].Tokens) + n.ForkAt + len(n.Tokens)
	}
	for j, l := range g.Leaves {
		i, ok := index[l.Node]
		if !ok {
			return fmt.Errorf("leaf %d: node %d is not in the group", j, l.Node)
		}
		if len(l.Advantages) != 0 && len(l.Advantages) != pathLen[i] {
			return fmt.Errorf("leaf %d: %d advantages for a path of %d tokens", j, len(l.Advantages), pathLen[i])
		}
	}
	return nil
}

// children returns, per node index, the indices of its children sorted by
// fork position (then ID), and the indices of the roots in order.
func (g *Group) children() (kids [][]int, roots []int) {
	kids = make([][]int, len(g.Nodes))
	for i, n := range g.Nodes {
		if n.Parent < 0 {
			roots = append(roots, i)
			continue
		}
		if p := g.Index(n.Parent); p >= 0 && p != i {
			kids[p] = append(kids[p], i)
		}
	}
	for _, k := range kids {
		slices.SortStableFunc(k, func(a, b int) int { return g.Nodes[a].ForkAt - g.Nodes[b].ForkAt })
	}
	return kids, roots
}
