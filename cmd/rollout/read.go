package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"gonum.org/v1/plot/vg"

	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/search/record"
	"github.com/rollout-rl/rollout/tracking"
	"github.com/rollout-rl/rollout/tracking/report"
)

// reportOptions are what rollout's reports default to: the metrics shown
// without --metric, the metrics where lower is better (for --at best), the
// cumulative training-FLOP metric --at train_flops:F reads and the
// evaluation-mark metrics --at tokens:T and --at flops:F read.
func reportOptions() report.Options {
	return report.Options{
		DefaultMetrics:  []string{"eval/acc", "reward/mean"},
		Minimize:        report.MetricMinimize,
		FLOPsMetric:     "budget/train_flops_cum",
		MarkMetric:      "eval/tokens_mark",
		FLOPsMarkMetric: "eval/flops_mark",
	}
}

// openRead opens the store for a reading command: read-only, and while a
// run is writing it, as a snapshot (the store says so) of what the command
// reads (scope; nil: everything).
func openRead(cmd *cobra.Command, flag string, scope *tracking.ReadScope) (*tracking.Store, error) {
	st, err := tracking.Open(storePath(flag), tracking.Options{ReadOnly: true, Scope: scope})
	if err != nil {
		return nil, storeOpenError(flag, err)
	}
	if snap, who := st.Snapshot(); snap {
		holder := "another process"
		if who != nil {
			holder = who.String()
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "note: %s is being written by %s; reading a snapshot taken now\n", st.Path(), holder)
	}
	return st, nil
}

// oneRun finds the run a reference names: an id or a unique id prefix.
func oneRun(st *tracking.Store, ref string) (tracking.Run, error) {
	runs, err := st.FindRuns(ref)
	if err != nil {
		return tracking.Run{}, usageError{suggestExperiment(st, ref, err)}
	}
	if len(runs) != 1 {
		return tracking.Run{}, usageError{fmt.Errorf("%q names %d runs: give a run id (rollout ls lists them)", ref, len(runs))}
	}
	return runs[0], nil
}

// suggestExperiment adds to err, when it says that ref names nothing in
// the store, the experiment names closest to ref.
func suggestExperiment(st *tracking.Store, ref string, err error) error {
	if !errors.Is(err, tracking.ErrNotFound) {
		return err
	}
	return fmt.Errorf("%w%s", err, experimentHint(st, ref))
}

// experimentHint names the store's experiments closest to ref, or says
// which command lists them.
func experimentHint(st *tracking.Store, ref string) string {
	exps, err := st.Experiments()
	if err == nil {
		names := make([]string, len(exps))
		for i, e := range exps {
			names[i] = e.Name
		}
		if hint := didYouMean(ref, names); hint != "" {
			return hint
		}
	}
	return " (rollout ls lists the experiments and runs)"
}

// checkExperiment returns a usage error, naming the closest experiments,
// unless the store holds an experiment called name.
func checkExperiment(st *tracking.Store, name string) error {
	_, err := st.Experiment(name)
	if errors.Is(err, tracking.ErrNotFound) {
		return usageError{fmt.Errorf("no experiment %q in %s%s", name, st.Path(), experimentHint(st, name))}
	}
	return err
}

// newReadCmds returns the commands that read the store (and merge and
// compact, which rewrite stores).
func newReadCmds() []*cobra.Command {
	return []*cobra.Command{newLsCmd(), newShowCmd(), newReportCmd(), newPlotCmd(), newTreesCmd(), newExportCmd(), newMergeCmd(), newCompactCmd(), newMigrateCmd()}
}

// storeFlag adds --store to a command.
func storeFlag(c *cobra.Command, store *string) {
	c.Flags().StringVar(store, "store", "", "store file (default $ROLLOUT_STORE or rollout.db)")
}

// withStore opens the store for reading (a snapshot of scope while a run
// writes it), calls fn and closes it.
func withStore(cmd *cobra.Command, store string, scope *tracking.ReadScope, fn func(st *tracking.Store) error) error {
	st, err := openRead(cmd, store, scope)
	if err != nil {
		return err
	}
	defer st.Close()
	return fn(st)
}

