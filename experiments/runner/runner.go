// Package runner runs the variants × seeds of an experiment configuration
// into a tracking store: it pretrains (or finds cached) base policies,
// runs the RL loop of every run on a pool of workers, commits each step —
// metrics, every rollout group and a checkpoint of the run's state — in one
// transaction, resumes unfinished runs from their last committed step, and,
// with train.save_final, writes a finished run's final policy beside the
// store (tracking.FinalDir).
//
// A run's results do not depend on the number of workers or their
// scheduling: every run is computed by one goroutine from its own seed,
// and what it computes in parallel (kernels) is split so that no result
// changes.
package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rollout-rl/rollout/experiments/config"
	"github.com/rollout-rl/rollout/experiments/design"
	"github.com/rollout-rl/rollout/experiments/pretrain"
	"github.com/rollout-rl/rollout/experiments/reward"
	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/team"
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
	// Interleave runs the grid seed by seed (every variant of a seed, then
	// the next seed) instead of variant by variant, so that with as many
	// workers as variants the variants of a seed run side by side in one
	// sitting: their wall times, with the load recorded beside every run,
	// can then be compared.
	Interleave bool
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
	// Done reports a run that Start reported, or that was already
	// finished, ending: res says how.
	Done(run config.Run, res Result)
}

// Outcome says how a run ended in one call of Run.
type Outcome int

// The outcomes of a run.
const (
	// Finished: the run ran to its end.
	Finished Outcome = iota
	// Skipped: the run was already finished in the store.
	Skipped
	// Stopped: ctx was cancelled; the run is recorded as stopped after its
	// last committed step and resumes from it on the next Run.
	Stopped
	// Failed: the run is recorded as failed, with the error.
	Failed
	// NotStarted: ctx was cancelled before the run began; the store is
	// left as it was.
	NotStarted
)

// String names the outcome as the command line prints it.
func (o Outcome) String() string {
	switch o {
	case Finished:
		return "finished"
	case Skipped:
		return "already done"
	case Stopped:
		return "stopped"
	case Failed:
		return "failed"
	case NotStarted:
		return "not started"
	}
	return fmt.Sprintf("outcome(%d)", int(o))
}

// Result is what Run did with one run.
type Result struct {
	Run     config.Run
	Outcome Outcome
	// Step is the run's last committed step, −1 when none is (step 0 is
	// the base policy's evaluation).
	Step int
	// Resumed is the last committed step the run resumed after, −1 when it
	// started afresh (or was skipped or not started).
	Resumed int
	// Err says why a failed run failed.
	Err error
}

// Summary is what Run did: a count per outcome and every run's result,
// in the config's order.
type Summary struct {
	Finished, Skipped, Failed, Stopped, NotStarted int
	Runs                                           []Result
}

// add counts res and appends it.
func (s *Summary) add(res Result) {
	switch res.Outcome {
	case Finished:
		s.Finished++
	case Skipped:
		s.Skipped++
	case Failed:
		s.Failed++
	case Stopped:
		s.Stopped++
	default:
		s.NotStarted++
	}
	s.Runs = append(s.Runs, res)
}

// checkpointBlob is the name of a run's state in its checkpoints.
const checkpointBlob = "state"

// tokensMarkMetric is recorded with an evaluation made at a multiple of
// eval.every_tokens: the mark, in sampled tokens (0 for the base policy's
// evaluation at step 0). The step's budget/tokens_cum is at most the mark
// and within one group's longest possible cost of it.
const tokensMarkMetric = "eval/tokens_mark"

// flopsMarkMetric is recorded with an evaluation made at a multiple of
// eval.every_flops: the mark, in total FLOPs (0 for the base policy's
// evaluation at step 0). The step's budget/total_flops_cum is at most the
// mark.
const flopsMarkMetric = "eval/flops_mark"

