// Package search generates rollouts for RL fine-tuning: flat groups of
// independent responses and trees that fork at uncertain tokens, all charged
// against one exactly counted token budget, and turns scored rollouts into
// per-token advantages (GRPO, Dr.GRPO, RLOO, TreeRL, TreePO).
//
// # Trees
//
// A Group holds everything sampled for one prompt: one or more Trees. A Node
// is one branch: the tokens one decoding state sampled from its fork point
// to the end of its response. A child node shares its parent's tokens
// [0, ForkAt) and samples the token at index ForkAt anew, so the parent's
// tokens from ForkAt on are a sibling path of the child. Every node therefore
// ends exactly one response: the leaves of a group are its nodes. A flat
// group is a set of single-node trees.
//
// Index spaces: Node.Tokens is indexed from 0; Node.ForkAt is an index into
// Parent.Tokens; Node.Start is the index of the node's first token in the
// response (the tokens after the prompt), Parent.Start+ForkAt; the absolute
// sequence position (prompt included) of Tokens[i] is
// len(prompt)+Start+i.
//
// The segments between forks (Segments), on which the tree advantage
// estimators are defined, are the pieces of each node's tokens cut at the
// fork points of its children.
//
// # Strategies
//
// Flat, EntropyTree (also under the name random_tree), SegmentTree,
// StepTree (tree_grpo), ARPO (arpo) and Pivot (pivot) implement Strategy,
// each in a file of its own; the last three, and the fork scores
// step_entropy and step_random, work on a task's steps (Request.StepEnds). Generate advances every
// group of a request together: all live states of all prompts go through
// one batched policy.Sampler.Step per token. Randomness comes from
// counter-based streams derived from (seed, step, prompt id, branch id), so
// the trees do not depend on the batch.
//
// A strategy knows itself: its constructor parses and validates its
// key=value parameters (Params), and the value states its shape (Leaves,
// MaxGroupTokens), generates its groups and, if a remote policy can run it,
// gives its remote form (Remote). NewStrategy builds a strategy from its
// name and parameters through a registry of constructors that every caller
// shares: configs, the commands, the budget accounting and the remote
// sampler. Adding a strategy is one file holding the type and its
// constructor, and one RegisterStrategy call in an init function, in this
// package or in another (see the examples); advantage estimators
// (RegisterEstimator) and fork scores (RegisterForkScore) are added the
// same way. The registries are filled while packages initialise and only
// read afterwards, as database/sql's drivers are.
//
// # Budget
//
// Every group records its Usage exactly: generated (sampled) tokens with
// shared prefixes counted once, prefill tokens, decode tokens and forward
// FLOPs. The optional per-prompt Request.Budget bounds generated tokens: a
// response or branch starts only if the budget left covers its longest
// possible length, so it is never exceeded and never truncates a response.
//
// # Advantages
//
// Estimators (NewEstimator: grpo, dr_grpo, rloo, tree, tree_nosqrt,
// tree_subgroup, tree_grpo, spo, and any registered with
// RegisterEstimator) are pure
// functions of a scored group; SetAdvantages stores one value per response
// token in every leaf.
package search

import (
	"math"
	"slices"
	"sort"

	"github.com/rollout-rl/rollout/search/record"
)

// Finish says why a response ended: the record's finish type, one for
// live groups and their records.
type Finish = record.Finish

// Finish reasons.
const (
	FinishEOS    = record.FinishEOS    // an end-of-sequence token was sampled
	FinishLength = record.FinishLength // the response reached Request.MaxTokens
)

// Node is one branch of a rollout tree: the tokens one decoding state sampled
// from its fork point to the end of its response. See the package
// documentation for the index spaces.
type Node struct {
	// ID is unique within the group, in creation order (Group.Nodes()[ID]).
	ID int
	// Tree is the index of the node's tree in Group.Trees.
	Tree int
	// Parent is nil for a root. (Parent and Children are links, left out
	// of encodings; Group.Record gives a group's serialisable record.)
	Parent *Node `json:"-"`
	// ForkAt is the index in Parent.Tokens where this node's first token
	// replaces the parent's; 0 for a root.
	ForkAt int
	// Start is the index of Tokens[0] in the response: Parent.Start+ForkAt.
	Start int
	// Iteration is the round that made the node: 0 for roots, the fork
	// iteration (1..L) for entropy-tree branches, the number of completed
	// segments for segment-tree branches.
	Iteration int
	// ForkScore is the fork score of the position the node forked at, when
	// HasForkScore (entropy-tree branches; not roots or segment-tree
	// branches).
	ForkScore    float64
	HasForkScore bool
	// Tokens, LogProbs and Entropies are per sampled token: id,
	// log-probability and entropy (nats) of the sampling distribution.
	Tokens    []int
	LogProbs  []float32
	Entropies []float32
	// Attention is, per token, the attention it received from the later
	// tokens of the node's own response (policy.AttentionState: summed
	// over those tokens, averaged over layers and heads), recorded when
	// the node finishes if the sampler keeps it; nil otherwise. The
	// attention fork score reads it.
	Attention []float32 `json:",omitempty"`
	// Finish says why the node's response ended.
	Finish Finish
	// Children are the nodes forked off this one, in creation order.
	Children []*Node `json:"-"`

	// Outcome of the response that ends in this node, set by SetOutcome:
	// the reward, the verifier's reason, and the unweighted terms of a
	// mixed reward (none when the reward is the verifier's alone).
	Reward float64
	Reason string
	Scored bool
	Terms  []record.Term
	// Advantages has one value per token of Response(), set by
	// SetAdvantages.
	Advantages []float64
}

