// Package rl is the reinforcement-learning loop that turns rollouts into
// learning. One Step draws prompts, generates rollouts with a search
// strategy, scores them with the task's verifier, computes advantages,
// drops groups without signal (DAPO dynamic sampling) and draws more,
// reuses stale rollouts within a staleness bound, and updates the policy
// with PPO-clip — then reports metrics under the names verl and TRL use.
// With train.async the rollouts are sampled ahead, concurrently with the
// updates, from a policy version a fixed number of steps old (async.go).
//
// Everything random is a counter-based function of (seed, step, prompt,
// branch), so a run is bit-reproducible and its state (Snapshot) is the
// model, the optimizer, the buffer and a few counters.
package rl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"time"

	"github.com/nlpodyssey/spago/ag"
	"github.com/nlpodyssey/spago/mat"

	"github.com/rollout-rl/rollout/experiments/reward"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/portmath"
	"github.com/rollout-rl/rollout/search"
	"github.com/rollout-rl/rollout/search/record"
)

// Setup is what a run trains with.
type Setup struct {
	Task      task.Task
	Tokenizer *policy.Tokenizer
	// Policy is trained in place (New sets its BF16 training to
	// Train.BF16); Reference is the frozen initial policy for the KL term
	// (needed only when Train.KLCoef > 0).
	Policy    *policy.Model
	Reference *policy.Model
	Strategy  search.Strategy
	Sampling  policy.Sampling
	// Budget is the per-prompt token budget (0: none).
	Budget int64
	// MaxTokens caps a response's length in tokens, EOS included
	// (rollout.max_tokens: search.Request.MaxTokens); 0: the task's longest
	// response and EOS. Responses cut there finish with
	// search.FinishLength; Train.Overlong says how the loss treats them.
	MaxTokens int
	// EvalEveryTokens is eval.every_tokens: steps stop at its multiples of
	// sampled tokens, each reported in StepResult.Mark once reached; 0:
	// none.
	EvalEveryTokens int64
	// EvalEveryFLOPs is eval.every_flops: steps stop at its multiples of
	// total FLOPs (budget/total_flops_cum: sampling, scoring and updates),
	// each reported in StepResult.FLOPsMark once reached; 0: none.
	EvalEveryFLOPs int64
	// Int8 samples from an int8 copy of the policy.
	Int8 bool
	// Adaptive sets each train prompt's fork budget from a running
	// estimate of its pass rate (see adaptive.go).
	Adaptive bool
	// Reward mixes the verifier with a reward model and shaping terms;
	// nil rewards by the verifier alone.
	Reward *reward.Mixer
	Train  Config
	Seed   uint64
}

// Loop is a training run in progress.
type Loop struct {
	s       Setup
	trainer *policy.Trainer

	// groupMax is the longest possible cost of one group in generated
	// tokens (search.MaxGroupTokens), when a token limit needs it.
	groupMax int64
	// flopsMax is one group's worst case in FLOPs, when
	// train.total_flops or eval.every_flops needs it.
	flopsMax flopsBound

	step          int   // steps done
	nextPrompt    int   // next train-split prompt index
	tokensCum     int64 // generated tokens so far
	trainFLOPsCum int64 // update FLOPs so far
	flopsCum      int64 // sampling, scoring and update FLOPs so far
	buffer        []staleGroup
	// engine is the last step's sampler: the next step's engine takes
	// over its scratch buffers (policy.WithCachesFrom) instead of
	// allocating them again, with the same results; its KV caches are
	// freed once a step's groups are made (Engine.FreeCaches).
	engine *policy.Engine
	// adaptive is the state of rollout.adaptive.
	adaptive adaptiveState
	// async is the sampling pipeline of train.async (nil: synchronous).
	async *pipeline
}

// staleGroup is a kept group waiting to be trained on again.
type staleGroup struct {
	group   *search.Group
	prompt  task.Prompt
	version int // the policy version (step) that sampled it
}