// Run runs the configuration's runs into the store. Cancelling ctx stops
// every run once the step it is computing commits (a step in flight is
// finished and committed, never abandoned): each is recorded as stopped
// after its last committed step and resumes from it on the next Run; runs
// not begun yet are left as they were. Pretraining a base policy or a
// reward model stops at once. It returns the first run failure, after
// every run ended.
func Run(ctx context.Context, f *config.File, store *tracking.Store, opts Options) (Summary, error) {
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	if opts.Shard.Count == 0 {
		opts.Shard = Shard{0, 1}
	}
	if opts.Shard.Index < 0 || opts.Shard.Index >= opts.Shard.Count {
		return Summary{}, fmt.Errorf("shard %d/%d: want 0 ≤ i < n", opts.Shard.Index, opts.Shard.Count)
	}
	if opts.Progress == nil {
		opts.Progress = nopProgress{}
	}
	// The experiment stands for its variants' resolved configs: the store
	// refuses, before any run is written, variants that differ from those
	// already recorded under the name (a *tracking.ConfigConflictError).
	exp := tracking.Experiment{Name: f.Name, Config: f.Text, Baseline: f.Baseline, Configs: map[string]string{}, Canonical: config.Canonical}
	for _, v := range f.Variants {
		text, err := config.Marshal(v.Config)
		if err != nil {
			return Summary{}, fmt.Errorf("variant %s: %w", v.Name, err)
		}
		exp.Variants = append(exp.Variants, v.Name)
		exp.Configs[v.Name] = string(text)
	}
	// The whole resolved design (variants, seeds, baseline, declared
	// checks) is recorded with its hash in the same transaction, before any
	// run: a designed experiment's other designs are refused (a
	// *tracking.DesignConflictError).
	rec, err := f.DesignRecord()
	if err != nil {
		return Summary{}, err
	}
	text, err := rec.Text()
	if err != nil {
		return Summary{}, err
	}
	if err := store.PutDesigned(exp, tracking.DesignRecord{Hash: design.Hash(text), Text: text, Checks: len(f.Design.Checks), Canonical: config.CanonicalDesign}); err != nil {
		return Summary{}, err
	}
	var runs []config.Run
	for i, r := range f.Runs() {
		if i%opts.Shard.Count == opts.Shard.Index {
			runs = append(runs, r)
		}
	}
	if opts.Interleave {
		slices.SortStableFunc(runs, func(a, b config.Run) int {
			return cmp.Compare(slices.Index(f.Seeds, a.Seed), slices.Index(f.Seeds, b.Seed))
		})
	}
	sh, err := prepare(ctx, runs, opts)
	if err != nil {
		if ctx.Err() == nil {
			return Summary{}, err
		}
		var sum Summary // stopped while pretraining: nothing began
		for _, r := range runs {
			sum.add(Result{Run: r, Outcome: NotStarted, Step: -1, Resumed: -1})
		}
		return sum, nil
	}
	return runAll(ctx, runs, f.Name, sh, store, opts)
}

// shared is what runs share: base policies and reward models, by key.
type shared struct {
	bases, rewardModels map[string]string
}

// prepare pretrains (or finds cached) the runs' base policies and reward
// models, one at a time: runs that share one wait for it once, and
// training uses every core by itself.
func prepare(ctx context.Context, runs []config.Run, opts Options) (shared, error) {
	sh := shared{bases: map[string]string{}, rewardModels: map[string]string{}}
	for _, r := range runs {
		key := baseKey(r.Config)
		if _, ok := sh.bases[key]; ok {
			continue
		}
		c := r.Config
		base, err := BasePolicy(ctx, c, opts.CacheDir, func(s pretrain.Step) {
			opts.Progress.Prepare("pretrain "+c.Task.Name, s.Step, s.Steps, s.Loss)
		})
		if err != nil {
			return sh, err
		}
		sh.bases[key] = base.Dir
	}
	for _, r := range runs {
		c := r.Config
		if c.Reward.Model == 0 {
			continue
		}
		key := rewardModelKey(c)
		if _, ok := sh.rewardModels[key]; ok {
			continue
		}
		dir, _, _, err := RewardModel(ctx, c, opts.CacheDir, sh.bases[baseKey(c)], func(s reward.Step) {
			opts.Progress.Prepare("reward model "+c.Task.Name, s.Step, s.Steps, s.Loss)
		})
		if err != nil {
			return sh, err
		}
		sh.rewardModels[key] = dir
	}
	return sh, nil
}

