// Package pretrain makes the base policy that RL starts from: supervised
// training of a fresh transformer on a task's demonstrations, a share of
// them deliberately flawed, so that the base policy is imperfect and RL has
// room to improve it. Trained checkpoints are cached under the hash of
// their resolved configuration, so experiments that share a base policy
// train it once.
package pretrain

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/rollout-rl/rollout/experiments/config/field"
	"github.com/rollout-rl/rollout/experiments/internal/dircache"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
)

// Config is a pretraining run's settings; DefaultConfig gives the
// defaults each field's comment states.
type Config struct {
	Model       Model   `yaml:"model" json:"model"`               // model shape (a size, tiny, small or medium, or dimensions); default tiny
	Steps       int     `yaml:"steps" json:"steps"`               // optimizer steps; default 1000
	BatchSize   int     `yaml:"batch_size" json:"batch_size"`     // demonstrations per step; default 32
	LR          float64 `yaml:"lr" json:"lr"`                     // Adam step size; default 1e-3
	FlawedShare float64 `yaml:"flawed_share" json:"flawed_share"` // share of flawed demonstrations in [0, 1); default 0.3
	EvalPrompts int     `yaml:"eval_prompts" json:"eval_prompts"` // held-out prompts for greedy accuracy; default 200
	Seed        uint64  `yaml:"seed" json:"seed"`                 // initialisation and data order
	// BF16 trains with BF16 products (policy.Model.SetBF16Training) where
	// the CPU has AVX512_BF16, float32 ones elsewhere (the base policy then
	// differs from one trained on a CPU with it); the returned model is
	// set back to float32 training. Default false. (Left out of the JSON
	// and YAML encodings when false, so run ids and cache keys of configs
	// without it stay what they were.)
	BF16 bool `yaml:"bf16,omitempty" json:"bf16,omitempty"`
	// WarmupSteps raises the step size linearly from LR/WarmupSteps to LR
	// over the first WarmupSteps steps; default 0, none.
	WarmupSteps int `yaml:"warmup_steps,omitempty" json:"warmup_steps,omitempty"`
	// Schedule is the step size after the warm-up: "constant" (the
	// default, LR throughout) or "cosine" (from LR down to LR/10 at the
	// last step along a half cosine).
	Schedule string `yaml:"lr_schedule,omitempty" json:"lr_schedule,omitempty"`
	// FlushSubnormals sets the subnormal values of the vocabulary
	// softmax's gradient to zero (policy.Model.SetFlushSubnormals): the
	// steps of a model that predicts its demonstrations confidently run up
	// to ~1.6× faster on x86 CPUs, and the base policy may differ from one
	// trained without it. Default false.
	//
	// These three are left out of the JSON and YAML encodings at their
	// defaults, so run ids and cache keys of configs without them stay
	// what they were.
	FlushSubnormals bool `yaml:"flush_subnormals,omitempty" json:"flush_subnormals,omitempty"`
}

// LRAt returns the step size of step s (0-based) under the warm-up and
// schedule.
func (cfg Config) LRAt(s int) float64 {
	if s < cfg.WarmupSteps {
		return cfg.LR * float64(s+1) / float64(cfg.WarmupSteps)
	}
	if cfg.Schedule != "cosine" {
		return cfg.LR
	}
	span := cfg.Steps - cfg.WarmupSteps - 1
	if span < 1 {
		return cfg.LR
	}
	progress := float64(s-cfg.WarmupSteps) / float64(span)
	return cfg.LR * (0.1 + 0.9*0.5*(1+math.Cos(math.Pi*progress)))
}

// DefaultStepsFor is the default number of pretraining steps for a task:
// 1000, and 1500 for path, the hardest bundled task. With the other
// defaults they land the tiny policy's greedy accuracy between 20% and
// 70% (room for RL) in about a minute on 2 cores (results/performance.md, "Pretraining").
func DefaultStepsFor(taskName string) int {
	if taskName == "path" {
		return 1500
	}
	return 1000
}

// DefaultConfig returns the default settings: the tiny model, 1000 steps
// of 32 demonstrations at Adam step size 1e-3, 30% of them flawed, greedy
// accuracy on 200 held-out prompts, seed 0.
func DefaultConfig() Config {
	return Config{Model: ModelSize("tiny"), Steps: 1000, BatchSize: 32, LR: 1e-3, FlawedShare: 0.3, EvalPrompts: 200}
}

