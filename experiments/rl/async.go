package rl

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/team"
)

// Asynchronous rollouts with a bound on staleness (train.async k ≥ 1).
//
// Policy version v is the weights after v updates. The rollouts of step t
// (0-based) come from exactly version t−k (version 0 for the first k
// steps), whatever the timing: a sampler goroutine draws step t as soon as
// version t−k exists, while the trainer runs the updates of steps t−k to
// t−1, so sampling runs ahead of training by at most k steps. The sampler
// reads a snapshot of the version it needs — a copy of the parameters in
// one of k+1 sampling models, version v in model v mod (k+1), copied when
// step v begins, before its update changes the weights — and runs on its
// own share of the run's team (team.Team.Split: half the cores to
// sampling, half to training); with a team of one core the two phases
// take turns on it, with the same results.
//
// Everything the sampler decides — which prompts, which random streams,
// how many groups fit the budget and the evaluation marks — depends only
// on what it sampled before, never on the updates, so the groups and
// metrics are those of the schedule, bit for bit, at any timing and any
// number of workers:
//
//   - tokens: the budget and the marks count sampled tokens, which the
//     sampler knows;
//   - FLOPs (train.total_flops, eval.every_flops): the sampler counts each
//     kept group's update at its per-leaf cost (perLeafFLOPs, exact for the
//     per-leaf update and an upper bound of the packed one) instead of what
//     the update spent, so the budget and the marks are never passed; the
//     packed update's savings are left unspent (budget/unspent_flops).
//
// The run is done when the sampler's view has no room for another step
// (Done); no step is sampled past it. A step's snapshot holds, besides
// what a synchronous run's holds, the k−1 or k earlier versions the steps
// after it still sample from (versions max(0, t+1−k) to t after step t+1):
// a resumed run samples the steps after its last committed one anew, from
// the same versions, with the same bits.
//
// Metrics of an asynchronous step besides the synchronous ones:
// async/staleness (t minus the version that sampled the step's rollouts: k,
// less in the first k steps), timing_s/overlap (the seconds of the step's
// update during which the sampler sampled), timing_s/wait (the seconds the
// trainer waited for the step's rollouts), timing_s/step (the seconds from
// the end of the previous step, or from the start of this one after New or
// Restore, to the end of this one: the loop's period, evaluation and
// checkpoint included) and throughput/tokens_per_s (budget/tokens over
// timing_s/step). timing_s/gen is the sampler's time for the step.

// pipeline is the sampler of an asynchronous run and the trainer's side of
// it.
type pipeline struct {
	l *Loop
	k int
	// models are the sampling models; version v is in models[v%(k+1)].
	models []*policy.Model
	// boundCum is the per-leaf cost of the updates of every kept group the
	// trainer has trained (the sampler's view of update FLOPs).
	boundCum int64
	// own is the team the loop was given; sampling and training get a
	// share each when it has two cores or more (concurrent).
	own                   *team.Team
	sampleTeam, trainTeam *team.Team
	concurrent            bool

	// The sampler's side, built when the first step after New or Restore
	// starts it.
	sampler *Loop
	started bool
	cancel  context.CancelFunc
	out     chan drawnStep
	exited  chan struct{}

	mu        sync.Mutex
	cond      *sync.Cond
	published int  // the highest version in models (−1: none)
	quit      bool // Close or Restore stops the sampler
	busy      busyLog

	lastEnd time.Time // when the last step returned
}

// drawnStep is a step sampled ahead, with the sampler's state after it.
type drawnStep struct {
	d               drawn
	err             error
	version         int   // the policy version that sampled it
	mark, flopsMark int64 // the evaluation marks it reached
	state           samplerState
}

// samplerState is what the trainer takes over from the sampler when it
// trains a step: the counters after the step's sampling.
type samplerState struct {
	nextPrompt int
	tokensCum  int64
	bound      int64 // the per-leaf cost of the update of the step's kept groups
	passes     []promptPasses
}

// newPipeline prepares the pipeline of l (its sampling models are made as
// their versions are published) and splits the loop's team: the policy
// and the KL reference train on one half, the sampler samples on the
// other (a reward model keeps the team it was given).
func newPipeline(l *Loop) *pipeline {
	k := l.s.Train.Async
	p := &pipeline{l: l, k: k, published: -1, own: l.s.Policy.Team(), models: make([]*policy.Model, k+1)}
	p.cond = sync.NewCond(&p.mu)
	if p.own.Size() >= 2 {
		teams := p.own.Split(2)
		p.sampleTeam, p.trainTeam, p.concurrent = teams[0], teams[1], true
		l.s.Policy.SetTeam(p.trainTeam)
		if l.s.Reference != nil {
			l.s.Reference.SetTeam(p.trainTeam)
		}
	}
	return p
}

// model returns the sampling model of version v, making it on first use
// (by the trainer only: the sampler reads a version once it is published).
func (p *pipeline) model(v int) (*policy.Model, error) {
	i := v % (p.k + 1)
	if p.models[i] == nil {
		m, err := policy.NewModel(p.l.s.Policy.Config, 0)
		if err != nil {
			return nil, fmt.Errorf("rl: train.async: %w", err)
		}
		if p.concurrent {
			m.SetTeam(p.sampleTeam)
		} else {
			m.SetTeam(p.own)
		}
		p.models[i] = m
	}
	return p.models[i], nil
}