// runAll runs the runs on opts.Workers goroutines and gathers their
// results in order. The workers split the process's threads
// (GOMAXPROCS) between them: each runs its runs' passes on a team of its
// share (team.Team.Split), so the workers' passes never keep more threads
// busy than GOMAXPROCS — with as many workers as threads, or more, every
// pass runs on its worker alone.
func runAll(ctx context.Context, runs []config.Run, experiment string, sh shared, store *tracking.Store, opts Options) (Summary, error) {
	results := make([]Result, len(runs))
	for i, r := range runs {
		results[i] = Result{Run: r, Outcome: NotStarted, Step: -1, Resumed: -1}
	}
	jobs := make(chan int)
	var wg sync.WaitGroup
	teams := team.New(0).Split(min(opts.Workers, len(runs)))
	for _, tm := range teams {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer tm.Close()
			for i := range jobs {
				r := runs[i]
				if ctx.Err() != nil { // stopped before it began
					continue
				}
				res := runOne(ctx, r, experiment, sh.bases[baseKey(r.Config)], sh.rewardModels[rewardModelKey(r.Config)], store, opts, tm)
				if res.Outcome != NotStarted {
					opts.Progress.Done(r, res)
				}
				results[i] = res
			}
		}()
	}
	for i := range runs {
		if ctx.Err() != nil {
			break
		}
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	var sum Summary
	var firstErr error
	for _, res := range results {
		sum.add(res)
		if res.Err != nil && firstErr == nil {
			firstErr = fmt.Errorf("run %s (%s, seed %d): %w", res.Run.ID, res.Run.Variant, res.Run.Seed, res.Err)
		}
	}
	return sum, firstErr
}

// recordLoad records the machine's 1-minute load average beside a run
// (tracking.LoadSample), where the system gives it (/proc/loadavg).
func recordLoad(store *tracking.Store, id, event string) error {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil // no load on this system: wall times stay unusable for verdicts
	}
	f := strings.Fields(string(raw))
	if len(f) == 0 {
		return nil
	}
	load, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return nil
	}
	return store.PutLoad(id, tracking.LoadSample{At: time.Now().UTC(), Event: event, Load1: load, CPUs: runtime.NumCPU()})
}

// runOne runs (or resumes, or skips) one run and records how it ended.
// Steps are computed without ctx, so that a step in flight when ctx is
// cancelled commits; ctx is checked between steps.
func runOne(ctx context.Context, r config.Run, experiment, baseDir, rewardDir string, store *tracking.Store, opts Options, tm *team.Team) Result {
	res := Result{Run: r, Outcome: NotStarted, Step: -1, Resumed: -1}
	if ctx.Err() != nil {
		return res
	}
	c := r.Config
	text, err := config.Marshal(c)
	if err != nil {
		res.Outcome, res.Err = Failed, err
		return res
	}
	rec, err := store.BeginRun(tracking.Run{
		ID: r.ID, Experiment: experiment, Variant: r.Variant, Seed: int64(r.Seed),
		Config: string(text), Version: opts.Version, TotalSteps: c.Train.Steps,
	})
	if err != nil {
		res.Outcome, res.Err = Failed, err
		return res
	}
	res.Step = rec.LastStep
	if rec.Status == tracking.StatusFinished {
		res.Outcome = Skipped
		return res
	}
	if err := recordLoad(store, r.ID, "start"); err != nil {
		res.Outcome, res.Err = Failed, err
		return res
	}
	j := &job{cfg: r, store: store, opts: opts, elapsed: rec.Elapsed, team: tm}
	res.Outcome, res.Err = j.run(ctx, rec.LastStep, baseDir, rewardDir)
	res.Step, res.Resumed = j.lastStep, j.resumed
	if res.Outcome == Finished && c.Train.SaveFinal {
		if err := j.saveFinal(); err != nil {
			res.Outcome, res.Err = Failed, err
		}
	}
	status, msg := tracking.StatusFinished, ""
	switch res.Outcome {
	case Stopped:
		status = tracking.StatusStopped
	case Failed:
		status, msg = tracking.StatusFailed, res.Err.Error()
	}
	if err := recordLoad(store, r.ID, "end"); err != nil {
		res.Outcome, res.Err = Failed, errors.Join(res.Err, err)
		status, msg = tracking.StatusFailed, err.Error()
	}
	if err := store.EndRun(r.ID, status, msg); err != nil {
		res.Outcome, res.Err = Failed, errors.Join(res.Err, err)
	}
	return res
}

// run builds the run's loop, resumes it after lastStep (−1: from the
// start) and steps it until it is done (Finished), ctx is cancelled
// (Stopped) or a step fails (Failed).
func (j *job) run(ctx context.Context, lastStep int, baseDir, rewardDir string) (Outcome, error) {
	r, c := j.cfg, j.cfg.Config
	j.lastStep, j.resumed = lastStep, -1
	setup, err := newSetup(c, r.Seed, baseDir, rewardDir, j.team)
	if err != nil {
		return Failed, err
	}
	loop, err := rl.New(setup)
	if err != nil {
		return Failed, err
	}
	defer loop.Close()
	j.setup, j.loop = setup, loop
	if lastStep >= 0 {
		if err := j.resume(lastStep); err != nil {
			return Failed, fmt.Errorf("resume: %w", err)
		}
		j.resumed = j.lastStep
	}
	j.opts.Progress.Start(r, c.Train.Steps, loop.StepNum())
	// Steps in flight finish whatever ctx does.
	steps := context.WithoutCancel(ctx)
	if j.lastStep < 0 {
		// Step 0 is the base policy, evaluated, so curves start where RL does.
		if err := j.baseEvaluation(); err != nil {
			return Failed, err
		}
	}
	for !loop.Done() {
		if ctx.Err() != nil {
			return Stopped, nil
		}
		if err := j.step(steps); err != nil {
			return Failed, err
		}
	}
	return Finished, nil
}

