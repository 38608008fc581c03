package search

import "fmt"

// GroupRecord is a group in a flat form that any encoder (JSON, gob) can
// store and that GroupRecord.Group rebuilds exactly: the tracking store keeps
// trajectories, trees and filtered groups as records.
type GroupRecord struct {
	Prompt       []int
	PromptID     uint64
	Strategy     string
	Usage        Usage
	MissingForks int
	Nodes        []NodeRecord
}

// NodeRecord is a Node with its parent as an id (-1 for a root).
type NodeRecord struct {
	Parent       int
	ForkAt       int
	Iteration    int
	ForkScore    float64
	HasForkScore bool
	Tokens       []int
	LogProbs     []float32
	Entropies    []float32
	Finish       Finish
	Reward       float64
	Reason       string
	Scored       bool
	Advantages   []float64
}

// Record returns g in flat form.
func (g *Group) Record() GroupRecord {
	r := GroupRecord{
		Prompt: g.Prompt, PromptID: g.PromptID, Strategy: g.Strategy,
		Usage: g.Usage, MissingForks: g.MissingForks,
		Nodes: make([]NodeRecord, len(g.nodes)),
	}
	for i, n := range g.nodes {
		parent := -1
		if n.Parent != nil {
			parent = n.Parent.ID
		}
		r.Nodes[i] = NodeRecord{
			Parent: parent, ForkAt: n.ForkAt, Iteration: n.Iteration,
			ForkScore: n.ForkScore, HasForkScore: n.HasForkScore,
			Tokens: n.Tokens, LogProbs: n.LogProbs, Entropies: n.Entropies, Finish: n.Finish,
			Reward: n.Reward, Reason: n.Reason, Scored: n.Scored, Advantages: n.Advantages,
		}
	}
	return r
}

// Group rebuilds the group. It fails on a parent id that does not come
// before its child or a fork point outside the parent's tokens.
func (r GroupRecord) Group() (*Group, error) {
	nodes := make([]*Node, len(r.Nodes))
	for i, nr := range r.Nodes {
		n := &Node{
			ForkAt: nr.ForkAt, Iteration: nr.Iteration,
			ForkScore: nr.ForkScore, HasForkScore: nr.HasForkScore,
			Tokens: nr.Tokens, LogProbs: nr.LogProbs, Entropies: nr.Entropies, Finish: nr.Finish,
			Reward: nr.Reward, Reason: nr.Reason, Scored: nr.Scored, Advantages: nr.Advantages,
		}
		if nr.Parent >= 0 {
			if nr.Parent >= i {
				return nil, fmt.Errorf("group record: node %d has parent %d, want a smaller id", i, nr.Parent)
			}
			p := nodes[nr.Parent]
			if nr.ForkAt < 0 || nr.ForkAt > len(p.Tokens) {
				return nil, fmt.Errorf("group record: node %d forks at %d, outside parent %d's %d tokens", i, nr.ForkAt, nr.Parent, len(p.Tokens))
			}
			n.Parent = p
		}
		if len(nr.LogProbs) != len(nr.Tokens) || len(nr.Entropies) != len(nr.Tokens) {
			return nil, fmt.Errorf("group record: node %d has %d tokens, %d logprobs, %d entropies", i, len(nr.Tokens), len(nr.LogProbs), len(nr.Entropies))
		}
		nodes[i] = n
	}
	g := NewGroup(r.Prompt, r.Strategy, nodes)
	g.PromptID, g.Usage, g.MissingForks = r.PromptID, r.Usage, r.MissingForks
	return g, nil
}