// versionOf is the policy version that samples step t.
func (p *pipeline) versionOf(t int) int { return max(0, t-p.k) }

// publish copies the policy's weights, version v, into its sampling model
// and lets the sampler use it. The model held version v−k−1, which no
// step still to sample reads.
func (p *pipeline) publish(v int) error {
	m, err := p.model(v)
	if err != nil {
		return err
	}
	src, dst := p.l.s.Policy.NamedParams(), m.NamedParams()
	for i := range src {
		copy(dst[i].Values(), src[i].Values())
	}
	p.mu.Lock()
	p.published = v
	p.mu.Unlock()
	p.cond.Broadcast()
	return nil
}

// view is a loop that sees what the sampler sees after the steps the
// trainer has trained: their counters, with the updates' FLOPs at their
// per-leaf cost. Its Done is the run's.
func (p *pipeline) view() *Loop {
	l := p.l
	return &Loop{s: l.s, groupMax: l.groupMax, flopsMax: l.flopsMax, step: l.step, nextPrompt: l.nextPrompt,
		tokensCum: l.tokensCum, flopsCum: l.flopsCum - l.trainFLOPsCum + p.boundCum}
}

// done reports whether the sampler has no room for another step.
func (p *pipeline) done() bool { return p.view().Done() }

// start builds the sampler from the trainer's state and, with a team of
// two cores or more, starts its goroutine.
func (p *pipeline) start(ctx context.Context) {
	if p.started {
		return
	}
	p.started = true
	sl := p.view()
	sl.adaptive.restore(p.l.adaptive.snapshot())
	p.sampler = sl
	p.quit = false
	if !p.concurrent {
		return
	}
	ctx, p.cancel = context.WithCancel(ctx)
	p.out = make(chan drawnStep, p.k+1)
	p.exited = make(chan struct{})
	go p.run(ctx)
}

// run samples step after step until the run is done, an error, or stop.
func (p *pipeline) run(ctx context.Context) {
	defer close(p.exited)
	defer close(p.out)
	for !p.sampler.Done() {
		v := p.versionOf(p.sampler.step)
		p.mu.Lock()
		for p.published < v && !p.quit {
			p.cond.Wait()
		}
		quit := p.quit
		p.mu.Unlock()
		if quit {
			return
		}
		ds := p.drawNext(ctx)
		p.out <- ds // never blocks: at most k+1 steps are sampled ahead
		if ds.err != nil {
			return
		}
	}
}

// drawNext samples the sampler's next step from its version.
func (p *pipeline) drawNext(ctx context.Context) drawnStep {
	sl := p.sampler
	v := p.versionOf(sl.step)
	sl.s.Policy = p.models[v%(p.k+1)]
	mark, flopsMark := sl.marksAhead()
	start := time.Now()
	p.busy.begin(start)
	d, err := sl.draw(ctx)
	p.busy.end(time.Now())
	if err != nil {
		return drawnStep{err: err}
	}
	var bound int64
	for _, sg := range d.kept {
		bound += sl.perLeafFLOPs(sg.Group)
	}
	sl.tokensCum += d.usage.GeneratedTokens
	sl.flopsCum += d.usage.FLOPs + scoreFLOPs(d.res.Groups) + bound
	sl.step++
	ds := drawnStep{d: d, version: v, state: samplerState{nextPrompt: sl.nextPrompt, tokensCum: sl.tokensCum}}
	if mark > 0 && sl.nextMark(sl.tokensCum) != mark {
		ds.mark = mark
	}
	if flopsMark > 0 && (sl.nextFLOPsMark() != flopsMark || (flopsMark == sl.s.Train.TotalFLOPs && sl.flopsDone())) {
		ds.flopsMark = flopsMark
	}
	ds.state.bound = bound
	if sl.s.Adaptive {
		ds.state.passes = sl.adaptive.snapshot()
	}
	return ds
}

// next returns the trainer's next step: from the sampler's goroutine, or
// sampled now when the phases take turns.
func (p *pipeline) next(ctx context.Context) drawnStep {
	if !p.concurrent {
		return p.drawNext(ctx)
	}
	ds, ok := <-p.out
	if !ok {
		return drawnStep{err: errors.New("rl: train.async: the sampler stopped (after an error, or with the run done)")}
	}
	return ds
}

