// Package config reads experiment configurations: strict YAML (an unknown
// key, a wrong type or a value out of range is an error naming the key, the
// file and the line), documented defaults, --set overrides, and the
// expansion of ablation axes and explicit variants into runs over seeds.
//
// A configuration file looks like this (every key optional but task.name):
//
//	name: quickstart
//	task: {name: add, params: {digits: 3}}
//	model: tiny                   # or {size: small, max_seq: 384}, or explicit dims
//	pretrain: {steps: 600}
//	rollout: {strategy: flat, params: {n: 8}, temperature: 1, budget: 0}
//	train: {steps: 20, prompts_per_step: 8, advantage: grpo}
//	eval: {every: 5, prompts: 100, k: 4}
//	seeds: [1, 2, 3]
//	ablate:
//	  rollout.strategy: [flat, entropy_tree]
//
// Each variant × seed is a run whose id is a hash of its resolved
// configuration and seed, so reruns and shards of the same grid find each
// other in a store.
//
// The key design: declares the checks the experiment's reports test, the
// premises they rest on, α, the power to plan for and the correction for
// multiplicity (see package design); it is not part of a run's
// configuration (run ids do not depend on it) but of the experiment's
// resolved design (File.DesignRecord), which rollout run records with its
// hash before the first run.
//
// # Errors
//
// Every error is an *Error naming where the offending value was written:
// the file and the line of its key (inside flow mappings too), or the
// --set flag that gave it; its dotted key there ("train.lr",
// "variants[1].set.rollout.params.m", "ablate.train.lr"); and what is
// wrong with the value:
//
//	cfg.yaml:7: train.prompts_per_step: "eight" is not an integer
//	cfg.yaml:12: variants[1].set.rollout.params.m: entropy_tree: m = 0, want >= 1
//	cfg.yaml: --set train.lr=abc: "abc" is not a number
//
// Sections validate themselves and return typed errors (*field.Error,
// *search.ParamError) carrying the key, which is how the line is found;
// errors.As reaches them through an *Error. An unknown key is answered
// with the nearest valid key there, when one is near enough to be a
// misspelling, and the full list of keys valid at that place:
//
//	cfg.yaml:3: train.stpes: unknown key; did you mean train.steps? (known here: advantage, bf16, …)
//
// # YAML and bounds
//
// A file holds one YAML document (a second, after ---, is an error). An
// alias (*name) stands for its anchor's value wherever a value may be —
// a key's value, a variant's set, an ablation axis or one of its values,
// the seeds — and merge keys (<<: *name) add a mapping's keys; an error
// inside an aliased value points at the alias. A few kilobytes cannot
// expand without bound: a file is at most MaxFileBytes, MaxNodes values
// once its aliases are expanded, MaxVariants variants and MaxRuns runs;
// beyond, the error names each ablation axis, its length and their
// product. The data of a jsonl task is read when the config is checked,
// so a character a local policy cannot read is an error there, before
// anything is written.
//
// # Overrides
//
// A --set override applies to the base, before variants and axes, so it
// reaches every variant. A --set of a key that a variant's set or an
// ablation axis also sets — the same key, or one a prefix of the other
// (a variant sets rollout.params, --set rollout.params.m=4) — is an error
// naming both places: the variant or axis would replace the override
// without a word. Unknown keys, unparsable values and unknown strategies
// or strategy parameters are errors wherever they are written (base,
// variant, axis, --set): each variant's strategy parameters are parsed by
// the strategy's own parser, and the base's keys, value types, strategy and
// strategy parameters are checked even where every variant replaces them.
package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rollout-rl/rollout/experiments/design"
	"github.com/rollout-rl/rollout/experiments/pretrain"
	"github.com/rollout-rl/rollout/experiments/reward"
	"github.com/rollout-rl/rollout/experiments/rl"
)

