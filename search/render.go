package search

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
)

// Detokenizer turns token ids into text for printing.
type Detokenizer func(tokens []int) string

// IDs is a Detokenizer that prints token ids, e.g. "[3 1 4]".
func IDs(tokens []int) string { return fmt.Sprint(tokens) }

// groupJSON is the JSON shape of a group (issue 4).
type groupJSON struct {
	Prompt   string     `json:"prompt"`
	Strategy string     `json:"strategy"`
	Budget   budgetJSON `json:"budget"`
	Nodes    []nodeJSON `json:"nodes"`
	Leaves   []leafJSON `json:"leaves"`
}

type budgetJSON struct {
	Limit           *int64 `json:"limit"`
	GeneratedTokens int64  `json:"generated_tokens"`
	PrefillTokens   int64  `json:"prefill_tokens"`
	FLOPs           int64  `json:"flops"`
}

type nodeJSON struct {
	ID        int       `json:"id"`
	Parent    *int      `json:"parent"`
	ForkAt    *int      `json:"fork_at"`
	Iteration int       `json:"iteration"`
	Tokens    []int     `json:"tokens"`
	LogProbs  []float32 `json:"logprobs"`
	Entropies []float32 `json:"entropies"`
}

type leafJSON struct {
	Node       int       `json:"node"`
	Text       string    `json:"text"`
	Reward     *float64  `json:"reward"`
	Reason     string    `json:"reason"`
	Advantages []float64 `json:"advantages"`
}

// WriteJSON writes g as one compact JSON object and a newline: {"prompt", "strategy", "budget":
// {"limit", "generated_tokens", "prefill_tokens", "flops"}, "nodes": [{"id",
// "parent", "fork_at", "iteration", "tokens", "logprobs", "entropies"}],
// "leaves": [{"node", "text", "reward", "reason", "advantages"}]}. A root's
// parent and fork_at, an unset limit and an unscored reward are null; text is
// the leaf's full response through detok (IDs when nil).
func (g *Group) WriteJSON(w io.Writer, detok Detokenizer) error {
	if detok == nil {
		detok = IDs
	}
	out := groupJSON{
		Prompt:   detok(g.Prompt),
		Strategy: g.Strategy,
		Budget: budgetJSON{
			GeneratedTokens: g.Usage.GeneratedTokens,
			PrefillTokens:   g.Usage.PrefillTokens,
			FLOPs:           g.Usage.FLOPs,
		},
		Nodes:  []nodeJSON{},
		Leaves: []leafJSON{},
	}
	if g.Usage.Limit > 0 {
		limit := g.Usage.Limit
		out.Budget.Limit = &limit
	}
	for _, n := range g.Nodes() {
		nj := nodeJSON{
			ID: n.ID, Iteration: n.Iteration,
			Tokens: nonNil(n.Tokens), LogProbs: nonNil(n.LogProbs), Entropies: nonNil(n.Entropies),
		}
		if n.Parent != nil {
			p, at := n.Parent.ID, n.ForkAt
			nj.Parent, nj.ForkAt = &p, &at
		}
		out.Nodes = append(out.Nodes, nj)
		lj := leafJSON{Node: n.ID, Text: detok(n.Response()), Reason: n.Reason, Advantages: n.Advantages}
		if n.Scored {
			r := n.Reward
			lj.Reward = &r
		}
		out.Leaves = append(out.Leaves, lj)
	}
	if err := json.NewEncoder(w).Encode(out); err != nil {
		return fmt.Errorf("write group as JSON: %w", err)
	}
	return nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// WriteText prints g as an indented tree for the terminal: a header with the
// budget, then per tree its nodes, each child indented under its parent and
// introduced by its fork position and fork score; every node shows its
// iteration, length, finish reason, reward and reason, and its text: the
// shared prefix, a "|" at the fork, then the node's own tokens.
func (g *Group) WriteText(w io.Writer, detok Detokenizer) error {
	if detok == nil {
		detok = IDs
	}
	var b strings.Builder
	limit := "none"
	if g.Usage.Limit > 0 {
		limit = strconv.FormatInt(g.Usage.Limit, 10)
	}
	fmt.Fprintf(&b, "prompt %q\nstrategy %s: %d trees, %d leaves, %d forks, %d unique responses\n",
		detok(g.Prompt), g.Strategy, len(g.Trees), len(g.Leaves()), g.Forks(), g.UniqueResponses())
	fmt.Fprintf(&b, "budget: generated %d (limit %s), prefill %d, decode %d, FLOPs %d",
		g.Usage.GeneratedTokens, limit, g.Usage.PrefillTokens, g.Usage.DecodeTokens, g.Usage.FLOPs)
	if g.Usage.SkippedBranches > 0 {
		fmt.Fprintf(&b, ", %d branches skipped for budget", g.Usage.SkippedBranches)
	}
	if g.MissingForks > 0 {
		fmt.Fprintf(&b, ", %d forks missing", g.MissingForks)
	}
	b.WriteString("\n")
	for i, t := range g.Trees {
		fmt.Fprintf(&b, "tree %d\n", i)
		writeNode(&b, t.Root, 1, detok)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write group as text: %w", err)
	}
	return nil
}

func writeNode(b *strings.Builder, n *Node, depth int, detok Detokenizer) {
	b.WriteString(strings.Repeat("  ", depth))
	if n.Parent != nil {
		fmt.Fprintf(b, "@%d", n.ForkAt)
		if n.HasForkScore {
			fmt.Fprintf(b, " score %.3f", n.ForkScore)
		}
		b.WriteString(" → ")
	}
	fmt.Fprintf(b, "#%d it %d, %d tok, %s", n.ID, n.Iteration, len(n.Tokens), n.Finish)
	if n.Scored {
		fmt.Fprintf(b, ", reward %g", n.Reward)
		if n.Reason != "" {
			fmt.Fprintf(b, " (%s)", n.Reason)
		}
	}
	resp := n.Response()
	text := detok(resp[n.Start:])
	if n.Start > 0 {
		text = detok(resp[:n.Start]) + "|" + text
	}
	fmt.Fprintf(b, ": %q\n", text)
	kids := append([]*Node(nil), n.Children...)
	sort.SliceStable(kids, func(i, j int) bool { return kids[i].ForkAt < kids[j].ForkAt })
	for _, c := range kids {
		writeNode(b, c, depth+1, detok)
	}
}