// New starts a run from its setup.
func New(s Setup) (*Loop, error) {
	if err := s.Train.Validate(); err != nil {
		return nil, err
	}
	if s.Task == nil || s.Policy == nil || s.Strategy == nil || s.Tokenizer == nil {
		return nil, errors.New("rl: setup needs a task, a tokenizer, a policy and a strategy")
	}
	if s.Train.KLCoef > 0 && s.Reference == nil {
		return nil, errors.New("rl: train.kl_coef > 0 needs a reference policy")
	}
	if err := task.CheckFits(s.Task, s.Policy.Config.MaxSeq); err != nil {
		return nil, fmt.Errorf("rl: %w", err)
	}
	if err := s.checkMaxTokens(); err != nil {
		return nil, err
	}
	s.Policy.SetBF16Training(s.Train.BF16)
	tr, err := policy.NewTrainer(s.Policy, policy.TrainConfig{LR: s.Train.LR, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, MaxGradNorm: s.Train.MaxGradNorm})
	if err != nil {
		return nil, err
	}
	if _, err := search.NewEstimator(s.Train.Advantage); err != nil {
		return nil, err
	}
	if err := checkAdaptive(s); err != nil {
		return nil, err
	}
	l := &Loop{s: s, trainer: tr}
	if err := l.setGroupMax(); err != nil {
		return nil, err
	}
	if err := l.setFLOPsBound(); err != nil {
		return nil, err
	}
	if s.Train.Async > 0 {
		l.async = newPipeline(l)
	}
	return l, nil
}

// stepLimit returns the most tokens the next step may generate, and whether
// there is a limit: what is left of train.total_tokens and before the next
// evaluation mark, whichever is less.
func (l *Loop) stepLimit() (int64, bool) {
	var lim int64
	limited := false
	if t := l.s.Train.TotalTokens; t > 0 {
		lim, limited = t-l.tokensCum, true
	}
	if l.s.EvalEveryTokens > 0 {
		if r := l.nextMark(l.tokensCum) - l.tokensCum; !limited || r < lim {
			lim, limited = r, true
		}
	}
	return lim, limited
}

// nextMark is the evaluation mark the steps work towards after cum
// generated tokens: the first multiple of EvalEveryTokens at least one
// group's longest cost away. A closer mark is reached, since no group fits
// before it.
func (l *Loop) nextMark(cum int64) int64 {
	e := l.s.EvalEveryTokens
	return (cum + l.groupMax + e - 1) / e * e
}

// StepNum is the number of steps done.
func (l *Loop) StepNum() int { return l.step }

// TokensCum is the number of tokens generated so far.
func (l *Loop) TokensCum() int64 { return l.tokensCum }

// FLOPsCum is the number of FLOPs spent so far: sampling, scoring and
// updates (budget/total_flops_cum, recorded with train.total_flops or
// eval.every_flops; budget/score_flops is recorded when the reward mixes
// in a reward model).
func (l *Loop) FLOPsCum() int64 { return l.flopsCum }

// Done reports whether the run has reached its step count, its token
// budget (the tokens left do not cover one more group) or its FLOPs
// budget (likewise, see flopsDone).
func (l *Loop) Done() bool {
	if l.async != nil {
		return l.async.done()
	}
	c := l.s.Train
	return (c.Steps > 0 && l.step >= c.Steps) || (c.TotalTokens > 0 && c.TotalTokens-l.tokensCum < l.groupMax) || l.flopsDone()
}

// StepResult is what one step produced.
type StepResult struct {
	Step    int                // 1-based
	Metrics map[string]float64 // verl/TRL names; timing_s/* are wall times
	Groups  []ScoredGroup      // every group generated, filtered ones too
	// Mark is the multiple of Setup.EvalEveryTokens this step reached (no
	// further group fits before it, so the policy after this step is the
	// one to evaluate at it); 0 when it reached none.
	Mark int64
	// FLOPsMark is likewise the multiple of Setup.EvalEveryFLOPs this step
	// reached; 0 when it reached none.
	FLOPsMark int64
}

// ScoredGroup is one group with its prompt and whether it was filtered.
type ScoredGroup struct {
	Group    *search.Group
	Prompt   task.Prompt
	Filtered bool
	// ScoreFLOPs is what the reward model spent scoring the group's
	// leaves (reward.Mixer.ScoringFLOPs; 0 with the verifier alone).
	ScoreFLOPs int64
}

// Record returns the group's record (package record): leaf texts as the
// verifier read them, and whether it was filtered.
func (sg ScoredGroup) Record(tok *policy.Tokenizer) *record.Group {
	r := sg.Group.Record(sg.Prompt.Text, tok.ResponseText)
	r.Filtered = sg.Filtered
	return r
}

// maxTokens is the longest response in tokens (Setup.ResponseCap).
func (l *Loop) maxTokens() int { return l.s.ResponseCap() }

