// Package config reads experiment configurations: strict YAML (an unknown
// key, a wrong type or a value out of range is an error naming the key, the
// file and the line), documented defaults, --set overrides, and the
// expansion of ablation axes and explicit variants into runs over seeds.
//
// A configuration file looks like this (every key optional but task.name):
//
//	name: quickstart
//	task: {name: add, params: {digits: 3}}
//	model: tiny
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
package config

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rollout-rl/rollout/experiments/pretrain"
	"github.com/rollout-rl/rollout/experiments/reward"
	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/search"
)

// Experiment is one resolved variant of a configuration: every field set.
type Experiment struct {
	// Name of the experiment, shared by its variants. Default: the file
	// name without its extension.
	Name string `yaml:"name" json:"name"`
	// Task to train on: its name (add, countdown, path) and parameters.
	Task Task `yaml:"task" json:"task"`
	// Model size of the policy (tiny, small). Default tiny.
	Model string `yaml:"model" json:"model"`
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
	// Strategy is flat, entropy_tree, random_tree or segment_tree. Default
	// flat.
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
	// Int8 samples from a weight-only int8 copy of the policy. Default
	// false.
	Int8 bool `yaml:"int8" json:"int8"`
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

// Error is a configuration error: the file, the line (0 when unknown or an
// override) and the key.
type Error struct {
	File string
	Line int
	Key  string
	Msg  string
}

func (e *Error) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	if e.Key != "" {
		return fmt.Sprintf("%s: %s: %s", loc, e.Key, e.Msg)
	}
	return fmt.Sprintf("%s: %s", loc, e.Msg)
}

// Load reads a configuration file, applies overrides ("dotted.key=value",
// the value in YAML syntax) and resolves its variants. Nothing is written.
func Load(path string, overrides []string) (*File, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load config: %w", err)
	}
	return Parse(path, raw, overrides)
}

