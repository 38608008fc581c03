package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The bounds of a configuration: a few kilobytes of YAML must not expand
// into work or memory without bound. Each is far beyond what an
// experiment needs and is refused, before anything runs, with an error
// that says which bound and what the file asked for.
const (
	// MaxFileBytes bounds the size of a configuration file.
	MaxFileBytes = 1 << 20
	// MaxNodes bounds the values (scalars, lists, mappings) of a
	// configuration once its aliases are expanded: an alias repeats what
	// it names, so a short file of aliases of aliases could stand for
	// billions of values.
	MaxNodes = 100_000
	// MaxVariants bounds the variants a file makes: its variants (or the
	// base) times the product of its ablation axes' lengths.
	MaxVariants = 4096
	// MaxRuns bounds the runs a file makes: variants times seeds.
	MaxRuns = 100_000
)

// readDocument parses a file's content as one YAML document and returns
// its root node with every alias replaced by a copy of what it names and
// every merge key (<<) applied, so that the rest of Parse sees plain
// values wherever the file used an alias. Errors are *Errors naming the
// file and the line.
func readDocument(path string, raw []byte) (*yaml.Node, error) {
	if len(raw) > MaxFileBytes {
		return nil, &Error{File: path, Msg: fmt.Sprintf("the file is larger than the %d bytes (1 MiB) a configuration may have", MaxFileBytes)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, syntaxError(path, err)
	}
	var second yaml.Node
	switch err := dec.Decode(&second); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, syntaxError(path, err)
	default:
		return nil, &Error{File: path, Line: max(second.Line, 1), Msg: "a second YAML document (after ---): a configuration file holds one; put each experiment in a file of its own, or its settings in variants:"}
	}
	if len(doc.Content) == 0 {
		return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}, nil
	}
	x := &expander{path: path, budget: MaxNodes}
	return x.expand(doc.Content[0], 0)
}

// yamlLine matches the position go-yaml puts in its syntax errors.
var yamlLine = regexp.MustCompile(`^(?:yaml: )?line (\d+): `)

// syntaxError turns a go-yaml parse error into an *Error at its line.
func syntaxError(path string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	e := &Error{File: path, Err: err}
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		msg = msg[len(m[0]):]
	}
	e.Msg = "not valid YAML: " + msg
	return e
}

// expander replaces aliases by copies of their anchors' values, within a
// budget of nodes.
type expander struct {
	path   string
	budget int
	// aliasLine is the line of the outermost alias being expanded: errors
	// within it point there.
	aliasLine int
}

// maxDepth bounds the nesting of a configuration (aliases included).
const maxDepth = 100

// expand returns n with its aliases expanded and merge keys applied: n
// itself when it holds neither, else a copy.
func (x *expander) expand(n *yaml.Node, depth int) (*yaml.Node, error) {
	line := n.Line
	if x.aliasLine > 0 {
		line = x.aliasLine
	}
	x.budget--
	if x.budget < 0 {
		return nil, &Error{File: x.path, Line: line, Msg: fmt.Sprintf("the configuration stands for more than %d values once its aliases are expanded (an alias repeats what it names): write it with fewer aliases", MaxNodes)}
	}
	if depth > maxDepth {
		return nil, &Error{File: x.path, Line: line, Msg: fmt.Sprintf("values nested more than %d deep", maxDepth)}
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return nil, &Error{File: x.path, Line: n.Line, Msg: fmt.Sprintf("alias *%s names no anchor", n.Value)}
		}
		if x.aliasLine == 0 {
			x.aliasLine = n.Line
			defer func() { x.aliasLine = 0 }()
		}
		c, err := x.expand(n.Alias, depth+1)
		if err != nil {
			return nil, err
		}
		c = cloneInto(c, nil)
		c.Anchor = ""
		atLine(c, n.Line, n.Column) // errors point at the alias
		return c, nil
	}
	out := n
	for i, ch := range n.Content {
		e, err := x.expand(ch, depth+1)
		if err != nil {
			return nil, err
		}
		if e != ch {
			if out == n {
				c := *n
				c.Content = append([]*yaml.Node(nil), n.Content...)
				out = &c
			}
			out.Content[i] = e
		}
	}
	if out.Kind == yaml.MappingNode {
		return x.merge(out)
	}
	return out, nil
}