// ResponseCap is the longest response in tokens, EOS included: MaxTokens,
// or the task's longest response and EOS when it is 0.
func (s *Setup) ResponseCap() int {
	if s.MaxTokens > 0 {
		return s.MaxTokens
	}
	return s.Task.MaxResponseLen() + 1
}

// checkMaxTokens checks MaxTokens against the task's longest response and
// train.overlong_cache against the cap.
func (s *Setup) checkMaxTokens() error {
	if taskMax := s.Task.MaxResponseLen() + 1; s.MaxTokens < 0 || s.MaxTokens > taskMax {
		return fmt.Errorf("rl: rollout.max_tokens = %d, want in [1, %d] (task %s's longest response and EOS; 0: that maximum)", s.MaxTokens, taskMax, s.Task.Name())
	}
	if c := s.Train; c.Overlong == OverlongPenalty && c.OverlongCache > s.ResponseCap() {
		return fmt.Errorf("rl: train.overlong_cache = %d is longer than the response cap L_max = %d tokens", c.OverlongCache, s.ResponseCap())
	}
	return nil
}

// Step runs one training step: with train.async k, on the rollouts of
// policy version t−k sampled ahead (see async.go).
func (l *Loop) Step(ctx context.Context) (*StepResult, error) {
	if l.async != nil {
		return l.async.step(ctx)
	}
	mark, flopsMark := l.marksAhead()
	d, err := l.draw(ctx)
	if err != nil {
		return nil, err
	}
	l.tokensCum += d.usage.GeneratedTokens
	if err := l.train(d); err != nil {
		return nil, err
	}
	l.step++
	res := d.res
	if mark > 0 && l.nextMark(l.tokensCum) != mark {
		res.Mark = mark
	}
	// A FLOPs mark at train.total_flops is reached when the run ends there
	// (with stale reuse the budget's end may come before the mark's test
	// says no group fits: the updates ahead of buffered groups are set
	// aside for it).
	if flopsMark > 0 && (l.nextFLOPsMark() != flopsMark || (flopsMark == l.s.Train.TotalFLOPs && l.flopsDone())) {
		res.FLOPsMark = flopsMark
	}
	l.unspentMetrics(res.Metrics)
	return res, nil
}

// drawn is a step's rollouts before its update: the step's result so far
// (its groups and the sampling metrics), the kept groups and the usage of
// all.
type drawn struct {
	res   *StepResult
	kept  []ScoredGroup
	usage search.Usage
}

// marksAhead returns the evaluation marks, in tokens and in FLOPs, the
// next step works towards (0: none).
func (l *Loop) marksAhead() (mark, flopsMark int64) {
	if l.s.EvalEveryTokens > 0 {
		mark = l.nextMark(l.tokensCum)
	}
	if l.s.EvalEveryFLOPs > 0 {
		flopsMark = l.nextFLOPsMark()
	}
	return mark, flopsMark
}

// draw samples the next step's groups (sample) and sets the metrics of
// the sampling.
func (l *Loop) draw(ctx context.Context) (drawn, error) {
	res := &StepResult{Step: l.step + 1, Metrics: map[string]float64{}}
	genStart := time.Now()
	kept, usage, err := l.sample(ctx, res)
	if err != nil {
		return drawn{}, err
	}
	res.Metrics["timing_s/gen"] = time.Since(genStart).Seconds()
	if l.s.Adaptive {
		l.adaptive.metrics(res.Metrics)
	}
	return drawn{res: res, kept: kept, usage: usage}, nil
}

// scoreFLOPs is what the reward model spent scoring the groups.
func scoreFLOPs(groups []ScoredGroup) int64 {
	var f int64
	for _, sg := range groups {
		f += sg.ScoreFLOPs
	}
	return f
}

