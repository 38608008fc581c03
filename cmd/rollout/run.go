package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/experiments/config"
	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/experiments/runner"
	"github.com/rollout-rl/rollout/tracking"
	"github.com/rollout-rl/rollout/tracking/report"
)

// storePath is --store, $ROLLOUT_STORE, or rollout.db in the working
// directory.
func storePath(flag string) string {
	if flag != "" {
		return flag
	}
	if p := os.Getenv("ROLLOUT_STORE"); p != "" {
		return p
	}
	return "rollout.db"
}

func newRunCmd() *cobra.Command {
	var a runArgs
	cmd := &cobra.Command{
		Use:   "run CONFIG [--set key=value]... [--store PATH] [--workers N] [--shard i/n|auto [--shards N]]",
		Short: "Run an experiment's variants × seeds into the store, then print the comparison",
		Long: `Runs every variant × seed of the config (pretraining the base policy first, or taking
it from the cache), N runs at a time, committing each step to the store. Results are
bit-identical whatever N is. An experiment already in the store is resumed: finished runs
are skipped, unfinished ones continue from their last committed step. It prints one line
per run (finished, stopped at step k, failed, already done, not started; resumed from
step k), then the comparison table (rollout report).

Ctrl-C (or SIGTERM) stops after the steps in flight commit: the runs are recorded as
stopped at their last step, the command to resume is printed, and the exit status is 130.
A second Ctrl-C stops at once, losing the steps in flight.

--shard i/n runs the runs i, i+n, i+2n, … of the grid (in the config's variant × seed
order); --shard auto takes i/n from a Slurm job array (SLURM_ARRAY_TASK_ID less
SLURM_ARRAY_TASK_MIN, by SLURM_ARRAY_TASK_STEP, of SLURM_ARRAY_TASK_COUNT) or a Kubernetes
Indexed Job (JOB_COMPLETION_INDEX of --shards N, or of $ROLLOUT_SHARDS). With a shard,
--store may name a directory (DIR/ is created if needed), which holds each shard in
shard-I-of-N.db, or contain {shard} and {shards}, replaced by i and n; with --shard auto
it must be one or the other. rollout merge folds the shards' stores into one.

The machine's load average is recorded beside every run (at its start and end).
--interleave runs the grid seed by seed instead of variant by variant: with as many
workers as variants, the variants of a seed run side by side in one sitting, the only
runs whose wall times a report's verdict may compare.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a.config = args[0]
			return runExperiment(cmd, a)
		},
	}
	cmd.Flags().StringArrayVar(&a.sets, "set", nil, "override a config key: dotted.key=value (repeatable)")
	cmd.Flags().StringVar(&a.store, "store", "", "store file (default $ROLLOUT_STORE or rollout.db)")
	cmd.Flags().StringVar(&a.cache, "cache", "", "base-policy cache directory (default $ROLLOUT_CACHE or the user cache dir)")
	cmd.Flags().StringVar(&a.shard.shard, "shard", "", "run only slice i/n of the variant × seed grid; auto: i/n from Slurm's or Kubernetes' variables")
	cmd.Flags().IntVar(&a.shard.shards, "shards", 0, "with --shard auto: the number of shards (else $ROLLOUT_SHARDS; Slurm says it itself)")
	cmd.Flags().IntVar(&a.workers, "workers", 0, "runs at once ("+workersHelp+")")
	cmd.Flags().BoolVar(&a.interleave, "interleave", false, "run the grid seed by seed, so that with as many workers as variants they run side by side (wall times comparable)")
	return cmd
}

// runArgs are rollout run's arguments and flags.
type runArgs struct {
	config       string
	sets         []string
	store, cache string
	shard        shardFlags
	workers      int
	interleave   bool
}

// runExperiment is rollout run: it runs the config into the store under
// interrupts (see interrupts), prints a line per run, the summary, the
// command that resumes what is left, and the comparison.
func runExperiment(cmd *cobra.Command, a runArgs) error {
	f, err := loadConfig(a.config, a.sets)
	if err != nil {
		return err
	}
	sh, err := resolveShard(a.shard, os.LookupEnv)
	if err != nil {
		return usageError{err}
	}
	path, err := shardStorePath(storePath(a.store), sh)
	if err != nil {
		return usageError{err}
	}
	if a.workers < 0 {
		return usageError{fmt.Errorf("--workers %d: want ≥ 0 (0: GOMAXPROCS)", a.workers)}
	}
	dir, err := cacheDir(a.cache)
	if err != nil {
		return err
	}
	st, err := tracking.Open(path, tracking.Options{KeepCheckpoints: 1})
	if err != nil {
		return err
	}
	defer st.Close()
	if sh.From != "" {
		fmt.Fprintf(cmd.ErrOrStderr(), "shard %d/%d (%s) into %s\n", sh.Index, sh.Count, sh.From, st.Path())
	}

	pr := newProgress(cmd.ErrOrStderr())
	ctx, stop := interrupts(cmd.Context(), func(sig os.Signal) {
		pr.log("%s: stopping once the steps in flight commit (again to stop at once, losing them)", signalName(sig))
	}, func(sig os.Signal) {
		pr.logNow("%s again: stopping at once; the steps in flight are lost", signalName(sig))
		os.Exit(exitInterrupted)
	})
	defer stop()
	view := newRunView(pr, shardSize(len(f.Runs()), sh.Shard))
	sum, runErr := runner.Run(ctx, f, st, runner.Options{
		Workers: a.workers, Shard: sh.Shard, CacheDir: dir, Version: tracking.BuildVersion(), Progress: view, Interleave: a.interleave,
	})
	view.finish()
	pr.wait()
	var conflict *tracking.ConfigConflictError
	var designConflict *tracking.DesignConflictError
	if errors.As(runErr, &conflict) || errors.As(runErr, &designConflict) {
		return usageError{fmt.Errorf("%w in %s: nothing was run; give the config a new name: to make a new experiment, or use another --store", runErr, st.Path())}
	}
	out := cmd.OutOrStdout()
	writeResults(out, sum.Runs)
	fmt.Fprintf(out, "experiment %s in %s: %s\n", f.Name, st.Path(), counts(sum))
	rerun := rerunCommand(cmd, a)
	// An interrupt's error says how to resume (on stderr); say it here only
	// when the runs stopped otherwise, so that it is printed once.
	if ctx.Err() == nil && sum.Stopped+sum.NotStarted+sum.Failed > 0 {
		fmt.Fprintf(out, "run the same command again to resume: %s\n", rerun)
	}
	opts := reportOptions()
	opts.Baseline = f.Baseline
	if rep, err := report.Build(st, f.Name, opts); err == nil {
		rep.Write(out, report.FormatTable)
	}
	if ctx.Err() != nil {
		return interruptedError{fmt.Errorf("%w: %s; run the same command again to resume: %s", context.Cause(ctx), counts(sum), rerun)}
	}
	return runErr
}

// workersHelp says what --workers 0 means in every command that runs a
// grid: the runner's default, runner.Options.Workers.
const workersHelp = "0: GOMAXPROCS, the threads Go runs on, by default the CPUs available; the runs split those threads between them"

// counts says how many runs ended how, e.g. "2 finished, 0 already done,
// 1 stopped, 1 not started, 0 failed" (not started only when some are).
func counts(sum runner.Summary) string {
	s := fmt.Sprintf("%d finished, %d already done, %d stopped", sum.Finished, sum.Skipped, sum.Stopped)
	if sum.NotStarted > 0 {
		s += fmt.Sprintf(", %d not started", sum.NotStarted)
	}
	return s + fmt.Sprintf(", %d failed", sum.Failed)
}

// shardSize is the number of runs of shard sh among n.
func shardSize(n int, sh runner.Shard) int {
	return (n - sh.Index + sh.Count - 1) / sh.Count
}

// interruptError is the cause of a context cancelled by a signal.
type interruptError struct{ sig os.Signal }

func (e interruptError) Error() string { return "interrupted by " + signalName(e.sig) }

// signalName names a signal as a shell does (SIGINT, SIGTERM).
func signalName(sig os.Signal) string {
	switch sig {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}

// interrupts returns a context that the first SIGINT or SIGTERM cancels
// (its cause an interruptError), calling first; a later one calls again,
// which should end the process. stop stops listening.
func interrupts(parent context.Context, first, again func(os.Signal)) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(parent)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case sig := <-sigs:
				if n++; n == 1 {
					cancel(interruptError{sig})
					first(sig)
				} else {
					again(sig)
				}
			case <-done:
				return
			}
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel(nil)
	}
}

// writeResults prints one line per run: how it ended in this command.
func writeResults(w io.Writer, results []runner.Result) {
	width := 0
	for _, res := range results {
		width = max(width, len(res.Run.Variant))
	}
	for _, res := range results {
		id := res.Run.ID
		if len(id) > 12 {
			id = id[:12]
		}
		fmt.Fprintf(w, "run %s %-*s seed %d: %s\n", id, width, res.Run.Variant, res.Run.Seed, resultText(res))
	}
}

// resultText says how a run ended: "finished", "stopped at step 3",
// "failed at step 2: …", "already done", "not started", followed by
// ", resumed from step k" for a run that resumed.
func resultText(res runner.Result) string {
	s := res.Outcome.String()
	switch res.Outcome {
	case runner.Stopped, runner.Failed:
		if res.Step >= 0 {
			s += fmt.Sprintf(" at step %d", res.Step)
		} else {
			s += " before step 0"
		}
	}
	if res.Resumed >= 0 {
		s += fmt.Sprintf(", resumed from step %d", res.Resumed)
	}
	if res.Outcome == runner.Failed && res.Err != nil {
		s += ": " + res.Err.Error()
	}
	return s
}

// rerunCommand is the command line that runs cmd again with the same
// config and flags (shell-quoted): it resumes what is left.
func rerunCommand(cmd *cobra.Command, a runArgs) string {
	words := []string{cmd.CommandPath(), a.config}
	flag := func(name, value string) {
		if cmd.Flags().Changed(name) {
			words = append(words, "--"+name, value)
		}
	}
	for _, s := range a.sets {
		words = append(words, "--set", s)
	}
	flag("store", a.store)
	flag("cache", a.cache)
	flag("workers", strconv.Itoa(a.workers))
	flag("shard", a.shard.shard)
	flag("shards", strconv.Itoa(a.shard.shards))
	if a.interleave {
		words = append(words, "--interleave")
	}
	for i, w := range words[1:] {
		words[i+1] = shellQuote(w)
	}
	return strings.Join(words, " ")
}

// shellQuote quotes a word for a POSIX shell when it needs it.
func shellQuote(w string) string {
	if w != "" && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-+=.,/:@%") == "" {
		return w
	}
	return "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
}

// runView shows the runner's progress: a bar for pretraining, one per
// running run and an overall one counting the runs done (finished or
// already done).
type runView struct {
	pr      *progress
	mu      sync.Mutex
	overall *bar
	done    int
	total   int
	stopped int
	failed  int
	bars    map[string]*bar
	goals   map[string]runGoal
	pre     *bar
	warned  map[string]bool // runs warned of thin baselines
}

func newRunView(pr *progress, total int) *runView {
	return &runView{pr: pr, total: total, bars: map[string]*bar{}, goals: map[string]runGoal{}}
}

func (v *runView) Prepare(what string, step, steps int, loss float64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.pre == nil {
		v.pre = v.pr.add(what, steps)
	}
	v.pre.set(step, fmt.Sprintf(" loss %.3f", loss))
	if step == steps {
		v.pre = nil
	}
}

// Start adds the run's bar, counting steps, or what the run ends at when
// it has no step count: sampled tokens (train.total_tokens) or FLOPs
// (train.total_flops), whichever it reaches first.
func (v *runView) Start(r config.Run, steps, from int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.overallBar()
	g := runGoal{total: steps}
	if c := r.Config.Train; steps == 0 && c.TotalTokens > 0 {
		g = runGoal{total: int(c.TotalTokens), metric: "budget/tokens_cum"}
	} else if steps == 0 && c.TotalFLOPs > 0 {
		g = runGoal{total: int(c.TotalFLOPs), metric: "budget/total_flops_cum"}
	}
	b := v.pr.add(fmt.Sprintf("%s seed %d", r.Variant, r.Seed), max(g.total, 1))
	if g.metric == "" {
		b.set(from, "")
	}
	v.bars[r.ID], v.goals[r.ID] = b, g
}

// runGoal is what a run's bar counts to: total steps, or total of a
// cumulative metric.
type runGoal struct {
	total  int
	metric string // empty: steps
}

func (v *runView) overallBar() *bar {
	if v.overall == nil {
		v.overall = v.pr.add("runs", max(v.total, 1))
	}
	return v.overall
}

func (v *runView) Step(r config.Run, step int, m map[string]float64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if b := v.bars[r.ID]; b != nil {
		note := fmt.Sprintf(" reward %.3f", m["reward/mean"])
		if acc, ok := m["eval/acc"]; ok {
			note += fmt.Sprintf(" eval/acc %.3f", acc)
		}
		g, done := v.goals[r.ID], step
		if g.metric != "" {
			done = int(m[g.metric])
		}
		b.set(min(done, g.total), note)
	}
	if n := m[rl.ThinBaselinesMetric]; n > 0 && !v.warned[r.ID] {
		if v.warned == nil {
			v.warned = map[string]bool{}
		}
		v.warned[r.ID] = true
		v.pr.log("warning: %s seed %d step %d: %.0f baselines from a single rollout (%s; e.g. a tree of one leaf has no intra-tree baseline): give each tree more leaves", r.Variant, r.Seed, step, n, rl.ThinBaselinesMetric)
	}
}

// Done completes a finished run's bar; a stopped or failed run's bar
// stays where it was, saying so.
func (v *runView) Done(r config.Run, res runner.Result) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if b := v.bars[r.ID]; b != nil {
		if res.Outcome == runner.Finished {
			b.set(v.goals[r.ID].total, "")
		} else {
			b.stop(resultText(runner.Result{Outcome: res.Outcome, Step: res.Step, Resumed: -1}))
		}
		delete(v.bars, r.ID)
	}
	switch res.Outcome {
	case runner.Finished, runner.Skipped:
		v.done++
	case runner.Failed:
		v.failed++
	default:
		v.stopped++
	}
	v.overallBar().set(v.done, v.overallNote())
}

func (v *runView) overallNote() string {
	note := ""
	if v.stopped > 0 {
		note += fmt.Sprintf(" %d stopped", v.stopped)
	}
	if v.failed > 0 {
		note += fmt.Sprintf(" %d failed", v.failed)
	}
	return note
}

// finish stops the bars left unfinished (by an interrupt).
func (v *runView) finish() {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, b := range v.bars {
		b.stop("stopped")
	}
	if v.pre != nil {
		v.pre.stop("stopped")
	}
	if v.overall != nil && v.done < v.total {
		v.overall.stop(fmt.Sprintf("%d of %d runs done%s", v.done, v.total, v.overallNote()))
	}
}

var _ runner.Progress = (*runView)(nil)
