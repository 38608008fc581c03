package main

import (
	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/experiments/suite"
	"github.com/rollout-rl/rollout/tracking"
)

func newVerdictCmd() *cobra.Command {
	var store string
	cmd := &cobra.Command{
		Use:   "verdict EXPERIMENT... [--store PATH]",
		Short: "Markdown verdict of each experiment's declared checks, its design record and settings; pooled across experiments",
		Long: `Computes the checks each experiment's design declares (design.checks in its config),
in markdown: the design record (its hash and when it was recorded, before or after the
first run), every variant's settings that differ from the defaults and those that change
what the budget or the metric means, and the checks — confirmatory when declared in the
design recorded before their runs, exploratory otherwise — with Holm's correction over
the primary family, planned and achieved MDE, and a verdict: holds, does not hold,
inconclusive, or not testable here (a premise the test bed does not meet; a check on
wall time whose runs did not run side by side, with the load recorded beside them, as
rollout run --interleave runs them). Every run must have finished.

Given several experiments — the same design on other base policies — it then pools
each check across them with random effects (DerSimonian–Laird), beside each one's
estimate.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd, store, &tracking.ReadScope{Metrics: true}, func(st *tracking.Store) error {
				return suite.WriteVerdicts(cmd.OutOrStdout(), st, args, suite.Meta{Options: reportOptions()})
			})
		},
	}
	storeFlag(cmd, &store)
	return cmd
}