// SetOutcome records the reward of the response that ends in n and the
// verifier's reason.
func (n *Node) SetOutcome(reward float64, reason string) {
	n.Reward, n.Reason, n.Scored = reward, reason, true
}

// IsRoot reports whether n starts its tree.
func (n *Node) IsRoot() bool { return n.Parent == nil }

// Response returns the full response that ends in n: the tokens it shares
// with its ancestors followed by its own.
func (n *Node) Response() []int {
	out := make([]int, n.Start+len(n.Tokens))
	fillPath(n, len(out), out, func(m *Node) []int { return m.Tokens })
	return out
}

// ResponseLogProbs returns the sampling log-probability of every token of
// Response().
func (n *Node) ResponseLogProbs() []float32 {
	out := make([]float32, n.Start+len(n.Tokens))
	fillPath(n, len(out), out, func(m *Node) []float32 { return m.LogProbs })
	return out
}

// ResponseEntropies returns the sampling entropy at every token of
// Response().
func (n *Node) ResponseEntropies() []float32 {
	out := make([]float32, n.Start+len(n.Tokens))
	fillPath(n, len(out), out, func(m *Node) []float32 { return m.Entropies })
	return out
}

// fillPath writes out[:end] from n and its ancestors: n's own values from
// n.Start, then each ancestor's up to the fork point.
func fillPath[T any](n *Node, end int, out []T, get func(*Node) []T) {
	for m := n; m != nil; m = m.Parent {
		copy(out[m.Start:end], get(m)[:end-m.Start])
		end = m.Start
	}
}

// Below returns n and every node forked off it or off its descendants, in
// ID order: the leaves whose responses pass through n's first token.
func (n *Node) Below() []*Node {
	out := []*Node{n}
	for i := 0; i < len(out); i++ {
		out = append(out, out[i].Children...)
	}
	sort.Slice(out, func(a, b int) bool { return out[a].ID < out[b].ID })
	return out
}

// Tree is one rollout tree: a root response and the branches forked off it.
type Tree struct {
	Root *Node
	// Nodes are the tree's nodes in ID order, the root first.
	Nodes []*Node
}

// Group is everything generated for one prompt by one strategy.
type Group struct {
	// Prompt is the prompt's token ids; PromptID the id that seeded its
	// streams.
	Prompt   []int
	PromptID uint64
	// Strategy is the name of the strategy that made the group.
	Strategy string
	// Trees are the group's trees; a flat group has one single-node tree
	// per response.
	Trees []*Tree
	// Usage is the group's exact cost.
	Usage Usage
	// MissingForks counts branches the strategy asked for but could not
	// make without breaking a rule: entropy-tree fork positions missing
	// because a tree had fewer eligible positions than N (each missing
	// position counts once), segment-tree width that no live path could take
	// over. Branches not started for lack of budget are counted in
	// Usage.SkippedBranches instead.
	MissingForks int

	nodes []*Node
}

// Usage is what a group cost, counted exactly: generated tokens (a shared
// prefix once), prefill tokens, decode tokens (sampled tokens fed back
// through the model), forward FLOPs from Request.FLOPs, the per-prompt
// limit and the branches skipped for it, and the tokens a remote server
// generated but no node holds. It is the record's Usage, so a group's
// record carries it as it is.
type Usage = record.Usage

// Nodes returns all nodes of the group in ID order.
func (g *Group) Nodes() []*Node { return g.nodes }

// Leaves returns the nodes in which responses end, in ID order: every node,
// since each node ends exactly one response.
func (g *Group) Leaves() []*Node { return g.nodes }

// Rewards returns the reward of every leaf, in Leaves order.
func (g *Group) Rewards() []float64 {
	out := make([]float64, len(g.nodes))
	for i, n := range g.nodes {
		out[i] = n.Reward
	}
	return out
}

