package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/search"
	"github.com/rollout-rl/rollout/tracking"
)

// openRead opens the store for a reading command: read-only, and while a
// run is writing it, as a snapshot (the store says so).
func openRead(cmd *cobra.Command, flag string) (*tracking.Store, error) {
	st, err := tracking.Open(storePath(flag), tracking.Options{ReadOnly: true})
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

func newReadCmds() []*cobra.Command {
	var store string
	storeFlag := func(c *cobra.Command) {
		c.Flags().StringVar(&store, "store", "", "store file (default $ROLLOUT_STORE or rollout.db)")
	}

	ls := &cobra.Command{
		Use: "ls [EXPERIMENT]", Short: "List experiments and runs with status and progress", Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openRead(cmd, store)
			if err != nil {
				return err
			}
			defer st.Close()
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
			return tracking.WriteRuns(cmd.OutOrStdout(), runs)
		},
	}
	storeFlag(ls)

	show := &cobra.Command{
		Use: "show RUN", Short: "Show a run: its record and its last metrics", Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openRead(cmd, store)
			if err != nil {
				return err
			}
			defer st.Close()
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
			return tracking.WriteRunDetail(cmd.OutOrStdout(), r, lp)
		},
	}
	storeFlag(show)

	var metrics []string
	var at, baseline, format string
	report := &cobra.Command{
		Use:   "report EXPERIMENT [--metric M]... [--at final|best|step:N|tokens:T] [--baseline VARIANT] [--format table|markdown|csv|json]",
		Short: "Compare variants: mean ± 95% t-interval over seeds and a t-test against the baseline",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := tracking.ParseAt(at)
			if err != nil {
				return usageError{err}
			}
			f, err := tracking.ParseReportFormat(format)
			if err != nil {
				return usageError{fmt.Errorf("--format: %w", err)}
			}
			st, err := openRead(cmd, store)
			if err != nil {
				return err
			}
			defer st.Close()
			rep, err := st.Report(args[0], tracking.ReportOptions{Metrics: metrics, At: a, Baseline: baseline})
			if err != nil {
				return usageError{err}
			}
			return rep.Write(cmd.OutOrStdout(), f)
		},
	}
	report.Flags().StringArrayVar(&metrics, "metric", nil, "metric to report (repeatable; default eval/acc and reward/mean)")
	report.Flags().StringVar(&at, "at", "final", "value of each run: final, best, step:N or tokens:T")
	report.Flags().StringVar(&baseline, "baseline", "", "variant to test against (default: the config's baseline)")
	report.Flags().StringVar(&format, "format", "table", "table, markdown, csv or json")
	storeFlag(report)

	var metric, x, out string
	var variants []string
	plotCmd := &cobra.Command{
		Use:   "plot EXPERIMENT --metric M [--x step|tokens|time] --out FILE.png|.svg",
		Short: "Plot a metric per variant: mean over seeds with a 95% band",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			xa, err := tracking.ParseXAxis(x)
			if err != nil {
				return usageError{fmt.Errorf("--x: %w", err)}
			}
			if metric == "" || out == "" {
				return usageError{fmt.Errorf("--metric and --out are required")}
			}
			if !strings.HasSuffix(out, ".png") && !strings.HasSuffix(out, ".svg") {
				return usageError{fmt.Errorf("--out %s: want a .png or .svg file", out)}
			}
			st, err := openRead(cmd, store)
			if err != nil {
				return err
			}
			defer st.Close()
			if err := st.SavePlot(args[0], out, tracking.PlotOptions{Metric: metric, X: xa, Variants: variants}); err != nil {
				return usageError{err}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s\n", out)
			return nil
		},
	}
	plotCmd.Flags().StringVar(&metric, "metric", "", "metric to plot")
	plotCmd.Flags().StringVar(&x, "x", "step", "horizontal axis: step, tokens or time")
	plotCmd.Flags().StringVar(&out, "out", "", "output file (.png or .svg)")
	plotCmd.Flags().StringArrayVar(&variants, "variant", nil, "only these variants (repeatable)")
	storeFlag(plotCmd)

	var step, group int
	trees := &cobra.Command{
		Use:   "trees RUN [--step S] [--group G]",
		Short: "Print the rollout trees of a step, as rollout sample prints them",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openRead(cmd, store)
			if err != nil {
				return err
			}
			defer st.Close()
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
			w := cmd.OutOrStdout()
			for i := range groups {
				if group >= 0 && i != group {
					continue
				}
				if err := writeStoredGroup(w, i, &groups[i]); err != nil {
					return err
				}
			}
			if group >= len(groups) {
				return usageError{fmt.Errorf("--group %d: step %d has %d groups", group, step, len(groups))}
			}
			return nil
		},
	}
	trees.Flags().IntVar(&step, "step", -1, "step (default: the last committed)")
	trees.Flags().IntVar(&group, "group", -1, "only this group (default: all)")
	storeFlag(trees)

	var what, eformat, eout string
	export := &cobra.Command{
		Use:   "export RUN|EXPERIMENT --what metrics|trajectories|groups --format jsonl|csv [--out FILE]",
		Short: "Stream a run's or an experiment's metrics or trajectories",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			wh, err := tracking.ParseWhat(what)
			if err != nil {
				return usageError{fmt.Errorf("--what: %w", err)}
			}
			ef, err := tracking.ParseFormat(eformat)
			if err != nil {
				return usageError{fmt.Errorf("--format: %w", err)}
			}
			st, err := openRead(cmd, store)
			if err != nil {
				return err
			}
			defer st.Close()
			runs, err := st.FindRuns(args[0])
			if err != nil {
				return usageError{err}
			}
			ids := make([]string, len(runs))
			for i, r := range runs {
				ids[i] = r.ID
			}
			var w io.Writer = cmd.OutOrStdout()
			if eout != "" {
				fh, err := os.Create(eout)
				if err != nil {
					return err
				}
				defer fh.Close()
				w = fh
			}
			return st.Export(w, ids, wh, ef)
		},
	}
	export.Flags().StringVar(&what, "what", "metrics", "metrics, trajectories or groups")
	export.Flags().StringVar(&eformat, "format", "jsonl", "jsonl or csv")
	export.Flags().StringVar(&eout, "out", "", "output file (default standard output)")
	storeFlag(export)

	var into string
	merge := &cobra.Command{
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
	merge.Flags().StringVar(&into, "into", "", "destination store (created if needed)")

	compact := &cobra.Command{
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
	storeFlag(compact)
	return []*cobra.Command{ls, show, report, plotCmd, trees, export, merge, compact}
}

// writeStoredGroup prints a stored group as rollout sample prints a fresh
// one: the fork score shown at each fork is the entropy of the parent's
// distribution at the fork position.
func writeStoredGroup(w io.Writer, index int, g *tracking.Group) error {
	rec := search.GroupRecord{Prompt: []int{policy.BOS}, Strategy: g.Strategy,
		Usage: search.Usage{Limit: g.Budget.Limit, GeneratedTokens: g.Budget.GeneratedTokens, PrefillTokens: g.Budget.PrefillTokens, FLOPs: g.Budget.FLOPs}}
	pos := map[int]int{}
	for i, n := range g.Nodes {
		pos[n.ID] = i
		nr := search.NodeRecord{Parent: -1, ForkAt: n.ForkAt, Iteration: n.Iteration, Tokens: n.Tokens, LogProbs: n.LogProbs, Entropies: n.Entropies, Finish: search.FinishLength}
		if n.Parent >= 0 {
			p := g.Nodes[pos[n.Parent]]
			nr.Parent = pos[n.Parent]
			if n.ForkAt < len(p.Entropies) {
				nr.ForkScore, nr.HasForkScore = float64(p.Entropies[n.ForkAt]), true
			}
		}
		if k := len(n.Tokens); k > 0 && n.Tokens[k-1] == policy.EOS {
			nr.Finish = search.FinishEOS
		}
		rec.Nodes = append(rec.Nodes, nr)
	}
	for _, l := range g.Leaves {
		if i, ok := pos[l.Node]; ok {
			rec.Nodes[i].Reward, rec.Nodes[i].Reason, rec.Nodes[i].Scored = l.Reward, l.Reason, true
		}
	}
	sg, err := rec.Group()
	if err != nil {
		return fmt.Errorf("group %d: %w", index, err)
	}
	tok := policy.DefaultTokenizer()
	filtered := ""
	if g.Filtered {
		filtered = " (filtered: all rewards equal)"
	}
	fmt.Fprintf(w, "group %d%s\n", index, filtered)
	return sg.WriteText(w, func(ids []int) string {
		if len(ids) == 1 && ids[0] == policy.BOS {
			return g.Prompt
		}
		if n := len(ids); n > 0 && ids[n-1] == policy.EOS {
			ids = ids[:n-1]
		}
		s, _ := tok.Decode(ids)
		return s
	})
}
