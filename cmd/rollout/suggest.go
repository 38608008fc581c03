package main

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/rollout-rl/rollout/experiments/config"
)

// suggestionDistance is the largest edit distance at which a name is
// offered for a mistyped one (cobra's default for commands).
const suggestionDistance = 2

// suggest returns the candidates closest to word: those within
// suggestionDistance edits, or that word is a prefix of (case ignored),
// nearest first, then in the candidates' order.
func suggest(word string, candidates []string) []string {
	type near struct {
		name string
		d    int
	}
	var found []near
	w := strings.ToLower(word)
	for _, c := range candidates {
		if c == word {
			continue
		}
		lc := strings.ToLower(c)
		d := config.EditDistance(w, lc)
		if d <= suggestionDistance || (len(w) > 0 && strings.HasPrefix(lc, w)) {
			found = append(found, near{c, d})
		}
	}
	slices.SortStableFunc(found, func(a, b near) int { return a.d - b.d })
	out := make([]string, len(found))
	for i, f := range found {
		out[i] = f.name
	}
	return out
}

// didYouMean is ` (did you mean "a"?)` or ` (did you mean "a" or "b"?)`
// for the closest candidates to word, "" when none is close.
func didYouMean(word string, candidates []string) string {
	s := suggest(word, candidates)
	switch {
	case len(s) == 0:
		return ""
	case len(s) > 3:
		s = s[:3]
	}
	q := make([]string, len(s))
	for i, c := range s {
		q[i] = fmt.Sprintf("%q", c)
	}
	return fmt.Sprintf(" (did you mean %s?)", strings.Join(q, " or "))
}

// flagError makes a flag parsing error a usage error, naming the closest
// flags of the command when the flag is unknown.
func flagError(cmd *cobra.Command, err error) error {
	var names []string
	cmd.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden {
			names = append(names, "--"+f.Name)
		}
	})
	var nf *pflag.NotExistError
	if errors.As(err, &nf) {
		if hint := didYouMean("--"+nf.GetSpecifiedName(), names); hint != "" {
			return usageError{fmt.Errorf("%w%s", err, hint)}
		}
		return usageError{fmt.Errorf("%w (%q lists the flags)", err, cmd.CommandPath()+" --help")}
	}
	return usageError{err}
}

// unknownCommand is the error for an unknown subcommand of c, naming the
// closest commands.
func unknownCommand(c *cobra.Command, name string) error {
	var names []string
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			names = append(names, sub.Name())
			names = append(names, sub.Aliases...)
		}
	}
	return fmt.Errorf("unknown command %q for %q%s: %q lists the commands", name, c.CommandPath(), didYouMean(name, names), c.CommandPath()+" --help")
}