// UniqueResponses counts the distinct responses among the leaves (counted
// as the group's record counts them: record.CountUnique).
func (g *Group) UniqueResponses() int {
	return record.CountUnique(len(g.nodes), func(i int) ([]int, bool) { return g.nodes[i].Response(), true })
}

// Forks counts the distinct fork positions: (parent, ForkAt) pairs with at
// least one child (counted as the group's record counts them:
// record.CountForks). A flat group has none.
func (g *Group) Forks() int {
	return record.CountForks(len(g.nodes), func(i int) (int, int) {
		n := g.nodes[i]
		if n.Parent == nil {
			return -1, 0
		}
		return n.Parent.ID, n.ForkAt
	})
}

// Branches counts the nodes that were forked off another node.
func (g *Group) Branches() int {
	n := 0
	for _, p := range g.nodes {
		if p.Parent != nil {
			n++
		}
	}
	return n
}

// newNode adds a node to the group and its tree.
func (g *Group) newNode(parent *Node, tree, forkAt, iteration int, score float64) *Node {
	n := &Node{ID: len(g.nodes), Tree: tree, Parent: parent, ForkAt: forkAt, Iteration: iteration}
	if !math.IsNaN(score) {
		n.ForkScore, n.HasForkScore = score, true
	}
	if parent != nil {
		n.Start = parent.Start + forkAt
		parent.Children = append(parent.Children, n)
		g.Trees[tree].Nodes = append(g.Trees[tree].Nodes, n)
	} else {
		g.Trees = append(g.Trees, &Tree{Root: n, Nodes: []*Node{n}})
		n.Tree = len(g.Trees) - 1
	}
	g.nodes = append(g.nodes, n)
	return n
}

// NewGroup assembles a group from nodes built by hand (for tests, imports
// and tools): roots have a nil Parent; IDs, Tree, Start and Children are set
// here from the parent links, in the given order, which must list every
// parent before its children.
func NewGroup(prompt []int, strategy string, nodes []*Node) *Group {
	g := &Group{Prompt: prompt, Strategy: strategy}
	for _, n := range nodes {
		n.ID = len(g.nodes)
		n.Children = nil
		if n.Parent == nil {
			n.Start, n.ForkAt = 0, 0
			g.Trees = append(g.Trees, &Tree{Root: n, Nodes: []*Node{n}})
			n.Tree = len(g.Trees) - 1
		} else {
			n.Tree = n.Parent.Tree
			n.Start = n.Parent.Start + n.ForkAt
			n.Parent.Children = append(n.Parent.Children, n)
			g.Trees[n.Tree].Nodes = append(g.Trees[n.Tree].Nodes, n)
		}
		g.nodes = append(g.nodes, n)
	}
	return g
}

// Segment is a piece of a node's tokens between fork points: Node.Tokens[From:To].
// The tree advantage estimators give every token of a segment the
// segment's value.
type Segment struct {
	Node     *Node
	From, To int
	// Parent is the segment just before this one on every path through it;
	// nil for the first segment of a root.
	Parent *Segment
	// Leaves are the nodes whose responses pass through the segment, in ID
	// order.
	Leaves []*Node
}

// Segments cuts every node at the fork points of its children and returns
// the segments in node-ID, then position order, together with each leaf's
// path of segments (root first), indexed by leaf ID.
func (g *Group) Segments() (segs []*Segment, paths [][]*Segment) {
	own := make([][]*Segment, len(g.nodes))
	for _, n := range g.nodes {
		cuts := []int{0, len(n.Tokens)}
		for _, c := range n.Children {
			cuts = append(cuts, c.ForkAt)
		}
		sort.Ints(cuts)
		cuts = slices.Compact(cuts)
		for i := 0; i+1 < len(cuts); i++ {
			s := &Segment{Node: n, From: cuts[i], To: cuts[i+1]}
			own[n.ID] = append(own[n.ID], s)
			segs = append(segs, s)
		}
	}
	paths = make([][]*Segment, len(g.nodes))
	for _, leaf := range g.nodes {
		var rev []*Segment
		end := len(leaf.Tokens)
		for m := leaf; m != nil; m = m.Parent {
			ss := own[m.ID]
			for i := len(ss) - 1; i >= 0; i-- {
				if ss[i].To <= end {
					rev = append(rev, ss[i])
				}
			}
			end = m.ForkAt
		}
		slices.Reverse(rev)
		for i, s := range rev {
			s.Leaves = append(s.Leaves, leaf)
			if i > 0 {
				s.Parent = rev[i-1]
			}
		}
		paths[leaf.ID] = rev
	}
	return segs, paths
}
