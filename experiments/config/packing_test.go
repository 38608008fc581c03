package config

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/experiments/rl"
)

// train.tree_packing defaults to true and is then left out of the run id,
// the resolved JSON and the recorded text; false is a different run, kept
// through Canonical; a value that is not a boolean is an error naming the
// key.
func TestTreePackingKey(t *testing.T) {
	const base = "task: {name: add, params: {digits: 2}}\n"
	plain, c := firstRun(t, base)
	if !c.Train.TreePacking {
		t.Fatal("train.tree_packing is false by default")
	}
	if id, _ := firstRun(t, base, "train.tree_packing=true"); id != plain {
		t.Errorf("tree_packing=true: run id %s, want the defaults' %s", id, plain)
	}
	off, c := firstRun(t, base, "train.tree_packing=false")
	if off == plain || c.Train.TreePacking {
		t.Errorf("tree_packing=false: run id %s (defaults' %s), packing %v", off, plain, c.Train.TreePacking)
	}
	for _, tc := range []struct {
		on   bool
		want string
	}{{true, ""}, {false, "tree_packing: false"}} {
		c.Train.TreePacking = rl.OnByDefault(tc.on)
		y, err := Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		j, _ := json.Marshal(c)
		if tc.want == "" && (strings.Contains(string(y), "tree_packing") || strings.Contains(string(j), "tree_packing")) {
			t.Errorf("packing on: the recorded config names it:\n%s\n%s", y, j)
		}
		if tc.want != "" && !strings.Contains(string(y), tc.want) {
			t.Errorf("packing off: the recorded config lacks %q:\n%s", tc.want, y)
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
