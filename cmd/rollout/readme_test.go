package main

// The README, the command reference (doc.go) and the notes beside them
// are kept true by these tests: the README's length, its commands (each
// parses on this build), its example outputs (each is what the command
// prints), its quickstart sentence (the config's values), its list of
// tasks, the reference's flag grammar and list of metrics, and the links
// of every document.

import (
	"encoding/json"
	"fmt"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/experiments/config"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/tracking"
)

// readmePath is the README, from this package's directory.
const readmePath = "../../README.md"

// readmeMaxLines is the most lines the README may have: a newcomer reads
// it in ten minutes; the reference is go doc ./cmd/rollout.
const readmeMaxLines = 300

func readFile(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// codeBlock is a fenced block of a markdown file: its info string ("sh",
// "console", "yaml", ...) and its lines.
type codeBlock struct {
	lang  string
	lines []string
}

// codeBlocks returns the fenced blocks of markdown text.
func codeBlocks(text string) []codeBlock {
	var blocks []codeBlock
	var cur *codeBlock
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "```") && cur == nil:
			cur = &codeBlock{lang: strings.TrimPrefix(line, "```")}
		case strings.HasPrefix(line, "```"):
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			cur.lines = append(cur.lines, line)
		}
	}
	return blocks
}

// shellWords splits a command line as a shell does for the simple lines
// of the documents: words separated by spaces, single and double quotes
// grouping, a # starting a comment outside quotes.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var w strings.Builder
	inWord := false
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == '#' && !inWord:
			return words
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		t.Fatalf("unbalanced quote in %q", line)
	}
	if inWord {
		words = append(words, w.String())
	}
	return words
}

// rolloutArgs returns the arguments of a documented command line that
// runs rollout ("rollout …", "./rollout …", "go run ./cmd/rollout …",
// "$ rollout …", after "nice -n N"), or nil for any other line.
func rolloutArgs(t *testing.T, line string) []string {
	if !regexp.MustCompile(`^(\$ )?(nice -n [0-9]+ )?(rollout|\./rollout|go run \./cmd/rollout)( |$)`).MatchString(strings.TrimSpace(line)) {
		return nil
	}
	words := shellWords(t, strings.TrimPrefix(strings.TrimSpace(line), "$ "))
	if len(words) > 3 && words[0] == "nice" && words[1] == "-n" {
		words = words[3:]
	}
	switch {
	case len(words) > 0 && (words[0] == "rollout" || words[0] == "./rollout"):
		return words[1:]
	case len(words) > 2 && words[0] == "go" && words[1] == "run" && words[2] == "./cmd/rollout":
		return words[3:]
	}
	return nil
}

// checkCommandLine reports why args would not run: an unknown command, a
// flag it does not take or a bad flag value, or arguments it refuses.
// Synopses with placeholders in brackets are not command lines and pass.
func checkCommandLine(args []string) error {
	if slices.ContainsFunc(args, func(a string) bool { return strings.ContainsAny(a, "[]|") || a == "..." }) {
		return nil
	}
	root := newRootCmd()
	c, rest, err := root.Find(args)
	if err != nil {
		return err
	}
	if !c.Runnable() {
		return fmt.Errorf("%q is no command", strings.Join(args, " "))
	}
	if err := c.ParseFlags(rest); err != nil {
		return err
	}
	return c.ValidateArgs(c.Flags().Args())
}

func TestREADMEIsShort(t *testing.T) {
	text := readFile(t, readmePath)
	if n := strings.Count(text, "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, want at most %d: the reference goes in cmd/rollout/doc.go, figures in results/", n, readmeMaxLines)
	}
	// No measurements without their context: those live in results/.
	if strings.Contains(text, "load average") {
		t.Error("README.md quotes a load average: measurements belong in results/")
	}
	for _, m := range regexp.MustCompile(`\b[0-9a-f]{7,40}\b`).FindAllString(text, -1) {
		if strings.ContainsAny(m, "0123456789") && strings.ContainsAny(m, "abcdef") {
			t.Errorf("README.md names the build %s: build hashes belong in results/", m)
		}
	}
	if m := regexp.MustCompile(`\b[0-9][0-9,.]* ?(bytes|KB|MB|GB)\b`).FindString(text); m != "" {
		t.Errorf("README.md quotes the size %q: measurements belong in results/", m)
	}
}

// Every rollout command line of the README and of the reference names a
// command of this build with flags it takes.
func TestDocumentedCommandsParse(t *testing.T) {
	var lines []string
	for _, b := range codeBlocks(readFile(t, readmePath)) {
		if b.lang == "sh" || b.lang == "console" {
			lines = append(lines, b.lines...)
		}
	}
	for _, line := range strings.Split(reference(), "\n") {
		if strings.HasPrefix(line, "\t") {
			lines = append(lines, strings.TrimPrefix(line, "\t"))
		}
	}
	checked := 0
	for _, line := range lines {
		args := rolloutArgs(t, line)
		if args == nil {
			continue
		}
		checked++
		if err := checkCommandLine(args); err != nil {
			t.Errorf("%q: %v", line, err)
		}
	}
	if checked < 40 {
		t.Errorf("checked %d command lines, want the documents' 40 and more", checked)
	}
}