// Parse is Load on a file's content; path names it in errors and anchors
// relative checkpoint paths.
func Parse(path string, raw []byte, overrides []string) (*File, error) {
	fail := func(n *yaml.Node, key, format string, args ...any) error {
		line := 0
		if n != nil {
			line = n.Line
		}
		return &Error{File: path, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, &Error{File: path, Msg: strings.TrimPrefix(err.Error(), "yaml: ")}
	}
	root := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if len(doc.Content) > 0 {
		root = doc.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		return nil, fail(root, "", "the configuration must be a mapping of keys")
	}
	for _, o := range overrides {
		key, value, ok := strings.Cut(o, "=")
		if !ok || key == "" {
			return nil, &Error{File: path, Key: o, Msg: "override must be key=value"}
		}
		var v yaml.Node
		if err := yaml.Unmarshal([]byte(value), &v); err != nil || len(v.Content) == 0 {
			v = yaml.Node{Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}}}
		}
		clearLines(v.Content[0])
		if err := set(root, strings.Split(key, "."), v.Content[0]); err != nil {
			return nil, &Error{File: path, Key: key, Msg: "--set: " + err.Error()}
		}
	}

	f := &File{Path: path, Text: string(raw)}
	seedsNode := take(root, "seeds")
	ablateNode := take(root, "ablate")
	variantsNode := take(root, "variants")
	baselineNode := take(root, "baseline")

	f.Seeds = []uint64{1}
	if seedsNode != nil {
		f.Seeds = nil
		if err := decodeStrict(seedsNode, &f.Seeds, "seeds"); err != nil {
			return nil, withFile(err, path)
		}
		if len(f.Seeds) == 0 {
			return nil, fail(seedsNode, "seeds", "empty list: give at least one seed")
		}
		for i, s := range f.Seeds {
			if slices.Contains(f.Seeds[:i], s) {
				return nil, fail(seedsNode.Content[i], "seeds", "seed %d is listed twice", s)
			}
		}
	}

	// Explicit variants, each the base with its own settings.
	type named struct {
		name string
		node *yaml.Node
	}
	bases := []named{{"", root}}
	if variantsNode != nil {
		if variantsNode.Kind != yaml.SequenceNode || len(variantsNode.Content) == 0 {
			return nil, fail(variantsNode, "variants", "must be a non-empty list of {name, set}")
		}
		bases = nil
		for i, vn := range variantsNode.Content {
			var v struct {
				Name string               `yaml:"name"`
				Set  map[string]yaml.Node `yaml:"set"`
			}
			key := fmt.Sprintf("variants[%d]", i)
			if err := decodeStrict(vn, &v, key); err != nil {
				return nil, withFile(err, path)
			}
			if v.Name == "" {
				return nil, fail(vn, key+".name", "a variant needs a name")
			}
			n := clone(root)
			for _, k := range slices.Sorted(mapsKeys(v.Set)) {
				val := v.Set[k]
				if err := set(n, strings.Split(k, "."), &val); err != nil {
					return nil, fail(&val, key+".set."+k, "%v", err)
				}
			}
			bases = append(bases, named{v.Name, n})
		}
	}

	// Ablation axes, a grid over the bases.
	type axis struct {
		key    string
		values []*yaml.Node
	}
	var axes []axis
	if ablateNode != nil {
		if ablateNode.Kind != yaml.MappingNode {
			return nil, fail(ablateNode, "ablate", "must map dotted keys to lists of values")
		}
		for i := 0; i+1 < len(ablateNode.Content); i += 2 {
			k, vals := ablateNode.Content[i], ablateNode.Content[i+1]
			if vals.Kind != yaml.SequenceNode {
				return nil, fail(vals, "ablate."+k.Value, "must be a list of values")
			}
			if len(vals.Content) == 0 {
				return nil, fail(vals, "ablate."+k.Value, "empty axis: give at least one value")
			}
			axes = append(axes, axis{k.Value, vals.Content})
		}
	}
	var expanded []named
	for _, b := range bases {
		grid := []named{b}
		for _, ax := range axes {
			var next []named
			for _, g := range grid {
				for _, val := range ax.values {
					n := clone(g.node)
					if err := set(n, strings.Split(ax.key, "."), val); err != nil {
						return nil, fail(val, "ablate."+ax.key, "%v", err)
					}
					label := lastPart(ax.key) + "=" + scalarText(val)
					next = append(next, named{joinName(g.name, label), n})
				}
			}
			grid = next
		}
		expanded = append(expanded, grid...)
	}

	defaultName := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
	for _, e := range expanded {
		cfg, err := resolve(e.node, path, defaultName)
		if err != nil {
			return nil, err
		}
		name := e.name
		if name == "" {
			name = "base"
		}
		for _, v := range f.Variants {
			if v.Name == name {
				return nil, &Error{File: path, Key: "variants", Msg: fmt.Sprintf("two variants are named %q", name)}
			}
		}
		f.Variants = append(f.Variants, Variant{Name: name, Config: cfg})
	}
	f.Name = f.Variants[0].Config.Name
	f.Baseline = f.Variants[0].Name
	if baselineNode != nil {
		f.Baseline = baselineNode.Value
		if !slices.ContainsFunc(f.Variants, func(v Variant) bool { return v.Name == f.Baseline }) {
			names := make([]string, len(f.Variants))
			for i, v := range f.Variants {
				names[i] = v.Name
			}
			return nil, fail(baselineNode, "baseline", "no variant is named %q (variants: %s)", f.Baseline, strings.Join(names, ", "))
		}
	}
	return f, nil
}

