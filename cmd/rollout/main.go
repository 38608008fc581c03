package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/policy/openai"
	"github.com/rollout-rl/rollout/tracking"
)

// usageError marks errors in the user's input (arguments, flags, configs,
// paths that name nothing), which exit with status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// interruptedError marks a command stopped by an interrupt (Ctrl-C or
// SIGTERM) after it cleaned up; it exits with status 130.
type interruptedError struct{ err error }

func (e interruptedError) Error() string { return e.err.Error() }
func (e interruptedError) Unwrap() error { return e.err }

// Exit statuses.
const (
	exitOK          = 0
	exitFailure     = 1   // the command could not do its work
	exitUsage       = 2   // bad input: arguments, flags, configs, paths
	exitInterrupted = 130 // stopped by an interrupt, as a shell reports SIGINT
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run executes the command line and returns the exit status (see
// exitStatus).
func run(args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	var watch *heapWatch
	var memprofile string
	root.PersistentFlags().StringVar(&memprofile, "memprofile", "", "write a heap profile at the peak of the live heap to `FILE` (go tool pprof), and print the peak")
	root.PersistentPreRunE = func(*cobra.Command, []string) (err error) {
		if memprofile != "" {
			watch, err = startHeapWatch(memprofile)
		}
		return err
	}
	err := root.Execute()
	if watch != nil {
		if werr := watch.finish(stderr); err == nil {
			err = werr
		}
	}
	if err != nil {
		// An error may quote text from outside (a server's message, a
		// file's line): its control characters are escaped, so that it
		// cannot drive the terminal.
		fmt.Fprintln(stderr, "rollout:", openai.Printable(err.Error()))
		return exitStatus(err)
	}
	return exitOK
}

// exitStatus maps an error to the exit status by its type: an interrupt
// 130; a damaged or locked store 1 even where a command marked the error
// as the user's (the store failed, not the input); the user's input 2;
// anything else 1.
func exitStatus(err error) int {
	var (
		ie interruptedError
		ue usageError
		le *tracking.LockedError
	)
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ie):
		return exitInterrupted
	case errors.Is(err, tracking.ErrDamaged), errors.As(err, &le):
		return exitFailure
	case errors.As(err, &ue):
		return exitUsage
	}
	return exitFailure
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "rollout",
		Short:         "Research on rollout strategies for RL fine-tuning of language models",
		Long:          overview(),
		Version:       version(debug.ReadBuildInfo()),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate("{{.Version}}\n")
	root.SetFlagErrorFunc(flagError)
	root.SuggestionsMinimumDistance = suggestionDistance
	root.AddCommand(newModelCmd(), newTaskCmd(), newSampleCmd(), newPretrainCmd(), newRewardModelCmd(), newConfigCmd(), newTTCCmd(), newRunCmd(), newSuiteCmd(), newPlanCmd(), newVerdictCmd())
	root.AddCommand(newServeCmd(), newPassrateCmd(), newCostCmd(), newRMQualityCmd())
	root.AddCommand(newReadCmds()...)
	root.AddCommand(newCheckCmd())
	root.AddCommand(newUICmd(), newNoteCmd())
	root.AddCommand(newReferenceTopic())
	markUsageErrors(root)
	return root
}

// markUsageErrors makes the argument errors of every command usage errors
// (cobra returns them untyped), and makes a command that only groups
// subcommands refuse an unknown one rather than print its help.
func markUsageErrors(c *cobra.Command) {
	if c.HasSubCommands() && c.Run == nil && c.RunE == nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownCommand(cmd, args[0])
			}
			return nil
		}
		c.RunE = func(cmd *cobra.Command, _ []string) error { return cmd.Help() }
	}
	if check := c.Args; check != nil {
		c.Args = func(cmd *cobra.Command, args []string) error {
			if err := check(cmd, args); err != nil {
				return usageError{err}
			}
			return nil
		}
	}
	for _, sub := range c.Commands() {
		markUsageErrors(sub)
	}
}

// version describes the build for --version: the module version, then the
// commit it was built from (vcs.revision), marked when the working tree
// had changes (vcs.modified).
func version(bi *debug.BuildInfo, ok bool) string {
	if !ok {
		return "rollout (no build information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	rev, modified := tracking.Revision(bi)
	switch {
	case rev == "":
		return fmt.Sprintf("rollout %s, commit unknown (built without version control information)", v)
	case modified:
		return fmt.Sprintf("rollout %s, commit %s with uncommitted changes", v, rev)
	}
	return fmt.Sprintf("rollout %s, commit %s", v, rev)
}
