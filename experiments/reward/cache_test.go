package reward

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/rollout-rl/rollout/experiments/config/field"
	"github.com/rollout-rl/rollout/experiments/pretrain"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
)

// The likelihood scoring's settings are left out of the JSON a cache key
// hashes and of the resolved YAML when unset, so a head model keeps the
// cache entry and the run ids it had before they existed.
func TestBuildConfigOfHeadUnchanged(t *testing.T) {
	b, err := json.Marshal(DefaultBuildConfig())
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"prompts":4096,"samples":4,"eval_prompts":1024,"train":{"steps":1200,"batch_size":32,"lr":0.0001,"head_lr":0.001,"weight_decay":0,"max_grad_norm":1,"seed":0}}`
	if string(b) != want {
		t.Errorf("JSON of the default build config:\n%s\nwant\n%s", b, want)
	}
	y, err := yaml.Marshal(DefaultBuildConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"scoring", "near_misses", "rank"} {
		if strings.Contains(string(y), key) {
			t.Errorf("YAML of the default build config has %s:\n%s", key, y)
		}
	}
}

func TestBuildConfigValidate(t *testing.T) {
	likelihood := func(c *BuildConfig) { c.Scoring, c.Samples = "likelihood", 16 }
	for _, tc := range []struct {
		name string
		edit func(*BuildConfig)
		key  string // "" for valid
		msg  string
	}{
		{"default", func(*BuildConfig) {}, "", ""},
		{"head by name", func(c *BuildConfig) { c.Scoring = "head" }, "", ""},
		{"likelihood", func(c *BuildConfig) { likelihood(c); c.NearMisses, c.Rank = 2, RankConfig{Steps: 1000, Seed: 1} }, "", ""},
		{"unknown scoring", func(c *BuildConfig) { c.Scoring = "logit" }, "reward_model.scoring", `"logit", want head or likelihood`},
		{"near misses with the head", func(c *BuildConfig) { c.NearMisses = 2 }, "reward_model.near_misses", "set with the head scoring"},
		{"rank with the head", func(c *BuildConfig) { c.Rank.Steps = 10 }, "reward_model.rank", "set with the head scoring"},
		{"negative near misses", func(c *BuildConfig) { likelihood(c); c.NearMisses = -1 }, "reward_model.near_misses", "-1, want ≥ 0"},
		{"one sample", func(c *BuildConfig) { likelihood(c); c.Samples = 1 }, "reward_model.samples", "want ≥ 2 with the likelihood scoring"},
		{"bce", func(c *BuildConfig) { likelihood(c); c.Rank.BCE = 0.2 }, "reward_model.rank.bce", "a log-likelihood is not a logit"},
		{"negative rank steps", func(c *BuildConfig) { likelihood(c); c.Rank.Steps = -1 }, "reward_model.rank.steps", "-1, want ≥ 0"},
		{"bad train", func(c *BuildConfig) { likelihood(c); c.Train.LR = -1 }, "reward_model.train.lr", "want > 0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultBuildConfig()
			tc.edit(&c)
			err := c.Validate()
			var fe *field.Error
			switch {
			case tc.key == "" && err != nil:
				t.Errorf("valid config: %v", err)
			case tc.key != "" && (!errors.As(err, &fe) || fe.Key != tc.key || !strings.Contains(err.Error(), tc.msg)):
				t.Errorf("error %v, want a *field.Error on %s containing %q", err, tc.key, tc.msg)
			}
		})
	}
	c := DefaultBuildConfig()
	if c.Steps() != 1200 {
		t.Errorf("head: %d steps, want reward_model.train.steps 1200", c.Steps())
	}
	c.Scoring = "likelihood"
	if c.Steps() != 1500 {
		t.Errorf("likelihood: %d steps, want RankConfig's default 1500", c.Steps())
	}
}

// Cached builds a likelihood reward model from the base policy's samples
// as rollout rm-quality trains one, records its within-prompt AUC, and
// finds it in the cache the second time; a base policy whose samples are
// never right cannot train one.
func TestCachedLikelihood(t *testing.T) {
	if testing.Short() {
		t.Skip("pretrains a base policy")
	}
	ctx := context.Background()
	tk, err := task.New("add", task.AddParams{Digits: 1, Scratchpad: true})
	if err != nil {
		t.Fatal(err)
	}
	pc := pretrain.DefaultConfig()
	pc.Steps, pc.BatchSize, pc.LR, pc.EvalPrompts = 150, 16, 3e-3, 10
	base, err := pretrain.Train(ctx, tk, pc, nil)
	if err != nil {
		t.Fatal(err)
	}
	baseDir := filepath.Join(t.TempDir(), "base")
	if err := policy.Save(baseDir, base.Model, base.Tokenizer); err != nil {
		t.Fatal(err)
	}
	cfg := BuildConfig{Prompts: 32, Samples: 8, EvalPrompts: 32, Train: TrainConfig{}.Defaults(),
		Scoring: "likelihood", NearMisses: 1, Rank: RankConfig{Steps: 3, Seed: 1}}
	cache := t.TempDir()
	steps := 0
	dir, sum, cached, err := Cached(ctx, cache, baseDir, tk, task.AddParams{Digits: 1, Scratchpad: true}, cfg, func(s Step) { steps = s.Step })
	if err != nil {
		t.Fatal(err)
	}
	if cached || steps != 3 || sum.Scoring != "likelihood" || sum.HeldOutPrompts < 1 || !(sum.WithinPromptAUC > 0 && sum.WithinPromptAUC <= 1) || sum.NearMisses < 1 || sum.Train.N < 1 || sum.Train.N > 32*8 {
		t.Fatalf("summary %+v after %d steps (cached %v): want a likelihood model trained 3 steps with its within-prompt AUC and near misses", sum, steps, cached)
	}
	if d := sum.Describe(); !strings.Contains(d, "likelihood scoring trained to rank; held-out within-prompt AUC") {
		t.Errorf("description %q", d)
	}
	rm, err := Load(dir)
	if err != nil || rm.Scoring != LikelihoodScore {
		t.Fatalf("loaded model: %v, scoring %v", err, rm.Scoring)
	}
	if _, again, cachedAgain, err := Cached(ctx, cache, baseDir, tk, task.AddParams{Digits: 1, Scratchpad: true}, cfg, nil); err != nil || !cachedAgain || again.WithinPromptAUC != sum.WithinPromptAUC {
		t.Errorf("second build: cached %v, %v, AUC %v want %v", cachedAgain, err, again.WithinPromptAUC, sum.WithinPromptAUC)
	}

	random, err := policy.NewModel(base.Model.Config, 9)
	if err != nil {
		t.Fatal(err)
	}
	randomDir := filepath.Join(t.TempDir(), "random")
	if err := policy.Save(randomDir, random, base.Tokenizer); err != nil {
		t.Fatal(err)
	}
	cfg.Prompts, cfg.Samples = 4, 2
	if _, _, _, err := Cached(ctx, t.TempDir(), randomDir, tk, nil, cfg, nil); err == nil || !strings.Contains(err.Error(), "both right and wrong") {
		t.Errorf("a base policy that is never right: error %v", err)
	}
}