// job is one run in progress.
type job struct {
	cfg   config.Run
	setup rl.Setup
	loop  *rl.Loop
	// evaluator evaluates the run's policy at step 0, at its marks and at
	// its end, reusing one evaluation's inference buffers in the next.
	evaluator rl.Evaluator
	store     *tracking.Store
	opts      Options
	team      *team.Team    // the worker's: runs the passes of the run's models
	elapsed   time.Duration // cumulative wall time at the last committed step
	// lastStep is the last committed step (−1: none); resumed the one the
	// run resumed after (−1: it started afresh).
	lastStep, resumed int
}

// resume continues a run whose last committed step is lastStep from its
// latest checkpoint, rewinding the steps after it. Step 0 (the base
// policy's evaluation) has no checkpoint: the run then resumes from its
// start.
func (j *job) resume(lastStep int) error {
	id := j.cfg.ID
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
		j.lastStep = step
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

// saveFinal writes the run's final policy beside the store
// (tracking.FinalDir), before EndRun marks the run finished and deletes its
// resume state.
func (j *job) saveFinal() error {
	return j.store.SaveFinal(j.cfg.ID, func(dir string) error {
		return policy.Save(dir, j.setup.Policy, j.setup.Tokenizer)
	})
}

// evaluate adds the held-out evaluation's metrics to m.
func (j *job) evaluate(m map[string]float64) error {
	c, s := j.cfg.Config, j.setup
	start := time.Now()
	ev, err := j.evaluator.Evaluate(s.Policy, s.Tokenizer, s.Task, c.Eval, c.Rollout.Sampling(), j.cfg.Seed)
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
	if j.cfg.Config.Eval.EveryTokens > 0 {
		m[tokensMarkMetric] = 0
	}
	if j.cfg.Config.Eval.EveryFLOPs > 0 {
		m[flopsMarkMetric] = 0
	}
	j.elapsed += time.Since(start)
	if err := j.store.CommitStep(j.cfg.ID, tracking.StepRecord{Step: 0, Metrics: m, Elapsed: j.elapsed}); err != nil {
		return err
	}
	j.lastStep = 0
	j.opts.Progress.Step(j.cfg, 0, m)
	return nil
}

// step runs one RL step, evaluates when it is due (every eval.every steps,
// at a token mark, at the end) and commits the step: metrics, every group,
// and the run's state.
func (j *job) step(ctx context.Context) error {
	c, loop := j.cfg.Config, j.loop
	start := time.Now()
	res, err := loop.Step(ctx)
	if err != nil {
		return err
	}
	if (c.Eval.Every > 0 && res.Step%c.Eval.Every == 0) || res.Mark > 0 || res.FLOPsMark > 0 || loop.Done() {
		if err := j.evaluate(res.Metrics); err != nil {
			return err
		}
		if res.Mark > 0 {
			res.Metrics[tokensMarkMetric] = float64(res.Mark)
		}
		if res.FLOPsMark > 0 {
			res.Metrics[flopsMarkMetric] = float64(res.FLOPsMark)
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
	err = j.store.CommitStep(j.cfg.ID, tracking.StepRecord{
		Step: res.Step, Tokens: loop.TokensCum(), Elapsed: j.elapsed, Metrics: res.Metrics,
		Groups: groups, Checkpoint: []tracking.Blob{{Name: checkpointBlob, Data: state}},
	})
	if err != nil {
		return err
	}
	j.lastStep = res.Step
	j.opts.Progress.Step(j.cfg, res.Step, res.Metrics)
	return nil
}

type nopProgress struct{}

func (nopProgress) Prepare(string, int, int, float64)        {}
func (nopProgress) Start(config.Run, int, int)               {}
func (nopProgress) Step(config.Run, int, map[string]float64) {}
func (nopProgress) Done(config.Run, Result)                  {}
