// Package rmquality measures test-time compute as a curve over
// reward-model quality: it trains a reward model to order one prompt's
// candidates (reward.TrainRanking) on the base policy's own samples,
// keeps checkpoints along the training with their within-prompt AUC on
// held-out prompts, and measures best-of-N accuracy at answer time
// (rl.MeasureTTC) with each checkpoint as the selector, so that a reader
// sees how best-of-N depends on how well the reward model ranks.
package rmquality

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/rollout-rl/rollout/experiments/reward"
	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/tracking/report/stats"
)

// Config is one measurement: the data, the training with its checkpoints
// and the answer-time sweep.
type Config struct {
	TrainPrompts   int // train-split prompts whose samples the model trains on
	HeldOutPrompts int // eval-split prompts of the within-prompt AUC
	Samples        int // candidates sampled per prompt (both sets)
	// NearMisses is the number of near misses (reward.NearMisses) drawn
	// from each right training candidate: hard negatives beside the
	// policy's own wrong samples; 0: none.
	NearMisses int
	// Scoring is how the reward model scores a response: a head on EOS
	// (the zero value) or the body's likelihood of it.
	Scoring reward.Scoring
	// Validation takes the held-out prompts from the train split, from
	// prompt HeldOutFirst on (past those trained on), instead of the eval
	// split's first ones: a pilot validates there and leaves the eval
	// split to the measurement that is reported.
	Validation   bool
	HeldOutFirst int
	Rank         reward.RankConfig // the training
	Every        int               // steps between checkpoints (and step 0, the untrained head)
	// Marks, when not empty, are the steps of the checkpoints instead of
	// every Every steps (step 0 and the last step are always kept), fixed
	// before the training so that no checkpoint is picked by its result.
	Marks []int
	TTC   rl.TTCConfig // answer time: prompts, Ns and sampling; Scorer and Seed are set per checkpoint and seed
	Seeds []uint64     // one answer-time sweep per seed
	// Measure lists the checkpoint steps whose best-of-N is measured;
	// empty: every checkpoint.
	Measure []int
	// Evaluate skips training: the checkpoints are those already under
	// the directory (step-NNNNN/, as a run with the same settings left
	// them), measured afresh.
	Evaluate bool
}

// Validate reports a setting out of range.
func (c Config) Validate() error {
	switch {
	case c.TrainPrompts < 1 || c.HeldOutPrompts < 1 || c.Samples < 2:
		return fmt.Errorf("rm quality: %d train prompts, %d held-out prompts, %d samples each: want ≥ 1, ≥ 1, ≥ 2", c.TrainPrompts, c.HeldOutPrompts, c.Samples)
	case c.NearMisses < 0:
		return fmt.Errorf("rm quality: %d near misses a right candidate, want ≥ 0", c.NearMisses)
	case c.HeldOutFirst < 0 || c.Validation && c.HeldOutFirst < c.TrainPrompts:
		return fmt.Errorf("rm quality: held-out train-split prompts from %d overlap the %d trained on", c.HeldOutFirst, c.TrainPrompts)
	case slices.ContainsFunc(c.Marks, func(m int) bool { return m < 0 }):
		return fmt.Errorf("rm quality: checkpoint marks %v: want steps ≥ 0", c.Marks)
	case c.Scoring == reward.LikelihoodScore && c.Rank.BCE > 0:
		return fmt.Errorf("rm quality: bce %g with the likelihood scoring: a log-likelihood is not a logit, want 0", c.Rank.BCE)
	case c.Every < 1:
		return fmt.Errorf("rm quality: checkpoints every %d steps, want ≥ 1", c.Every)
	case len(c.Seeds) == 0:
		return fmt.Errorf("rm quality: no seeds")
	}
	return c.Rank.Defaults().Validate()
}

// mark reports whether a checkpoint is kept after step.
func (c Config) mark(step int) bool {
	if len(c.Marks) > 0 {
		return slices.Contains(c.Marks, step)
	}
	return step%c.Every == 0
}

// heldOutSplit is the split of the held-out prompts.
func (c Config) heldOutSplit() task.Split {
	if c.Validation {
		return task.Train
	}
	return task.Eval
}

