package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/experiments/config/field"
	"github.com/rollout-rl/rollout/search"
)

// Every error names the file and the line of the offending key itself (or
// the --set flag that gave it), its dotted key where it was written and the
// bad value.
func TestErrorPlaces(t *testing.T) {
	const variants = `task: {name: add}
variants:
  - name: a
    set: {train.lr: 1e-4}
  - name: b
    set:
      rollout.strategy: entropy_tree
      rollout.params:
        n: 1
        m: 0
`
	for _, tc := range []struct {
		name      string
		src       string
		overrides []string
		want      string
	}{
		// Types.
		{"int", "task: {name: add}\ntrain:\n  steps: 3\n  prompts_per_step: eight\n", nil, `c.yaml:4: train.prompts_per_step: "eight" is not an integer`},
		{"float", "task: {name: add}\ntrain: {steps: 3,\n  lr: abc}\n", nil, `c.yaml:3: train.lr: "abc" is not a number`},
		{"bool", "task: {name: add}\ntrain:\n  filter_groups: maybe\n", nil, `c.yaml:3: train.filter_groups: "maybe" is not true or false`},
		{"list for a number", "task: {name: add}\neval:\n  k: [1]\n", nil, `c.yaml:3: eval.k: want an integer, got a list`},
		{"task param", "task:\n  name: add\n  params:\n    digits: two\n", nil, `c.yaml:4: task.params.digits: "two" is not an integer`},
		{"seed", "task: {name: add}\nseeds:\n  - 1\n  - x\n", nil, `c.yaml:4: seeds[1]: "x" is not a non-negative integer`},
		{"fraction for an integer", "task: {name: add}\ntrain:\n  steps: 2.5\n", nil, `c.yaml:3: train.steps: "2.5" is not an integer`},
		{"small float for an integer", "task: {name: add}\neval: {k: 1e-4}\n", nil, `c.yaml:2: eval.k: "1e-4" is not an integer`},
		{"baseline not a name", "task: {name: add}\nbaseline: [a]\n", nil, `c.yaml:2: baseline: want a variant's name, got a list`},
		{"strategy params not a mapping", "task: {name: add}\nrollout:\n  params: [1]\n", nil, `c.yaml:3: rollout.params: want a mapping, got a list`},
		// Ranges, on the key's own line.
		{"range", "task: {name: add}\ntrain:\n  steps: 3\n  lr: -1\n", nil, "c.yaml:4: train.lr: -1, want > 0"},
		{"range in a flow mapping", "task: {name: add}\ntrain: {steps: 3, epochs: 0}\n", nil, "c.yaml:2: train.epochs: 0, want ≥ 1"},
		{"eval k against samples", "task: {name: add}\neval:\n  samples: 2\n  k: 3\n", nil, "c.yaml:4: eval.k: 3, want in [1, eval.samples = 2]"},
		{"pretrain", "task: {name: add}\npretrain:\n  lr: 1e-3\n  steps: 0\n", nil, "c.yaml:4: pretrain.steps: 0, want ≥ 1"},
		{"reward", "task: {name: add}\nreward:\n  format: 1\n  verifier: 0\n", nil, "c.yaml:4: reward.verifier: 0, as is reward.model"},
		{"reward model", "task: {name: add}\nreward_model:\n  train:\n    lr: -1\n", nil, "c.yaml:4: reward_model.train.lr: -1, want > 0"},
		{"temperature", "task: {name: add}\nrollout:\n  strategy: flat\n  temperature: -1\n", nil, "c.yaml:4: rollout.temperature: sampling temperature -1"},
		{"top_p", "task: {name: add}\nrollout: {top_p: 2}\n", nil, "c.yaml:2: rollout.top_p: sampling top_p 2"},
		// Strategy parameters, by the strategy's own parser.
		{"param in a flow mapping", "task: {name: add}\nrollout: {strategy: entropy_tree, params: {m: 0}}\n", nil, "c.yaml:2: rollout.params.m: entropy_tree: m = 0, want >= 1"},
		{"param in a multi-line flow mapping", "task: {name: add}\nrollout: {strategy: entropy_tree,\n  params: {n: 1,\n    m: 0}}\n", nil, "c.yaml:4: rollout.params.m: entropy_tree: m = 0"},
		{"param in a block mapping", "task: {name: add}\nrollout:\n  strategy: entropy_tree\n  params:\n    n: 1\n    m: 0\n", nil, "c.yaml:6: rollout.params.m: entropy_tree: m = 0"},
		{"unknown param", "task: {name: add}\nrollout:\n  params:\n    n: 4\n    zz: 1\n", nil, `c.yaml:5: rollout.params.zz: flat: unknown parameter "zz" (known: n)`},
		{"unparsable param", "task: {name: add}\nrollout:\n  params: {n: many}\n", nil, `c.yaml:3: rollout.params.n: flat: n = "many" is not an integer`},
		{"unknown strategy", "task: {name: add}\nrollout:\n  strategy: beam\n", nil, `c.yaml:3: rollout.strategy: unknown strategy "beam" (known: flat, entropy_tree, random_tree, segment_tree, tree_grpo, arpo, pivot)`},
		// Variants.
		{"variant param", variants, nil, "c.yaml:10: variants[1].set.rollout.params.m: entropy_tree: m = 0, want >= 1"},
		{"variant flow param", "task: {name: add}\nvariants:\n  - {name: a}\n  - name: b\n    set: {rollout.strategy: entropy_tree, rollout.params: {m: 0}}\n", nil, "c.yaml:5: variants[1].set.rollout.params.m: entropy_tree: m = 0"},
		{"variant dotted param", "task: {name: add}\nvariants:\n  - name: b\n    set:\n      rollout.strategy: segment_tree\n      rollout.params.b: 1\n", nil, "c.yaml:6: variants[0].set.rollout.params.b: segment_tree: b = 1, want >= 2"},
		{"variant unknown param", "task: {name: add}\nvariants:\n  - name: b\n    set:\n      rollout.params.zz: 1\n", nil, `c.yaml:5: variants[0].set.rollout.params.zz: flat: unknown parameter "zz"`},
		{"variant type", "task: {name: add}\nvariants:\n  - name: a\n    set:\n      train: {steps: 2, lr: abc}\n", nil, `c.yaml:5: variants[0].set.train.lr: "abc" is not a number`},
		{"variant range", "task: {name: add}\nvariants:\n  - name: a\n    set: {train.lr: 1e-4}\n  - name: b\n    set: {train.lr: -1}\n", nil, "c.yaml:6: variants[1].set.train.lr: -1, want > 0"},
		{"variant unknown key", "task: {name: add}\nvariants:\n  - name: a\n    set:\n      train.lrr: 1\n", nil, "c.yaml:5: variants[0].set.train.lrr: unknown key"},
		{"variant unknown strategy", "task: {name: add}\nvariants:\n  - name: a\n    set:\n      rollout.strategy: beam\n", nil, `c.yaml:5: variants[0].set.rollout.strategy: unknown strategy "beam"`},
		// Ablation axes: the line of the value.
		{"ablate range", "task: {name: add}\nablate:\n  train.lr: [1e-4, -1]\n", nil, "c.yaml:3: ablate.train.lr: -1, want > 0"},
		{"ablate block list", "task: {name: add}\nablate:\n  train.lr:\n    - 1e-4\n    - abc\n", nil, `c.yaml:5: ablate.train.lr: "abc" is not a number`},
		{"ablate unknown param", "task: {name: add}\nablate:\n  rollout.params.zz: [1]\n", nil, `c.yaml:3: ablate.rollout.params.zz: flat: unknown parameter "zz"`},
		{"ablate mapping values", "task: {name: add}\nablate:\n  rollout.params:\n    - {n: 2}\n    - {n: 0}\n", nil, "c.yaml:5: ablate.rollout.params.n: flat: n = 0, want >= 1"},
		{"ablate strategy", "task: {name: add}\nablate:\n  rollout.strategy:\n    - flat\n    - beam\n", nil, `c.yaml:5: ablate.rollout.strategy: unknown strategy "beam"`},
		// The base, where every variant replaces the key.
		{"replaced base type", "task: {name: add}\ntrain: {lr: abc}\nvariants:\n  - {name: a, set: {train.lr: 1e-4}}\n", nil, `c.yaml:2: train.lr: "abc" is not a number`},
		{"replaced base param", "task: {name: add}\nrollout:\n  params: {zz: 1}\nvariants:\n  - {name: a, set: {rollout.params: {n: 2}}}\n", nil, `c.yaml:3: rollout.params.zz: flat: unknown parameter "zz"`},
		{"replaced base strategy", "task: {name: add}\nrollout:\n  strategy: beam\nablate:\n  rollout.strategy: [flat]\n", nil, `c.yaml:3: rollout.strategy: unknown strategy "beam"`},
		// --set: the flag, not a line.
		{"set type", "task: {name: add}\n", []string{"train.lr=abc"}, `c.yaml: --set train.lr=abc: "abc" is not a number`},
		{"set range", "task: {name: add}\ntrain: {lr: 1e-4}\n", []string{"train.lr=-1"}, "c.yaml: --set train.lr=-1: -1, want > 0"},
		{"set unknown param", "task: {name: add}\n", []string{"rollout.params.zz=1"}, `c.yaml: --set rollout.params.zz=1: flat: unknown parameter "zz"`},
		{"set unparsable param", "task: {name: add}\nrollout: {strategy: entropy_tree}\n", []string{"rollout.params.m=abc"}, `c.yaml: --set rollout.params.m=abc: entropy_tree: m = "abc" is not an integer`},
		{"set mapping", "task: {name: add}\nrollout: {strategy: entropy_tree}\n", []string{"rollout.params={n: 1, m: 0}"}, "c.yaml: --set rollout.params={n: 1, m: 0}: rollout.params.m: entropy_tree: m = 0"},
		{"set unknown strategy", "task: {name: add}\n", []string{"rollout.strategy=bogus"}, `c.yaml: --set rollout.strategy=bogus: unknown strategy "bogus"`},
		{"set seeds", "task: {name: add}\nseeds: [1]\n", []string{"seeds=[x]"}, `c.yaml: --set seeds=[x]: seeds[0]: "x" is not a non-negative integer`},
		{"set into a scalar", "task: {name: add}\nname: x\n", []string{"name.size=2"}, "c.yaml: --set name.size=2: name is not a mapping"},
		{"set in a variant's tree", variants, []string{"train.steps=abc"}, `c.yaml: --set train.steps=abc: "abc" is not an integer`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("c.yaml", []byte(tc.src), tc.overrides)
			if err == nil {
				t.Fatalf("accepted:\n%s", tc.src)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error\n  %s\nwant it to start with\n  %s", err, tc.want)
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("%T is not a *config.Error", err)
			}
			if len(tc.overrides) > 0 && (ce.Line != 0 || ce.Flag == "") {
				t.Errorf("an override's error has line %d and flag %q", ce.Line, ce.Flag)
			}
		})
	}
}

