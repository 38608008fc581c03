package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/rollout-rl/rollout/experiments/config"
	"github.com/rollout-rl/rollout/experiments/design"
	"github.com/rollout-rl/rollout/experiments/runner"
	"github.com/rollout-rl/rollout/experiments/suite"
	"github.com/rollout-rl/rollout/tracking"
)

// planArgs are rollout plan's arguments and flags.
type planArgs struct {
	config  string
	store   string
	pilot   int
	workers int
	cache   string
}

func newPlanCmd() *cobra.Command {
	var a planArgs
	cmd := &cobra.Command{
		Use:   "plan CONFIG [--store PATH] [--pilot N [--workers N]]",
		Short: "Plan an experiment's seeds from a pilot: σ_d of every declared check and its upper limit, seeds needed, MDE",
		Long: `Estimates, from a pilot, the standard deviation over seeds σ_d of the paired difference
of every check the config's design declares (design.checks), and prints the seeds a
paired t-test needs for the design's power (design.power, default 80%) at level
design.alpha (default 0.05) to detect the effect the check states (its effect, else its
margin): n = ((t_{1−α/2} + t_{power}) · σ_d / Δ)², iterated on the t degrees of freedom;
and the minimum detectable effect of the design as configured (its seeds). It prints both
again from the one-sided 80% upper confidence limit of σ_d, σ_d · √((n−1)/χ²_{0.2,n−1})
over the pilot's n seeds, and recommends the seeds the primary checks need at that limit
(Browne 1995; Kieser and Wassmer 1996): a pilot of a few seeds underestimates σ_d more often
than not (3 seeds: in 63% of pilots), so seeds planned from its σ_d itself fall short of the
power as often.

The pilot is the runs the store holds of the experiment, or of NAME_pilot; with
--pilot N, when the store holds neither, it first runs the config's variants with N
seeds beyond the design's (so the pilot's seeds are not the experiment's) as the
experiment NAME_pilot into the store (base policies from --cache, else $ROLLOUT_CACHE,
else the user cache directory, as rollout run's). It prints the pilot_sd lines to add to the
design before the runs, so that every report quotes the planned MDE beside the
achieved one.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a.config = args[0]
			return runPlan(cmd, a)
		},
	}
	cmd.Flags().StringVar(&a.store, "store", "", "store file (default $ROLLOUT_STORE or rollout.db)")
	cmd.Flags().IntVar(&a.pilot, "pilot", 0, "run a pilot of N seeds first when the store holds none (N ≥ 2)")
	cmd.Flags().IntVar(&a.workers, "workers", 0, "pilot runs at once ("+workersHelp+")")
	cmd.Flags().StringVar(&a.cache, "cache", "", "base-policy cache directory of the pilot (default $ROLLOUT_CACHE or the user cache dir)")
	return cmd
}

// runPlan is rollout plan.
func runPlan(cmd *cobra.Command, a planArgs) error {
	f, err := loadConfig(a.config, nil)
	if err != nil {
		return err
	}
	if len(f.Design.Checks) == 0 {
		return usageError{fmt.Errorf("%s declares no checks (design.checks): nothing to plan", a.config)}
	}
	if a.pilot == 1 || a.pilot < 0 || a.workers < 0 {
		return usageError{fmt.Errorf("--pilot %d --workers %d: want a pilot of at least 2 seeds and workers ≥ 0", a.pilot, a.workers)}
	}
	var st *tracking.Store
	if a.pilot > 0 {
		st, err = tracking.Open(storePath(a.store), tracking.Options{KeepCheckpoints: 1})
	} else {
		st, err = openRead(cmd, a.store, &tracking.ReadScope{Metrics: true})
	}
	if err != nil {
		return err
	}
	defer st.Close()
	pilot := pilotFile(f, a.pilot)
	name, err := pilotIn(st, f.Name, pilot.Name)
	if err != nil {
		return err
	}
	if name == "" {
		if a.pilot == 0 {
			return usageError{fmt.Errorf("the store %s holds no finished runs of %s or %s: give --pilot N to run a pilot of N seeds first, or --store the store that holds one", st.Path(), f.Name, pilot.Name)}
		}
		if err := runPilot(cmd, a, pilot, st); err != nil {
			return err
		}
		name = pilot.Name
	}
	runs, err := st.Runs(name)
	if err != nil {
		return err
	}
	ests, err := suite.Plan(st, name, f.Baseline, f.Design, len(f.Seeds), reportOptions())
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "pilot: experiment %s in %s (%d runs)\n", name, st.Path(), len(runs))
	return suite.WritePlan(out, ests, f.Design, len(f.Seeds))
}

// pilotIn names the experiment the pilot is read from: the experiment
// itself when the store holds finished runs of it, else its pilot; "" when
// neither.
func pilotIn(st *tracking.Store, names ...string) (string, error) {
	for _, name := range names {
		runs, err := st.Runs(name)
		if err != nil && !errors.Is(err, tracking.ErrNotFound) {
			return "", err
		}
		if slices.ContainsFunc(runs, func(r tracking.Run) bool { return r.Status == tracking.StatusFinished }) {
			return name, nil
		}
	}
	return "", nil
}

// pilotFile is the config's pilot: the same variants as experiment
// NAME_pilot, with n seeds after the design's largest, and no checks (a
// pilot is not tested).
func pilotFile(f *config.File, n int) *config.File {
	p := *f
	p.Name = f.Name + "_pilot"
	p.Design = design.Default()
	p.Variants = slices.Clone(f.Variants)
	for i := range p.Variants {
		p.Variants[i].Config.Name = p.Name
	}
	top := slices.Max(f.Seeds)
	p.Seeds = nil
	for i := range n {
		p.Seeds = append(p.Seeds, top+1+uint64(i))
	}
	return &p
}

// runPilot runs the pilot's runs into the store; a run that did not
// finish is an error.
func runPilot(cmd *cobra.Command, a planArgs, pilot *config.File, st *tracking.Store) error {
	dir, err := cacheDir(a.cache)
	if err != nil {
		return err
	}
	pr := newProgress(cmd.ErrOrStderr())
	ctx, stop := interrupts(cmd.Context(), func(os.Signal) {}, func(os.Signal) { os.Exit(exitInterrupted) })
	defer stop()
	pr.log("pilot: %d runs of %s (seeds %v) into %s", len(pilot.Runs()), pilot.Name, pilot.Seeds, st.Path())
	err = suiteRun(ctx, pr, pilot, st, runner.Options{Workers: a.workers, CacheDir: dir, Version: tracking.BuildVersion()})
	if ctx.Err() != nil {
		return interruptedError{fmt.Errorf("%w during the pilot; run the same command again to resume it", context.Cause(ctx))}
	}
	return err
}

// showDesign prints the config's design (its defaults filled in) and the
// hash rollout run records for the whole resolved design.
func showDesign(w io.Writer, f *config.File) error {
	rec, err := f.DesignRecord()
	if err != nil {
		return err
	}
	text, err := rec.Text()
	if err != nil {
		return err
	}
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(map[string]design.Design{"design": f.Design}); err != nil {
		return fmt.Errorf("design of %s: %w", f.Name, err)
	}
	_, err = fmt.Fprintf(w, "---\n# design %s (the hash of the whole resolved design: every variant above, the seeds, the baseline and these %d checks)\n%s", design.Hash(text), len(f.Design.Checks), b.String())
	return err
}
