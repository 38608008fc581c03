package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rollout-rl/rollout/experiments/config/field"
	"github.com/rollout-rl/rollout/experiments/pretrain"
	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/search"
)

// resolve decodes one variant's tree strictly, fills in the defaults and
// validates every section. Every error names the place where the
// offending key was written (see tree.fail).
func resolve(t *tree, defaultName string) (Experiment, error) {
	// The task's parameters are decoded into the task's own struct, once
	// its name is known.
	body := clone(t.root)
	var paramsNode *yaml.Node
	if tn := find(body, "task"); tn != nil && tn.Kind == yaml.MappingNode {
		paramsNode = take(tn, "params")
	}
	cfg := Defaults()
	if err := decodeStrict(body, &cfg, ""); err != nil {
		return cfg, t.relocate(err)
	}
	if cfg.Name == "" {
		cfg.Name = defaultName
	}
	if cfg.Task.Name == "" {
		return cfg, t.fail("task.name", nil, "required: one of %s", strings.Join(task.AllNames(), ", "))
	}
	params, err := task.DefaultParams(cfg.Task.Name)
	if err != nil {
		return cfg, t.fail("task.name", err, "%v", err)
	}
	if paramsNode != nil {
		if err := decodeStrict(paramsNode, params, "task.params"); err != nil {
			return cfg, t.relocate(err)
		}
	}
	anchorTaskFiles(params, t.path)
	cfg.Task.Params = deref(params)
	tk, err := task.New(cfg.Task.Name, cfg.Task.Params)
	if err != nil {
		return cfg, t.fail("task.params", err, "%v", err)
	}
	// Runs train a local policy, which reads only task.Alphabet: data it
	// cannot encode is refused here, before anything is written, rather
	// than when pretraining reads it.
	if err := task.CheckAlphabet(tk); err != nil {
		return cfg, t.fail("task.params.path", err, "%v", err)
	}
	if err := validateModel(cfg, tk, t); err != nil {
		return cfg, err
	}
	if err := validate(&cfg, t); err != nil {
		return cfg, err
	}
	if err := validateLength(&cfg, tk, t); err != nil {
		return cfg, err
	}
	// What a run's loop would refuse and needs no model (train.total_tokens
	// below one group's longest cost, …) is refused here, before anything
	// is written.
	s, err := cfg.setupOf(tk)
	if err == nil {
		err = s.Check()
	}
	if err != nil {
		return cfg, fieldFail(t, err)
	}
	return cfg, nil
}

// anchorTaskFiles makes a relative data file of the task's parameters (the
// jsonl task's path) relative to the directory of the config file at
// configPath rather than to the working directory, as checkpoint is. A
// config in the working directory keeps its path as written (the same
// resolved config, the same run ids).
func anchorTaskFiles(params any, configPath string) {
	p, ok := params.(*task.JSONLParams)
	if !ok || p.Path == "" || filepath.IsAbs(p.Path) {
		return
	}
	if dir := filepath.Dir(configPath); dir != "." {
		p.Path = filepath.Join(dir, p.Path)
	}
}

// validateLength checks rollout.max_tokens against the task's longest
// response and train.overlong_cache against the cap, and resolves the
// settings that change nothing to their zero values (left out of the run
// id): a cap equal to the task's maximum, a cache without overlong:
// penalty, an empty overlong mode (truncate).
func validateLength(cfg *Experiment, tk task.Task, t *tree) error {
	taskMax := tk.MaxResponseLen() + 1
	r := &cfg.Rollout
	if r.MaxTokens < 0 || r.MaxTokens > taskMax {
		return t.fail("rollout.max_tokens", nil, "%d, want in [1, %d] (task %s's longest response, %d tokens, and EOS; 0: that maximum)",
			r.MaxTokens, taskMax, tk.Name(), tk.MaxResponseLen())
	}
	if r.MaxTokens == taskMax {
		r.MaxTokens = 0
	}
	capLen := taskMax
	if r.MaxTokens > 0 {
		capLen = r.MaxTokens
	}
	tr := &cfg.Train
	if tr.Overlong == "" {
		tr.Overlong = rl.OverlongTruncate
	}
	if tr.Overlong != rl.OverlongPenalty {
		tr.OverlongCache = 0
	} else if tr.OverlongCache > capLen {
		return t.fail("train.overlong_cache", nil, "%d is longer than the response cap L_max = %d tokens (rollout.max_tokens, else task %s's longest response and EOS)",
			tr.OverlongCache, capLen, tk.Name())
	}
	return nil
}