// train sets the rollout metrics of the drawn groups and updates the
// policy on the kept ones and the stale groups still in bound (policy
// version l.step trains); l.tokensCum already counts the drawn groups.
func (l *Loop) train(d drawn) error {
	c := l.s.Train
	version := l.step
	res, kept, usage := d.res, d.kept, d.usage
	m := res.Metrics
	rolloutMetrics(res.Groups, m)
	thinBaselineMetrics(res.Groups, c.Advantage, m)
	m["groups/kept"] = float64(len(kept))
	m["budget/tokens"] = float64(usage.GeneratedTokens)
	m["budget/tokens_cum"] = float64(l.tokensCum)
	m["budget/prefill_tokens"] = float64(usage.PrefillTokens)
	m["budget/flops"] = float64(usage.FLOPs)
	scoreFLOPs := scoreFLOPs(res.Groups)
	if l.s.Reward != nil && l.s.Reward.Config().Model != 0 {
		m["budget/score_flops"] = float64(scoreFLOPs)
	}

	// The training batch: fresh kept groups and stale ones still in bound.
	batch := make([]staleGroup, 0, len(kept)+len(l.buffer))
	for _, sg := range kept {
		batch = append(batch, staleGroup{group: sg.Group, prompt: sg.Prompt, version: version})
	}
	var stillValid []staleGroup
	for _, sg := range l.buffer {
		if version-sg.version <= c.MaxStaleness {
			batch = append(batch, sg)
			stillValid = append(stillValid, sg)
		}
	}
	m["buffer/stale_groups"] = float64(len(stillValid))
	if len(stillValid) > 0 {
		var age float64
		for _, sg := range stillValid {
			age += float64(version - sg.version)
		}
		m["buffer/mean_staleness"] = age / float64(len(stillValid))
	}

	updStart := time.Now()
	var trainFLOPs int64
	if len(batch) > 0 {
		var err error
		if trainFLOPs, err = l.update(batch, m); err != nil {
			return err
		}
		// The update's buffers wait for the next update through sampling,
		// scoring and evaluations: dropped instead, and collected now, so
		// that the collector's next heap goal (twice the live heap) follows
		// what those phases hold rather than the update's peak.
		if l.s.Policy.FreeBuffers() > 0 {
			runtime.GC()
		}
	}
	l.trainFLOPsCum += trainFLOPs
	m["budget/train_flops"] = float64(trainFLOPs)
	m["budget/train_flops_cum"] = float64(l.trainFLOPsCum)
	total := usage.FLOPs + scoreFLOPs + trainFLOPs
	l.flopsCum += total
	if c.TotalFLOPs > 0 || l.s.EvalEveryFLOPs > 0 {
		m["budget/total_flops"] = float64(total)
		m["budget/total_flops_cum"] = float64(l.flopsCum)
	}
	m["timing_s/update"] = time.Since(updStart).Seconds()
	if l.s.Train.BF16 {
		// Whether the BF16 products ran: on a CPU without them train.bf16
		// trains in float32.
		m["train/bf16"] = 0
		if policy.BF16Supported() {
			m["train/bf16"] = 1
		}
	}

	// Groups sampled now may be reused by the next MaxStaleness versions.
	l.buffer = l.buffer[:0]
	for _, sg := range batch {
		if version+1-sg.version <= c.MaxStaleness {
			l.buffer = append(l.buffer, sg)
		}
	}
	return nil
}

// unspentMetrics records, once the run is done, what is left of its
// token and FLOPs budgets.
func (l *Loop) unspentMetrics(m map[string]float64) {
	c := l.s.Train
	if c.TotalTokens > 0 && l.Done() {
		m["budget/unspent"] = float64(c.TotalTokens - l.tokensCum)
	}
	if c.TotalFLOPs > 0 && l.Done() {
		m["budget/unspent_flops"] = float64(c.TotalFLOPs - l.flopsCum)
	}
}

// sample generates the step's groups into res.Groups: PromptsPerStep
// prompts, then more in up to MaxResampleRounds rounds for the groups
// filtered out, each round drawing no more prompts than the step's token
// limit (stepLimit) covers at one group's longest cost each, and than its
// FLOPs limits (flopsLimits) cover at one group's worst case each. It
// returns the kept groups and the usage of all, and sets the groups/*
// metrics of the rounds.
func (l *Loop) sample(ctx context.Context, res *StepResult) ([]ScoredGroup, search.Usage, error) {
	c := l.s.Train
	limit, limited := l.stepLimit()
	flopsTotal, flopsMark := l.flopsLimits()
	var used flopsUse
	var kept []ScoredGroup
	var usage search.Usage
	rounds := 0
	filtered := 0
	for round := 0; round <= c.MaxResampleRounds; round++ {
		need := c.PromptsPerStep - len(kept)
		if need <= 0 || (round > 0 && !c.FilterGroups) {
			break
		}
		if limited {
			if need = int(min(int64(need), (limit-usage.GeneratedTokens)/l.groupMax)); need <= 0 {
				break
			}
		}
		if room, ok := l.flopsRoom(flopsTotal, flopsMark, used); ok {
			if need = int(min(int64(need), room)); need <= 0 {
				break
			}
		}
		rounds = round
		groups, err := l.generate(ctx, need)
		if err != nil {
			return nil, usage, err
		}
		for _, sg := range groups {
			g := sg.Group
			usage.GeneratedTokens += g.Usage.GeneratedTokens
			usage.PrefillTokens += g.Usage.PrefillTokens
			usage.DecodeTokens += g.Usage.DecodeTokens
			usage.FLOPs += g.Usage.FLOPs
			l.charge(&used, sg)
			if sg.Filtered {
				filtered++
			} else {
				kept = append(kept, sg)
			}
			res.Groups = append(res.Groups, sg)
		}
	}
	res.Metrics["groups/filtered"] = float64(filtered)
	res.Metrics["groups/resample_rounds"] = float64(rounds)
	return kept, usage, nil
}

