package rl

import (
	"fmt"

	"github.com/rollout-rl/rollout/search"
)

// This file is the budget in total compute, train.total_flops, and the
// evaluation marks in FLOPs, eval.every_flops. A run's FLOPs are counted as
// they run, matrix products only (policy.Config.ForwardFLOPs): sampling
// (search.Usage.FLOPs), the reward model's scoring (reward.Mixer.
// ScoringFLOPs) and the updates (budget/train_flops). Like the token budget,
// a step draws a group only if its worst case still fits, so no run exceeds
// the budget or goes past a mark:
//
//   - one group's worst case (flopsBound) is its sampling bound (the
//     prompt's prefill and one feed per generated token of
//     search.MaxGroupTokens, each at the longest context), its scoring bound
//     and its training bound (every leaf's sequence at the longest length,
//     every pass of an update), trained 1 + max_staleness times for the
//     budget and once for a mark;
//   - a group already drawn is charged exactly: its sampling and scoring as
//     counted, and for each update still ahead of it the per-leaf cost of
//     its trained leaves (perLeafFLOPs), which bounds what the packed
//     update runs too.

// flopsBound is one group's worst case in FLOPs.
type flopsBound struct {
	sample, score, update int64 // sampling and scoring, and one update's training
}

// mark is the worst case of a group before an evaluation mark: sampled,
// scored and trained once.
func (b flopsBound) mark() int64 { return b.sample + b.score + b.update }

// total is the worst case of a group for the budget: sampled, scored and
// trained once and up to staleness times more.
func (b flopsBound) total(staleness int) int64 {
	return b.sample + b.score + int64(1+staleness)*b.update
}

// setFLOPsBound computes a group's worst case when train.total_flops or
// eval.every_flops needs it, and checks that a group (and, for the marks,
// the stale groups a step may train besides) fits in each.
func (l *Loop) setFLOPsBound() error {
	c, every := l.s.Train, l.s.EvalEveryFLOPs
	if c.TotalFLOPs < 0 {
		return fmt.Errorf("rl: train.total_flops = %d, want ≥ 0", c.TotalFLOPs)
	}
	if every < 0 {
		return fmt.Errorf("rl: eval.every_flops = %d, want ≥ 0", every)
	}
	if c.TotalFLOPs == 0 && every == 0 {
		return nil
	}
	mt := l.maxTokens()
	gen, err := search.MaxGroupTokens(l.s.Strategy, mt, l.s.Budget)
	if err != nil {
		return fmt.Errorf("rl: train.total_flops and eval.every_flops need a bound on a group's cost: %w", err)
	}
	leaves, err := MaxGroupLeaves(l.s.Strategy, mt)
	if err != nil {
		return fmt.Errorf("rl: train.total_flops and eval.every_flops need a bound on a group's cost: %w", err)
	}
	cfg := l.s.Policy.Config
	prompt := l.s.Task.MaxPromptLen() + 2 // BOS prompt SEP
	var b flopsBound
	for ctx := 1; ctx <= prompt; ctx++ {
		b.sample += cfg.ForwardFLOPs(ctx)
	}
	b.sample += gen * cfg.ForwardFLOPs(prompt+mt-1)
	b.score = leaves * l.s.Reward.MaxScoringFLOPs(l.s.Task.MaxPromptLen(), mt)
	b.update = leaves * l.seqTrainFLOPs(prompt+mt)
	l.flopsMax = b
	if t := c.TotalFLOPs; t > 0 && t < b.total(c.MaxStaleness) {
		return fmt.Errorf("rl: train.total_flops = %d is less than one group's worst case, %d FLOPs (strategy %s, responses up to %d tokens, prompts up to %d, trained up to %d times): no step could fit",
			t, b.total(c.MaxStaleness), l.s.Strategy.Name(), mt, prompt, 1+c.MaxStaleness)
	}
	// A step trains at most max_staleness·prompts_per_step stale groups
	// besides its new ones: the marks are at least that and one group
	// apart, so that none is skipped.
	if stale := int64(c.MaxStaleness*c.PromptsPerStep) * b.update; every > 0 && every < stale+b.mark() {
		return fmt.Errorf("rl: eval.every_flops = %d is less than one group's worst case and the stale groups a step may train, %d FLOPs (strategy %s, responses up to %d tokens, train.max_staleness %d): marks would be skipped",
			every, stale+b.mark(), l.s.Strategy.Name(), mt, c.MaxStaleness)
	}
	return nil
}

// MaxGroupLeaves bounds the leaves (responses) of a group of st with
// responses of at most maxTokens tokens: the number of responses and
// branches whose longest possible length grows with the cap, which is
// search.MaxGroupTokens at maxTokens less at maxTokens − 1 (that bound is
// the sum of those lengths, each the cap or the cap less a fixed offset).
func MaxGroupLeaves(st search.Strategy, maxTokens int) (int64, error) {
	at, err := search.MaxGroupTokens(st, maxTokens, 0)
	if err != nil || maxTokens == 1 {
		return at, err // at a cap of one token, one token per response
	}
	below, err := search.MaxGroupTokens(st, maxTokens-1, 0)
	return at - below, err
}

