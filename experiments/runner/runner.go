// Package runner runs the variants × seeds of an experiment configuration
// into a tracking store: it pretrains (or finds cached) base policies,
// runs the RL loop of every run on a pool of workers, commits each step —
// metrics, every rollout group and a checkpoint of the run's state — in one
// transaction, and resumes unfinished runs from their last committed step.
//
// A run's results do not depend on the number of workers or their
// scheduling: every run is computed by one goroutine from its own seed,
// and what it computes in parallel (kernels) is split so that no result
// changes.
package runner

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/rollout-rl/rollout/experiments/config"
	"github.com/rollout-rl/rollout/experiments/pretrain"
	"github.com/rollout-rl/rollout/experiments/reward"
	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/search/record"
	"github.com/rollout-rl/rollout/tracking"
)

// Options configure Run.
type Options struct {
	// Workers is the number of runs computed at once; 0 means the number
	// of CPUs.
	Workers int
	// Shard selects the runs i with i mod Count == Index (in the config's
	// variant × seed order); the zero value runs all.
	Shard Shard
	// CacheDir holds the pretrained base policies.
	CacheDir string
	// Version is recorded with every run (the program's module version).
	Version string
	// Progress receives progress events; nil ignores them.
	Progress Progress
}

// Shard is the slice i/n of a grid.
type Shard struct{ Index, Count int }

// Progress receives the runner's events. Its methods may be called from
// several goroutines at once.
type Progress interface {
	// Prepare reports a step of making what runs share: a base policy's
	// pretraining or a reward model's training.
	Prepare(what string, step, steps int, loss float64)
	// Start reports a run starting (or resuming after step from).
	Start(run config.Run, steps, from int)
	// Step reports a committed step.
	Step(run config.Run, step int, metrics map[string]float64)
	// Done reports a run that ended, stopped (ctx) or failed.
	Done(run config.Run, err error)
}

// Summary counts what Run did.
type Summary struct {
	Finished, Skipped, Failed, Stopped int
}

// checkpointBlob is the name of a run's state in its checkpoints.
const checkpointBlob = "state"

// tokensMarkMetric is recorded with an evaluation made at a multiple of
// eval.every_tokens: the mark, in sampled tokens (0 for the base policy's
// evaluation at step 0). The step's budget/tokens_cum is at most the mark
// and within one group's longest possible cost of it.
const tokensMarkMetric = "eval/tokens_mark"

