package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/tracking"
)

// newNoteCmd is `rollout note RUN [TEXT]`: with TEXT it attaches a note to
// the run (the dashboard shows it on the run's page and the experiment's
// runs table); without, it lists the run's notes.
func newNoteCmd() *cobra.Command {
	var store string
	cmd := &cobra.Command{
		Use:   "note RUN [TEXT...] [--store PATH]",
		Short: "Attach a note to a run, or list its notes (the dashboard shows them)",
		Long: `With TEXT, stores a note on the run (RUN is a run id or a prefix naming one
run): free text up to 4096 bytes, kept in the store apart from the run's
records and shown by the dashboard. Without TEXT, lists the run's notes.
Writing needs the store free: not while a run writes it.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			text := strings.Join(args[1:], " ")
			if len(args) == 1 {
				return withStore(cmd, store, &tracking.ReadScope{}, func(st *tracking.Store) error {
					r, err := oneRun(st, args[0])
					if err != nil {
						return err
					}
					notes, err := st.Notes(r.ID)
					if err != nil {
						return err
					}
					for _, n := range notes {
						fmt.Fprintf(cmd.OutOrStdout(), "%s  %s\n", n.Time.Format("2006-01-02 15:04:05Z"), n.Text)
					}
					return nil
				})
			}
			path := storePath(store)
			if _, err := os.Stat(path); err != nil {
				return storeOpenError(store, err)
			}
			st, err := tracking.Open(path, tracking.Options{})
			if err != nil {
				return storeOpenError(store, err)
			}
			r, err := oneRun(st, args[0])
			if err == nil {
				if _, err = st.AddNote(r.ID, text); err != nil {
					err = usageError{err}
				}
			}
			if cerr := st.Close(); err == nil && cerr != nil {
				err = fmt.Errorf("closing store %s: %w", path, cerr)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "noted on run %s\n", r.ID)
			return nil
		},
	}
	storeFlag(cmd, &store)
	return cmd
}