// A --set of a key that a variant or an ablation axis also sets is refused,
// naming both places, instead of silently losing to the variant.
func TestOverridesNeverVanish(t *testing.T) {
	const src = `task: {name: add}
train: {steps: 2}
variants:
  - name: flat
    set: {rollout.strategy: flat, rollout.params: {n: 8}}
  - name: tree
    set:
      rollout.strategy: entropy_tree
      rollout.params.m: 2
ablate:
  train.lr: [1e-4, 3e-4]
`
	for _, tc := range []struct {
		set  string
		want string
	}{
		{"rollout.strategy=bogus", "c.yaml: --set rollout.strategy=bogus: conflicts with variants[0].set.rollout.strategy at c.yaml:5"},
		{"rollout.params.zz=1", "c.yaml: --set rollout.params.zz=1: conflicts with variants[0].set.rollout.params at c.yaml:5"},
		{"rollout.params.m=abc", "c.yaml: --set rollout.params.m=abc: conflicts with variants[0].set.rollout.params at c.yaml:5"},
		{"rollout.params.m=4", "c.yaml: --set rollout.params.m=4: conflicts with variants[0].set.rollout.params at c.yaml:5"},
		{"rollout={strategy: flat}", "c.yaml: --set rollout={strategy: flat}: conflicts with variants[0].set.rollout.params at c.yaml:5"},
		{"train.lr=1e-3", "c.yaml: --set train.lr=1e-3: conflicts with ablate.train.lr at c.yaml:11"},
		{"train={lr: 1e-3}", "c.yaml: --set train={lr: 1e-3}: conflicts with ablate.train.lr at c.yaml:11"},
	} {
		t.Run(tc.set, func(t *testing.T) {
			_, err := Parse("c.yaml", []byte(src), []string{tc.set})
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to start with %q", err, tc.want)
			}
		})
	}
	// A key no variant or axis sets is overridden in every run.
	f, err := Parse("c.yaml", []byte(src), []string{"train.steps=7", "rollout.temperature=0.5"})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Variants) != 4 {
		t.Fatalf("%d variants, want 4", len(f.Variants))
	}
	for _, v := range f.Variants {
		if v.Config.Train.Steps != 7 || v.Config.Rollout.Temperature != 0.5 {
			t.Errorf("%s: overrides not applied: %+v %+v", v.Name, v.Config.Train, v.Config.Rollout)
		}
	}
}

// Validation errors stay typed through the config error, so callers need
// not parse messages.
func TestTypedErrors(t *testing.T) {
	_, err := Parse("c.yaml", []byte("task: {name: add}\ntrain:\n  lr: -1\n"), nil)
	var fe *field.Error
	if !errors.As(err, &fe) || fe.Key != "train.lr" || fe.Value != -1.0 {
		t.Fatalf("%v: field error %+v", err, fe)
	}
	_, err = Parse("c.yaml", []byte("task: {name: add}\nrollout: {strategy: entropy_tree, params: {t: 0}}\n"), nil)
	var pe *search.ParamError
	if !errors.As(err, &pe) || pe.Strategy != "entropy_tree" || pe.Key != "t" || pe.Value != "0" {
		t.Fatalf("%v: param error %+v", err, pe)
	}
	var ce *Error
	if !errors.As(err, &ce) || ce.File != "c.yaml" || ce.Line != 2 || ce.Key != "rollout.params.t" {
		t.Fatalf("%v: config error %+v", err, ce)
	}
}
