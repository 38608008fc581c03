package reward

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/rollout-rl/rollout/experiments/config/field"
	"github.com/rollout-rl/rollout/experiments/internal/dircache"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
)

// BuildConfig is how a reward model is made for an experiment: responses
// sampled from the base policy on Prompts train prompts (Samples each),
// labelled by the verifier, then training; its AUC is measured on
// EvalPrompts held-out prompts. DefaultBuildConfig gives the defaults.
//
// With Scoring "head" (the default) the model is a classifier, a scalar
// head on EOS trained with binary cross-entropy (Train), whose AUC is over
// all held-out responses. With "likelihood" it scores a response by its
// body's log-likelihood and is trained to order one prompt's candidates
// (TrainRanking with Rank, on the groups of RankingData with NearMisses
// near misses a right candidate), as rollout rm-quality trains it; its
// AUC is the within-prompt AUC on the held-out prompts' samples. Such a
// model ranks candidates (best-of-N) and is not mixed into rewards.
type BuildConfig struct {
	Prompts     int         `yaml:"prompts" json:"prompts"`           // train-split prompts; default 4096
	Samples     int         `yaml:"samples" json:"samples"`           // responses per prompt; default 4
	EvalPrompts int         `yaml:"eval_prompts" json:"eval_prompts"` // held-out prompts for the AUC; default 1024
	Train       TrainConfig `yaml:"train" json:"train"`               // optimizer settings of the head scoring
	// Scoring is head (or empty) or likelihood. It and the likelihood
	// scoring's settings are left out of the cache key and the resolved
	// configuration when unset, so that a head model's entry keeps its
	// key.
	Scoring    string     `yaml:"scoring,omitempty" json:"scoring,omitzero"`
	NearMisses int        `yaml:"near_misses,omitempty" json:"near_misses,omitzero"` // near misses a right training candidate (likelihood)
	Rank       RankConfig `yaml:"rank,omitempty" json:"rank,omitzero"`               // the ranking training (likelihood); zero fields take RankConfig's defaults
}

// DefaultBuildConfig returns the defaults.
func DefaultBuildConfig() BuildConfig {
	return BuildConfig{Prompts: 4096, Samples: 4, EvalPrompts: 1024, Train: TrainConfig{}.Defaults()}
}

// Validate reports the first setting out of range as a *field.Error naming
// its key and value.
func (c BuildConfig) Validate() error {
	switch {
	case c.Prompts < 1:
		return &field.Error{Key: "reward_model.prompts", Value: c.Prompts, Msg: "want ≥ 1"}
	case c.Samples < 1:
		return &field.Error{Key: "reward_model.samples", Value: c.Samples, Msg: "want ≥ 1"}
	case c.EvalPrompts < 1:
		return &field.Error{Key: "reward_model.eval_prompts", Value: c.EvalPrompts, Msg: "want ≥ 1"}
	}
	if err := c.Train.Validate(); err != nil {
		return err
	}
	s, err := c.scoring()
	if err != nil {
		return err
	}
	switch {
	case c.NearMisses < 0:
		return &field.Error{Key: "reward_model.near_misses", Value: c.NearMisses, Msg: "want ≥ 0"}
	case s == HeadScore && c.NearMisses != 0:
		return &field.Error{Key: "reward_model.near_misses", Value: c.NearMisses, Msg: "set with the head scoring, which trains a classifier (reward_model.train): want scoring: likelihood, or none"}
	case s == HeadScore && c.Rank != RankConfig{}:
		return &field.Error{Key: "reward_model.rank", Value: fmt.Sprintf("%+v", c.Rank), Msg: "set with the head scoring, which trains a classifier (reward_model.train): want scoring: likelihood, or none"}
	case s == HeadScore:
		return nil
	case c.Samples < 2:
		return &field.Error{Key: "reward_model.samples", Value: c.Samples, Msg: "want ≥ 2 with the likelihood scoring: it learns from one prompt's right and wrong samples"}
	case c.Rank.BCE != 0:
		return &field.Error{Key: "reward_model.rank.bce", Value: c.Rank.BCE, Msg: "want 0 with the likelihood scoring: a log-likelihood is not a logit"}
	}
	if err := c.Rank.Defaults().Validate(); err != nil {
		var fe *field.Error
		if errors.As(err, &fe) {
			return &field.Error{Key: "reward_model.rank." + fe.Key, Value: fe.Value, Msg: fe.Msg}
		}
		return err
	}
	return nil
}