// passes is the number of forward passes an update runs over a sequence,
// counting a pass with gradients as three (see update).
func (l *Loop) passes() int64 {
	return l.s.Train.ScoringPasses() + l.s.Train.GradientPasses()
}

// ScoringPasses is the number of forward passes without gradients an
// update runs over a sequence before its optimizer steps: π_old's, and
// π_ref's when kl_coef > 0 (see Loop.update).
func (c Config) ScoringPasses() int64 {
	if c.KLCoef > 0 {
		return 2
	}
	return 1
}

// GradientPasses is what an update's passes with gradients cost over a
// sequence in forward passes: three per epoch (the backward pass costs
// about twice the forward).
func (c Config) GradientPasses() int64 { return int64(3 * c.Epochs) }

// seqTrainFLOPs is the FLOPs an update spends on one sequence of n tokens
// trained alone: every position at its context, every pass.
func (l *Loop) seqTrainFLOPs(n int) int64 {
	cfg := l.s.Policy.Config
	var f int64
	for ctx := 1; ctx <= n; ctx++ {
		f += cfg.ForwardFLOPs(ctx)
	}
	return l.passes() * f
}

// perLeafFLOPs is what one update spends on g's trained leaves each
// trained alone (the per-leaf pass, exactly): an upper bound of what the
// packed update spends on them, which never runs a position twice within
// a pass.
func (l *Loop) perLeafFLOPs(g *search.Group) int64 {
	var f int64
	for _, leaf := range trainedLeaves(g, l.s.Train.Overlong) {
		f += l.seqTrainFLOPs(len(g.Prompt) + leaf.Start + len(leaf.Tokens))
	}
	return f
}

// staleFLOPs returns, for the buffered groups the step of the given
// version trains, the per-leaf cost of that step's updates of them (now)
// and of all their updates from that step on (ahead).
func (l *Loop) staleFLOPs(version int) (now, ahead int64) {
	s := l.s.Train.MaxStaleness
	for _, sg := range l.buffer {
		if left := sg.version + s - version + 1; left > 0 {
			f := l.perLeafFLOPs(sg.group)
			now += f
			ahead += int64(left) * f
		}
	}
	return now, ahead
}

// flopsLimits returns what the step of the current version may spend on
// new groups: before train.total_flops with the updates ahead of the
// buffered groups set aside (total), and before the next FLOPs mark with
// this step's updates of them set aside (mark); each −1 when there is no
// such limit.
func (l *Loop) flopsLimits() (total, mark int64) {
	total, mark = -1, -1
	c := l.s.Train
	if c.TotalFLOPs == 0 && l.s.EvalEveryFLOPs == 0 {
		return total, mark
	}
	now, ahead := l.staleFLOPs(l.step)
	if c.TotalFLOPs > 0 {
		total = c.TotalFLOPs - l.flopsCum - ahead
	}
	if l.s.EvalEveryFLOPs > 0 {
		mark = l.nextFLOPsMark() - l.flopsCum - now
	}
	return total, mark
}

// nextFLOPsMark is the FLOPs mark the next step works towards: the first
// multiple of eval.every_flops that leaves room, after that step's updates
// of the buffered groups, for one group's worst case. A closer mark is
// reached, since no group fits before it.
func (l *Loop) nextFLOPsMark() int64 {
	e := l.s.EvalEveryFLOPs
	now, _ := l.staleFLOPs(l.step)
	return (l.flopsCum + now + l.flopsMax.mark() + e - 1) / e * e
}

// flopsDone reports whether train.total_flops has no room for one more
// group after the updates ahead of the buffered groups.
func (l *Loop) flopsDone() bool {
	total, _ := l.flopsLimits()
	return l.s.Train.TotalFLOPs > 0 && total < l.flopsMax.total(l.s.Train.MaxStaleness)
}

// flopsRoom returns how many more groups a round of the step may draw
// within the FLOPs limits (flopsLimits) after the groups drawn so far,
// charged in used, and whether there is a limit at all.
func (l *Loop) flopsRoom(total, mark int64, used flopsUse) (int64, bool) {
	room, limited := int64(0), false
	if total >= 0 {
		room, limited = (total-used.total)/l.flopsMax.total(l.s.Train.MaxStaleness), true
	}
	if mark >= 0 {
		if r := (mark - used.mark) / l.flopsMax.mark(); !limited || r < room {
			room, limited = r, true
		}
	}
	return max(room, 0), limited
}

// flopsUse is what a step's groups drawn so far count against the FLOPs
// limits: their sampling and scoring, and for the kept ones the per-leaf
// cost of their updates ahead (every one for total, this step's for
// mark).
type flopsUse struct{ total, mark int64 }

// charge adds a group drawn this step to u.
func (l *Loop) charge(u *flopsUse, sg ScoredGroup) {
	f := sg.Group.Usage.FLOPs + sg.ScoreFLOPs
	u.total += f
	u.mark += f
	if !sg.Filtered {
		t := l.perLeafFLOPs(sg.Group)
		u.total += int64(1+l.s.Train.MaxStaleness) * t
		u.mark += t
	}
}