// resolve decodes one variant's tree strictly, fills in the defaults and
// validates every section.
func resolve(n *yaml.Node, path, defaultName string) (Experiment, error) {
	// The task's parameters are decoded into the task's own struct, once
	// its name is known.
	body := clone(n)
	taskNode := find(body, "task")
	var paramsNode *yaml.Node
	if taskNode != nil && taskNode.Kind == yaml.MappingNode {
		paramsNode = take(taskNode, "params")
	}
	cfg := Defaults()
	if err := decodeStrict(body, &cfg, ""); err != nil {
		return cfg, withFile(err, path)
	}
	if cfg.Name == "" {
		cfg.Name = defaultName
	}
	if cfg.Task.Name == "" {
		return cfg, &Error{File: path, Line: lineOf(taskNode, n), Key: "task.name", Msg: fmt.Sprintf("required: one of %s", strings.Join(task.Names(), ", "))}
	}
	params, err := task.DefaultParams(cfg.Task.Name)
	if err != nil {
		return cfg, &Error{File: path, Line: lineOf(find(taskNode, "name"), n), Key: "task.name", Msg: err.Error()}
	}
	ptr := params // a pointer to the task's default parameters
	if paramsNode != nil {
		if err := decodeStrict(paramsNode, ptr, "task.params"); err != nil {
			return cfg, withFile(err, path)
		}
	}
	cfg.Task.Params = deref(ptr)
	if _, err := task.New(cfg.Task.Name, cfg.Task.Params); err != nil {
		return cfg, &Error{File: path, Line: lineOf(paramsNode, n), Key: "task.params", Msg: err.Error()}
	}

	if _, err := policyShape(cfg.Model); err != nil {
		return cfg, &Error{File: path, Line: lineOf(find(n, "model"), n), Key: "model", Msg: err.Error()}
	}
	if cfg.Checkpoint != "" {
		p := cfg.Checkpoint
		if !filepath.IsAbs(p) {
			p = filepath.Join(filepath.Dir(path), p)
		}
		if _, err := os.Stat(filepath.Join(p, "config.json")); err != nil {
			return cfg, &Error{File: path, Line: lineOf(find(n, "checkpoint"), n), Key: "checkpoint", Msg: fmt.Sprintf("%s is not a checkpoint directory: %v", cfg.Checkpoint, errors.Unwrap(err))}
		}
		cfg.Checkpoint = p
	}
	cfg.Pretrain.Model = cfg.Model
	if find(find(n, "pretrain"), "steps") == nil {
		cfg.Pretrain.Steps = pretrain.DefaultStepsFor(cfg.Task.Name)
	}
	if err := cfg.Pretrain.Validate(); err != nil {
		return cfg, &Error{File: path, Line: lineOf(find(n, "pretrain"), n), Msg: err.Error()}
	}

	r := &cfg.Rollout
	rollNode := find(n, "rollout")
	if _, err := search.NewStrategy(r.Strategy, r.Params); err != nil {
		return cfg, &Error{File: path, Line: lineOf(find(rollNode, "strategy"), n), Key: "rollout", Msg: err.Error()}
	}
	if err := r.Sampling().Validate(); err != nil {
		return cfg, &Error{File: path, Line: lineOf(rollNode, n), Key: "rollout", Msg: err.Error()}
	}
	if r.Budget < 0 {
		return cfg, &Error{File: path, Line: lineOf(find(rollNode, "budget"), n), Key: "rollout.budget", Msg: fmt.Sprintf("%d, want ≥ 0 (0: no limit)", r.Budget)}
	}

	if err := cfg.Train.Validate(); err != nil {
		return cfg, &Error{File: path, Line: lineOf(keyNodeFromMsg(n, err.Error()), n), Msg: err.Error()}
	}
	if err := cfg.Eval.Validate(); err != nil {
		return cfg, &Error{File: path, Line: lineOf(keyNodeFromMsg(n, err.Error()), n), Msg: err.Error()}
	}
	if err := cfg.Reward.Validate(); err != nil {
		return cfg, &Error{File: path, Line: lineOf(find(n, "reward"), n), Msg: err.Error()}
	}
	if err := cfg.RewardModel.Validate(); err != nil {
		return cfg, &Error{File: path, Line: lineOf(keyNodeFromMsg(n, err.Error()), n), Msg: err.Error()}
	}
	return cfg, nil
}

// Defaults returns the configuration every file starts from: the tiny
// model, pretraining, flat sampling at temperature 1 and the RL and
// evaluation defaults of package rl. A key given in a file replaces its
// default, zero values included.
func Defaults() Experiment {
	return Experiment{
		Model:       "tiny",
		Pretrain:    pretrain.DefaultConfig(),
		Rollout:     Rollout{Strategy: "flat", Temperature: 1, TopP: 1},
		Train:       rl.DefaultConfig(),
		Eval:        rl.DefaultEvalConfig(),
		Reward:      reward.DefaultConfig(),
		RewardModel: reward.DefaultBuildConfig(),
	}
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
