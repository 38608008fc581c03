package rl

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/rollout-rl/rollout/experiments/config/field"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/search"
)

// Config is the RL loop's hyperparameters, named as in the papers and
// frameworks they come from (PPO, GRPO, DAPO, Dr.GRPO, AReaL).
// DefaultConfig gives the defaults each field's comment states.
type Config struct {
	// Steps is the number of training steps; 0 means run until TotalTokens
	// is spent. Default 20.
	Steps int `yaml:"steps" json:"steps"`
	// TotalTokens is the run's budget of sampled tokens
	// (budget/tokens_cum), so strategies compare at equal compute; 0: no
	// limit. It is never exceeded: a step draws only as many prompts as
	// the tokens left cover at one group's longest possible cost
	// (search.MaxGroupTokens) each, and the run ends when no further group
	// fits; what is left is budget/unspent.
	TotalTokens int64 `yaml:"total_tokens" json:"total_tokens"`
	// TotalFLOPs is the run's budget of total compute
	// (budget/total_flops_cum: sampling, the reward model's scoring and the
	// updates, counted as they run, matrix products only), so strategies —
	// and packed or per-leaf updates — compare at equal compute; 0: no
	// limit. It is never exceeded: a step draws only as many prompts as the
	// FLOPs left cover at one group's worst case each (sampled, scored and
	// trained 1 + max_staleness times at the longest lengths), with the
	// updates still ahead of buffered groups set aside, and the run ends
	// when no further group fits; what is left is budget/unspent_flops.
	// Default 0. (Left out of the JSON and YAML encodings when 0, so run
	// ids and recorded variant configs of configs without it stay what
	// they were.)
	TotalFLOPs int64 `yaml:"total_flops,omitempty" json:"total_flops,omitempty"`
	// PromptsPerStep is the batch of groups a step trains on. Default 8.
	PromptsPerStep int `yaml:"prompts_per_step" json:"prompts_per_step"`
	// LR is Adam's step size. Default 1e-4.
	LR float64 `yaml:"lr" json:"lr"`
	// MaxGradNorm clips the global gradient norm. Default 1.
	MaxGradNorm float64 `yaml:"max_grad_norm" json:"max_grad_norm"`
	// Advantage is the estimator: grpo, dr_grpo, rloo, tree (TreeRL),
	// tree_nosqrt (TreeRL without the √|leaves| reweighting),
	// tree_subgroup (TreePO). Default grpo.
	Advantage string `yaml:"advantage" json:"advantage"`
	// ClipLow and ClipHigh are PPO's ε: the ratio is clipped to
	// [1−ClipLow, 1+ClipHigh] (DAPO's clip-higher when they differ).
	// Defaults 0.2 and 0.28.
	ClipLow  float64 `yaml:"clip_low" json:"clip_low"`
	ClipHigh float64 `yaml:"clip_high" json:"clip_high"`
	// LossAgg aggregates per-token losses: token_mean, seq_mean_token_mean,
	// seq_mean_token_sum_norm (Dr.GRPO). Default token_mean.
	LossAgg string `yaml:"loss_agg" json:"loss_agg"`
	// KLCoef weighs the k3 estimate of KL(π_θ ‖ π_ref) to the initial
	// policy; 0 turns it off. Default 0.
	KLCoef float64 `yaml:"kl_coef" json:"kl_coef"`
	// EntropyCoef weighs an entropy bonus; 0 turns it off. Default 0.
	EntropyCoef float64 `yaml:"entropy_coef" json:"entropy_coef"`
	// Epochs over a step's rollouts, each split into Minibatches updates.
	// Defaults 1 and 1.
	Epochs      int `yaml:"epochs" json:"epochs"`
	Minibatches int `yaml:"minibatches" json:"minibatches"`
	// FilterGroups drops groups whose rewards are all equal (DAPO dynamic
	// sampling) and draws more prompts, up to MaxResampleRounds extra
	// rounds. Defaults true and 2.
	FilterGroups      bool `yaml:"filter_groups" json:"filter_groups"`
	MaxResampleRounds int  `yaml:"max_resample_rounds" json:"max_resample_rounds"`
	// MaxStaleness lets rollouts sampled by policy version v be trained on
	// up to version v+MaxStaleness; 0 trains on fresh rollouts only.
	// Default 0.
	MaxStaleness int `yaml:"max_staleness" json:"max_staleness"`
	// Async is the staleness bound k of asynchronous rollouts: the
	// rollouts of step t (0-based) come from exactly policy version t−k
	// (the weights after t−k updates; version 0 for the first k steps),
	// sampled on their own share of the run's cores while the updates
	// before step t run (see async.go); 0 samples each step's rollouts
	// with the current policy before its update. Default 0. It excludes
	// MaxStaleness. (Left out of the JSON and YAML encodings when 0, so
	// run ids and recorded variant configs of configs without it stay
	// what they were.)
	Async int `yaml:"async,omitempty" json:"async,omitempty"`
	// Correction is the off-policy correction for stale or quantized
	// rollouts: none, tis (weight min(π_old/π_behave, TISCap)), decoupled
	// (AReaL), mis (masked IS), icepop or geo_mask (see correction.go).
	// Default none.
	Correction string `yaml:"correction" json:"correction"`
	// TISCap is TIS's C. Default 2.
	TISCap float64 `yaml:"tis_cap" json:"tis_cap"`
	// ISLow and ISHigh are the ratio band of the icepop and geo_mask
	// corrections (see correction.go); 0 takes the mode's default (icepop
	// [0.5, 5], geo_mask [0.999, 1.001]). Left out of the encodings when 0.
	ISLow  float64 `yaml:"is_low,omitempty" json:"is_low,omitempty"`
	ISHigh float64 `yaml:"is_high,omitempty" json:"is_high,omitempty"`
	// SaveFinal writes a finished run's final policy as a checkpoint
	// directory beside the store (tracking.FinalDir): model.safetensors
	// with Hugging Face Llama names, config.json and vocab.json, which
	// rollout model and --checkpoint take. Default false. (Left out of the
	// JSON and YAML encodings when false, so run ids and recorded variant
	// configs of configs without it stay what they were.)
	SaveFinal bool `yaml:"save_final,omitempty" json:"save_final,omitempty"`
	// Overlong is what the loss does with responses cut at the length cap
	// L_max (rollout.max_tokens, else the task's longest response and
	// EOS): truncate trains on them as they are, filter masks them out of
	// the loss (DAPO's overlong filtering; their advantages are still
	// computed within the whole group), penalty adds DAPO's soft overlong
	// punishment to every response's reward (see SoftOverlongPenalty). Default
	// truncate. (Left out of the JSON and YAML encodings when truncate, so run
	// ids and recorded variant configs of configs without it stay what they
	// were.)
	Overlong Overlong `yaml:"overlong,omitempty" json:"overlong,omitzero"`
	// OverlongCache is DAPO's L_cache: the length of the interval before
	// L_max over which the penalty grows linearly from 0 to −1; used only
	// with overlong: penalty, where it is required, in [1, L_max]. Default
	// 0. (Left out of the JSON and YAML encodings when 0.)
	OverlongCache int `yaml:"overlong_cache,omitempty" json:"overlong_cache,omitzero"`
	// BF16 trains the policy with BF16 products (policy.Model.SetBF16Training):
	// the linear layers' matrix products of the training passes round their
	// operands to bfloat16 and accumulate in float32, where the CPU has
	// AVX512_BF16 (policy.BF16Supported); sampling stays float32 (or int8).
	// On a CPU without AVX512_BF16 the products are the float32 ones, so
	// the same run trains differently there than on a CPU with it. Default
	// false. (Left out of the JSON and YAML encodings when false, so run ids
	// and recorded variant configs of configs without it stay what they
	// were.)
	BF16 bool `yaml:"bf16,omitempty" json:"bf16,omitempty"`
	// TreePacking trains on each minibatch's sequences packed as a prefix
	// tree (policy.Model.NewPackedBatch): a group's prompt, and a tree's
	// tokens before each fork, run forward and backward once instead of
	// once per leaf through them, and a shared token's loss is the sum of
	// its leaves' terms (each with its own advantage and aggregation
	// weight) at its one log-probability. π_old and π_ref are computed
	// packed too. The gradients are the per-leaf pass's (false) to float32
	// rounding, at a fraction of its FLOPs (budget/train_flops counts the
	// rows that run). Default false: an RL run's trajectory follows float32
	// rounding, so the default stays the pass every recorded result was
	// trained with. (Left out of the JSON and YAML encodings when false, so
	// run ids and recorded variant configs of configs without it stay what
	// they were.)
	TreePacking bool `yaml:"tree_packing,omitempty" json:"tree_packing,omitempty"`
}