// Validate reports the first setting out of range as a *field.Error naming
// its key and value.
func (cfg Config) Validate() error {
	if err := cfg.Model.Validate("pretrain.model"); err != nil {
		return err
	}
	switch {
	case cfg.Steps < 1:
		return &field.Error{Key: "pretrain.steps", Value: cfg.Steps, Msg: "want ≥ 1"}
	case cfg.BatchSize < 1:
		return &field.Error{Key: "pretrain.batch_size", Value: cfg.BatchSize, Msg: "want ≥ 1"}
	case !(cfg.LR > 0):
		return &field.Error{Key: "pretrain.lr", Value: cfg.LR, Msg: "want > 0"}
	case cfg.FlawedShare < 0 || cfg.FlawedShare >= 1:
		return &field.Error{Key: "pretrain.flawed_share", Value: cfg.FlawedShare, Msg: "want in [0, 1)"}
	case cfg.EvalPrompts < 1:
		return &field.Error{Key: "pretrain.eval_prompts", Value: cfg.EvalPrompts, Msg: "want ≥ 1"}
	case cfg.WarmupSteps < 0 || cfg.WarmupSteps >= cfg.Steps:
		return &field.Error{Key: "pretrain.warmup_steps", Value: cfg.WarmupSteps, Msg: fmt.Sprintf("want in [0, %d) (pretrain.steps)", cfg.Steps)}
	case cfg.Schedule != "" && cfg.Schedule != "constant" && cfg.Schedule != "cosine":
		return &field.Error{Key: "pretrain.lr_schedule", Value: cfg.Schedule, Msg: `want "constant" or "cosine"`}
	}
	return nil
}

// Step is the progress of one optimizer step.
type Step struct {
	Step, Steps int
	Loss        float64 // mean NLL per response token
}

// Result is a trained base policy and how it scores.
type Result struct {
	Model     *policy.Model
	Tokenizer *policy.Tokenizer
	Loss      float64 // mean NLL per response token over the last 10% of steps
	EvalAcc   float64 // greedy accuracy on the eval split
	Duration  time.Duration
}

// Train pretrains a fresh model on the task's train-split demonstrations
// (drawn afresh at every use when the task is a task.DemoSampler).
// onStep, if not nil, is called after every step. Cancelling ctx stops it
// between steps with ctx's error.
func Train(ctx context.Context, t task.Task, cfg Config, onStep func(Step)) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	mcfg, err := cfg.Model.Config()
	if err != nil {
		return nil, fmt.Errorf("pretrain: %w", err)
	}
	if err := task.CheckFits(t, mcfg.MaxSeq); err != nil {
		return nil, fmt.Errorf("pretrain: %w", err)
	}
	start := time.Now()
	m, err := policy.NewModel(mcfg, cfg.Seed)
	if err != nil {
		return nil, err
	}
	m.SetBF16Training(cfg.BF16)
	m.SetFlushSubnormals(cfg.FlushSubnormals)
	tok := policy.DefaultTokenizer()
	tr, err := policy.NewTrainer(m, policy.TrainConfig{LR: cfg.LR, Beta1: 0.9, Beta2: 0.99, Eps: 1e-8, MaxGradNorm: 1})
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	var tail []float64
	next := 0 // next train prompt index
	for step := 0; step < cfg.Steps; step++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if cfg.WarmupSteps > 0 || cfg.Schedule == "cosine" {
			tr.SetLR(cfg.LRAt(step))
		}
		seqs := make([][]int, cfg.BatchSize)
		from := make([]int, cfg.BatchSize)
		for i := range seqs {
			p, err := t.Prompt(task.Train, cfg.Seed, next)
			if err != nil {
				return nil, fmt.Errorf("pretrain: %w", err)
			}
			next++
			var response string
			if rng.Float64() < cfg.FlawedShare {
				response = t.FlawedDemo(p, rng)
			} else {
				response = task.DemoFor(t, p, rng) // p.Demo, or a fresh draw of a search task's choices
			}
			seqs[i], from[i], err = Encode(tok, p.Text, response)
			if err != nil {
				return nil, fmt.Errorf("pretrain: prompt %q: %w", p.Text, err)
			}
		}
		b, err := m.NewBatch(seqs)
		if err != nil {
			return nil, fmt.Errorf("pretrain: %w", err)
		}
		loss, _, err := m.NLLLoss(b, from)
		if err != nil {
			return nil, fmt.Errorf("pretrain: %w", err)
		}
		l := float64(loss.Value().Item().F64())
		if _, err := tr.Step(loss); err != nil {
			return nil, fmt.Errorf("pretrain step %d: %w", step, err)
		}
		if step >= cfg.Steps-max(1, cfg.Steps/10) {
			tail = append(tail, l)
		}
		if onStep != nil {
			onStep(Step{Step: step + 1, Steps: cfg.Steps, Loss: l})
		}
	}
	acc, err := GreedyAccuracy(policy.NewEngine(m), tok, t, cfg.EvalPrompts, cfg.Seed)
	if err != nil {
		return nil, err
	}
	var mean float64
	for _, l := range tail {
		mean += l / float64(len(tail))
	}
	m.SetBF16Training(false) // as a model loaded from the cache
	m.SetFlushSubnormals(false)
	return &Result{Model: m, Tokenizer: tok, Loss: mean, EvalAcc: acc, Duration: time.Since(start)}, nil
}

