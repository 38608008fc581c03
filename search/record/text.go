package record

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Detokenizer turns token ids into text for printing.
type Detokenizer func(tokens []int) string

// IDs is a Detokenizer that prints token ids, e.g. "[3 1 4]".
func IDs(tokens []int) string { return fmt.Sprint(tokens) }

// WriteText prints g as an indented tree for the terminal: a header with the
// budget (and whether the group was filtered), then per tree its nodes, each
// child indented under its parent and introduced by its fork position and
// fork score; every node shows its iteration, length, finish reason, the
// reward, reward terms and reason of each leaf ending in it, and its text:
// the shared prefix, a "|" at the fork, then the node's own tokens, through
// detok (IDs when nil).
func (g *Group) WriteText(w io.Writer, detok Detokenizer) error {
	if detok == nil {
		detok = IDs
	}
	var b strings.Builder
	limit := "none"
	if g.Usage.Budget > 0 {
		limit = strconv.FormatInt(g.Usage.Budget, 10)
	}
	fmt.Fprintf(&b, "prompt %q\nstrategy %s: %d trees, %d leaves, %d forks, %d unique responses\n",
		g.Prompt, g.Strategy, g.Trees(), len(g.Leaves), g.Forks(), g.UniqueResponses())
	fmt.Fprintf(&b, "budget: generated %d (limit %s), prefill %d, decode %d, FLOPs %d",
		g.Usage.GeneratedTokens, limit, g.Usage.PrefillTokens, g.Usage.DecodeTokens, g.Usage.FLOPs)
	if g.Usage.UnheldTokens > 0 {
		fmt.Fprintf(&b, ", %d held by no node (end-of-sequence tokens the server did not return)", g.Usage.UnheldTokens)
	}
	if g.Usage.SkippedBranches > 0 {
		fmt.Fprintf(&b, ", %d branches skipped for budget", g.Usage.SkippedBranches)
	}
	if g.MissingForks > 0 {
		fmt.Fprintf(&b, ", %d forks missing", g.MissingForks)
	}
	b.WriteString("\n")
	if g.Filtered {
		b.WriteString("filtered: all rewards equal, left out of the update\n")
	}
	leavesAt := make(map[int][]int, len(g.Leaves))
	for j, l := range g.Leaves {
		leavesAt[l.Node] = append(leavesAt[l.Node], j)
	}
	kids, roots := g.children()
	tw := textWriter{g: g, b: &b, detok: detok, kids: kids, leavesAt: leavesAt}
	for t, r := range roots {
		fmt.Fprintf(&b, "tree %d\n", t)
		tw.node(r, 1)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("write group as text: %w", err)
	}
	return nil
}

type textWriter struct {
	g        *Group
	b        *strings.Builder
	detok    Detokenizer
	kids     [][]int
	leavesAt map[int][]int
	path     []int
}

func (tw *textWriter) node(i, depth int) {
	g, b := tw.g, tw.b
	n := &g.Nodes[i]
	b.WriteString(strings.Repeat("  ", depth))
	if n.Parent >= 0 {
		fmt.Fprintf(b, "@%d", n.ForkAt)
		if n.HasForkScore {
			fmt.Fprintf(b, " score %.3f", n.ForkScore)
		}
		b.WriteString(" → ")
	}
	fmt.Fprintf(b, "#%d it %d, %d tok", n.ID, n.Iteration, len(n.Tokens))
	if n.Finish != "" {
		fmt.Fprintf(b, ", %s", n.Finish)
	}
	for _, j := range tw.leavesAt[n.ID] {
		l := &g.Leaves[j]
		if !l.Scored {
			continue
		}
		fmt.Fprintf(b, ", reward %g", l.Reward)
		if len(l.Terms) > 0 {
			b.WriteString(" [")
			for k, t := range l.Terms {
				if k > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(b, "%s %g", t.Name, t.Value)
			}
			b.WriteString("]")
		}
		if l.Reason != "" {
			fmt.Fprintf(b, " (%s)", l.Reason)
		}
	}
	var err error
	tw.path, _, _, err = g.Path(n.ID, tw.path[:0], nil, nil)
	if err != nil {
		fmt.Fprintf(b, ": <%v>\n", err)
	} else {
		start := len(tw.path) - len(n.Tokens)
		text := tw.detok(tw.path[start:])
		if start > 0 {
			text = tw.detok(tw.path[:start]) + "|" + text
		}
		fmt.Fprintf(b, ": %q\n", text)
	}
	if depth > len(g.Nodes) {
		return // unreachable for a valid group; guards a malformed one
	}
	for _, c := range tw.kids[i] {
		tw.node(c, depth+1)
	}
}