// rolloutMetrics sets the reward, length, entropy, group and tree metrics
// over every generated group.
func rolloutMetrics(groups []ScoredGroup, m map[string]float64) {
	var rewards, lengths, entropies []float64
	var clipped, leaves, forks, unique, zeroStd int
	for _, sg := range groups {
		g := sg.Group
		if allEqual(g.Rewards()) {
			zeroStd++
		}
		leaves += len(g.Leaves())
		forks += g.Forks()
		unique += g.UniqueResponses()
		for _, n := range g.Leaves() {
			rewards = append(rewards, n.Reward)
			lengths = append(lengths, float64(n.Start+len(n.Tokens)))
			if n.Finish == search.FinishLength {
				clipped++
			}
			for _, e := range n.Entropies {
				entropies = append(entropies, float64(e))
			}
		}
	}
	m["reward/mean"], m["reward/std"] = meanStd(rewards)
	m["response_length/mean"], _ = meanStd(lengths)
	m["response_length/clip_ratio"] = float64(clipped) / math.Max(1, float64(len(lengths)))
	m["rollout/entropy"], _ = meanStd(entropies)
	m["groups/total"] = float64(len(groups))
	m["groups/zero_std_frac"] = float64(zeroStd) / math.Max(1, float64(len(groups)))
	m["tree/leaves"] = float64(leaves)
	m["tree/forks"] = float64(forks)
	m["tree/unique_responses"] = float64(unique)
}

// generate draws n train prompts and generates, scores and computes the
// advantages of their groups.
func (l *Loop) generate(ctx context.Context, n int) ([]ScoredGroup, error) {
	indices := make([]int, n)
	for i := range indices {
		indices[i] = l.nextPrompt
		l.nextPrompt++
	}
	prompts, err := l.s.Prompts(task.Train, indices)
	if err != nil {
		return nil, err
	}
	var forks []int
	if l.s.Adaptive {
		texts := make([]string, len(prompts))
		for i, p := range prompts {
			texts[i] = p.Text
		}
		forks = l.adaptive.plan(l.s.Strategy.(search.ForkBudget).MaxForks(), texts)
	}
	groups, engine, err := l.s.rollouts(ctx, l.step, prompts, indices, l.engine, forks)
	if err != nil {
		return nil, err
	}
	l.engine = engine
	if l.s.Adaptive {
		l.adaptive.observe(groups)
	}
	return groups, nil
}

// Score rewards every leaf of a group — by the task's verifier, or by the
// mixer's weighted terms when mix is not nil — and sets the estimator's
// advantages. A leaf's reason is always the verifier's.
func Score(t task.Task, mix *reward.Mixer, tok *policy.Tokenizer, p task.Prompt, g *search.Group, est search.Estimator) error {
	return ScoreWithPenalty(t, mix, tok.ResponseText, p, g, est, nil)
}