func newLsCmd() *cobra.Command {
	var store string
	cmd := &cobra.Command{
		Use: "ls [EXPERIMENT]", Short: "List experiments and runs with status and progress", Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd, store, &tracking.ReadScope{}, func(st *tracking.Store) error {
				if len(args) == 1 {
					if err := checkExperiment(st, args[0]); err != nil {
						return err
					}
				}
				exps, err := st.Experiments()
				if err != nil {
					return err
				}
				var runs []tracking.Run
				for _, e := range exps {
					if len(args) == 1 && e.Name != args[0] {
						continue
					}
					rs, err := st.Runs(e.Name)
					if err != nil {
						return err
					}
					runs = append(runs, rs...)
				}
				return report.WriteRuns(cmd.OutOrStdout(), runs)
			})
		},
	}
	storeFlag(cmd, &store)
	return cmd
}

func newShowCmd() *cobra.Command {
	var store string
	cmd := &cobra.Command{
		Use: "show RUN", Short: "Show a run: its record and its last metrics", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withStore(cmd, store, &tracking.ReadScope{Runs: args[0], Metrics: true}, func(st *tracking.Store) error {
				r, err := oneRun(st, args[0])
				if err != nil {
					return err
				}
				last, err := st.LastMetrics(r.ID)
				if err != nil && !errors.Is(err, tracking.ErrNotFound) {
					return err
				}
				var lp *tracking.StepMetrics
				if err == nil {
					lp = &last
				}
				if err := report.WriteRunDetail(cmd.OutOrStdout(), r, lp); err != nil {
					return err
				}
				if st.HasFinal(r.ID) {
					fmt.Fprintf(cmd.OutOrStdout(), "final policy: %s (train.save_final; a checkpoint for --checkpoint)\n", st.FinalDir(r.ID))
				}
				return nil
			})
		},
	}
	storeFlag(cmd, &store)
	return cmd
}

