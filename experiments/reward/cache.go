package reward

import (
	"context"
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
type BuildConfig struct {
	Prompts     int         `yaml:"prompts" json:"prompts"`           // train-split prompts; default 4096
	Samples     int         `yaml:"samples" json:"samples"`           // responses per prompt; default 4
	EvalPrompts int         `yaml:"eval_prompts" json:"eval_prompts"` // held-out prompts for the AUC; default 1024
	Train       TrainConfig `yaml:"train" json:"train"`               // optimizer settings
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
	return c.Train.Validate()
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