// scoring reads Scoring: head when empty.
func (c BuildConfig) scoring() (Scoring, error) {
	if c.Scoring == "" {
		return HeadScore, nil
	}
	s, err := ParseScoring(c.Scoring)
	if err != nil {
		return s, &field.Error{Key: "reward_model.scoring", Value: c.Scoring, Msg: "want head or likelihood"}
	}
	return s, nil
}

// Steps is the number of optimizer steps the build trains: Train.Steps
// for the head scoring, Rank.Steps (or its default) for the likelihood.
func (c BuildConfig) Steps() int {
	if s, err := c.scoring(); err == nil && s == LikelihoodScore {
		return c.Rank.Defaults().Steps
	}
	return c.Train.Steps
}

// Summary is what a cached reward model records beside its weights.
type Summary struct {
	Task     string      `json:"task"`
	Base     string      `json:"base"`
	Config   BuildConfig `json:"config"`
	Train    Eval        `json:"train"`
	HeldOut  Eval        `json:"held_out"`
	Seconds  float64     `json:"seconds"`
	CacheKey string      `json:"cache_key"`
	// Scoring is the model's scoring, head or likelihood. A likelihood
	// model's Train and HeldOut count the responses only (N, Positives);
	// its measure is WithinPromptAUC over HeldOutPrompts held-out
	// prompts with right and wrong samples, and NearMisses is the number
	// of near misses its training data gained.
	Scoring         string  `json:"scoring,omitempty"`
	WithinPromptAUC float64 `json:"within_prompt_auc,omitzero"`
	HeldOutPrompts  int     `json:"held_out_prompts,omitzero"`
	NearMisses      int     `json:"near_misses,omitzero"`
}

// Describe says in words what the model is and how well it ranks, for a
// report: its scoring and its held-out AUC with the data it is over.
func (s Summary) Describe() string {
	if s.Scoring == LikelihoodScore.String() {
		return fmt.Sprintf("likelihood scoring trained to rank; held-out within-prompt AUC %.3f over %d eval prompts with right and wrong samples (%d responses of the base policy, %d right)", s.WithinPromptAUC, s.HeldOutPrompts, s.HeldOut.N, s.HeldOut.Positives)
	}
	return fmt.Sprintf("held-out AUC %.3f on %d responses of the base policy, %d right", s.HeldOut.AUC, s.HeldOut.N, s.HeldOut.Positives)
}

// Build samples training data from the base policy, trains a reward model
// on it and measures it on held-out prompts.
func Build(ctx context.Context, baseDir string, t task.Task, cfg BuildConfig, onStep func(Step)) (*Model, Summary, error) {
	start := time.Now()
	if err := cfg.Validate(); err != nil {
		return nil, Summary{}, err
	}
	base, tok, err := policy.Load(baseDir)
	if err != nil {
		return nil, Summary{}, err
	}
	if s, _ := cfg.scoring(); s == LikelihoodScore {
		m, sum, err := buildRanking(ctx, base, tok, t, cfg, onStep)
		if err != nil {
			return nil, Summary{}, err
		}
		sum.Base, sum.Seconds = baseDir, time.Since(start).Seconds()
		return m, sum, nil
	}
	train, _, err := Collect(ctx, base, tok, t, CollectConfig{Split: task.Train, Prompts: cfg.Prompts, Samples: cfg.Samples, Temperature: 1})
	if err != nil {
		return nil, Summary{}, err
	}
	held, _, err := Collect(ctx, base, tok, t, CollectConfig{Split: task.Eval, Prompts: cfg.EvalPrompts, Samples: cfg.Samples, Temperature: 1})
	if err != nil {
		return nil, Summary{}, err
	}
	if err := bothLabels(train); err != nil {
		return nil, Summary{}, fmt.Errorf("reward model training data from %d train prompts: %w", cfg.Prompts, err)
	}
	if err := bothLabels(held); err != nil {
		return nil, Summary{}, fmt.Errorf("reward model held-out data from %d eval prompts: %w", cfg.EvalPrompts, err)
	}
	m, err := NewModel(base, tok)
	if err != nil {
		return nil, Summary{}, err
	}
	if _, err := Train(ctx, m, train, cfg.Train, onStep); err != nil {
		return nil, Summary{}, err
	}
	s := Summary{Task: t.Name(), Base: baseDir, Config: cfg}
	if s.Train, err = m.Evaluate(train); err != nil {
		return nil, Summary{}, err
	}
	if s.HeldOut, err = m.Evaluate(held); err != nil {
		return nil, Summary{}, err
	}
	s.Seconds = time.Since(start).Seconds()
	return m, s, nil
}