// Checkpoint is the reward model at one step of its training.
type Checkpoint struct {
	Step    int
	Dir     string
	AUC     float64 // within-prompt AUC on the held-out prompts
	Prompts int     // held-out prompts with right and wrong candidates
	Loss    float64 // pairwise loss of the last training step before it (0 at step 0)
	// TTC is the answer-time sweep per seed (Seeds' order), best-of-N by
	// this checkpoint.
	TTC [][]rl.TTCPoint
}

// Result is a measurement.
type Result struct {
	Config      Config
	Train       reward.CollectStats
	HeldOut     reward.CollectStats
	NearMisses  int // near misses added to the training data
	Checkpoints []Checkpoint
}

// Run samples the data from base, trains the ranking reward model (a
// copy of base with a zero head) with a checkpoint under dir at each of
// cfg's marks, and measures each checkpoint; log, if not nil, gets
// progress lines.
func Run(ctx context.Context, base *policy.Model, tok *policy.Tokenizer, t task.Task, dir string, cfg Config, log func(string)) (Result, error) {
	err := cfg.Validate()
	if err != nil {
		return Result{}, err
	}
	if log == nil {
		log = func(string) {}
	}
	res := Result{Config: cfg}
	var train []reward.Group
	if !cfg.Evaluate {
		if train, res.Train, res.NearMisses, err = reward.RankingData(ctx, base, tok, t, cfg.TrainPrompts, cfg.Samples, cfg.NearMisses, cfg.Rank.Seed); err != nil {
			return Result{}, err
		}
	}
	held, hst, err := reward.Collect(ctx, base, tok, t, reward.CollectConfig{Split: cfg.heldOutSplit(), First: cfg.HeldOutFirst, Prompts: cfg.HeldOutPrompts, Samples: cfg.Samples})
	if err != nil {
		return Result{}, err
	}
	res.HeldOut = hst
	heldGroups := reward.Groups(held)
	log(fmt.Sprintf("data: %d train responses (%d right; none when evaluating) and %d near misses, %d held-out (%d right)", res.Train.Samples-res.Train.Skipped, res.Train.Positives, res.NearMisses, res.HeldOut.Samples-res.HeldOut.Skipped, res.HeldOut.Positives))
	m, err := reward.NewModel(base, tok)
	if err != nil {
		return Result{}, err
	}
	m.Scoring = cfg.Scoring
	m.Body.SetTeam(base.Team())
	checkpoint := func(step int, loss float64) error {
		d := filepath.Join(dir, fmt.Sprintf("step-%05d", step))
		if err := reward.Save(d, m); err != nil {
			return err
		}
		auc, n, err := m.WithinPromptAUC(heldGroups)
		if err != nil {
			return err
		}
		res.Checkpoints = append(res.Checkpoints, Checkpoint{Step: step, Dir: d, AUC: auc, Prompts: n, Loss: loss})
		log(fmt.Sprintf("checkpoint step %d: held-out within-prompt AUC %.3f over %d prompts", step, auc, n))
		return nil
	}
	if cfg.Evaluate {
		if err := existing(dir, heldGroups, &res, log); err != nil {
			return Result{}, err
		}
	} else {
		if err := checkpoint(0, 0); err != nil {
			return Result{}, err
		}
		var acc float64 // the training batches' pairwise accuracy since the last checkpoint
		since := 0
		err = reward.TrainRanking(ctx, m, train, cfg.Rank.Defaults(), func(s reward.Step) error {
			acc, since = acc+s.Accuracy, since+1
			if cfg.mark(s.Step) || s.Step == s.Steps {
				log(fmt.Sprintf("steps %d–%d: loss %.3f at the last, training batches' pairwise accuracy %.3f", s.Step-since+1, s.Step, s.Loss, acc/float64(since)))
				acc, since = 0, 0
				return checkpoint(s.Step, s.Loss)
			}
			return nil
		})
		if err != nil {
			return Result{}, err
		}
	}
	for i, c := range res.Checkpoints {
		if len(cfg.Measure) > 0 && !slices.Contains(cfg.Measure, c.Step) {
			continue
		}
		if err := measure(ctx, base, tok, t, cfg, &res.Checkpoints[i]); err != nil {
			return Result{}, err
		}
		log(fmt.Sprintf("answer time, checkpoint step %d: done", c.Step))
	}
	return res, nil
}