// The README's console examples print what the README shows.
func TestREADMEExamples(t *testing.T) {
	examples := 0
	for _, b := range codeBlocks(readFile(t, readmePath)) {
		if b.lang != "console" {
			continue
		}
		for i := 0; i < len(b.lines); i++ {
			args := rolloutArgs(t, b.lines[i])
			if args == nil {
				t.Fatalf("console block line %q: want a $ rollout command", b.lines[i])
			}
			var want []string
			for i+1 < len(b.lines) && !strings.HasPrefix(b.lines[i+1], "$ ") {
				i++
				want = append(want, b.lines[i])
			}
			code, out, errOut := rollout(t, args...)
			if code != 0 || out != strings.Join(want, "\n")+"\n" {
				t.Errorf("%v: exit %d, printed\n%s%s\nwant (README.md)\n%s", args, code, out, errOut, strings.Join(want, "\n"))
			}
			examples++
		}
	}
	if examples == 0 {
		t.Error("README.md has no console examples")
	}
}

// The README's account of the quickstart is its config's.
func TestREADMEQuickstart(t *testing.T) {
	text := strings.Join(strings.Fields(readFile(t, readmePath)), " ")
	f, err := config.Load("../../experiments/configs/quickstart.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	c := f.Variants[0].Config
	var params struct{ Digits int }
	raw, _ := json.Marshal(c.Task.Params)
	json.Unmarshal(raw, &params)
	marks := []string{}
	for m := int64(0); m <= c.Train.TotalTokens; m += c.Eval.EveryTokens {
		marks = append(marks, fmt.Sprint(m))
	}
	for _, want := range []string{
		fmt.Sprintf("on %d-digit %s", params.Digits, map[string]string{"add": "addition"}[c.Task.Name]),
		fmt.Sprintf("an equal budget of %s sampled tokens per run, %d seeds each", thousands(c.Train.TotalTokens), len(f.Seeds)),
		fmt.Sprintf("token marks (%s and %s tokens)", strings.Join(marks[:len(marks)-1], ", "), marks[len(marks)-1]),
		fmt.Sprintf("paired t-test against `%s`", f.Baseline),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("README.md does not say %q (experiments/configs/quickstart.yaml)", want)
		}
	}
}

// thousands writes n with commas between groups of three digits.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// The README lists every task New builds, and says how many.
func TestREADMETasks(t *testing.T) {
	text := readFile(t, readmePath)
	names := task.AllNames()
	counts := map[int]string{6: "Six", 7: "Seven", 8: "Eight", 9: "Nine"}
	if !strings.Contains(text, counts[len(names)]+" tasks") {
		t.Errorf("README.md does not say %q", counts[len(names)]+" tasks")
	}
	for _, n := range names {
		if !strings.Contains(text, "| `"+n+"` |") {
			t.Errorf("README.md's table of tasks lacks %s", n)
		}
	}
}

// The YAML examples of the README and of the config reference are valid
// configs.
func TestDocumentedConfigsParse(t *testing.T) {
	for _, path := range []string{readmePath, "../../experiments/config/README.md"} {
		n := 0
		for _, b := range codeBlocks(readFile(t, path)) {
			if b.lang != "yaml" {
				continue
			}
			n++
			if _, err := config.Parse(path, []byte(strings.Join(b.lines, "\n")), nil); err != nil {
				t.Errorf("%s: YAML example %d: %v", path, n, err)
			}
		}
		if n == 0 {
			t.Errorf("%s: no YAML example", path)
		}
	}
}

// Every relative link of the documents names a file of the repository,
// and every #anchor a heading of the file it points into.
func TestDocumentLinks(t *testing.T) {
	docs := []string{readmePath, "../../results/README.md", "../../results/performance.md", "../../experiments/config/README.md"}
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, doc := range docs {
		for _, m := range link.FindAllStringSubmatch(readFile(t, doc), -1) {
			target := m[1]
			if strings.Contains(target, "://") {
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			path := doc
			if file != "" {
				path = filepath.Join(filepath.Dir(doc), file)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s: link %s: %v", doc, target, err)
				continue
			}
			if anchor != "" && !slices.Contains(anchors(readFile(t, path)), anchor) {
				t.Errorf("%s: link %s: %s has no heading with that anchor", doc, target, path)
			}
		}
	}
}

// anchors returns the GitHub anchors of a markdown file's headings.
func anchors(text string) []string {
	var out []string
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "#") {
			continue
		}
		h := strings.ToLower(strings.TrimSpace(strings.TrimLeft(line, "#")))
		var b strings.Builder
		for _, r := range h {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127 && !strings.ContainsRune("—–×·’:()`.,", r):
				b.WriteRune(r)
			}
		}
		out = append(out, b.String())
	}
	return out
}