// Experiment is one resolved variant of a configuration: every field set.
type Experiment struct {
	// Name of the experiment, shared by its variants. Default: the file
	// name without its extension.
	Name string `yaml:"name" json:"name"`
	// Task to train on: its name (add, countdown, path) and parameters.
	Task Task `yaml:"task" json:"task"`
	// Model is the policy's shape: a size (tiny, small, medium), or a mapping
	// {size, dim, layers, heads, hidden, max_seq} whose keys not given
	// take the size's values (see pretrain.Model). Default tiny.
	Model pretrain.Model `yaml:"model" json:"model"`
	// Checkpoint, if set, is a checkpoint directory (relative to the
	// config file) to start from instead of pretraining.
	Checkpoint string `yaml:"checkpoint" json:"checkpoint"`
	// Pretrain makes the base policy (see package pretrain); its model is
	// the top-level model, and its steps default per task
	// (pretrain.DefaultStepsFor).
	Pretrain pretrain.Config `yaml:"pretrain" json:"pretrain"`
	// Rollout says how rollouts are generated.
	Rollout Rollout `yaml:"rollout" json:"rollout"`
	// Train is the RL loop's hyperparameters (see package rl).
	Train rl.Config `yaml:"train" json:"train"`
	// Eval is the held-out evaluation.
	Eval rl.EvalConfig `yaml:"eval" json:"eval"`
	// Reward weighs the reward's terms: verifier, model (a learned reward
	// model), format and length (see package reward). Default: the
	// verifier alone.
	Reward reward.Config `yaml:"reward" json:"reward"`
	// RewardModel says how the reward model is built from the base policy
	// when reward.model > 0 (trained once per base policy, then cached).
	RewardModel reward.BuildConfig `yaml:"reward_model" json:"reward_model"`
}

// Task names a task and its parameters.
type Task struct {
	Name string `yaml:"name" json:"name"`
	// Params is the task's parameter struct (task.AddParams, …) with every
	// field resolved; in YAML, a mapping of its fields.
	Params any `yaml:"params" json:"params"`
}

// Rollout is the rollout strategy and sampling.
type Rollout struct {
	// Strategy is a registered strategy (search.Names: flat, entropy_tree,
	// random_tree, segment_tree and any that another package registers).
	// Default flat.
	Strategy string `yaml:"strategy" json:"strategy"`
	// Params are the strategy's parameters (flat: n; entropy_tree: m, n,
	// l, t, score; random_tree: m, n, l, t; segment_tree: s, b, w); unset
	// ones take the strategy's defaults.
	Params map[string]string `yaml:"params" json:"params"`
	// Temperature, TopK and TopP shape the sampling distribution.
	// Defaults 1, 0 (off), 1 (off).
	Temperature float64 `yaml:"temperature" json:"temperature"`
	TopK        int     `yaml:"top_k" json:"top_k"`
	TopP        float64 `yaml:"top_p" json:"top_p"`
	// Budget is the per-prompt limit on generated tokens; 0: none.
	Budget int64 `yaml:"budget" json:"budget"`
	// MaxTokens caps a response's length in tokens, EOS included, below
	// the task's longest response (search.Request.MaxTokens: the cap
	// L_max of train.overlong, and what train.total_tokens and
	// eval.every_tokens count a group's longest cost with); 0, or the
	// task's longest response and EOS itself, resolves to 0: no cap below
	// the task's. Evaluation generates up to the task's longest response
	// whatever the cap. Default 0. (Left out of the JSON and YAML encodings
	// when 0, so run ids and recorded variant configs of configs without it
	// stay what they were.)
	MaxTokens int `yaml:"max_tokens,omitempty" json:"max_tokens,omitzero"`
	// Int8 samples from a weight-only int8 copy of the policy. Default
	// false.
	Int8 bool `yaml:"int8" json:"int8"`
	// Adaptive sets each prompt's fork budget from a running estimate of
	// its pass rate (rl.Setup.Adaptive): the most forks where the estimate
	// is mid-range, none where the prompt is always or never solved.
	// Strategies with a fork budget only (entropy_tree, random_tree,
	// tree_grpo). Default false (left out of the encodings when false).
	Adaptive bool `yaml:"adaptive,omitempty" json:"adaptive,omitempty"`
}

// Variant is a named resolved configuration.
type Variant struct {
	Name   string
	Config Experiment
}

// Run is one variant at one seed.
type Run struct {
	ID      string // hash of the resolved configuration and the seed
	Variant string
	Seed    uint64
	Config  Experiment
}

// File is a loaded configuration: its variants and seeds.
type File struct {
	Path     string
	Name     string
	Variants []Variant
	Seeds    []uint64
	// Baseline is the variant reports compare against. Default: the
	// first variant.
	Baseline string
	// Text is the file's content, kept with the experiment in a store.
	Text string
	// Design is the file's design: key, its declared checks (see package
	// design); design.Default when it has none.
	Design design.Design
}