// Overlong is train.overlong: truncate, filter or penalty. The empty
// string, as decoded from a run recorded before the key existed, means
// truncate.
type Overlong string

// The treatments of overlong responses.
const (
	OverlongTruncate Overlong = "truncate"
	OverlongFilter   Overlong = "filter"
	OverlongPenalty  Overlong = "penalty"
)

// IsZero reports whether o is the default, truncate, which encoding/json's
// omitzero leaves out.
func (o Overlong) IsZero() bool { return o == "" || o == OverlongTruncate }

// SoftOverlongPenalty is DAPO's soft overlong punishment of a response of
// length tokens (EOS included) under the cap maxLen = L_max with cache
// L_cache:
//
//	0                               if length ≤ L_max − L_cache
//	((L_max − L_cache) − length)/L_cache  if L_max − L_cache < length ≤ L_max
//	−1                              if length > L_max
//
// A response cut at the cap (length = L_max) gets −1.
func SoftOverlongPenalty(length, maxLen, cache int) float64 {
	free := maxLen - cache
	switch {
	case length <= free:
		return 0
	case length > maxLen:
		return -1
	}
	return float64(free-length) / float64(cache)
}

// EvalConfig is the held-out evaluation.
type EvalConfig struct {
	// Every is the number of steps between evaluations: a run evaluates
	// its base policy at step 0, then at every multiple of Every and after
	// its last step; 0 turns the evaluations by step count off, leaving
	// step 0, the marks of EveryTokens and EveryFLOPs and the last step.
	// Default 5.
	Every int `yaml:"every" json:"every"`
	// EveryTokens evaluates at every multiple of this many sampled tokens
	// (budget/tokens_cum 0, E, 2E, …) as well; 0 turns it off. A step never
	// straddles a mark: the steps before one draw only the prompts the
	// tokens left to it cover (as for train.total_tokens), and the mark is
	// reached, and evaluated, when no further group fits before it. The
	// evaluation's metrics then carry eval/tokens_mark. Default 0. (Left
	// out of the JSON encoding when 0, so run ids of configs without it
	// stay what they were.)
	EveryTokens int64 `yaml:"every_tokens" json:"every_tokens,omitempty"`
	// EveryFLOPs evaluates at every multiple of this many total FLOPs
	// (budget/total_flops_cum 0, F, 2F, …), as EveryTokens does in tokens:
	// the steps before a mark draw only the prompts whose worst case
	// (trained once, besides the step's stale groups) the FLOPs left to it
	// cover, and the evaluation at a mark carries eval/flops_mark. Default
	// 0. (Left out of the JSON and YAML encodings when 0.)
	EveryFLOPs int64 `yaml:"every_flops,omitempty" json:"every_flops,omitempty"`
	// Prompts is the number of eval-split prompts. Default 100.
	Prompts int `yaml:"prompts" json:"prompts"`
	// Samples per prompt (n), sampled at the rollout temperature, from
	// which pass@1, pass@k (unbiased estimator) and maj@k are computed.
	// Default 8.
	Samples int `yaml:"samples" json:"samples"`
	// K of pass@k and maj@k (maj@k votes over the first K samples);
	// K ≤ Samples. Default 4.
	K int `yaml:"k" json:"k"`
	// ExcludeSeeds and ExcludePrompts hold eval prompts out of the
	// evaluation: every prompt among the first ExcludePrompts eval prompts
	// of each of ExcludeSeeds (those runs at these seeds were evaluated
	// on, with eval.prompts ExcludePrompts) is replaced by a further draw
	// for its index that is none of them (task.Excluding), so the
	// evaluation is disjoint from theirs. Default none. (Left out of the
	// JSON and YAML encodings when unset, so run ids and recorded variant
	// configs of configs without them stay what they were.)
	ExcludeSeeds   []uint64 `yaml:"exclude_seeds,omitempty" json:"exclude_seeds,omitempty"`
	ExcludePrompts int      `yaml:"exclude_prompts,omitempty" json:"exclude_prompts,omitempty"`
}