// Encode returns BOS prompt SEP response EOS as token ids and the position
// of the response's first token.
func Encode(tok *policy.Tokenizer, prompt, response string) ([]int, int, error) {
	p, err := tok.EncodePrompt(prompt)
	if err != nil {
		return nil, 0, err
	}
	r, err := tok.Encode(response)
	if err != nil {
		return nil, 0, err
	}
	return append(append(p, r...), policy.EOS), len(p), nil
}

// GreedyAccuracy is the share of the first n eval-split prompts that the
// engine's model answers correctly when decoding greedily. It releases
// the states it makes, so that the engine's next job reuses their caches.
func GreedyAccuracy(e *policy.Engine, tok *policy.Tokenizer, t task.Task, n int, seed uint64) (float64, error) {
	prompts := make([]task.Prompt, n)
	ids := make([][]int, n)
	streams := make([]policy.Stream, n)
	for i := range prompts {
		p, err := t.Prompt(task.Eval, seed, i)
		if err != nil {
			return 0, fmt.Errorf("greedy accuracy: %w", err)
		}
		prompts[i] = p
		if ids[i], err = tok.EncodePrompt(p.Text); err != nil {
			return 0, fmt.Errorf("greedy accuracy: prompt %q: %w", p.Text, err)
		}
	}
	// Prompts differ in length: generation runs to the longest prompt's
	// limit, and the verifier grades a response that runs past the task's
	// own limit as too long.
	maxLen := 0
	for i := range ids {
		maxLen = max(maxLen, len(ids[i])+t.MaxResponseLen()+1)
	}
	maxLen = min(maxLen, e.Config().MaxSeq)
	// In batches of at most policy.EvalBatch prompts, whose caches the next
	// batch reuses (a state's tokens do not depend on its batch).
	outs := make([][]policy.Token, 0, n)
	for lo := 0; lo < n; lo += policy.EvalBatch {
		hi := min(lo+policy.EvalBatch, n)
		batch, err := greedyBatch(e, ids[lo:hi], streams[lo:hi], maxLen)
		if err != nil {
			return 0, fmt.Errorf("greedy accuracy: %w", err)
		}
		outs = append(outs, batch...)
	}
	correct := 0
	for i, toks := range outs {
		if t.Verify(prompts[i], Decode(tok, toks)).Reward == 1 {
			correct++
		}
	}
	return float64(correct) / float64(n), nil
}

// greedyBatch decodes the prompts greedily up to maxLen tokens and
// releases their states.
func greedyBatch(e *policy.Engine, ids [][]int, streams []policy.Stream, maxLen int) ([][]policy.Token, error) {
	states, err := e.PrefillBatch(ids, streams)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, st := range states {
			st.Release()
		}
	}()
	return policy.Complete(e, states, policy.Sampling{}, maxLen)
}

// Decode turns sampled tokens into response text as a verifier reads it
// (see policy.Tokenizer.ResponseText).
func Decode(tok *policy.Tokenizer, toks []policy.Token) string {
	ids := make([]int, len(toks))
	for i, t := range toks {
		ids[i] = t.ID
	}
	return tok.ResponseText(ids)
}

// Summary is what a cached checkpoint directory records beside the
// weights (summary.json).
type Summary struct {
	Task     string  `json:"task"`
	Config   Config  `json:"config"`
	Loss     float64 `json:"loss"`
	EvalAcc  float64 `json:"eval_acc"`
	Seconds  float64 `json:"seconds"`
	CacheKey string  `json:"cache_key"`
}

// Cached returns the base policy for (task, params, cfg) from cacheDir,
// training and saving it first if it is not there. The third result
// reports whether it came from the cache.
func Cached(ctx context.Context, cacheDir string, t task.Task, taskParams any, cfg Config, onStep func(Step)) (string, Summary, bool, error) {
	key, err := dircache.Key(struct {
		Version    int
		Task       string
		TaskParams any
		Config     Config
	}{1, t.Name(), taskParams, cfg})
	if err != nil {
		return "", Summary{}, false, err
	}
	return dircache.Get(cacheDir, "pretrain", t.Name(), key, func(dir string) (Summary, error) {
		res, err := Train(ctx, t, cfg, onStep)
		if err != nil {
			return Summary{}, err
		}
		if err := policy.Save(dir, res.Model, res.Tokenizer); err != nil {
			return Summary{}, err
		}
		return Summary{Task: t.Name(), Config: cfg, Loss: res.Loss, EvalAcc: res.EvalAcc, Seconds: res.Duration.Seconds(), CacheKey: key}, nil
	})
}
