package tracking

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// WriteTree prints a group as an indented tree, one line per node: where
// it forks off its parent (token position and the entropy there), its
// tokens — through detok when given, as ids otherwise — and, for a leaf,
// its reward, reason and text.
func WriteTree(w io.Writer, g *Group, detok func(tokens []int) string) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "prompt %q · %s · %d generated + %d prefill tokens", g.Prompt, g.Strategy, g.Budget.GeneratedTokens, g.Budget.PrefillTokens)
	if g.Budget.Limit > 0 {
		fmt.Fprintf(bw, " of %d", g.Budget.Limit)
	}
	if g.Filtered {
		bw.WriteString(" · filtered")
	}
	bw.WriteByte('\n')
	children := map[int][]int{}
	for i, n := range g.Nodes {
		children[n.Parent] = append(children[n.Parent], i)
	}
	for _, c := range children {
		slices.SortFunc(c, func(a, b int) int {
			if d := g.Nodes[a].ForkAt - g.Nodes[b].ForkAt; d != 0 {
				return d
			}
			return g.Nodes[a].ID - g.Nodes[b].ID
		})
	}
	leaves := map[int][]int{}
	for j, l := range g.Leaves {
		leaves[l.Node] = append(leaves[l.Node], j)
	}
	text := func(tokens []int) string {
		if detok != nil {
			return strconv.Quote(detok(tokens))
		}
		var sb strings.Builder
		for i, t := range tokens {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(strconv.Itoa(t))
		}
		return "[" + sb.String() + "]"
	}
	var walk func(i int, prefix string, last bool, depth int)
	walk = func(i int, prefix string, last bool, depth int) {
		n := &g.Nodes[i]
		branch, next := "├─ ", "│  "
		if last {
			branch, next = "└─ ", "   "
		}
		bw.WriteString(prefix + branch)
		if n.Parent != -1 {
			p := &g.Nodes[g.nodeIndex(n.Parent)]
			fmt.Fprintf(bw, "@%d", n.ForkAt)
			if n.ForkAt < len(p.Entropies) {
				fmt.Fprintf(bw, " H=%.3f", p.Entropies[n.ForkAt])
			} else if len(n.Entropies) > 0 {
				fmt.Fprintf(bw, " H=%.3f", n.Entropies[0])
			}
			bw.WriteString(" ")
		}
		fmt.Fprintf(bw, "node %d (it %d) %s", n.ID, n.Iteration, text(n.Tokens))
		for _, j := range leaves[n.ID] {
			l := &g.Leaves[j]
			fmt.Fprintf(bw, " ⇒ reward %g (%s) %q", l.Reward, l.Reason, l.Text)
		}
		bw.WriteByte('\n')
		if depth > len(g.Nodes) {
			return // a cycle; Validate reports it
		}
		kids := children[n.ID]
		for k, c := range kids {
			walk(c, prefix+next, k == len(kids)-1, depth+1)
		}
	}
	roots := children[-1]
	for k, r := range roots {
		walk(r, "", k == len(roots)-1, 0)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing tree: %w", err)
	}
	return nil
}
