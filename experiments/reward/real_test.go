package reward

import (
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/rollout-rl/rollout/experiments/pretrain"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
)

// envInt reads an integer setting of the real-setting test.
func envInt(t *testing.T, key string, def int) int {
	if v := os.Getenv(key); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("%s=%q: %v", key, v, err)
		}
		return n
	}
	return def
}

// envFloat reads a float setting of the real-setting test.
func envFloat(t *testing.T, key string, def float64) float64 {
	if v := os.Getenv(key); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", key, v, err)
		}
		return f
	}
	return def
}

// TestRealSettingAUC measures the reward model's held-out AUC in the real
// setting: the tiny base policy pretrained on "add" with its default
// parameters (pretrain.DefaultConfig, but 600 steps), 4 responses sampled
// from it at temperature 1 to each of 4096 train prompts (training data)
// and 1024 eval prompts (held-out data), and a reward model initialised
// from the base policy and trained with the default TrainConfig. It takes
// a few minutes on 2 cores, so it runs only with REWARD_REAL=1:
//
//	REWARD_REAL=1 go test ./experiments/reward -run RealSetting -v -timeout 30m
//
// REWARD_CACHE names a directory to keep the base policy in between runs;
// REWARD_PRETRAIN_STEPS, REWARD_STEPS, REWARD_LR, REWARD_HEAD_LR,
// REWARD_TRAIN_PROMPTS, REWARD_EVAL_PROMPTS and REWARD_SAMPLES override the
// settings above.
func TestRealSettingAUC(t *testing.T) {
	if os.Getenv("REWARD_REAL") == "" {
		t.Skip("set REWARD_REAL=1 to run (minutes)")
	}
	ctx := context.Background()
	tk, err := task.New("add", nil)
	if err != nil {
		t.Fatal(err)
	}
	cache := os.Getenv("REWARD_CACHE")
	if cache == "" {
		cache = t.TempDir()
	}
	pcfg := pretrain.DefaultConfig()
	pcfg.Steps = envInt(t, "REWARD_PRETRAIN_STEPS", 600)
	dir, sum, cached, err := pretrain.Cached(ctx, cache, tk, task.DefaultAddParams(), pcfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("task add %+v, pretrain %+v", task.DefaultAddParams(), pcfg)
	t.Logf("base policy %s (cached %v): eval greedy accuracy %.3f, loss %.3f, %.0f s", dir, cached, sum.EvalAcc, sum.Loss, sum.Seconds)
	base, tok, err := policy.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	samples := envInt(t, "REWARD_SAMPLES", 4)
	train, ts, err := Collect(ctx, base, tok, tk, CollectConfig{Split: task.Train, Prompts: envInt(t, "REWARD_TRAIN_PROMPTS", 4096), Samples: samples, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	held, hs, err := Collect(ctx, base, tok, tk, CollectConfig{Split: task.Eval, Prompts: envInt(t, "REWARD_EVAL_PROMPTS", 1024), Samples: samples, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("train examples %d (%d positive, %d skipped); held-out %d (%d positive, %d skipped)",
		len(train), ts.Positives, ts.Skipped, len(held), hs.Positives, hs.Skipped)
	rm, err := NewModel(base, tok)
	if err != nil {
		t.Fatal(err)
	}
	cfg := TrainConfig{
		Steps:  envInt(t, "REWARD_STEPS", 0),
		LR:     envFloat(t, "REWARD_LR", 0),
		HeadLR: envFloat(t, "REWARD_HEAD_LR", 0),
		Seed:   1,
	}
	res, err := Train(ctx, rm, train, cfg, func(s Step) {
		if s.Step%50 == 0 {
			t.Logf("step %d/%d: loss %.3f, batch accuracy %.2f", s.Step, s.Steps, s.Loss, s.Accuracy)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	ev, err := rm.Evaluate(held)
	if err != nil {
		t.Fatal(err)
	}
	tev, err := rm.Evaluate(train)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("config %+v: trained in %s (final loss %.3f)", cfg.Defaults(), res.Duration, res.Loss)
	t.Logf("held-out: AUC %.3f, accuracy %.3f, log loss %.3f over %d examples (%d positive)", ev.AUC, ev.Accuracy, ev.LogLoss, ev.N, ev.Positives)
	t.Logf("train:    AUC %.3f, accuracy %.3f, log loss %.3f", tev.AUC, tev.Accuracy, tev.LogLoss)
	if ev.AUC < 0.6 {
		t.Errorf("held-out AUC %.3f, want ≥ 0.6", ev.AUC)
	}
}
