package main

import (
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/search"
)

// --method builds any registered strategy from NAME:key=value,… and names
// the flag in its errors.
func TestMethodSpec(t *testing.T) {
	sp, err := methodSpec("tree_grpo:m=3,n=1,l=2")
	if err != nil {
		t.Fatal(err)
	}
	if st, ok := sp.Strategy.(search.StepTree); !ok || st != (search.StepTree{M: 3, N: 1, L: 2}) || sp.Name != "tree_grpo:m=3,n=1,l=2" || sp.Family != "tree_grpo" {
		t.Errorf("spec %+v", sp)
	}
	if sp, err := methodSpec("pivot"); err != nil || sp.Strategy.(search.Pivot) != search.DefaultPivot() {
		t.Errorf("pivot with its defaults: %+v, %v", sp, err)
	}
	for flag, want := range map[string]string{
		"arpo:alpha":     `--method arpo:alpha: "alpha" is not key=value`,
		"arpo:alpha=2":   "--method arpo:alpha=2: arpo: alpha = 2, want a probability in [0, 1]",
		"arpo:q=1":       `arpo: unknown parameter "q"`,
		"beam":           `unknown strategy "beam"`,
		"pivot:gamma=-1": "pivot: gamma = -1, want >= 0",
	} {
		if _, err := methodSpec(flag); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", flag, err, want)
		}
	}
}
