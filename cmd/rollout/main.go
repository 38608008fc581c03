// Command rollout runs and reads experiments on rollout strategies for RL
// fine-tuning of language models: it trains a tiny transformer policy,
// samples rollouts flat or as trees, and records and compares runs.
//
// Usage:
//
//	rollout model init --size tiny --seed 1 --out DIR
//	rollout model logits DIR --text "12+34"
//	rollout model sample DIR --prompt "12+34" -n 4
//
// Run "rollout help" for every command.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
)

// usageError marks errors in the user's input (flags, configs), which exit
// with status 2; other failures exit with status 1.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run executes the command line and returns the exit status: 0, 2 for bad
// input (flags, configs, names), 1 for other failures.
func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.Execute(); err != nil {
		fmt.Fprintln(stderr, "rollout:", err)
		var ue usageError
		if errors.As(err, &ue) || strings.HasPrefix(err.Error(), "unknown command") || strings.Contains(err.Error(), "arg(s)") {
			return 2
		}
		return 1
	}
	return 0
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "rollout",
		Short:         "Research on rollout strategies for RL fine-tuning of language models",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newModelCmd(), newTaskCmd(), newSampleCmd(), newPretrainCmd(), newRewardModelCmd(), newConfigCmd(), newTTCCmd(), newRunCmd())
	root.AddCommand(newServeCmd())
	root.AddCommand(newReadCmds()...)
	return root
}