// Run runs the configuration's runs into the store. Cancelling ctx stops
// every run after the step it is computing commits; stopped runs resume on
// the next Run. It returns the first run failure, after every run ended.
func Run(ctx context.Context, f *config.File, store *tracking.Store, opts Options) (Summary, error) {
	var sum Summary
	if opts.Workers <= 0 {
		opts.Workers = runtime.NumCPU()
	}
	if opts.Shard.Count == 0 {
		opts.Shard = Shard{0, 1}
	}
	if opts.Shard.Index < 0 || opts.Shard.Index >= opts.Shard.Count {
		return sum, fmt.Errorf("shard %d/%d: want 0 ≤ i < n", opts.Shard.Index, opts.Shard.Count)
	}
	if opts.Progress == nil {
		opts.Progress = nopProgress{}
	}
	// The experiment stands for its variants' resolved configs: the store
	// refuses, before any run is written, variants that differ from those
	// already recorded under the name (a *tracking.ConfigConflictError).
	exp := tracking.Experiment{Name: f.Name, Config: f.Text, Baseline: f.Baseline, Configs: map[string]string{}}
	for _, v := range f.Variants {
		text, err := config.Marshal(v.Config)
		if err != nil {
			return sum, fmt.Errorf("variant %s: %w", v.Name, err)
		}
		exp.Variants = append(exp.Variants, v.Name)
		exp.Configs[v.Name] = string(text)
	}
	if err := store.PutExperiment(exp); err != nil {
		return sum, err
	}
	var runs []config.Run
	for i, r := range f.Runs() {
		if i%opts.Shard.Count == opts.Shard.Index {
			runs = append(runs, r)
		}
	}

	// Base policies first, one at a time: runs that share one wait for it
	// once, and pretraining uses every core by itself.
	bases := map[string]string{}
	for _, r := range runs {
		key := baseKey(r.Config)
		if _, ok := bases[key]; ok {
			continue
		}
		c := r.Config
		base, err := BasePolicy(ctx, c, opts.CacheDir, func(s pretrain.Step) {
			opts.Progress.Prepare("pretrain "+c.Task.Name, s.Step, s.Steps, s.Loss)
		})
		if err != nil {
			return sum, err
		}
		bases[key] = base.Dir
	}
	rewardModels := map[string]string{}
	for _, r := range runs {
		c := r.Config
		if c.Reward.Model == 0 {
			continue
		}
		key := rewardModelKey(c)
		if _, ok := rewardModels[key]; ok {
			continue
		}
		dir, _, _, err := RewardModel(ctx, c, opts.CacheDir, bases[baseKey(c)], func(s reward.Step) {
			opts.Progress.Prepare("reward model "+c.Task.Name, s.Step, s.Steps, s.Loss)
		})
		if err != nil {
			return sum, err
		}
		rewardModels[key] = dir
	}

	var mu sync.Mutex
	var firstErr error
	jobs := make(chan config.Run)
	var wg sync.WaitGroup
	for w := 0; w < min(opts.Workers, len(runs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range jobs {
				if ctx.Err() != nil { // stopped before it began
					mu.Lock()
					sum.Stopped++
					mu.Unlock()
					continue
				}
				rmDir := rewardModels[rewardModelKey(r.Config)]
				outcome, err := runOne(ctx, r, f.Name, bases[baseKey(r.Config)], rmDir, store, opts)
				opts.Progress.Done(r, err)
				mu.Lock()
				switch {
				case err != nil:
					sum.Failed++
					if firstErr == nil {
						firstErr = fmt.Errorf("run %s (%s, seed %d): %w", r.ID, r.Variant, r.Seed, err)
					}
				case outcome == skipped:
					sum.Skipped++
				case outcome == stopped:
					sum.Stopped++
				default:
					sum.Finished++
				}
				mu.Unlock()
			}
		}()
	}
	for _, r := range runs {
		if ctx.Err() != nil {
			break
		}
		jobs <- r
	}
	close(jobs)
	wg.Wait()
	return sum, firstErr
}

type outcome int

const (
	finished outcome = iota
	skipped
	stopped
)

// runOne runs (or resumes, or skips) one run.
func runOne(ctx context.Context, r config.Run, experiment, baseDir, rewardDir string, store *tracking.Store, opts Options) (outcome, error) {
	c := r.Config
	text, err := config.Marshal(c)
	if err != nil {
		return finished, err
	}
	rec, err := store.BeginRun(tracking.Run{
		ID: r.ID, Experiment: experiment, Variant: r.Variant, Seed: int64(r.Seed),
		Config: string(text), Version: opts.Version, TotalSteps: c.Train.Steps,
	})
	if err != nil {
		return finished, err
	}
	if rec.Status == tracking.StatusFinished {
		return skipped, nil
	}
	fail := func(err error) (outcome, error) {
		if endErr := store.EndRun(r.ID, tracking.StatusFailed, err.Error()); endErr != nil {
			err = errors.Join(err, endErr)
		}
		return finished, err
	}
	setup, err := NewSetup(c, r.Seed, baseDir, rewardDir)
	if err != nil {
		return fail(err)
	}
	loop, err := rl.New(setup)
	if err != nil {
		return fail(err)
	}
	j := &job{run: r, setup: setup, loop: loop, store: store, opts: opts, elapsed: rec.Elapsed}
	if rec.LastStep >= 0 {
		if err := j.resume(rec.LastStep); err != nil {
			return fail(fmt.Errorf("resume: %w", err))
		}
	}
	opts.Progress.Start(r, c.Train.Steps, loop.StepNum())
	if rec.LastStep < 0 {
		// Step 0 is the base policy, evaluated, so curves start where RL does.
		if err := j.baseEvaluation(); err != nil {
			return fail(err)
		}
	}
	for !loop.Done() {
		if ctx.Err() != nil {
			return stopped, nil
		}
		if err := j.step(ctx); err != nil {
			if ctx.Err() != nil {
				return stopped, nil
			}
			return fail(err)
		}
	}
	if err := store.EndRun(r.ID, tracking.StatusFinished, ""); err != nil {
		return finished, err
	}
	return finished, nil
}