// Runs lists every variant × seed, variants first.
func (f *File) Runs() []Run {
	var runs []Run
	for _, v := range f.Variants {
		for _, s := range f.Seeds {
			runs = append(runs, Run{ID: RunID(v.Config, s), Variant: v.Name, Seed: s, Config: v.Config})
		}
	}
	return runs
}

// RunID is the hash of a resolved configuration and a seed.
func RunID(cfg Experiment, seed uint64) string {
	b, _ := json.Marshal(struct {
		Config Experiment
		Seed   uint64
	}{cfg, seed})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:6])
}

// Load reads a configuration file, applies overrides ("dotted.key=value",
// the value in YAML syntax) and resolves its variants. Nothing is written.
func Load(path string, overrides []string) (*File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load config: %w", err)
	}
	defer fh.Close()
	// One byte more than the bound, for Parse to refuse.
	raw, err := io.ReadAll(io.LimitReader(fh, MaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("load config %s: %w", path, err)
	}
	return Parse(path, raw, overrides)
}

// Parse is Load on a file's content; path names it in errors and anchors
// relative checkpoint paths. Every error is an *Error.
func Parse(path string, raw []byte, overrides []string) (*File, error) {
	base, err := parseBase(path, raw)
	if err != nil {
		return nil, err
	}
	flags, err := base.applyOverrides(overrides)
	if err != nil {
		return nil, err
	}
	f := &File{Path: path, Text: string(raw)}
	seedsNode := take(base.root, "seeds")
	ablateNode := take(base.root, "ablate")
	variantsNode := take(base.root, "variants")
	baselineNode := take(base.root, "baseline")
	designNode := take(base.root, "design")
	if f.Seeds, err = base.seeds(seedsNode); err != nil {
		return nil, err
	}
	if err := base.checkBase(); err != nil {
		return nil, err
	}
	bases, setters, err := base.variants(variantsNode)
	if err != nil {
		return nil, err
	}
	axes, axisSetters, err := base.axes(ablateNode)
	if err != nil {
		return nil, err
	}
	if err := checkConflicts(path, flags, append(setters, axisSetters...)); err != nil {
		return nil, err
	}
	if err := checkGrid(path, len(bases), axes, len(f.Seeds)); err != nil {
		return nil, err
	}
	expanded, err := expand(path, bases, axes)
	if err != nil {
		return nil, err
	}
	if err := base.checkReplaced(expanded); err != nil {
		return nil, err
	}
	defaultName := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	if f.Variants, err = resolveAll(path, expanded, defaultName, f.Seeds); err != nil {
		return nil, err
	}
	if err := f.setBaseline(base, baselineNode); err != nil {
		return nil, err
	}
	if f.Design, err = base.parseDesign(designNode, f); err != nil {
		return nil, err
	}
	return f, nil
}

// Defaults returns the configuration every file starts from: the tiny
// model, pretraining, flat sampling at temperature 1 and the RL and
// evaluation defaults of package rl. A key given in a file replaces its
// default, zero values included.
func Defaults() Experiment {
	return Experiment{
		Model:       pretrain.ModelSize("tiny"),
		Pretrain:    pretrain.DefaultConfig(),
		Rollout:     Rollout{Strategy: "flat", Temperature: 1, TopP: 1},
		Train:       rl.DefaultConfig(),
		Eval:        rl.DefaultEvalConfig(),
		Reward:      reward.DefaultConfig(),
		RewardModel: reward.DefaultBuildConfig(),
	}
}

// Canonical rewrites a resolved configuration text (as Marshal wrote it,
// possibly by an earlier build) into the text Marshal writes today: keys
// added since are filled with their defaults, and those Marshal leaves out
// at their defaults are left out. The store compares an experiment's
// recorded variant configs with new ones through it.
func Canonical(text string) (string, error) {
	var cfg Experiment
	if err := yaml.Unmarshal([]byte(text), &cfg); err != nil {
		return "", fmt.Errorf("resolved config: %w", err)
	}
	b, err := Marshal(cfg)
	return string(b), err
}

// Marshal renders a resolved configuration as YAML.
func Marshal(cfg Experiment) ([]byte, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(cfg); err != nil {
		return nil, err
	}
	return buf.Bytes(), enc.Close()
}