func newReportCmd() *cobra.Command {
	var store, at, baseline, format string
	var metrics []string
	cmd := &cobra.Command{
		Use:   "report EXPERIMENT [--metric M]... [--at final|best|step:N|tokens:T|flops:F|train_flops:F] [--baseline VARIANT] [--format table|markdown|csv|json]",
		Short: "Compare variants: mean ± 95% t-interval over seeds and a t-test against the baseline",
		Long: `Compares the variants of an experiment at one point of each run (--at):
  final          the end of each run
  best           each run's best value
  step:N         step N (equal optimizer updates); N beyond a finished run is an error
  tokens:T       the evaluation at token mark T (eval/tokens_mark), else the row at
                 exactly T cumulative sampled tokens; a T at which a
                 run has no row for a metric is an error listing the marks all runs have
  flops:F        the evaluation at total-FLOPs mark F (eval/flops_mark, with
                 eval.every_flops): marks only; an F at which a run has no
                 evaluation is an error listing the marks all runs have
  train_flops:F  each run's last row with budget/train_flops_cum ≤ F
Every output says which axis it compares on. Runs of a variant with different
resolved configs are never pooled: the report refuses them.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := report.ParseAt(at)
			if err != nil {
				return usageError{err}
			}
			f, err := report.ParseFormat(format)
			if err != nil {
				return usageError{fmt.Errorf("--format: %w", err)}
			}
			return withStore(cmd, store, &tracking.ReadScope{Runs: args[0], Metrics: true}, func(st *tracking.Store) error {
				if err := checkExperiment(st, args[0]); err != nil {
					return err
				}
				opts := reportOptions()
				opts.Metrics, opts.At, opts.Baseline = metrics, a, baseline
				rep, err := report.Build(st, args[0], opts)
				if err != nil {
					return usageError{err}
				}
				return rep.Write(cmd.OutOrStdout(), f)
			})
		},
	}
	cmd.Flags().StringArrayVar(&metrics, "metric", nil, "metric to report (repeatable; default eval/acc and reward/mean)")
	cmd.Flags().StringVar(&at, "at", "final", "value of each run: final, best, step:N, tokens:T, flops:F or train_flops:F")
	cmd.Flags().StringVar(&baseline, "baseline", "", "variant to test against (default: the config's baseline)")
	cmd.Flags().StringVar(&format, "format", "table", "table, markdown, csv or json")
	storeFlag(cmd, &store)
	return cmd
}

func newPlotCmd() *cobra.Command {
	var store, metric, x, out, kind, baseline string
	var variants []string
	var width, height float64
	var dpi int
	cmd := &cobra.Command{
		Use:   "plot EXPERIMENT --metric M [--x step|tokens|time] [--kind curves|diff] --out FILE.png|.svg [--width CM --height CM --dpi N]",
		Short: "Plot a metric per variant: mean over seeds with a 95% band, or paired differences from the baseline",
		Long: `Plots a metric of every variant (or of --variant ones) against steps, sampled tokens or
wall time (default: the experiment's budget axis, tokens when its evaluations fall on token
marks, else steps). --kind curves (default) draws the mean over seeds with a shaded 95%
t-interval band; --kind diff draws each variant minus the baseline (--baseline, default the
config's), seed by seed, with the mean and its paired 95% t-interval: the figure of the
paired tests rollout report makes. Bands are clipped to the metric's range (accuracies,
pass@k and shares in [0, 1], times and counts ≥ 0) unless a recorded value leaves it. Each
variant has a colour fixed by the experiment's variant order (one colour-blind-safe palette,
shared with the dashboard); the y axis names the metric with its unit; above five variants
each gets its own panel. The caption gives the number of seeds behind every point, and
notes under the legend say what a curve leaves out (values at steps not every seed
recorded, beyond the range every seed covers, seeds without a partner). Figures are 16 cm
wide, PNG at 300 dpi, by default.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var xa report.XAxis
			if x != "" {
				var err error
				if xa, err = report.ParseXAxis(x); err != nil {
					return usageError{fmt.Errorf("--x: %w", err)}
				}
			}
			k, err := report.ParsePlotKind(kind)
			if err != nil {
				return usageError{err}
			}
			if metric == "" || out == "" {
				return usageError{fmt.Errorf("--metric and --out are required")}
			}
			if width <= 0 || height < 0 || dpi <= 0 {
				return usageError{fmt.Errorf("--width %g, --height %g, --dpi %d: want positive sizes", width, height, dpi)}
			}
			if !strings.HasSuffix(out, ".png") && !strings.HasSuffix(out, ".svg") {
				return usageError{fmt.Errorf("--out %s: want a .png or .svg file", out)}
			}
			return withStore(cmd, store, &tracking.ReadScope{Runs: args[0], Metrics: true}, func(st *tracking.Store) error {
				if err := checkExperiment(st, args[0]); err != nil {
					return err
				}
				marks := reportOptions().MarkMetric
				if xa == "" {
					if xa, err = report.BudgetAxis(st, args[0], marks); err != nil {
						return err
					}
				}
				opts := report.PlotOptions{Metric: metric, X: xa, Kind: k, Baseline: baseline, Variants: variants, MarkMetric: marks,
					Width: vg.Length(width) * vg.Centimeter, Height: vg.Length(height) * vg.Centimeter, DPI: dpi}
				fig, err := report.Plot(st, args[0], opts)
				if err != nil {
					return usageError{err}
				}
				if err := fig.Save(out, opts.Width, opts.Height, dpi); err != nil {
					return usageError{fmt.Errorf("plot %s: %w", out, err)}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (x: %s)\n", out, xa)
				for _, n := range fig.Notes {
					fmt.Fprintf(cmd.ErrOrStderr(), "note: %s\n", n)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&metric, "metric", "", "metric to plot")
	cmd.Flags().StringVar(&x, "x", "", "horizontal axis: step, tokens or time (default: tokens when evaluations fall on token marks, else step)")
	cmd.Flags().StringVar(&kind, "kind", "curves", "curves (mean over seeds) or diff (variant minus baseline, paired by seed)")
	cmd.Flags().StringVar(&baseline, "baseline", "", "variant --kind diff subtracts (default: the config's baseline)")
	cmd.Flags().StringVar(&out, "out", "", "output file (.png or .svg)")
	cmd.Flags().StringArrayVar(&variants, "variant", nil, "only these variants (repeatable; each keeps its colour)")
	cmd.Flags().Float64Var(&width, "width", 16, "figure width in cm")
	cmd.Flags().Float64Var(&height, "height", 0, "figure height in cm (0: fit the panels, legend and notes)")
	cmd.Flags().IntVar(&dpi, "dpi", 300, "resolution of a PNG in dots per inch")
	storeFlag(cmd, &store)
	return cmd
}

func newTreesCmd() *cobra.Command {
	var store, format string
	var step, group int
	cmd := &cobra.Command{
		Use:   "trees RUN [--step S] [--group G] [--format text|json]",
		Short: "Print the rollout trees of a step, as rollout sample prints them",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if format != "text" && format != "json" {
				return usageError{fmt.Errorf("--format %q: want text or json", format)}
			}
			return withStore(cmd, store, &tracking.ReadScope{Runs: args[0], Groups: true}, func(st *tracking.Store) error {
				r, err := oneRun(st, args[0])
				if err != nil {
					return err
				}
				if step < 0 {
					step = r.LastStep
					fmt.Fprintf(cmd.ErrOrStderr(), "run %s: step %d, its last committed (--step S shows another)\n", r.ID, step)
				}
				groups, err := st.Groups(r.ID, step)
				if err != nil {
					return usageError{err}
				}
				if len(groups) == 0 {
					return usageError{fmt.Errorf("run %s has no rollout groups at step %d (steps 1..%d have them)", r.ID, step, r.LastStep)}
				}
				if group >= len(groups) {
					return usageError{fmt.Errorf("--group %d: step %d has %d groups", group, step, len(groups))}
				}
				if group >= 0 {
					groups = groups[group : group+1]
				}
				return writeGroups(cmd.OutOrStdout(), groups, format, group < 0)
			})
		},
	}
	cmd.Flags().IntVar(&step, "step", -1, "step (default: the last committed)")
	cmd.Flags().IntVar(&group, "group", -1, "only this group, printed exactly as rollout sample prints a group (default: all, each under a header)")
	cmd.Flags().StringVar(&format, "format", "text", "text (indented trees) or json (one object per group)")
	storeFlag(cmd, &store)
	return cmd
}

func newExportCmd() *cobra.Command {
	var store, what, format, out string
	cmd := &cobra.Command{
		Use:   "export RUN|EXPERIMENT --what metrics|trajectories|groups --format jsonl|csv [--out FILE]",
		Short: "Stream a run's or an experiment's metrics, trajectories or rollout groups",
		Long: `Streams records of a run or of every run of an experiment:
  metrics       one record per run and step (cumulative tokens, wall time, every metric)
  trajectories  one record per leaf (response): root-to-leaf tokens, log-probs, entropies
                and advantages, with reward and reason
  groups        one record per rollout group: its JSON as rollout sample --format json
                prints it, with run, step and group index (jsonl only: a group is a tree)
With --out, the file appears only when the export succeeded.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			kind, err := report.ParseExportKind(what)
			if err != nil {
				return usageError{fmt.Errorf("--what: %w", err)}
			}
			ef, err := report.ParseExportFormat(format)
			if err != nil {
				return usageError{fmt.Errorf("--format: %w", err)}
			}
			if kind == report.ExportGroups && ef != report.JSONL {
				return usageError{fmt.Errorf("--what groups --format %s: groups export only as jsonl (a group is a tree, not a row); --what trajectories gives one row per leaf", ef)}
			}
			scope := &tracking.ReadScope{Runs: args[0], Metrics: kind == report.ExportMetrics, Groups: kind != report.ExportMetrics}
			return withStore(cmd, store, scope, func(st *tracking.Store) error {
				runs, err := st.FindRuns(args[0])
				if err != nil {
					return usageError{suggestExperiment(st, args[0], err)}
				}
				ids := make([]string, len(runs))
				for i, r := range runs {
					ids[i] = r.ID
				}
				return writeOutput(cmd.OutOrStdout(), out, func(w io.Writer) error { return report.Export(w, st, ids, kind, ef) })
			})
		},
	}
	cmd.Flags().StringVar(&what, "what", "metrics", "metrics, trajectories or groups")
	cmd.Flags().StringVar(&format, "format", "jsonl", "jsonl or csv")
	cmd.Flags().StringVar(&out, "out", "", "output file (default standard output)")
	storeFlag(cmd, &store)
	return cmd
}

// writeOutput calls write with stdout, or, when path is set, with a
// temporary file beside path that is renamed to path only when write
// succeeds: a failed export leaves no file behind.
func writeOutput(stdout io.Writer, path string, write func(io.Writer) error) error {
	if path == "" {
		return write(stdout)
	}
	fh, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return usageError{fmt.Errorf("--out %s: %w", path, err)}
	}
	err = write(fh)
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(fh.Name(), path)
	}
	if err != nil {
		os.Remove(fh.Name())
		return err
	}
	return nil
}

func newMergeCmd() *cobra.Command {
	var into string
	cmd := &cobra.Command{
		Use:   "merge A.db B.db... --into C.db",
		Short: "Fold stores (e.g. shards) into one; merging twice changes nothing",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if into == "" {
				return usageError{fmt.Errorf("--into: the destination store is required")}
			}
			ms, err := tracking.Merge(into, args, tracking.Options{})
			if errors.Is(err, fs.ErrNotExist) {
				return usageError{fmt.Errorf("%w: name existing stores to merge (rollout run writes them)", err)}
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "merged into %s: %d experiments and %d runs copied, %d runs already there\n", into, ms.Experiments, ms.Runs, ms.Unchanged)
			return nil
		},
	}
	cmd.Flags().StringVar(&into, "into", "", "destination store (created if needed)")
	return cmd
}

func newCompactCmd() *cobra.Command {
	var store string
	cmd := &cobra.Command{
		Use: "compact [--store PATH]", Short: "Rewrite the store without free pages", Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			before, after, err := tracking.Compact(storePath(store), tracking.Options{})
			if err != nil {
				return storeOpenError(store, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "compacted %s: %d → %d bytes\n", storePath(store), before, after)
			return nil
		},
	}
	storeFlag(cmd, &store)
	return cmd
}

func newMigrateCmd() *cobra.Command {
	var store string
	cmd := &cobra.Command{
		Use:   "migrate [--store PATH]",
		Short: "Upgrade a store written by an older rollout to this one's layout, in place",
		Long: `Migrate rewrites a store of an older schema version in the current layout:
every record sealed with a checksum (so that every read detects damage), group
chunks compressed, checkpoints kept as blobs moved into resume state files. It
verifies every record first and leaves the store as it was on any error. A
store already current is left untouched. It holds the store's write lock.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := tracking.Migrate(storePath(store), tracking.Options{})
			if err != nil {
				return storeOpenError(store, err)
			}
			if st.From == st.To {
				fmt.Fprintf(cmd.OutOrStdout(), "%s is at schema version %d already: nothing to migrate\n", storePath(store), st.To)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "migrated %s from schema version %d to %d: %d records sealed, %d group chunks compressed, %d checkpoints moved into state files, %d experiments given their variant configs\n",
				storePath(store), st.From, st.To, st.Records, st.Chunks, st.Checkpoints, st.Configs)
			return nil
		},
	}
	storeFlag(cmd, &store)
	return cmd
}

// writeGroups prints groups as text (record.Group.WriteText, with the
// policy tokenizer's display text), each under a "group i" header when
// headers is set, or as one JSON object per line.
func writeGroups(w io.Writer, groups []record.Group, format string, headers bool) error {
	tok := policy.DefaultTokenizer()
	for i := range groups {
		var err error
		switch format {
		case "json":
			err = groups[i].WriteJSON(w)
		case "text":
			if headers {
				fmt.Fprintf(w, "group %d\n", i)
			}
			err = groups[i].WriteText(w, tok.DisplayText)
		default:
			return usageError{fmt.Errorf("--format %q: want text or json", format)}
		}
		if err != nil {
			return err
		}
	}
	return nil
}