// The reference is the package documentation: doc.go parses, and go doc
// and rollout help reference print the same text.
func TestReference(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "doc.go", nil, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil || f.Doc == nil {
		t.Fatalf("doc.go: %v (package comment %v)", err, f.Doc != nil)
	}
	ref := reference()
	if !strings.HasPrefix(ref, "Command rollout ") || !strings.Contains(ref, "# One grammar for every command") {
		t.Errorf("reference starts %q", ref[:min(len(ref), 80)])
	}
	for _, args := range [][]string{{"help", "reference"}, {"reference"}} {
		if code, out, errOut := rollout(t, args...); code != 0 || !strings.Contains(out, ref[:200]) || !strings.Contains(out, "# Metrics") {
			t.Errorf("rollout %v: exit %d, %d bytes (%s); want the reference", args, code, len(out), errOut)
		}
	}
	if code, out, _ := rollout(t, "--help"); code != 0 || !strings.Contains(out, `"rollout help reference" prints the full reference`) {
		t.Errorf("rollout --help does not point to the reference:\n%s", out)
	}
}

// grammarRow is one row of the reference's flag grammar table: its flags
// and the commands it says take them ("every" when the column says so).
type grammarRow struct {
	flags, commands []string
	every           bool
}

// referenceGrammar parses the flag table under "One grammar for every
// command" in the reference.
func referenceGrammar(t *testing.T) []grammarRow {
	t.Helper()
	_, table, ok := strings.Cut(reference(), "| flag | means | in |")
	if !ok {
		t.Fatal("reference: no grammar table")
	}
	var rows []grammarRow
	for _, line := range strings.Split(table, "\n")[1:] {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			break
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 3 || strings.HasPrefix(cells[0], "---") {
			continue
		}
		var r grammarRow
		for _, f := range strings.Split(cells[0], ", ") {
			r.flags = append(r.flags, strings.TrimPrefix(strings.Fields(f)[0], "--"))
		}
		cmds, _, every := strings.Cut(cells[2], " and every ")
		r.every = every
		for _, c := range strings.Split(cmds, ", ") {
			r.commands = append(r.commands, strings.TrimSpace(c))
		}
		rows = append(rows, r)
	}
	return rows
}

// Every command the reference's grammar table lists for a flag takes it,
// and every command that takes one of its flags is listed (but where the
// table says "every …").
func TestReferenceGrammarTable(t *testing.T) {
	root := newRootCmd()
	rows := referenceGrammar(t)
	if len(rows) < 8 {
		t.Fatalf("grammar table of %d rows", len(rows))
	}
	var all []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if sub.Runnable() {
				all = append(all, sub)
			}
			walk(sub)
		}
	}
	walk(root)
	for _, r := range rows {
		for _, name := range r.commands {
			c, rest, err := root.Find(strings.Fields(name))
			if err != nil || len(rest) > 0 || c == root {
				t.Errorf("grammar table: %q is not a command", name)
				continue
			}
			for _, f := range r.flags {
				if c.Flags().Lookup(f) == nil {
					t.Errorf("grammar table: rollout %s has no --%s", name, f)
				}
			}
		}
		if r.every {
			continue
		}
		for _, c := range all {
			name := strings.TrimPrefix(c.CommandPath(), "rollout ")
			for _, f := range r.flags {
				if c.Flags().Lookup(f) != nil && !slices.Contains(r.commands, name) {
					t.Errorf("grammar table: rollout %s takes --%s, not listed in its row", name, f)
				}
			}
		}
	}
}

// Every metric a run records is named in the reference's list of metrics
// (where "a/b|c" names a/b and a/c, "a/x_b|c" a/x_b and a/x_c).
func TestReferenceMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an experiment")
	}
	_, list, ok := strings.Cut(reference(), "Metrics per step")
	if !ok {
		t.Fatal("reference: no list of metrics")
	}
	list, _, _ = strings.Cut(list, "\n\n")
	named := map[string]bool{}
	for _, m := range regexp.MustCompile(`\b([a-z_]+)/([a-z0-9_@|]+)`).FindAllStringSubmatch(list, -1) {
		// "ratio_p10|p50|p90": the first leaf's prefix up to its last "_"
		// goes with the others.
		leaves := strings.Split(m[2], "|")
		prefix := leaves[0][:strings.LastIndex(leaves[0], "_")+1]
		for i, leaf := range leaves {
			if i > 0 {
				leaf = prefix + leaf
			}
			named[m[1]+"/"+leaf] = true
		}
	}
	dir := t.TempDir()
	st, err := tracking.Open(runTiny(t, dir), tracking.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs("dmg")
	if err != nil || len(runs) == 0 {
		t.Fatalf("runs %v, %v", runs, err)
	}
	for _, r := range runs {
		names, err := st.MetricNames(r.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			if !named[name] {
				t.Errorf("run %s (%s) records %s, which the reference's list of metrics does not name", r.ID, r.Variant, name)
			}
		}
	}
}
