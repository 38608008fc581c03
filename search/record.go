package search

import (
	"fmt"

	"github.com/rollout-rl/rollout/search/record"
)

// Record returns the group's lossless record (package record): prompt is
// the prompt's text, and text turns a response's tokens into the text its
// verifier read (stored as each leaf's Text). Every node is a leaf.
func (g *Group) Record(prompt string, text record.Detokenizer) *record.Group {
	r := &record.Group{
		Prompt: prompt, PromptTokens: g.Prompt, PromptID: g.PromptID, Strategy: g.Strategy,
		Usage:        g.Usage,
		MissingForks: g.MissingForks,
		Nodes:        make([]record.Node, len(g.nodes)),
		Leaves:       make([]record.Leaf, len(g.nodes)),
	}
	for i, n := range g.nodes {
		parent := -1
		if n.Parent != nil {
			parent = n.Parent.ID
		}
		r.Nodes[i] = record.Node{
			ID: n.ID, Parent: parent, ForkAt: n.ForkAt, Iteration: n.Iteration,
			ForkScore: n.ForkScore, HasForkScore: n.HasForkScore, Finish: n.Finish,
			Tokens: n.Tokens, LogProbs: n.LogProbs, Entropies: n.Entropies,
		}
		r.Leaves[i] = record.Leaf{
			Node: n.ID, Text: text(n.Response()), Reward: n.Reward, Scored: n.Scored,
			Terms: n.Terms, Reason: n.Reason, Advantages: n.Advantages,
		}
	}
	return r
}

// FromRecord rebuilds a live group from its record, exactly: the inverse of
// Group.Record for groups made by this package (one leaf per node). It fails
// on a record whose structure is invalid or whose leaves are not one per
// node in node order.
func FromRecord(r *record.Group) (*Group, error) {
	if err := r.Validate(); err != nil {
		return nil, fmt.Errorf("group record: %w", err)
	}
	if len(r.Leaves) != len(r.Nodes) {
		return nil, fmt.Errorf("group record: %d leaves for %d nodes, want one per node", len(r.Leaves), len(r.Nodes))
	}
	nodes := make([]*Node, len(r.Nodes))
	for i, nr := range r.Nodes {
		l := r.Leaves[i]
		if nr.ID != i || l.Node != i {
			return nil, fmt.Errorf("group record: node %d has id %d and leaf %d ends at node %d, want ids in order", i, nr.ID, i, l.Node)
		}
		n := &Node{
			ForkAt: nr.ForkAt, Iteration: nr.Iteration, ForkScore: nr.ForkScore, HasForkScore: nr.HasForkScore,
			Tokens: nr.Tokens, LogProbs: nr.LogProbs, Entropies: nr.Entropies, Finish: nr.Finish,
			Reward: l.Reward, Reason: l.Reason, Scored: l.Scored, Terms: l.Terms, Advantages: l.Advantages,
		}
		if nr.Parent >= 0 {
			n.Parent = nodes[nr.Parent]
		}
		nodes[i] = n
	}
	g := NewGroup(r.PromptTokens, r.Strategy, nodes)
	g.PromptID, g.MissingForks, g.Usage = r.PromptID, r.MissingForks, r.Usage
	return g, nil
}
