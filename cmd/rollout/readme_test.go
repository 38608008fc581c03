package main

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/tracking"
)

// grammarRow is one row of the README's flag grammar table: its flags and
// the commands it says take them ("every" when the column says "every").
type grammarRow struct {
	flags, commands []string
	every           bool
}

// readmeGrammar parses the flag table under "One grammar for every
// command" in the README at path.
func readmeGrammar(t *testing.T, path string) []grammarRow {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(raw), "| flag | means | in |")
	if !ok {
		t.Fatalf("%s: no grammar table", path)
	}
	table, _, _ = strings.Cut(table, "\n\n")
	code := regexp.MustCompile("`([^`]*)`")
	var rows []grammarRow
	for i, line := range strings.Split(table, "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if len(cells) != 3 || strings.HasPrefix(cells[0], "---") {
			continue
		}
		var r grammarRow
		for _, m := range code.FindAllStringSubmatch(cells[0], -1) {
			r.flags = append(r.flags, strings.TrimPrefix(strings.Fields(m[1])[0], "--"))
		}
		for _, m := range code.FindAllStringSubmatch(cells[2], -1) {
			r.commands = append(r.commands, m[1])
		}
		r.every = strings.Contains(cells[2], "every")
		if len(r.flags) == 0 || len(r.commands) == 0 {
			t.Fatalf("%s: grammar table line %d: %q names no flag or no command", path, i, line)
		}
		rows = append(rows, r)
	}
	return rows
}

// Every command the README's grammar table lists for a flag takes it, and
// every command that takes one of its flags is listed (but where the table
// says "every …").
func TestREADMEGrammarTable(t *testing.T) {
	root := newRootCmd()
	rows := readmeGrammar(t, "../../README.md")
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

// Every metric a run records is named in the README's list of metrics
// (where "a/b|c" names a/b and a/c, "a/x_b|c" a/x_b and a/x_c).
func TestREADMEMetrics(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an experiment")
	}
	raw, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, list, ok := strings.Cut(string(raw), "Metrics per step")
	if !ok {
		t.Fatal("README: no list of metrics")
	}
	list, _, _ = strings.Cut(list, "\n\n")
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z_]+)/([^`]+)`").FindAllStringSubmatch(list, -1) {
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
				t.Errorf("run %s (%s) records %s, which the README's list of metrics does not name", r.ID, r.Variant, name)
			}
		}
	}
}