// existing adds the checkpoints under dir (step-NNNNN/, in step order)
// to res with their held-out within-prompt AUC.
func existing(dir string, held []reward.Group, res *Result, log func(string)) error {
	paths, err := filepath.Glob(filepath.Join(dir, "step-*"))
	if err != nil {
		return err
	}
	slices.Sort(paths)
	for _, p := range paths {
		var step int
		if _, err := fmt.Sscanf(filepath.Base(p), "step-%d", &step); err != nil {
			return fmt.Errorf("rm quality: checkpoint %s: not step-NNNNN", p)
		}
		rm, err := reward.Load(p)
		if err != nil {
			return err
		}
		auc, n, err := rm.WithinPromptAUC(held)
		if err != nil {
			return err
		}
		res.Checkpoints = append(res.Checkpoints, Checkpoint{Step: step, Dir: p, AUC: auc, Prompts: n})
		log(fmt.Sprintf("checkpoint step %d: held-out within-prompt AUC %.3f over %d prompts", step, auc, n))
	}
	if len(res.Checkpoints) == 0 {
		return fmt.Errorf("rm quality: no checkpoints (step-NNNNN) under %s", dir)
	}
	return nil
}

// measure runs the answer-time sweep of every seed with c's model.
func measure(ctx context.Context, base *policy.Model, tok *policy.Tokenizer, t task.Task, cfg Config, c *Checkpoint) error {
	rm, err := reward.Load(c.Dir)
	if err != nil {
		return err
	}
	rm.Body.SetTeam(base.Team())
	for _, seed := range cfg.Seeds {
		tc := cfg.TTC
		tc.Seed, tc.Scorer, tc.Tree = seed, rm.SelectionScores, nil
		pts, err := rl.MeasureTTC(ctx, base, tok, t, tc)
		if err != nil {
			return fmt.Errorf("checkpoint %d seed %d: %w", c.Step, seed, err)
		}
		c.TTC = append(c.TTC, pts)
	}
	return nil
}

// over returns, per seed, the field of the method's point at n.
func (c Checkpoint) over(method string, n int, field func(rl.TTCPoint) float64) []float64 {
	var out []float64
	for _, pts := range c.TTC {
		for _, p := range pts {
			if p.Method == method && p.N == n {
				out = append(out, field(p))
			}
		}
	}
	return out
}

