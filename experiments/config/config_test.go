package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/experiments/pretrain"
	"github.com/rollout-rl/rollout/experiments/task"
)

const good = `name: demo
task:
  name: add
  params: {digits: 2}
rollout:
  strategy: flat
  params: {n: 4}
train:
  steps: 3
  lr: 3e-4
seeds: [1, 2]
`

func TestLoadResolvesDefaults(t *testing.T) {
	f, err := Parse("demo.yaml", []byte(good), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Variants) != 1 || f.Variants[0].Name != "base" || f.Baseline != "base" {
		t.Fatalf("variants %+v", f.Variants)
	}
	c := f.Variants[0].Config
	if c.Name != "demo" || c.Model != pretrain.ModelSize("tiny") || c.Train.Steps != 3 || c.Train.LR != 3e-4 || c.Train.Advantage != "grpo" ||
		c.Train.ClipHigh != 0.28 || c.Rollout.Temperature != 1 || c.Rollout.Params["n"] != "4" || c.Eval.K != 4 {
		t.Fatalf("resolved %+v", c)
	}
	if p, ok := c.Task.Params.(task.AddParams); !ok || p.Digits != 2 || !p.Scratchpad {
		t.Fatalf("task params %#v", c.Task.Params)
	}
	runs := f.Runs()
	if len(runs) != 2 || runs[0].ID == runs[1].ID {
		t.Fatalf("runs %+v", runs)
	}
	// The id is a pure function of the resolved config and seed.
	again, _ := Parse("elsewhere/demo.yaml", []byte(good), nil)
	if again.Runs()[1].ID != runs[1].ID {
		t.Fatal("run id depends on more than the config and seed")
	}
	if c.Pretrain.Steps != 1000 {
		t.Errorf("pretrain.steps %d, want add's default 1000", c.Pretrain.Steps)
	}
	for src, want := range map[string]int{"task: {name: path}\n": 1500, "task: {name: path}\npretrain: {steps: 7}\n": 7} {
		f, err := Parse("p.yaml", []byte(src), nil)
		if err != nil || f.Variants[0].Config.Pretrain.Steps != want {
			t.Errorf("%q: pretrain.steps %v (%v), want %d", src, f.Variants[0].Config.Pretrain.Steps, err, want)
		}
	}
	shown, err := Marshal(c)
	if err != nil || !strings.Contains(string(shown), "clip_high: 0.28") {
		t.Fatalf("marshal: %v\n%s", err, shown)
	}
}