// atLine places every node of a copy at line and column.
func atLine(n *yaml.Node, line, column int) {
	n.Line, n.Column = line, column
	for _, c := range n.Content {
		atLine(c, line, column)
	}
}

// merge applies the merge keys (<<) of mapping n: the pairs of the
// mapping, or of each mapping of the list, it names are added where n
// has no such key.
func (x *expander) merge(n *yaml.Node) (*yaml.Node, error) {
	at := -1
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
			at = i
			break
		}
	}
	if at < 0 {
		return n, nil
	}
	c := *n
	c.Content = append(append([]*yaml.Node(nil), n.Content[:at]...), n.Content[at+2:]...)
	v := n.Content[at+1]
	sources := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		sources = v.Content
	}
	for _, s := range sources {
		if s.Kind != yaml.MappingNode {
			return nil, &Error{File: x.path, Line: n.Content[at].Line, Msg: fmt.Sprintf("<< merges a mapping or a list of mappings, got %s", describe(s))}
		}
		for i := 0; i+1 < len(s.Content); i += 2 {
			if k, _ := findPair(&c, s.Content[i].Value); k == nil {
				c.Content = append(c.Content, s.Content[i], s.Content[i+1])
			}
		}
	}
	return x.merge(&c)
}

// checkGrid refuses a grid of more than MaxVariants variants, or more
// than MaxRuns runs with its seeds, before any is made: the error names
// each axis, its length and their product.
func checkGrid(path string, bases int, axes []axis, seeds int) error {
	product := float64(bases)
	terms := []string{fmt.Sprintf("%d variants", bases)}
	if bases == 1 {
		terms[0] = "the base"
	}
	for _, ax := range axes {
		product *= float64(len(ax.values))
		terms = append(terms, fmt.Sprintf("%d (ablate.%s)", len(ax.values), ax.key))
	}
	grid := strings.Join(terms, " × ")
	line := 0
	if len(axes) > 0 {
		line = axes[0].line
	}
	if product > MaxVariants {
		return &Error{File: path, Line: line, Key: "ablate",
			Msg: fmt.Sprintf("the grid is %s = %s variants, more than the %d a configuration may make: ablate fewer values, or split the experiment into files", grid, count(product), MaxVariants)}
	}
	if runs := product * float64(seeds); runs > MaxRuns {
		return &Error{File: path, Line: line, Key: "seeds",
			Msg: fmt.Sprintf("%s = %s variants × %d seeds = %s runs, more than the %d a configuration may make", grid, count(product), seeds, count(runs), MaxRuns)}
	}
	return nil
}

// count prints a product exactly while it is an exact integer.
func count(x float64) string {
	if x < 1<<53 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	if math.IsInf(x, 0) {
		return "more than 10^308"
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

// closest returns the candidate nearest to name by edit distance (letters
// inserted, deleted, replaced or two swapped), when it is near enough to
// be a misspelling: at most one edit for short names, about one in three
// for longer ones. "" when none is.
func closest(name string, candidates []string) string {
	best, bestD := "", math.MaxInt
	for _, c := range candidates {
		if d := EditDistance(name, c); d < bestD {
			best, bestD = c, d
		}
	}
	if bestD <= max(1, min(len(name), len(best))/3) {
		return best
	}
	return ""
}

// EditDistance is the optimal string alignment distance of a and b
// (Damerau–Levenshtein without repeated edits of a substring: a swap of two
// neighbours is one edit), in runes. The did-you-mean suggestions for
// config keys and for the command line's names use it.
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