// ScoreWithPenalty is Score with the text of a response's tokens given by
// text (a remote policy's tokens are the server's, not tok's) and, when
// penalty is not nil, penalty(length) of each leaf's response length in
// tokens (EOS included) added to its reward (recorded as the leaf's term
// "overlong"), before the advantages: train.overlong penalty's soft
// overlong punishment.
func ScoreWithPenalty(t task.Task, mix *reward.Mixer, text func([]int) string, p task.Prompt, g *search.Group, est search.Estimator, penalty func(length int) float64) error {
	leaves := g.Leaves()
	if mix == nil {
		for _, leaf := range leaves {
			v := t.Verify(p, text(leaf.Response()))
			leaf.SetOutcome(v.Reward, string(v.Reason))
			if penalty != nil {
				leaf.Terms = []record.Term{{Name: "verifier", Value: v.Reward}}
			}
		}
	} else {
		prompts := make([]task.Prompt, len(leaves))
		texts := make([]string, len(leaves))
		for i, leaf := range leaves {
			prompts[i], texts[i] = p, text(leaf.Response())
		}
		scored, err := mix.Score(prompts, texts)
		if err != nil {
			return fmt.Errorf("rl: reward: %w", err)
		}
		for i, leaf := range leaves {
			leaf.SetOutcome(scored[i].Reward, string(scored[i].Verdict.Reason))
			leaf.Terms = scored[i].Terms.Record()
		}
	}
	if penalty != nil {
		for _, leaf := range leaves {
			pen := penalty(leaf.Start + len(leaf.Tokens))
			leaf.SetOutcome(leaf.Reward+pen, leaf.Reason)
			leaf.Terms = append(leaf.Terms, record.Term{Name: "overlong", Value: pen})
		}
	}
	if err := search.SetAdvantages(g, est); err != nil {
		return fmt.Errorf("rl: advantages: %w", err)
	}
	return nil
}

// overlongPenalty is the penalty ScoreWithPenalty adds with train.overlong: penalty
// (SoftOverlongPenalty at the setup's response cap), else nil.
func (s *Setup) overlongPenalty() func(int) float64 {
	if s.Train.Overlong != OverlongPenalty {
		return nil
	}
	maxLen, cache := s.ResponseCap(), s.Train.OverlongCache
	return func(length int) float64 { return SoftOverlongPenalty(length, maxLen, cache) }
}

// ResponseText decodes a response's tokens as the verifier reads them
// (policy.Tokenizer.ResponseText).
func ResponseText(tok *policy.Tokenizer, ids []int) string { return tok.ResponseText(ids) }

// AnswerStart maps the task's answer start for prompt p (a character
// index of the response text) to a token index, for search.Prompt:
// characters and tokens correspond one to one.
func AnswerStart(t task.Task, tok *policy.Tokenizer, p task.Prompt) func([]int) int {
	return func(resp []int) int {
		return t.AnswerStart(p, ResponseText(tok, resp))
	}
}

// seqOf is a leaf's full token sequence: prompt then response.
func seqOf(g *search.Group, leaf *search.Node) []int {
	return append(slices.Clip(g.Prompt), leaf.Response()...)
}

// update runs the PPO epochs over the batch and returns their FLOPs,
// counted as sampling FLOPs are (policy.Batch.ForwardFLOPs: matrix
// products only, every position that runs with its context): the
// forward passes without gradients for π_old, and for π_ref when
// train.kl_coef > 0, and per epoch and minibatch the forward pass with
// gradients, counted as 3× its forward FLOPs (the backward pass costs
// about twice the forward). With train.tree_packing the positions that
// run are the distinct prefixes of each pass's sequences.
func (l *Loop) update(batch []staleGroup, m map[string]float64) (flops int64, err error) {
	c := l.s.Train
	seqs := trainingSequences(batch, c.Overlong)
	if c.Overlong == OverlongFilter {
		all := 0
		for _, sg := range batch {
			all += len(sg.group.Leaves())
		}
		m["overlong/masked"] = float64(all - len(seqs))
	}
	if len(seqs) == 0 {
		return 0, nil
	}
	temp := l.s.Sampling.Temperature
	if temp == 0 {
		temp = 1
	}
	if flops, err = l.oldLogProbs(seqs, temp, m); err != nil {
		return 0, err
	}
	var sum objectiveStats
	var gradNorm float64
	updates := 0
	for epoch := 0; epoch < c.Epochs; epoch++ {
		for mb := 0; mb < c.Minibatches; mb++ {
			lo, hi := len(seqs)*mb/c.Minibatches, len(seqs)*(mb+1)/c.Minibatches
			if lo == hi {
				continue
			}
			s, gn, f, err := l.minibatchStep(seqs[lo:hi], temp)
			if err != nil {
				return 0, fmt.Errorf("rl: update: %w", err)
			}
			flops += f
			gradNorm += gn
			sum.tokens += s.tokens
			sum.pgLoss += s.pgLoss
			sum.clipped += s.clipped
			sum.ppoKL += float64(s.ppoKL * float64(s.tokens))
			sum.klRef += float64(s.klRef * float64(s.tokens))
			sum.isWeight += float64(s.isWeight * float64(s.tokens))
			updates++
		}
	}
	if sum.tokens > 0 {
		n := float64(sum.tokens)
		m["actor/pg_loss"] = sum.pgLoss / float64(updates)
		m["actor/pg_clipfrac"] = float64(sum.clipped) / n
		m["actor/ppo_kl"] = sum.ppoKL / n
		m["actor/kl_ref"] = sum.klRef / n
		m["is/ratio_mean"] = sum.isWeight / n
		m["actor/grad_norm"] = gradNorm / float64(updates)
	}
	return flops, nil
}