func TestAblateAndVariantsExpand(t *testing.T) {
	src := good + `ablate:
  rollout.strategy: [flat, entropy_tree]
  train.advantage: [grpo, rloo]
baseline: strategy=flat,advantage=grpo
`
	src = strings.Replace(src, "  params: {n: 4}\n", "", 1)
	f, err := Parse("a.yaml", []byte(src), []string{"train.steps=7"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, v := range f.Variants {
		names = append(names, v.Name)
		if v.Config.Train.Steps != 7 {
			t.Errorf("%s: override not applied", v.Name)
		}
	}
	want := "strategy=flat,advantage=grpo strategy=flat,advantage=rloo strategy=entropy_tree,advantage=grpo strategy=entropy_tree,advantage=rloo"
	if strings.Join(names, " ") != want {
		t.Fatalf("variants %v", names)
	}
	if len(f.Runs()) != 8 {
		t.Fatalf("%d runs, want 8", len(f.Runs()))
	}

	explicit := good + `variants:
  - name: small-group
    set: {rollout.params.n: 2}
  - name: tree
    set: {rollout.strategy: entropy_tree, rollout.params: {m: 2, n: 1}}
`
	f, err = Parse("v.yaml", []byte(explicit), nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Variants[0].Config.Rollout.Params["n"] != "2" || f.Variants[1].Config.Rollout.Strategy != "entropy_tree" || f.Variants[1].Config.Rollout.Params["m"] != "2" {
		t.Fatalf("explicit variants %+v", f.Variants)
	}
}

// Every malformed configuration is refused with an error naming the file,
// the line and the key.
func TestMalformedConfigs(t *testing.T) {
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "ckpt")
	os.Mkdir(ckpt, 0o755)
	for _, tc := range []struct {
		name      string
		src       string
		overrides []string
		want      string
	}{
		{"unknown top key", "task: {name: add}\ntrian: {steps: 2}\n", nil, "c.yaml:2: trian: unknown key"},
		{"unknown nested key", "task: {name: add}\ntrain:\n  steps: 2\n  lrr: 1\n", nil, "c.yaml:4: train.lrr: unknown key"},
		{"unknown task param", "task:\n  name: add\n  params: {digitz: 3}\n", nil, "c.yaml:3: task.params.digitz: unknown key"},
		{"wrong type", "task: {name: add}\ntrain:\n  steps: many\n", nil, `c.yaml:3: train.steps: "many" is not an integer`},
		{"wrong type task param", "task:\n  name: add\n  params: {digits: [1]}\n", nil, "c.yaml:3"},
		{"missing task", "train: {steps: 2}\n", nil, "task.name: required"},
		{"unknown task", "task: {name: sudoku}\n", nil, `c.yaml:1: task.name: unknown task "sudoku"`},
		{"retired task", "task: {name: route, params: {forks: 3}}\n", nil, `c.yaml:1: task.name: unknown task "route" (want one of add,`},
		{"task param out of range", "task:\n  name: add\n  params: {digits: 40}\n", nil, "c.yaml:3: task.params: add: digits = 40"},
		{"unknown strategy", "task: {name: add}\nrollout:\n  strategy: beam\n", nil, `c.yaml:3: rollout.strategy: unknown strategy "beam"`},
		{"unknown strategy param", "task: {name: add}\nrollout:\n  strategy: flat\n  params: {m: 3}\n", nil, `c.yaml:4: rollout.params.m: flat: unknown parameter "m" (known: n)`},
		{"zero T", "task: {name: add}\nrollout:\n  strategy: entropy_tree\n  params: {t: 0}\n", nil, "c.yaml:4: rollout.params.t: entropy_tree: t = 0, want >= 1"},
		{"bad score", "task: {name: add}\nrollout:\n  strategy: entropy_tree\n  params: {score: vibes}\n", nil, "vibes"},
		{"negative temperature", "task: {name: add}\nrollout:\n  temperature: -1\n", nil, "temperature -1"},
		{"negative budget", "task: {name: add}\nrollout:\n  budget: -5\n", nil, "c.yaml:3: rollout.budget: -5"},
		{"unknown estimator", "task: {name: add}\ntrain:\n  advantage: ppo\n", nil, `c.yaml:3: train.advantage: "ppo", want one of grpo`},
		{"unknown loss agg", "task: {name: add}\ntrain:\n  loss_agg: sum\n", nil, `c.yaml:3: train.loss_agg: "sum", want one of`},
		{"lr out of range", "task: {name: add}\ntrain:\n  lr: -1\n", nil, "c.yaml:3: train.lr: -1, want > 0"},
		{"clip out of range", "task: {name: add}\ntrain:\n  clip_low: 1.5\n", nil, "c.yaml:3: train.clip_low: 1.5, want in (0, 1)"},
		{"eval k", "task: {name: add}\neval:\n  k: -2\n", nil, "c.yaml:3: eval.k: -2, want in [1, eval.samples = 8]"},
		{"pretrain share", "task: {name: add}\npretrain:\n  flawed_share: 1.5\n", nil, "c.yaml:3: pretrain.flawed_share: 1.5, want in [0, 1)"},
		{"unknown model", "task: {name: add}\nmodel: huge\n", nil, `c.yaml:2: model: "huge", unknown model size (known: medium, small, tiny)`},
		{"missing checkpoint", "task: {name: add}\ncheckpoint: nowhere\n", nil, "c.yaml:2: checkpoint: nowhere is not a checkpoint directory"},
		{"checkpoint without config", "task: {name: add}\ncheckpoint: ckpt\n", nil, "checkpoint: ckpt is not a checkpoint directory"},
		{"empty ablate axis", "task: {name: add}\nablate:\n  train.lr: []\n", nil, "c.yaml:3: ablate.train.lr: empty axis"},
		{"ablate not a list", "task: {name: add}\nablate:\n  train.lr: 3\n", nil, "ablate.train.lr: must be a list"},
		{"ablate unknown key", "task: {name: add}\nablate:\n  train.lrr: [1, 2]\n", nil, "train.lrr: unknown key"},
		{"empty seeds", "task: {name: add}\nseeds: []\n", nil, "c.yaml:2: seeds: empty list"},
		{"duplicate seed", "task: {name: add}\nseeds: [1, 1]\n", nil, "seed 1 is listed twice"},
		{"bad seed", "task: {name: add}\nseeds: [x]\n", nil, "c.yaml:2"},
		{"unknown baseline", "task: {name: add}\nbaseline: nope\n", nil, `c.yaml:2: baseline: no variant is named "nope"`},
		{"variant without name", "task: {name: add}\nvariants:\n  - set: {train.lr: 1}\n", nil, "variants[0].name: a variant needs a name"},
		{"duplicate variant", "task: {name: add}\nvariants:\n  - {name: a}\n  - {name: a}\n", nil, `two variants are named "a"`},
		{"not a mapping", "- 1\n- 2\n", nil, "must be a mapping"},
		{"bad yaml", "task: {name: add\n", nil, "c.yaml"},
		{"override unknown key", "task: {name: add}\n", []string{"train.lrr=1"}, "c.yaml: --set train.lrr=1: unknown key"},
		{"override not key=value", "task: {name: add}\n", []string{"train.lr"}, "override must be key=value"},
		{"override wrong type", "task: {name: add}\n", []string{"train.steps=abc"}, `c.yaml: --set train.steps=abc: "abc" is not an integer`},
		{"never ends", "task: {name: add}\ntrain: {steps: 0, total_tokens: 0}\n", nil, "the run would never end"},
		{"negative steps", "task: {name: add}\n", []string{"train.steps=-1"}, "c.yaml: --set train.steps=-1: -1, want ≥ 0"},
		{"async misspelt", "task: {name: add}\ntrain:\n  asynk: 1\n", nil, "c.yaml:3: train.asynk: unknown key; did you mean train.async?"},
		{"negative async", "task: {name: add}\ntrain:\n  async: -1\n", nil, "c.yaml:3: train.async: -1, want ≥ 0 (0: synchronous)"},
		{"async with stale reuse", "task: {name: add}\ntrain:\n  async: 1\n  max_staleness: 1\n", nil, "train.async: 1, excludes train.max_staleness > 0"},
		{"total tokens below a group", "task: {name: add}\ntrain: {steps: 0, total_tokens: 10}\n", nil, "c.yaml:2: train.total_tokens: 10, below one group's longest possible cost"},
		{"every tokens below a group", "task: {name: add}\neval: {every_tokens: 10}\n", nil, "c.yaml:2: eval.every_tokens: 10, below one group's longest possible cost"},
		{"total tokens below a group, set", "task: {name: add}\n", []string{"train.total_tokens=10"}, "c.yaml: --set train.total_tokens=10: 10, below one group"},
		{"adaptive without fork budget", "task: {name: add}\nrollout: {adaptive: true}\n", nil, "strategy flat has no fork budget to adapt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "c.yaml")
			_, err := Parse(path, []byte(tc.src), tc.overrides)
			if err == nil {
				t.Fatalf("accepted:\n%s", tc.src)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

// A relative jsonl path in a config (or in a --set of one) names a file
// beside the config, whatever the working directory; an absolute path and
// the path of a config in the working directory stay as written.
func TestJSONLPathRelativeToConfig(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "exp")
	if err := os.MkdirAll(filepath.Join(sub, "data"), 0o755); err != nil {
		t.Fatal(err)
	}
	lines := []byte("{\"prompt\": \"1+2\", \"answer\": \"3\"}\n{\"prompt\": \"2+2\", \"answer\": \"4\"}\n")
	for _, name := range []string{"q.jsonl", "data/r.jsonl"} {
		if err := os.WriteFile(filepath.Join(sub, name), lines, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	abs := filepath.Join(sub, "q.jsonl")
	t.Chdir(dir) // neither file is reachable from here under its relative name
	for _, tc := range []struct {
		name, config, path string
		overrides          []string
		want               string
	}{
		{"beside the config", "exp/c.yaml", "q.jsonl", nil, filepath.Join("exp", "q.jsonl")},
		{"in a subdirectory", "exp/c.yaml", "data/r.jsonl", nil, filepath.Join("exp", "data", "r.jsonl")},
		{"absolute config path", filepath.Join(sub, "c.yaml"), "q.jsonl", nil, abs},
		{"absolute", "exp/c.yaml", abs, nil, abs},
		{"set on the command line", "exp/c.yaml", "nosuch.jsonl", []string{"task.params.path=data/r.jsonl"}, filepath.Join("exp", "data", "r.jsonl")},
		{"config in the working directory", "c.yaml", "exp/./q.jsonl", nil, "exp/./q.jsonl"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "task: {name: jsonl, params: {path: " + tc.path + "}}\n"
			f, err := Parse(tc.config, []byte(src), tc.overrides)
			if err != nil {
				t.Fatal(err)
			}
			p, ok := f.Variants[0].Config.Task.Params.(task.JSONLParams)
			if !ok || p.Path != tc.want {
				t.Fatalf("resolved params %#v, want path %q", f.Variants[0].Config.Task.Params, tc.want)
			}
			if _, err := task.New("jsonl", p); err != nil {
				t.Fatalf("the resolved path does not open: %v", err)
			}
		})
	}
	// A missing file is named as it was looked for: beside the config.
	_, err := Parse("exp/c.yaml", []byte("task: {name: jsonl, params: {path: missing.jsonl}}\n"), nil)
	if err == nil || !strings.Contains(err.Error(), filepath.Join("exp", "missing.jsonl")) {
		t.Fatalf("missing file: %v, want it named under exp/", err)
	}
}

// The error for an unknown or a missing task name lists every task New
// builds, jsonl included.
func TestTaskNameErrorsListEveryTask(t *testing.T) {
	for _, tc := range []struct{ name, src, want string }{
		{"unknown", "task: {name: sudoku}\n", `c.yaml:1: task.name: unknown task "sudoku"`},
		{"missing", "train: {steps: 2}\n", "task.name: required"},
		{"empty", "task: {name: \"\"}\n", "task.name: required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("c.yaml", []byte(tc.src), nil)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			for _, name := range task.AllNames() {
				if !strings.Contains(err.Error(), name) {
					t.Errorf("error %q does not list task %q", err, name)
				}
			}
		})
	}
}