// WriteMarkdown writes the report: the within-prompt AUC of every
// checkpoint and the best-of-N accuracy it gives at each N, beside the
// verifier's (oracle) and majority vote over the same candidates.
func WriteMarkdown(w io.Writer, res Result, command string) error {
	var b strings.Builder
	cfg := res.Config
	rank := cfg.Rank.Defaults()
	ns := cfg.TTC.Ns
	fmt.Fprintf(&b, "# Test-time compute over reward-model quality\n\n")
	fmt.Fprintf(&b, "Generated by `%s`; no number here is typed by hand.\n\n", command)
	fmt.Fprintf(&b, "A reward model trained to order one prompt's candidates: %s, trained with a pairwise (Bradley–Terry) loss, −log σ(z_right − z_wrong) over every (right, wrong) pair of the same prompt, on %d train prompts × %d samples of the base policy%s%s; each step takes %d prompts with up to %d right and %d wrong candidates each, so the negatives are wrong answers to the same prompt. Adam, body step size %g, head %g, gradient norm clipped to %g, BCE weight %g, %d steps; %s (%s).\n\n",
		"the base policy's body"+scoringOf(cfg.Scoring), cfg.TrainPrompts, cfg.Samples, trainCounts(res.Train), nearMisses(cfg, res), rank.PromptsPerStep, rank.PerLabel, rank.PerLabel, rank.LR, rank.HeadLR, rank.MaxGradNorm, rank.BCE, rank.Steps, marks(cfg), stepZero(cfg.Scoring))
	fmt.Fprintf(&b, "**Held-out within-prompt AUC**: the share of a prompt's (right, wrong) pairs the model scores in the right order (ties half), averaged over the held-out prompts that have both, on %s × %d samples (%d readable responses, %d right).\n\n", heldOutPrompts(cfg), cfg.Samples, res.HeldOut.Samples-res.HeldOut.Skipped, res.HeldOut.Positives)
	fmt.Fprintf(&b, "**Best-of-N at answer time** (rl.MeasureTTC, as `rollout ttc` runs it): the base policy samples N candidates for each of the first %d eval prompts, seeds %s (each seed its own prompts and streams, as in the test-time compute report); the checkpoint picks one by its score. The verifier's pick (oracle) and the majority answer over the same candidates are beside it; they do not depend on the checkpoint. Mean ± 95%% t-interval over seeds; AUC on candidates: the same within-prompt AUC on the answer-time candidates at the largest N.\n\n",
		cfg.TTC.Prompts, strings.Trim(fmt.Sprint(cfg.Seeds), "[]"))
	fmt.Fprintf(&b, "| step | held-out within-prompt AUC (prompts) | AUC on candidates, N = %d |", ns[len(ns)-1])
	for _, n := range ns {
		fmt.Fprintf(&b, " best-of-%d |", n)
	}
	fmt.Fprintf(&b, "\n|--:|--:|--:|")
	for range ns {
		fmt.Fprintf(&b, "--:|")
	}
	fmt.Fprintf(&b, "\n")
	auc := func(p rl.TTCPoint) float64 { return p.ScorerAUC }
	acc := func(p rl.TTCPoint) float64 { return p.Acc }
	var measured []Checkpoint
	for _, c := range res.Checkpoints {
		if len(c.TTC) > 0 {
			measured = append(measured, c)
		}
	}
	if len(measured) == 0 {
		return fmt.Errorf("rm quality: no checkpoint measured at answer time")
	}
	for _, c := range res.Checkpoints {
		fmt.Fprintf(&b, "| %d | %.3f (%d) | %s |", c.Step, c.AUC, c.Prompts, ci(c.over("best_of_n", ns[len(ns)-1], auc)))
		for _, n := range ns {
			fmt.Fprintf(&b, " %s |", ci(c.over("best_of_n", n, acc)))
		}
		fmt.Fprintf(&b, "\n")
	}
	{
		c := measured[0]
		for _, ref := range []struct{ method, name string }{{"oracle", "verifier (oracle)"}, {"majority", "majority of N"}} {
			fmt.Fprintf(&b, "| %s | — | — |", ref.name)
			for _, n := range ns {
				fmt.Fprintf(&b, " %s |", ci(c.over(ref.method, n, acc)))
			}
			fmt.Fprintf(&b, "\n")
		}
	}
	last := measured[len(measured)-1]
	best := measured[0]
	for _, c := range measured {
		if c.AUC > best.AUC {
			best = c
		}
	}
	fmt.Fprintf(&b, "\nThe last checkpoint measured (step %d) has held-out within-prompt AUC %.3f; the best measured, step %d, %.3f. ", last.Step, last.AUC, best.Step, best.AUC)
	first := stats.Summarize(measured[0].over("best_of_n", ns[len(ns)-1], acc))
	end := stats.Summarize(last.over("best_of_n", ns[len(ns)-1], acc))
	one := stats.Summarize(last.over("best_of_n", ns[0], acc))
	fmt.Fprintf(&b, "Best-of-%d goes from %.3f at step %d to %.3f at step %d (best-of-%d there: %.3f). Checkpoints without best-of-N figures (—) were not measured at answer time.\n", ns[len(ns)-1], first.Mean, measured[0].Step, end.Mean, last.Step, ns[0], one.Mean)
	if len(measured) > 2 {
		writeTrend(&b, measured, ns[len(ns)-1])
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeTrend writes, for best-of-n, the paired difference over seeds
// between each measured trained checkpoint and the one before it, and
// whether its accuracy rises with the checkpoints' AUC (exploratory: no
// check was declared before the measurement).
func writeTrend(b *strings.Builder, measured []Checkpoint, n int) {
	acc := func(p rl.TTCPoint) float64 { return p.Acc }
	fmt.Fprintf(b, "\nBest-of-%d from one measured checkpoint to the next (paired over seeds; exploratory, no check was declared before the measurement):\n\n", n)
	fmt.Fprintf(b, "| from step (AUC) | to step (AUC) | Δ AUC | Δ best-of-%d (95%% CI) | p |\n|--:|--:|--:|--:|--:|\n", n)
	for i := 2; i < len(measured); i++ {
		a, c := measured[i-1], measured[i]
		r, err := stats.PairedTest(c.over("best_of_n", n, acc), a.over("best_of_n", n, acc))
		if err != nil {
			fmt.Fprintf(b, "| %d (%.3f) | %d (%.3f) | %+.3f | — (%v) | — |\n", a.Step, a.AUC, c.Step, c.AUC, c.AUC-a.AUC, err)
			continue
		}
		fmt.Fprintf(b, "| %d (%.3f) | %d (%.3f) | %+.3f | %+.3f [%+.3f, %+.3f] | %.3f |\n", a.Step, a.AUC, c.Step, c.AUC, c.AUC-a.AUC, r.Diff, r.Lo, r.Hi, r.P)
	}
}

// marks describes when checkpoints were kept.
func marks(cfg Config) string {
	if len(cfg.Marks) > 0 {
		return fmt.Sprintf("checkpoints at steps %s (fixed before the training), the last step and step 0", strings.Trim(fmt.Sprint(cfg.Marks), "[]"))
	}
	return fmt.Sprintf("a checkpoint every %d steps and at step 0", cfg.Every)
}

// scoringOf describes how the model scores a response.
func scoringOf(s reward.Scoring) string {
	if s == reward.LikelihoodScore {
		return " scoring a response by its log-likelihood, z = Σ log π(response token | what precedes it) over the response and EOS (no head: a sequence-likelihood ranking loss as in RRHF and SLiC; untrained, the policy's own likelihood)"
	}
	return " with a scalar head on EOS, z = w·h_EOS + b"
}

// stepZero says what the model is before training.
func stepZero(s reward.Scoring) string {
	if s == reward.LikelihoodScore {
		return "step 0 is the untrained body's own likelihood"
	}
	return "at step 0 the head is zero: every score equal, AUC ½"
}

// nearMisses describes the near misses added to the training data.
func nearMisses(cfg Config, res Result) string {
	switch {
	case cfg.NearMisses == 0:
		return ", no near misses added"
	case res.Train.Samples == 0:
		return fmt.Sprintf(", and up to %d near misses a right candidate (one digit or letter changed, graded wrong by the verifier, new to its prompt) as hard negatives", cfg.NearMisses)
	}
	return fmt.Sprintf(", and %d near misses as hard negatives (up to %d a right candidate: one digit or letter changed, graded wrong by the verifier, new to its prompt)", res.NearMisses, cfg.NearMisses)
}

// heldOutPrompts names the held-out prompts.
func heldOutPrompts(cfg Config) string {
	if cfg.Validation {
		return fmt.Sprintf("train-split prompts %d–%d (a validation set past the %d trained on; the eval split untouched)", cfg.HeldOutFirst, cfg.HeldOutFirst+cfg.HeldOutPrompts-1, cfg.TrainPrompts)
	}
	if cfg.HeldOutFirst > 0 {
		return fmt.Sprintf("eval-split prompts %d–%d", cfg.HeldOutFirst, cfg.HeldOutFirst+cfg.HeldOutPrompts-1)
	}
	return fmt.Sprintf("%d eval-split prompts", cfg.HeldOutPrompts)
}

// trainCounts describes the training data, when this run collected it
// (not with Config.Evaluate, which measures checkpoints trained before).
func trainCounts(st reward.CollectStats) string {
	if st.Samples == 0 {
		return " (the checkpoints were trained by an earlier run with these settings; its data are not collected again here)"
	}
	return fmt.Sprintf(" (%d readable responses, %d right)", st.Samples-st.Skipped, st.Positives)
}

// ci formats a mean ± 95% t half-width.
func ci(xs []float64) string {
	if len(xs) == 0 {
		return "—"
	}
	s := stats.Summarize(xs)
	return fmt.Sprintf("%.3f ± %.3f", s.Mean, s.HalfWidth)
}
