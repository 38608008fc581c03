package config

import (
	"encoding/json"
	"maps"
	"path/filepath"
	"strings"
	"testing"
)

// train.tree_packing defaults to false and is then left out of the run id,
// the resolved JSON and the recorded text; true is a different run, kept
// through Canonical; a value that is not a boolean is an error naming the
// key.
func TestTreePackingKey(t *testing.T) {
	const base = "task: {name: add, params: {digits: 2}}\n"
	plain, c := firstRun(t, base)
	if c.Train.TreePacking {
		t.Fatal("train.tree_packing is true by default")
	}
	if id, _ := firstRun(t, base, "train.tree_packing=false"); id != plain {
		t.Errorf("tree_packing=false: run id %s, want the defaults' %s", id, plain)
	}
	on, c := firstRun(t, base, "train.tree_packing=true")
	if on == plain || !c.Train.TreePacking {
		t.Errorf("tree_packing=true: run id %s (defaults' %s), packing %v", on, plain, c.Train.TreePacking)
	}
	for _, tc := range []struct {
		on   bool
		want string
	}{{false, ""}, {true, "tree_packing: true"}} {
		c.Train.TreePacking = tc.on
		y, err := Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		j, _ := json.Marshal(c)
		if tc.want == "" && (strings.Contains(string(y), "tree_packing") || strings.Contains(string(j), "tree_packing")) {
			t.Errorf("packing off: the recorded config names it:\n%s\n%s", y, j)
		}
		if tc.want != "" && !strings.Contains(string(y), tc.want) {
			t.Errorf("packing on: the recorded config lacks %q:\n%s", tc.want, y)
		}
		canon, err := Canonical(string(y))
		if err != nil || canon != string(y) {
			t.Errorf("packing %v: Canonical changed the text (%v):\n%s\nto\n%s", tc.on, err, y, canon)
		}
	}
	if _, err := Parse("c.yaml", []byte(base+"train:\n  tree_packing: yes please\n"), nil); err == nil || !strings.Contains(err.Error(), "c.yaml:3: train.tree_packing") {
		t.Errorf("tree_packing: yes please: error %v, want one naming c.yaml:3 and the key", err)
	}
}

// train.total_flops and eval.every_flops take FLOP counts in exponent form
// and end a run without steps or tokens; they are left out of the run id
// at 0; a negative count is an error naming the key.
func TestFLOPsKeys(t *testing.T) {
	const base = "task: {name: add, params: {digits: 2}}\n"
	plain, _ := firstRun(t, base)
	if id, _ := firstRun(t, base, "train.total_flops=0", "eval.every_flops=0"); id != plain {
		t.Errorf("total_flops 0: run id %s, want the defaults' %s", id, plain)
	}
	_, c := firstRun(t, base+"train: {steps: 0, total_tokens: 0, total_flops: 2e13}\neval: {every_flops: 5e12}\n")
	if c.Train.TotalFLOPs != 2e13 || c.Eval.EveryFLOPs != 5e12 {
		t.Errorf("total_flops %d, every_flops %d; want 2e13 and 5e12", c.Train.TotalFLOPs, c.Eval.EveryFLOPs)
	}
	for _, tc := range []struct{ src, want string }{
		{base + "train:\n  total_flops: -1\n", "c.yaml:3: train.total_flops: -1, want ≥ 0"},
		{base + "eval:\n  every_flops: -2\n", "c.yaml:3: eval.every_flops: -2, want ≥ 0"},
		{base + "train: {steps: 0, total_tokens: 0, total_flops: 0}\n", "the run would never end"},
	} {
		if _, err := Parse("c.yaml", []byte(tc.src), nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want it to contain %q", tc.src, err, tc.want)
		}
	}
}

// The bundled equal-compute quickstart ends every run at 3e11 total FLOPs,
// evaluates at its marks, and trains its trees packed and per leaf.
func TestQuickstartFLOPsConfig(t *testing.T) {
	f, err := Load(filepath.Join("..", "configs", "quickstart_flops.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	packed := map[string]bool{}
	for _, r := range f.Runs() {
		c := r.Config
		if c.Train.TotalFLOPs != 3e11 || c.Eval.EveryFLOPs != 1e11 || c.Train.Steps != 0 || c.Train.TotalTokens != 0 {
			t.Errorf("%s: total_flops %d every_flops %d steps %d total_tokens %d", r.Variant, c.Train.TotalFLOPs, c.Eval.EveryFLOPs, c.Train.Steps, c.Train.TotalTokens)
		}
		packed[r.Variant] = c.Train.TreePacking
	}
	if want := map[string]bool{"flat": true, "entropy_tree": true, "entropy_tree_per_leaf": false}; !maps.Equal(packed, want) {
		t.Errorf("variants' tree_packing %v, want %v", packed, want)
	}
}