// job is one run in progress.
type job struct {
	run     config.Run
	setup   rl.Setup
	loop    *rl.Loop
	store   *tracking.Store
	opts    Options
	elapsed time.Duration // cumulative wall time at the last committed step
}

// resume continues a run whose last committed step is lastStep from its
// latest checkpoint, rewinding the steps after it. Step 0 (the base
// policy's evaluation) has no checkpoint: the run then resumes from its
// start.
func (j *job) resume(lastStep int) error {
	id := j.run.ID
	step, blobs, err := j.store.LatestCheckpoint(id)
	if errors.Is(err, tracking.ErrNotFound) {
		step, err = 0, nil
	}
	if err != nil {
		return err
	}
	if step < lastStep {
		if err := j.store.RewindRun(id, step); err != nil {
			return err
		}
	}
	var state []byte
	for _, b := range blobs {
		if b.Name == checkpointBlob {
			state = b.Data
		}
	}
	if step > 0 {
		if state == nil {
			return fmt.Errorf("checkpoint of step %d has no %q blob", step, checkpointBlob)
		}
		if err := j.loop.Restore(state); err != nil {
			return err
		}
	}
	if m, err := j.store.LastMetrics(id); err == nil {
		j.elapsed = m.Elapsed
	}
	return nil
}

// evaluate adds the held-out evaluation's metrics to m.
func (j *job) evaluate(m map[string]float64) error {
	c, s := j.run.Config, j.setup
	start := time.Now()
	ev, err := rl.Evaluate(s.Policy, s.Tokenizer, s.Task, c.Eval, c.Rollout.Sampling(), j.run.Seed)
	if err != nil {
		return err
	}
	for k, v := range ev.Metrics() {
		m[k] = v
	}
	m["timing_s/eval"] = time.Since(start).Seconds()
	return nil
}

// baseEvaluation commits step 0: the base policy's evaluation.
func (j *job) baseEvaluation() error {
	start := time.Now()
	m := map[string]float64{}
	if err := j.evaluate(m); err != nil {
		return err
	}
	if j.run.Config.Eval.EveryTokens > 0 {
		m[tokensMarkMetric] = 0
	}
	j.elapsed += time.Since(start)
	if err := j.store.CommitStep(j.run.ID, tracking.StepRecord{Step: 0, Metrics: m, Elapsed: j.elapsed}); err != nil {
		return err
	}
	j.opts.Progress.Step(j.run, 0, m)
	return nil
}

// step runs one RL step, evaluates when it is due (every eval.every steps,
// at a token mark, at the end) and commits the step: metrics, every group,
// and the run's state.
func (j *job) step(ctx context.Context) error {
	c, loop := j.run.Config, j.loop
	start := time.Now()
	res, err := loop.Step(ctx)
	if err != nil {
		return err
	}
	if (c.Eval.Every > 0 && res.Step%c.Eval.Every == 0) || res.Mark > 0 || loop.Done() {
		if err := j.evaluate(res.Metrics); err != nil {
			return err
		}
		if res.Mark > 0 {
			res.Metrics[tokensMarkMetric] = float64(res.Mark)
		}
	}
	state, err := loop.Snapshot()
	if err != nil {
		return err
	}
	groups := make([]record.Group, len(res.Groups))
	for i, sg := range res.Groups {
		groups[i] = *sg.Record(j.setup.Tokenizer)
	}
	j.elapsed += time.Since(start)
	err = j.store.CommitStep(j.run.ID, tracking.StepRecord{
		Step: res.Step, Tokens: loop.TokensCum(), Elapsed: j.elapsed, Metrics: res.Metrics,
		Groups: groups, Checkpoint: []tracking.Blob{{Name: checkpointBlob, Data: state}},
	})
	if err != nil {
		return err
	}
	j.opts.Progress.Step(j.run, res.Step, res.Metrics)
	return nil
}

type nopProgress struct{}

func (nopProgress) Prepare(string, int, int, float64)        {}
func (nopProgress) Start(config.Run, int, int)               {}
func (nopProgress) Step(config.Run, int, map[string]float64) {}
func (nopProgress) Done(config.Run, error)                   {}
