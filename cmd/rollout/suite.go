package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/experiments/config"
	"github.com/rollout-rl/rollout/experiments/runner"
	"github.com/rollout-rl/rollout/experiments/suite"
	"github.com/rollout-rl/rollout/tracking"
	"github.com/rollout-rl/rollout/tracking/report"
)

// suiteArgs are rollout suite's arguments and flags.
type suiteArgs struct {
	dir          string
	only         []string
	store, cache string
	workers      int
	noRun        bool
}

func newSuiteCmd() *cobra.Command {
	var a suiteArgs
	cmd := &cobra.Command{
		Use:   "suite DIR [--only NAME]... [--store PATH] [--workers N] [--no-run]",
		Short: "Run the rollout-economics suite's experiments and write its reports into DIR",
		Long: `Runs the config of every report of the rollout-economics suite
(experiments/configs/econ/NAME.yaml, from the repository's root) into the store, one
report after another in order of priority, then writes each report as DIR/NAME.md with
its plots, and the suite's block of DIR/README.md (each report's verdict, or the command
and time for those not written yet). Runs already finished in the store are skipped and
unfinished ones resume, so the command picks up where it stopped.

--only NAME (repeatable) makes only those reports; --no-run writes them from the store
without running anything (an unfinished run is then an error, and a report the store
has not run is skipped with a note, or an error when --only names it or the store has
none of the suite's). Reports: ` + strings.Join(suite.Priority(), ", ") + `.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a.dir = args[0]
			return runSuite(cmd, a)
		},
	}
	cmd.Flags().StringArrayVar(&a.only, "only", nil, "make only this report (repeatable)")
	cmd.Flags().StringVar(&a.store, "store", "", "store file (default $ROLLOUT_STORE or rollout.db)")
	cmd.Flags().StringVar(&a.cache, "cache", "", "base-policy cache directory (default $ROLLOUT_CACHE or the user cache dir)")
	cmd.Flags().IntVar(&a.workers, "workers", 0, "runs at once ("+workersHelp+")")
	cmd.Flags().BoolVar(&a.noRun, "no-run", false, "write the reports from the store without running anything")
	return cmd
}

// suiteReports returns the reports --only names, in order of priority,
// or all of them.
func suiteReports(only []string) ([]suite.Report, error) {
	var out []suite.Report
	for _, name := range only {
		if !slices.Contains(suite.Priority(), name) {
			return nil, usageError{fmt.Errorf("--only %q: no such report (reports: %s)", name, strings.Join(suite.Priority(), ", "))}
		}
	}
	for _, name := range suite.Priority() {
		if len(only) == 0 || slices.Contains(only, name) {
			r, _ := suite.Find(name)
			out = append(out, r)
		}
	}
	return out, nil
}

// runSuite is rollout suite: every chosen report's runs, then its
// markdown, then the index.
func runSuite(cmd *cobra.Command, a suiteArgs) error {
	reports, err := suiteReports(a.only)
	if err != nil {
		return err
	}
	if a.workers < 0 {
		return usageError{fmt.Errorf("--workers %d: want ≥ 0 (0: GOMAXPROCS)", a.workers)}
	}
	if fi, err := os.Stat(a.dir); err != nil || !fi.IsDir() {
		return usageError{fmt.Errorf("%s: not a directory", a.dir)}
	}
	files := make([]*config.File, len(reports))
	for i, r := range reports {
		if files[i], err = loadConfig(r.Config(), nil); err != nil {
			return fmt.Errorf("report %s: %w (run rollout suite from the repository's root)", r.Name, err)
		}
		files[i].Design = r.Declared(files[i].Design)
	}
	dir, err := cacheDir(a.cache)
	if err != nil {
		return err
	}
	st, err := openSuiteStore(cmd, a)
	if err != nil {
		return err
	}
	defer st.Close()

	pr := newProgress(cmd.ErrOrStderr())
	ctx, stop := interrupts(cmd.Context(), func(sig os.Signal) {
		pr.log("%s: stopping once the steps in flight commit (again to stop at once, losing them)", signalName(sig))
	}, func(sig os.Signal) {
		pr.logNow("%s again: stopping at once; the steps in flight are lost", signalName(sig))
		os.Exit(exitInterrupted)
	})
	defer stop()
	if a.noRun {
		if reports, files, err = suiteInStore(cmd, st, a, reports, files); err != nil {
			return err
		}
	}
	meta := suiteMeta(st.Path())
	out := cmd.OutOrStdout()
	for i, r := range reports {
		start := time.Now()
		if !a.noRun {
			pr.log("[%d/%d] %s: %s (%d runs, config %s)", i+1, len(reports), r.Name, r.Title, len(files[i].Runs()), r.Config())
			if err := suiteRun(ctx, pr, files[i], st, runner.Options{Workers: a.workers, CacheDir: dir, Version: tracking.BuildVersion()}); err != nil {
				if ctx.Err() != nil {
					return interruptedError{fmt.Errorf("%w during report %s; run the same command again to resume", context.Cause(ctx), r.Name)}
				}
				return fmt.Errorf("report %s: %w", r.Name, err)
			}
		}
		meta.Command = suiteCommand(a, r.Name)
		meta.Measure = answerMeasurer(ctx, files[i], st, dir)
		v, err := suite.Write(st, r, a.dir, meta)
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "wrote %s: %s (%s)\n", filepath.Join(a.dir, r.Name+".md"), v, time.Since(start).Round(time.Second))
	}
	index := filepath.Join(a.dir, "README.md")
	if err := suite.WriteIndex(index, suite.Reports(), a.dir, "rollout suite "+a.dir); err != nil {
		return err
	}
	fmt.Fprintf(out, "wrote %s\n", index)
	return nil
}

// suiteInStore keeps, for --no-run, the reports whose experiment is in
// the store. A report --only names that is not there is an error, as is a
// store holding none of them (most likely the wrong store); without
// --only the others are skipped with a note on stderr, their files in the
// directory left as they are.
func suiteInStore(cmd *cobra.Command, st *tracking.Store, a suiteArgs, reports []suite.Report, files []*config.File) ([]suite.Report, []*config.File, error) {
	var keptR []suite.Report
	var keptF []*config.File
	var missing []string
	for i, r := range reports {
		_, err := st.Experiment(files[i].Name)
		switch {
		case err == nil:
			keptR, keptF = append(keptR, r), append(keptF, files[i])
		case errors.Is(err, tracking.ErrNotFound):
			missing = append(missing, fmt.Sprintf("%s (experiment %s)", r.Name, files[i].Name))
		default:
			return nil, nil, err
		}
	}
	if len(missing) == 0 {
		return keptR, keptF, nil
	}
	if len(a.only) > 0 || len(keptR) == 0 {
		return nil, nil, usageError{fmt.Errorf("--no-run: the store %s has not run %s: run them first (the same command without --no-run) or give the store that holds them",
			storePath(a.store), strings.Join(missing, ", "))}
	}
	for _, m := range missing {
		fmt.Fprintf(cmd.ErrOrStderr(), "skipped %s: not in the store %s (--no-run)\n", m, storePath(a.store))
	}
	return keptR, keptF, nil
}

// openSuiteStore opens the store for writing, or, with --no-run, for
// reading (a snapshot while another process writes it).
func openSuiteStore(cmd *cobra.Command, a suiteArgs) (*tracking.Store, error) {
	if a.noRun {
		return openRead(cmd, a.store, &tracking.ReadScope{Metrics: true})
	}
	return tracking.Open(storePath(a.store), tracking.Options{KeepCheckpoints: 1})
}

// suiteRun runs one report's config into the store with progress bars;
// a run that failed is an error.
func suiteRun(ctx context.Context, pr *progress, f *config.File, st *tracking.Store, opts runner.Options) error {
	view := newRunView(pr, len(f.Runs()))
	opts.Progress = view
	sum, err := runner.Run(ctx, f, st, opts)
	view.finish()
	pr.wait()
	var conflict *tracking.ConfigConflictError
	var designConflict *tracking.DesignConflictError
	if errors.As(err, &conflict) || errors.As(err, &designConflict) {
		return usageError{fmt.Errorf("%w in %s: the config changed since its runs were made; use another --store", err, st.Path())}
	}
	if err != nil {
		return err
	}
	if sum.Failed > 0 || sum.Stopped+sum.NotStarted > 0 {
		return fmt.Errorf("%s", counts(sum))
	}
	return nil
}

// suiteCommand is the command that regenerates one report.
func suiteCommand(a suiteArgs, name string) string {
	words := []string{"go run ./cmd/rollout suite", shellQuote(a.dir), "--only", name}
	if a.store != "" {
		words = append(words, "--store", shellQuote(a.store))
	}
	return strings.Join(words, " ")
}

// suiteMeta describes the program and machine writing the reports.
func suiteMeta(store string) suite.Meta {
	return suite.Meta{Commit: buildCommit(), Machine: machine(), Store: store, Options: reportOptions(), Range: report.MetricRange}
}

// buildCommit is the commit the program was built from (its build
// information, else git's HEAD in the working directory), marked when the
// tree had changes.
func buildCommit() string {
	if rev, modified := tracking.VCSRevision(); rev != "" {
		if modified {
			rev += " (with uncommitted changes)"
		}
		return rev
	}
	out, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown (no build information, no git)"
	}
	rev := strings.TrimSpace(string(out))
	if st, err := exec.Command("git", "status", "--porcelain", "--untracked-files=no", "--", ".", ":!results").Output(); err == nil && len(st) > 0 {
		rev += " (with uncommitted changes)"
	}
	return rev
}

// machine describes this machine: CPU model, CPUs, OS/architecture and
// the load average when the report was written.
func machine() string {
	model := "unknown CPU"
	if raw, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(raw), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	s := fmt.Sprintf("%s, %d CPUs, %s/%s", model, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
	if raw, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(raw)); len(f) >= 3 {
			s += fmt.Sprintf(", load average %s %s %s when written", f[0], f[1], f[2])
		}
	}
	return s
}