// Task is t as an evaluation under c draws its eval prompts: t itself, or
// with eval.exclude_seeds, t with those seeds' eval prompts held out
// (task.Excluding).
func (c EvalConfig) Task(t task.Task) (task.Task, error) {
	if len(c.ExcludeSeeds) == 0 {
		return t, nil
	}
	x, err := task.Excluding(t, c.ExcludeSeeds, c.ExcludePrompts)
	if err != nil {
		return nil, fmt.Errorf("eval.exclude_seeds: %w", err)
	}
	return x, nil
}

// Names of the choices.
var (
	LossAggs    = []string{"token_mean", "seq_mean_token_mean", "seq_mean_token_sum_norm"}
	Corrections = []string{"none", "tis", "decoupled", "mis", "icepop", "geo_mask"}
	Overlongs   = []string{string(OverlongTruncate), string(OverlongFilter), string(OverlongPenalty)}
)

// DefaultConfig returns the defaults: 20 steps of 8 prompts, Adam at 1e-4
// with gradients clipped to norm 1, GRPO advantages, PPO clip 0.2/0.28,
// token-mean loss, no KL or entropy term, one epoch of one minibatch,
// group filtering with up to 2 extra rounds, no stale reuse, no
// correction (TIS cap 2), overlong responses trained on as they are,
// trees trained per leaf.
func DefaultConfig() Config {
	return Config{
		Steps: 20, PromptsPerStep: 8, LR: 1e-4, MaxGradNorm: 1, Advantage: "grpo",
		ClipLow: 0.2, ClipHigh: 0.28, LossAgg: "token_mean", Epochs: 1, Minibatches: 1,
		FilterGroups: true, MaxResampleRounds: 2, Correction: "none", TISCap: 2,
		Overlong: OverlongTruncate,
	}
}