// buildRanking makes a likelihood reward model as rollout rm-quality
// trains one: the base policy's samples of cfg.Prompts train prompts with
// their near misses (RankingData), the pairwise ranking loss with
// cfg.Rank, and its within-prompt AUC on the samples of cfg.EvalPrompts
// held-out prompts.
func buildRanking(ctx context.Context, base *policy.Model, tok *policy.Tokenizer, t task.Task, cfg BuildConfig, onStep func(Step)) (*Model, Summary, error) {
	train, st, near, err := RankingData(ctx, base, tok, t, cfg.Prompts, cfg.Samples, cfg.NearMisses, cfg.Rank.Seed)
	if err != nil {
		return nil, Summary{}, err
	}
	held, hst, err := Collect(ctx, base, tok, t, CollectConfig{Split: task.Eval, Prompts: cfg.EvalPrompts, Samples: cfg.Samples, Temperature: 1})
	if err != nil {
		return nil, Summary{}, err
	}
	m, err := NewModel(base, tok)
	if err != nil {
		return nil, Summary{}, err
	}
	m.Scoring = LikelihoodScore
	err = TrainRanking(ctx, m, train, cfg.Rank.Defaults(), func(s Step) error {
		onStep(s)
		return nil
	})
	if err != nil {
		return nil, Summary{}, fmt.Errorf("reward model from %d train prompts: %w", cfg.Prompts, err)
	}
	auc, n, err := m.WithinPromptAUC(Groups(held))
	if err != nil {
		return nil, Summary{}, fmt.Errorf("reward model held-out data from %d eval prompts: %w", cfg.EvalPrompts, err)
	}
	return m, Summary{Task: t.Name(), Config: cfg, Scoring: LikelihoodScore.String(),
		Train:           Eval{N: st.Samples - st.Skipped, Positives: st.Positives},
		HeldOut:         Eval{N: hst.Samples - hst.Skipped, Positives: hst.Positives},
		WithinPromptAUC: auc, HeldOutPrompts: n, NearMisses: near}, nil
}

// Cached returns the directory of the reward model for (base policy, task,
// cfg) under cacheDir, building and saving it first if it is not there.
// The third result reports whether it came from the cache.
func Cached(ctx context.Context, cacheDir, baseDir string, t task.Task, taskParams any, cfg BuildConfig, onStep func(Step)) (string, Summary, bool, error) {
	key, err := dircache.Key(struct {
		Version    int
		Base, Task string
		TaskParams any
		Config     BuildConfig
	}{1, baseDir, t.Name(), taskParams, cfg})
	if err != nil {
		return "", Summary{}, false, err
	}
	return dircache.Get(cacheDir, "reward", t.Name(), key, func(dir string) (Summary, error) {
		m, s, err := Build(ctx, baseDir, t, cfg, onStep)
		if err != nil {
			return Summary{}, err
		}
		s.CacheKey = key
		return s, Save(dir, m)
	})
}

// bothLabels reports an error unless the examples hold correct and wrong
// responses: a classifier needs both.
func bothLabels(data []Example) error {
	pos := 0
	for _, e := range data {
		if e.Label {
			pos++
		}
	}
	if pos == 0 || pos == len(data) {
		return fmt.Errorf("the base policy's %d sampled responses are all %s: a reward model needs right and wrong ones (use a better base policy or more prompts)", len(data), map[bool]string{true: "right", false: "wrong"}[pos > 0])
	}
	return nil
}
