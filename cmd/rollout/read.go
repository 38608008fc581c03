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
		Minimize:        lowerIsBetter,
		FLOPsMetric:     "budget/train_flops_cum",
		MarkMetric:      "eval/tokens_mark",
		FLOPsMarkMetric: "eval/flops_mark",
	}
}

// unitRange says which metrics are shares or probabilities, in [0, 1]:
// accuracies, pass@k, maj@k, fractions and ratios of counts. Plots clip
// their bands to it.
func unitRange(metric string) (lo, hi float64, ok bool) {
	for _, s := range []string{"eval/acc", "eval/pass@", "eval/maj@", "_frac", "clip_ratio", "clipfrac"} {
		if strings.Contains(metric, s) {
			return 0, 1, true
		}
	}
	return 0, 0, false
}

// lowerIsBetter says which metrics are minimised: losses, KL divergences
// and timings.
func lowerIsBetter(metric string) bool {
	return strings.Contains(metric, "loss") || strings.Contains(metric, "kl") || strings.Contains(metric, "timing")
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
		return tracking.Run{}, usageError{err}
	}
	if len(runs) != 1 {
		return tracking.Run{}, usageError{fmt.Errorf("%q names %d runs: give a run id (rollout ls lists them)", ref, len(runs))}
	}
	return runs[0], nil
}

// newReadCmds returns the commands that read the store (and merge and
// compact, which rewrite stores).
func newReadCmds() []*cobra.Command {
	return []*cobra.Command{newLsCmd(), newShowCmd(), newReportCmd(), newPlotCmd(), newTreesCmd(), newExportCmd(), newMergeCmd(), newCompactCmd()}
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
				if len(args) == 1 && len(runs) == 0 {
					return usageError{fmt.Errorf("no experiment %q in %s", args[0], st.Path())}
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
	var store, metric, x, out string
	var variants []string
	var width, height float64
	var dpi int
	cmd := &cobra.Command{
		Use:   "plot EXPERIMENT --metric M [--x step|tokens|time] --out FILE.png|.svg [--width CM --height CM --dpi N]",
		Short: "Plot a metric per variant: mean over seeds with a 95% band (markers at token marks)",
		Long: `Plots a metric of every variant (or of --variant ones) against steps, sampled tokens or
wall time: the mean over seeds with a shaded 95% t-interval band (clipped to [0, 1] for
accuracies, pass@k, maj@k and fractions), a marker at each evaluation mark on the tokens
axis, a colour fixed per variant whatever subset is drawn, integer ticks on the step axis, a
caption with the number of seeds, and the legend below the data. Figures are 16 × 10 cm, PNG
at 300 dpi, by default.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			xa, err := report.ParseXAxis(x)
			if err != nil {
				return usageError{fmt.Errorf("--x: %w", err)}
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
				opts := report.PlotOptions{Metric: metric, X: xa, Variants: variants, Range: unitRange, MarkMetric: reportOptions().MarkMetric,
					Width: vg.Length(width) * vg.Centimeter, Height: vg.Length(height) * vg.Centimeter, DPI: dpi}
				if err := report.SavePlot(st, args[0], out, opts); err != nil {
					return usageError{err}
				}
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", out)
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&metric, "metric", "", "metric to plot")
	cmd.Flags().StringVar(&x, "x", "step", "horizontal axis: step, tokens or time")
	cmd.Flags().StringVar(&out, "out", "", "output file (.png or .svg)")
	cmd.Flags().StringArrayVar(&variants, "variant", nil, "only these variants (repeatable; each keeps its colour)")
	cmd.Flags().Float64Var(&width, "width", 16, "figure width in cm")
	cmd.Flags().Float64Var(&height, "height", 0, "figure height in cm (0: 10 cm plus the legend)")
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
					return usageError{err}
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