// validate checks the sections of a decoded configuration after its task,
// filling in what depends on other keys (the pretraining model and steps,
// the checkpoint's path).
func validate(cfg *Experiment, t *tree) error {
	if cfg.Checkpoint != "" {
		p := cfg.Checkpoint
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(t.path), p)
		}
		if _, err := os.Stat(filepath.Join(p, "config.json")); err != nil {
			return t.fail("checkpoint", err, "%s is not a checkpoint directory: %v", cfg.Checkpoint, errors.Unwrap(err))
		}
		cfg.Checkpoint = p
	}
	cfg.Pretrain.Model = cfg.Model
	if find(find(t.root, "pretrain"), "steps") == nil {
		cfg.Pretrain.Steps = pretrain.DefaultStepsFor(cfg.Task.Name)
	}
	if err := cfg.Pretrain.Validate(); err != nil {
		return fieldFail(t, err)
	}
	if err := validateRollout(cfg.Rollout, t); err != nil {
		return err
	}
	for _, err := range []error{cfg.Train.Validate(), cfg.Eval.Validate(), cfg.Reward.Validate(), cfg.RewardModel.Validate()} {
		if err != nil {
			return fieldFail(t, err)
		}
	}
	return nil
}

// validateModel checks the model's shape (dim divisible by heads, an even
// head width, positive sizes) and, unless a checkpoint replaces it, that
// its max_seq holds the task's longest prompt and response. An error
// written as a plain size ("model: tiny") is placed on "model".
func validateModel(cfg Experiment, tk task.Task, t *tree) error {
	key := func(k string) string {
		if n := find(t.root, "model"); n != nil && n.Kind == yaml.ScalarNode {
			return "model"
		}
		return k
	}
	if err := cfg.Model.Validate("model"); err != nil {
		var fe *field.Error
		if errors.As(err, &fe) {
			return t.fail(key(fe.Key), err, "%s", fe.Detail())
		}
		return t.fail("model", err, "%v", err)
	}
	if cfg.Checkpoint != "" {
		return nil
	}
	need := tk.MaxPromptLen() + tk.MaxResponseLen() + 3
	if cfg.Model.MaxSeq < need {
		return t.fail(key("model.max_seq"), nil, "max_seq %d is shorter than the %d positions task %s needs (longest prompt %d + longest response %d + BOS, SEP, EOS); set model: {size: %s, max_seq: %d} or more",
			cfg.Model.MaxSeq, need, tk.Name(), tk.MaxPromptLen(), tk.MaxResponseLen(), cfg.Model.Size, need)
	}
	return nil
}

// validateRollout checks the strategy and its parameters with the
// strategy's own parser, and the sampling settings one key at a time.
func validateRollout(r Rollout, t *tree) error {
	if _, err := r.NewStrategy(); err != nil {
		return strategyFail(t, err)
	}
	for _, s := range []struct {
		key      string
		sampling policy.Sampling
	}{
		{"rollout.temperature", policy.Sampling{Temperature: r.Temperature, TopP: 1}},
		{"rollout.top_k", policy.Sampling{Temperature: 1, TopK: r.TopK, TopP: 1}},
		{"rollout.top_p", policy.Sampling{Temperature: 1, TopP: r.TopP}},
		{"rollout", r.Sampling()},
	} {
		if err := s.sampling.Validate(); err != nil {
			return t.fail(s.key, err, "%v", err)
		}
	}
	if r.Budget < 0 {
		return t.fail("rollout.budget", nil, "%d, want ≥ 0 (0: no limit)", r.Budget)
	}
	return nil
}

// strategyFail places an error of search.NewStrategy on the parameter or
// the strategy it names.
func strategyFail(t *tree, err error) error {
	var pe *search.ParamError
	if errors.As(err, &pe) {
		return t.fail("rollout.params."+pe.Key, err, "%v", err)
	}
	return t.fail("rollout.strategy", err, "%v", err)
}

// fieldFail places a section's validation error on the key it names (a
// *field.Error), or on no key.
func fieldFail(t *tree, err error) error {
	var fe *field.Error
	if errors.As(err, &fe) {
		return t.fail(fe.Key, err, "%s", fe.Detail())
	}
	return &Error{File: t.path, Msg: err.Error(), Err: err}
}

// NewStrategy is the rollout strategy the settings name, built by the
// strategy's own constructor (search.NewStrategy): validation, runs and
// `rollout sample` all get theirs here.
func (r Rollout) NewStrategy() (search.Strategy, error) {
	return search.NewStrategy(r.Strategy, r.Params)
}

// Setup is the setup of a run of c without its models, tokenizer, reward
// mixer and seed: the task, the strategy and every setting, all that
// rl.Setup.Check reads. The runner adds the rest.
func (c Experiment) Setup() (rl.Setup, error) {
	tk, err := task.New(c.Task.Name, c.Task.Params)
	if err != nil {
		return rl.Setup{}, err
	}
	return c.setupOf(tk)
}

// setupOf is Setup with the task built.
func (c Experiment) setupOf(tk task.Task) (rl.Setup, error) {
	st, err := c.Rollout.NewStrategy()
	if err != nil {
		return rl.Setup{}, err
	}
	return rl.Setup{
		Task: tk, Strategy: st,
		Sampling: c.Rollout.Sampling(), Budget: c.Rollout.Budget, MaxTokens: c.Rollout.MaxTokens, Int8: c.Rollout.Int8, Adaptive: c.Rollout.Adaptive,
		EvalEveryTokens: c.Eval.EveryTokens, EvalEveryFLOPs: c.Eval.EveryFLOPs, Train: c.Train,
	}, nil
}
