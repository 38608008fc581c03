package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/tracking"
)

// damageFound is the error of a check that found damage, which it has
// listed; errors.Is(err, tracking.ErrDamaged) holds (exit status 1).
type damageFound struct {
	path     string
	problems int
}

func (e damageFound) Error() string {
	return fmt.Sprintf("store %s is damaged: %d problems, listed above", e.path, e.problems)
}

func (e damageFound) Is(target error) bool { return target == tracking.ErrDamaged }

func newCheckCmd() *cobra.Command {
	var store string
	cmd := &cobra.Command{
		Use:   "check [--store PATH]",
		Short: "Check a store for damage: bbolt's page structure and every record; exit 1 listing what is damaged",
		Long: `Checks the store file: its size against bbolt's meta pages, every experiment and run
record, every metric record and rollout group of every run and every resume state
reference (each against its checksum, then decoded), the resume state files against
their SHA-256, that each run's last step and token count agree with its last metric
record, then bbolt's consistency check of the pages. Prints a summary and exits 0 when the store is intact; otherwise lists what
is damaged and exits 1 (restore the file from a copy).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path := storePath(store)
			res, err := tracking.Check(path, tracking.Options{})
			if err != nil {
				return storeOpenError(store, err)
			}
			out := cmd.OutOrStdout()
			if res.OK() {
				fmt.Fprintf(out, "%s: intact (%d experiments, %d runs, %d steps, %d groups checked)\n",
					path, res.Experiments, res.Runs, res.Steps, res.Groups)
				if res.SampledTokens > 0 {
					fmt.Fprintf(out, "groups: %d bytes stored for %d sampled tokens (%.1f bytes a token)\n",
						res.GroupBytes, res.SampledTokens, float64(res.GroupBytes)/float64(res.SampledTokens))
				}
				return nil
			}
			fmt.Fprintf(out, "%s: damaged: %d problems\n", path, len(res.Problems)+res.More)
			for _, p := range res.Problems {
				fmt.Fprintf(out, "  %s\n", p)
			}
			if res.More > 0 {
				fmt.Fprintf(out, "  … and %d more\n", res.More)
			}
			fmt.Fprintln(out, "restore the store from a copy, or run its experiments again into a fresh store")
			return damageFound{path, len(res.Problems) + res.More}
		},
	}
	cmd.Flags().StringVar(&store, "store", "", "store file (default $ROLLOUT_STORE or rollout.db)")
	return cmd
}

// storeSource says where storePath(flag) came from, for messages.
func storeSource(flag string) string {
	switch {
	case flag != "":
		return "--store"
	case os.Getenv("ROLLOUT_STORE") != "":
		return "$ROLLOUT_STORE"
	}
	return "the default"
}

// storeOpenError makes the error of opening the store named by a --store
// flag actionable: a missing store is the user's input (exit 2), named
// with where its path came from and how to name another.
func storeOpenError(flag string, err error) error {
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return usageError{fmt.Errorf("no store at %s (%s): name another with --store PATH or $ROLLOUT_STORE, or create it with rollout run CONFIG",
		storePath(flag), storeSource(flag))}
}