// trainSeq is one leaf's training sequence (prompt then response) with its
// per-response-token constants: advantages, the behaviour policy's
// log-probs, and π_old's and π_ref's (set by oldLogProbs).
type trainSeq struct {
	seq               []int
	promptLen         int
	adv, beh, old, rf []float64
	isW               []float64 // correction weights (correctionWeights), set with old
}

// trainedLeaves returns the leaves of g the loss trains on: all of them,
// but those cut at the length cap (search.FinishLength) with train.overlong
// filter (DAPO's overlong filtering).
func trainedLeaves(g *search.Group, mode Overlong) []*search.Node {
	leaves := g.Leaves()
	if mode != OverlongFilter {
		return leaves
	}
	return slices.DeleteFunc(slices.Clone(leaves), func(n *search.Node) bool { return n.Finish == search.FinishLength })
}

// trainingSequences returns one sequence per trained leaf (trainedLeaves)
// of the batch's groups.
func trainingSequences(batch []staleGroup, mode Overlong) []trainSeq {
	var seqs []trainSeq
	for _, sg := range batch {
		for _, leaf := range trainedLeaves(sg.group, mode) {
			d := trainSeq{seq: seqOf(sg.group, leaf), promptLen: len(sg.group.Prompt)}
			for _, a := range leaf.Advantages {
				d.adv = append(d.adv, a)
			}
			for _, lp := range leaf.ResponseLogProbs() {
				d.beh = append(d.beh, float64(lp))
			}
			seqs = append(seqs, d)
		}
	}
	return seqs
}

// oldLogProbs sets π_old (and π_ref) of every sequence — the policy before
// this step's updates, by the training forward pass — records the
// mismatch between π_old and the behaviour policy in m, and returns the
// passes' FLOPs.
func (l *Loop) oldLogProbs(seqs []trainSeq, temp float64, m map[string]float64) (int64, error) {
	all := make([][]int, len(seqs))
	promptLens := make([]int, len(seqs))
	for i := range seqs {
		all[i], promptLens[i] = seqs[i].seq, seqs[i].promptLen
	}
	old, flops, err := l.responseLogProbs(l.s.Policy, all, promptLens, temp)
	if err != nil {
		return 0, err
	}
	var ref [][]float64
	if l.s.Train.KLCoef > 0 {
		var f int64
		if ref, f, err = l.responseLogProbs(l.s.Reference, all, promptLens, temp); err != nil {
			return 0, err
		}
		flops += f
	}
	var absDiff, kl float64
	var ratios []float64
	var nTok int
	for i := range seqs {
		seqs[i].old = old[i]
		seqs[i].isW = correctionWeights(l.s.Train, seqs[i].old, seqs[i].beh)
		if ref != nil {
			seqs[i].rf = ref[i]
		}
		for t := range seqs[i].beh {
			d := seqs[i].old[t] - seqs[i].beh[t]
			absDiff += math.Abs(d)
			kl += seqs[i].beh[t] - seqs[i].old[t] // sample estimate of KL(behave ‖ old)
			ratios = append(ratios, portmath.ExpAMD64(d))
			nTok++
		}
	}
	if nTok > 0 {
		m["mismatch/abs_logp"] = absDiff / float64(nTok)
		m["mismatch/kl"] = kl / float64(nTok)
		slices.Sort(ratios)
		m["mismatch/ratio_p10"] = quantile(ratios, 0.1)
		m["mismatch/ratio_p50"] = quantile(ratios, 0.5)
		m["mismatch/ratio_p90"] = quantile(ratios, 0.9)
		if l.s.Int8 || l.s.Train.MaxStaleness > 0 || l.s.Train.Async > 0 || l.s.Train.Correction != "none" {
			mismatchMetrics(seqs, l.s.Train.Correction, m)
		}
	}
	return flops, nil
}

// newBatch lays out sequences for a training pass: packed as a prefix
// tree with train.tree_packing, else padded.
func (l *Loop) newBatch(model *policy.Model, seqs [][]int) (*policy.Batch, error) {
	if l.s.Train.TreePacking {
		return model.NewPackedBatch(seqs)
	}
	return model.NewBatch(seqs)
}

