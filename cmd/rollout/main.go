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
	"os"

	"github.com/spf13/cobra"
)

// usageError marks errors in the user's input (flags, configs), which exit
// with status 2; other failures exit with status 1.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func main() {
	root := newRootCmd()
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "rollout:", err)
		var ue usageError
		if errors.As(err, &ue) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "rollout",
		Short:         "Research on rollout strategies for RL fine-tuning of language models",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newModelCmd(), newTaskCmd(), newSampleCmd(), newPretrainCmd(), newConfigCmd(), newTTCCmd(), newRunCmd())
	root.AddCommand(newReadCmds()...)
	return root
}
