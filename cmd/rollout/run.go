package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/experiments/config"
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

func parseShard(s string) (runner.Shard, error) {
	if s == "" {
		return runner.Shard{Index: 0, Count: 1}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return runner.Shard{}, fmt.Errorf("--shard %q: want i/n with 0 ≤ i < n", s)
	}
	return runner.Shard{Index: i, Count: n}, nil
}

func newRunCmd() *cobra.Command {
	var sets []string
	var store, cache, shard string
	var workers int
	cmd := &cobra.Command{
		Use:   "run CONFIG [--set key=value]... [--store PATH] [--workers N] [--shard i/n]",
		Short: "Run an experiment's variants × seeds into the store, then print the comparison",
		Long: `Runs every variant × seed of the config (pretraining the base policy first, or taking
it from the cache), N runs at a time, committing each step to the store. Results are
bit-identical whatever N is. An experiment already in the store is resumed: finished runs
are skipped, unfinished ones continue from their last committed step. Ctrl-C stops after
the steps in flight commit. At the end it prints the comparison table (rollout report).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := loadConfig(args[0], sets)
			if err != nil {
				return err
			}
			sh, err := parseShard(shard)
			if err != nil {
				return usageError{err}
			}
			if workers < 0 {
				return usageError{fmt.Errorf("--workers %d: want ≥ 0 (0: one per CPU)", workers)}
			}
			dir, err := cacheDir(cache)
			if err != nil {
				return err
			}
			st, err := tracking.Open(storePath(store), tracking.Options{KeepCheckpoints: 1})
			if err != nil {
				return err
			}
			defer st.Close()

			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			pr := newProgress(cmd.ErrOrStderr())
			view := newRunView(pr, len(f.Runs())/sh.Count)
			sum, runErr := runner.Run(ctx, f, st, runner.Options{
				Workers: workers, Shard: sh, CacheDir: dir, Version: tracking.BuildVersion(), Progress: view,
			})
			view.finish()
			pr.wait()
			var conflict *tracking.ConfigConflictError
			if errors.As(runErr, &conflict) {
				return usageError{fmt.Errorf("%w in %s: nothing was run; give the config a new name: to make a new experiment, or use another --store", runErr, st.Path())}
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "experiment %s in %s: %d finished, %d already done, %d stopped, %d failed\n",
				f.Name, st.Path(), sum.Finished, sum.Skipped, sum.Stopped, sum.Failed)
			if ctx.Err() != nil {
				fmt.Fprintln(out, "stopped: run the same command again to resume")
			}
			opts := reportOptions()
			opts.Baseline = f.Baseline
			if rep, err := report.Build(st, f.Name, opts); err == nil {
				rep.Write(out, report.FormatTable)
			}
			if ctx.Err() != nil {
				return interruptedError{errors.Join(context.Cause(ctx), runErr)}
			}
			return runErr
		},
	}
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a config key: dotted.key=value (repeatable)")
	cmd.Flags().StringVar(&store, "store", "", "store file (default $ROLLOUT_STORE or rollout.db)")
	cmd.Flags().StringVar(&cache, "cache", "", "base-policy cache directory (default $ROLLOUT_CACHE or the user cache dir)")
	cmd.Flags().StringVar(&shard, "shard", "", "run only slice i/n of the variant × seed grid")
	cmd.Flags().IntVar(&workers, "workers", 0, "runs at once (0: one per CPU)")
	return cmd
}

// runView shows the runner's progress: a bar for pretraining, one per
// running run and an overall one.
type runView struct {
	pr      *progress
	mu      sync.Mutex
	overall *bar
	done    int
	total   int
	bars    map[string]*bar
	steps   map[string]int
	pre     *bar
}

func newRunView(pr *progress, total int) *runView {
	return &runView{pr: pr, total: total, bars: map[string]*bar{}, steps: map[string]int{}}
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

// Start adds the run's bar, counting steps, or sampled tokens when the run
// ends at a token budget.
func (v *runView) Start(r config.Run, steps, from int) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.overall == nil {
		v.overall = v.pr.add("runs", v.total)
	}
	total := steps
	if t := r.Config.Train.TotalTokens; steps == 0 && t > 0 {
		total = -int(t) // counted in tokens
	}
	b := v.pr.add(fmt.Sprintf("%s seed %d", r.Variant, r.Seed), max(abs(total), 1))
	if total > 0 {
		b.set(from, "")
	}
	v.bars[r.ID], v.steps[r.ID] = b, total
}

func abs(x int) int { return max(x, -x) }

func (v *runView) Step(r config.Run, step int, m map[string]float64) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if b := v.bars[r.ID]; b != nil {
		note := fmt.Sprintf(" reward %.3f", m["reward/mean"])
		if acc, ok := m["eval/acc"]; ok {
			note += fmt.Sprintf(" eval/acc %.3f", acc)
		}
		done := step
		if total := v.steps[r.ID]; total < 0 {
			done = min(int(m["budget/tokens_cum"]), -total)
		} else {
			done = min(step, total)
		}
		b.set(done, note)
	}
}

func (v *runView) Done(r config.Run, err error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if b := v.bars[r.ID]; b != nil {
		if err != nil {
			b.abort()
		} else {
			b.set(abs(v.steps[r.ID]), "")
		}
		delete(v.bars, r.ID)
	}
	v.done++
	if v.overall == nil {
		v.overall = v.pr.add("runs", v.total)
	}
	v.overall.set(v.done, "")
}

func (v *runView) finish() {
	v.mu.Lock()
	defer v.mu.Unlock()
	for _, b := range v.bars {
		b.abort()
	}
}

var _ runner.Progress = (*runView)(nil)