// minibatchStep runs the PPO-clip objective over a minibatch of sequences
// and takes one optimizer step; it returns the objective's statistics,
// the gradient norm and the FLOPs of the pass (3× its forward FLOPs).
func (l *Loop) minibatchStep(part []trainSeq, temp float64) (objectiveStats, float64, int64, error) {
	obj, loss, b, err := l.minibatchLoss(part, temp)
	if err != nil {
		return objectiveStats{}, 0, 0, err
	}
	gn, err := l.trainer.Step(loss)
	if err != nil {
		return objectiveStats{}, 0, 0, err
	}
	return obj.stats, gn, 3 * b.ForwardFLOPs(l.s.Policy.Config), nil
}

// minibatchLoss runs the forward pass and the PPO-clip objective over a
// minibatch of sequences and returns the objective, the loss to
// back-propagate and the batch. Packed (train.tree_packing), a token
// shared by several sequences has one log-probability and one entropy,
// each sequence's term reads it, and its gradient is the sum of theirs.
func (l *Loop) minibatchLoss(part []trainSeq, temp float64) (*objective, mat.Tensor, *policy.Batch, error) {
	c := l.s.Train
	toks := make([][]int, len(part))
	lens := make([]int, len(part))
	for i, d := range part {
		toks[i] = d.seq
		lens[i] = len(d.seq) - d.promptLen
	}
	b, err := l.newBatch(l.s.Policy, toks)
	if err != nil {
		return nil, nil, nil, err
	}
	logits := l.s.Policy.Logits(b)
	lp := l.s.Policy.TokenLogProbs(b, logits, temp)
	var ent mat.Tensor
	if c.EntropyCoef > 0 {
		ent = l.s.Policy.TokenEntropies(b, logits, temp)
	}
	agg := aggregationWeights(c.LossAgg, lens, l.maxTokens())
	var terms []tokenTerm
	for i, d := range part {
		for t := 0; t < lens[i]; t++ {
			tt := tokenTerm{
				row:   b.Target(i, d.promptLen+t-1),
				oldLP: d.old[t], behLP: d.beh[t], adv: d.adv[t], agg: agg[i][t],
				isW: d.isW[t],
			}
			if d.rf != nil {
				tt.refLP = d.rf[t]
			}
			terms = append(terms, tt)
		}
	}
	obj := &objective{logProbs: lp, entropies: ent, terms: terms, cfg: objectiveConfig{clipLow: c.ClipLow, clipHigh: c.ClipHigh, klCoef: c.KLCoef, entropyCoef: c.EntropyCoef}}
	return obj, ag.NewOperator(obj).Run(), b, nil
}

// responseLogProbs returns log p(response token) under model for every
// sequence's response, from the training forward pass without gradients,
// and the passes' FLOPs.
func (l *Loop) responseLogProbs(model *policy.Model, seqs [][]int, promptLens []int, temp float64) ([][]float64, int64, error) {
	out := make([][]float64, len(seqs))
	var flops int64
	const chunk = 64
	for lo := 0; lo < len(seqs); lo += chunk {
		hi := min(lo+chunk, len(seqs))
		b, err := l.newBatch(model, seqs[lo:hi])
		if err != nil {
			return nil, 0, fmt.Errorf("rl: %w", err)
		}
		flops += b.ForwardFLOPs(model.Config)
		lp := model.TokenLogProbValues(b, temp)
		for i := lo; i < hi; i++ {
			s := seqs[i]
			for t := promptLens[i]; t < len(s); t++ {
				out[i] = append(out[i], float64(lp[b.Target(i-lo, t-1)]))
			}
		}
	}
	return out, flops, nil
}

func allEqual(xs []float64) bool {
	for _, x := range xs {
		if x != xs[0] {
			return false
		}
	}
	return true
}

func meanStd(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	var s float64
	for _, x := range xs {
		s += x
	}
	mean := s / float64(len(xs))
	var v float64
	for _, x := range xs {
		v += float64((x - mean) * (x - mean))
	}
	return mean, math.Sqrt(v / float64(len(xs)))
}

// quantile of sorted xs, by linear interpolation.
func quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	pos := float64(q * float64(len(xs)-1))
	i := int(pos)
	if i+1 >= len(xs) {
		return xs[len(xs)-1]
	}
	return xs[i] + float64((pos-float64(i))*(xs[i+1]-xs[i]))
}