// step runs the trainer's next step on its rollouts sampled ahead.
func (p *pipeline) step(ctx context.Context) (*StepResult, error) {
	l := p.l
	if p.done() {
		return nil, errors.New("rl: train.async: step after the run is done")
	}
	begin := time.Now()
	if p.lastEnd.IsZero() {
		p.lastEnd = begin
	}
	t := l.step
	if err := p.publish(t); err != nil {
		return nil, err
	}
	p.start(ctx)
	waitStart := time.Now()
	ds := p.next(ctx)
	if ds.err != nil {
		return nil, ds.err
	}
	wait := time.Since(waitStart)
	l.nextPrompt, l.tokensCum = ds.state.nextPrompt, ds.state.tokensCum
	p.boundCum += ds.state.bound
	if l.s.Adaptive {
		l.adaptive.restore(ds.state.passes)
	}
	updStart := time.Now()
	if err := l.train(ds.d); err != nil {
		return nil, err
	}
	updEnd := time.Now()
	l.step++
	res := ds.d.res
	res.Mark, res.FLOPsMark = ds.mark, ds.flopsMark
	l.unspentMetrics(res.Metrics)
	m := res.Metrics
	m["async/staleness"] = float64(t - ds.version)
	m["timing_s/wait"] = wait.Seconds()
	m["timing_s/overlap"] = p.busy.overlap(updStart, updEnd).Seconds()
	end := time.Now()
	period := end.Sub(p.lastEnd).Seconds()
	p.lastEnd = end
	m["timing_s/step"] = period
	if period > 0 {
		m["throughput/tokens_per_s"] = float64(ds.d.usage.GeneratedTokens) / period
	}
	return res, nil
}

// stop ends the sampler's goroutine (its step in flight finishes first)
// and forgets what it sampled ahead: the next step starts it again from
// the trainer's state.
func (p *pipeline) stop() {
	if !p.started {
		return
	}
	if p.concurrent {
		p.mu.Lock()
		p.quit = true
		p.mu.Unlock()
		p.cond.Broadcast()
		p.cancel()
		<-p.exited
	}
	p.started, p.sampler, p.out = false, nil, nil
	p.lastEnd = time.Time{}
}

// Close stops the sampling of an asynchronous run (train.async) and gives
// the policy back the team it had; the loop must not step after it. It is
// a no-op for a synchronous run and idempotent.
func (l *Loop) Close() {
	p := l.async
	if p == nil {
		return
	}
	p.stop()
	if p.concurrent {
		l.s.Policy.SetTeam(p.own)
		if l.s.Reference != nil {
			l.s.Reference.SetTeam(p.own)
		}
		p.sampleTeam.Close()
		p.trainTeam.Close()
		p.concurrent = false
	}
}

// versionWeights is a sampling model's weights in a snapshot.
type versionWeights struct {
	Version int
	Weights []byte // safetensors
}

// snapshotVersions returns the versions the steps after the trainer's
// last one still sample from: max(0, step−k) to step−1.
func (p *pipeline) snapshotVersions() ([]versionWeights, error) {
	var out []versionWeights
	for v := p.versionOf(p.l.step); v < p.l.step; v++ {
		m, err := p.model(v)
		if err != nil {
			return nil, err
		}
		w, err := policy.EncodeWeights(m)
		if err != nil {
			return nil, fmt.Errorf("snapshot: version %d: %w", v, err)
		}
		out = append(out, versionWeights{Version: v, Weights: w})
	}
	return out, nil
}

// restore stops the sampler and sets the sampling models and the FLOPs
// view from a snapshot taken after step `step`.
func (p *pipeline) restore(step int, versions []versionWeights, boundCum int64) error {
	p.stop()
	have := map[int]bool{}
	for _, vw := range versions {
		m, err := p.model(vw.Version)
		if err != nil {
			return err
		}
		if err := m.SetWeights(vw.Weights); err != nil {
			return fmt.Errorf("restore: version %d: %w", vw.Version, err)
		}
		have[vw.Version] = true
	}
	for v := p.versionOf(step); v < step; v++ {
		if !have[v] {
			return fmt.Errorf("restore: train.async %d: the snapshot after step %d lacks policy version %d (taken by a synchronous run or another train.async?)", p.k, step, v)
		}
	}
	p.published = step - 1
	p.boundCum = boundCum
	return nil
}

// busyLog records when the sampler sampled, for the overlap of an update
// with sampling.
type busyLog struct {
	mu    sync.Mutex
	spans [][2]time.Time // sampling spans; the last one's end is zero while it runs
}

func (b *busyLog) begin(at time.Time) {
	b.mu.Lock()
	b.spans = append(b.spans, [2]time.Time{at})
	b.mu.Unlock()
}

func (b *busyLog) end(at time.Time) {
	b.mu.Lock()
	b.spans[len(b.spans)-1][1] = at
	b.mu.Unlock()
}

// overlap returns how long the sampler sampled within [from, to] (a span
// still running counts up to to), and forgets the spans ended before
// from.
func (b *busyLog) overlap(from, to time.Time) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	var d time.Duration
	kept := b.spans[:0]
	for _, s := range b.spans {
		end := s[1]
		if end.IsZero() {
			end = to
		}
		lo, hi := s[0], end
		if lo.Before(from) {
			lo = from
		}
		if hi.After(to) {
			hi = to
		}
		if hi.After(lo) {
			d += hi.Sub(lo)
		}
		if s[1].IsZero() || !s[1].Before(from) {
			kept = append(kept, s)
		}
	}
	b.spans = kept
	return d
}