// DefaultEvalConfig returns the defaults: every 5 steps, 100 prompts, 8
// samples each, k = 4.
func DefaultEvalConfig() EvalConfig { return EvalConfig{Every: 5, Prompts: 100, Samples: 8, K: 4} }

// oneOf is a field error unless v is one of the choices.
func oneOf(key, v string, choices []string) error {
	if !slices.Contains(choices, v) {
		return &field.Error{Key: key, Value: v, Msg: "want one of " + strings.Join(choices, ", ")}
	}
	return nil
}

// Validate reports the first setting out of range as a *field.Error naming
// its key and value.
func (c Config) Validate() error {
	checks := []struct {
		bad   bool
		key   string
		value any
		msg   string
	}{
		{c.Steps < 0, "train.steps", c.Steps, "want ≥ 0"},
		{c.TotalTokens < 0, "train.total_tokens", c.TotalTokens, "want ≥ 0"},
		{c.TotalFLOPs < 0, "train.total_flops", c.TotalFLOPs, "want ≥ 0"},
		{c.Steps == 0 && c.TotalTokens == 0 && c.TotalFLOPs == 0, "train.steps", c.Steps, "as are train.total_tokens and train.total_flops: the run would never end"},
		{c.PromptsPerStep < 1, "train.prompts_per_step", c.PromptsPerStep, "want ≥ 1"},
		{!(c.LR > 0) || math.IsInf(c.LR, 0), "train.lr", c.LR, "want > 0"},
		{c.MaxGradNorm < 0, "train.max_grad_norm", c.MaxGradNorm, "want ≥ 0"},
		{c.ClipLow <= 0 || c.ClipLow >= 1, "train.clip_low", c.ClipLow, "want in (0, 1)"},
		{c.ClipHigh <= 0, "train.clip_high", c.ClipHigh, "want > 0"},
		{c.KLCoef < 0, "train.kl_coef", c.KLCoef, "want ≥ 0"},
		{c.EntropyCoef < 0, "train.entropy_coef", c.EntropyCoef, "want ≥ 0"},
		{c.Epochs < 1, "train.epochs", c.Epochs, "want ≥ 1"},
		{c.Minibatches < 1, "train.minibatches", c.Minibatches, "want ≥ 1"},
		{c.MaxResampleRounds < 0, "train.max_resample_rounds", c.MaxResampleRounds, "want ≥ 0"},
		{c.MaxStaleness < 0, "train.max_staleness", c.MaxStaleness, "want ≥ 0"},
		{c.Async < 0, "train.async", c.Async, "want ≥ 0 (0: synchronous)"},
		{c.Async > 0 && c.MaxStaleness > 0, "train.async", c.Async, "excludes train.max_staleness > 0 (two ways of training on stale rollouts); set one of them"},
		{c.TISCap <= 0, "train.tis_cap", c.TISCap, "want > 0"},
		{c.ISLow < 0, "train.is_low", c.ISLow, "want ≥ 0 (0: the correction's default)"},
		{c.ISHigh < 0 || (c.ISHigh > 0 && c.ISHigh < c.ISLow), "train.is_high", c.ISHigh, "want ≥ train.is_low (0: the correction's default)"},
		{c.OverlongCache < 0, "train.overlong_cache", c.OverlongCache, "want ≥ 0"},
		{c.Overlong == OverlongPenalty && c.OverlongCache == 0, "train.overlong_cache", c.OverlongCache, "want ≥ 1 with train.overlong: penalty (DAPO's L_cache)"},
	}
	for _, ch := range checks {
		if ch.bad {
			return &field.Error{Key: ch.key, Value: ch.value, Msg: ch.msg}
		}
	}
	if err := oneOf("train.advantage", c.Advantage, search.EstimatorNames()); err != nil {
		return err
	}
	if err := oneOf("train.loss_agg", c.LossAgg, LossAggs); err != nil {
		return err
	}
	if c.Overlong != "" {
		if err := oneOf("train.overlong", string(c.Overlong), Overlongs); err != nil {
			return err
		}
	}
	return oneOf("train.correction", c.Correction, Corrections)
}

// Validate reports the first setting out of range as a *field.Error naming
// its key and value.
func (c EvalConfig) Validate() error {
	switch {
	case c.Every < 0:
		return &field.Error{Key: "eval.every", Value: c.Every, Msg: "want ≥ 0"}
	case c.EveryTokens < 0:
		return &field.Error{Key: "eval.every_tokens", Value: c.EveryTokens, Msg: "want ≥ 0"}
	case c.EveryFLOPs < 0:
		return &field.Error{Key: "eval.every_flops", Value: c.EveryFLOPs, Msg: "want ≥ 0"}
	case c.Prompts < 1:
		return &field.Error{Key: "eval.prompts", Value: c.Prompts, Msg: "want ≥ 1"}
	case c.Samples < 1:
		return &field.Error{Key: "eval.samples", Value: c.Samples, Msg: "want ≥ 1"}
	case c.K < 1 || c.K > c.Samples:
		return &field.Error{Key: "eval.k", Value: c.K, Msg: fmt.Sprintf("want in [1, eval.samples = %d]", c.Samples)}
	case c.ExcludePrompts < 0:
		return &field.Error{Key: "eval.exclude_prompts", Value: c.ExcludePrompts, Msg: "want ≥ 1 with eval.exclude_seeds (0: none)"}
	case len(c.ExcludeSeeds) > 0 && c.ExcludePrompts == 0:
		return &field.Error{Key: "eval.exclude_prompts", Value: c.ExcludePrompts, Msg: "want ≥ 1 with eval.exclude_seeds: the number of eval prompts each of those seeds drew"}
	case len(c.ExcludeSeeds) == 0 && c.ExcludePrompts > 0:
		return &field.Error{Key: "eval.exclude_prompts", Value: c.ExcludePrompts, Msg: "without eval.exclude_seeds: name the seeds whose eval prompts to hold out"}
	}
	for i, s := range c.ExcludeSeeds {
		if j := slices.Index(c.ExcludeSeeds[:i], s); j >= 0 {
			return &field.Error{Key: "eval.exclude_seeds", Value: s, Msg: fmt.Sprintf("seed %d is listed twice (items %d and %d)", s, j, i)}
		}
	}
	return nil
}
