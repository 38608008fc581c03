package config

import (
	"encoding/json"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/experiments/task"
)

// eval.exclude_seeds and eval.exclude_prompts left out are the run of a
// config without them; set, they reach the resolved config, change the
// run id and read back from the recorded text; bad values are errors
// naming the key, its line and the value.
func TestEvalExcludeKeys(t *testing.T) {
	const base = "task: {name: add, params: {digits: 2}}\n"
	plain, c := firstRun(t, base)
	if c.Eval.ExcludeSeeds != nil || c.Eval.ExcludePrompts != 0 {
		t.Fatalf("defaults: exclude_seeds %v, exclude_prompts %d", c.Eval.ExcludeSeeds, c.Eval.ExcludePrompts)
	}
	b, _ := json.Marshal(c)
	y, err := Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "exclude") || strings.Contains(string(y), "exclude") {
		t.Errorf("defaults: exclude in the resolved JSON %s or YAML %s", b, y)
	}
	id, c := firstRun(t, base+"eval: {exclude_seeds: [1, 2, 3], exclude_prompts: 100}\n")
	if id == plain {
		t.Errorf("held-out prompts: run id %s, the defaults'", id)
	}
	if len(c.Eval.ExcludeSeeds) != 3 || c.Eval.ExcludePrompts != 100 {
		t.Errorf("resolved: exclude_seeds %v, exclude_prompts %d", c.Eval.ExcludeSeeds, c.Eval.ExcludePrompts)
	}
	y, err = Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(y), "exclude_prompts: 100") {
		t.Errorf("not in the recorded variant config:\n%s", y)
	}
	if back, err := Canonical(string(y)); err != nil || back != string(y) {
		t.Errorf("canonical text differs (%v):\n%s\nwant:\n%s", err, back, y)
	}
	for _, tc := range []struct{ src, want string }{
		{base + "eval:\n  exclude_seeds: [1, 2]\n", "c.yaml:2: eval.exclude_prompts: 0, want ≥ 1 with eval.exclude_seeds"},
		{base + "eval:\n  exclude_prompts: 100\n", "c.yaml:3: eval.exclude_prompts: 100, without eval.exclude_seeds"},
		{base + "eval:\n  exclude_seeds: [1]\n  exclude_prompts: -1\n", "c.yaml:4: eval.exclude_prompts: -1, want ≥ 1"},
		{base + "eval:\n  exclude_seeds: [4, 2, 4]\n  exclude_prompts: 10\n", "c.yaml:3: eval.exclude_seeds: 4, seed 4 is listed twice (items 0 and 2)"},
		{base + "eval:\n  exclude_seeds: [1, x]\n  exclude_prompts: 10\n", `eval.exclude_seeds[1]: "x" is not a non-negative integer`},
		// One-digit addition has about a dozen eval problems: 10 seeds'
		// 200 prompts hold out every one, which the seeds' runs would need.
		{"task: {name: add, params: {digits: 1}}\nseeds: [500]\neval:\n  exclude_seeds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n  exclude_prompts: 200\n",
			"c.yaml:4: eval.exclude_seeds: task add: eval prompt 0 at seed 500: all 64 draws are among the"},
	} {
		_, err := Parse("c.yaml", []byte(tc.src), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.src, err, tc.want)
		}
	}
}

// No bundled config but the recipe's holds eval prompts out, and none of
// the others has the keys in its resolved JSON (its run ids) or in the
// variant configs and design a store records: the keys change no bit of
// them.
func TestBundledConfigsHoldOutNothing(t *testing.T) {
	root := filepath.Join("..", "configs")
	n := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" {
			return err
		}
		f, err := Load(path, nil)
		if err != nil {
			return err
		}
		n++
		uses := filepath.ToSlash(path) == "../configs/econ/recipe.yaml"
		for _, v := range f.Variants {
			if got := len(v.Config.Eval.ExcludeSeeds) > 0; got != uses {
				t.Errorf("%s: variant %s holds eval prompts out: %v", path, v.Name, got)
			}
			if uses {
				continue
			}
			b, _ := json.Marshal(v.Config)
			y, err := Marshal(v.Config)
			if err != nil {
				return err
			}
			if strings.Contains(string(b), "exclude") || strings.Contains(string(y), "exclude") {
				t.Errorf("%s: variant %s: exclude in the resolved JSON or the recorded config", path, v.Name)
			}
		}
		if !uses {
			r, err := f.DesignRecord()
			if err != nil {
				return err
			}
			text, err := r.Text()
			if err != nil {
				return err
			}
			if strings.Contains(text, "exclude") {
				t.Errorf("%s: exclude in the design record", path)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Fatalf("%d bundled configs, want the lot", n)
	}
}

// The recipe's runs are evaluated on prompts disjoint from those of the
// runs that chose its levers: the first 100 eval prompts of seeds 1–5 on
// the same task (the filtering, max_length and temperature reports as
// they were when the levers were chosen).
func TestRecipeEvalDisjoint(t *testing.T) {
	f, err := Load(filepath.Join("..", "configs", "econ", "recipe.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range f.Variants {
		c := v.Config
		if c.Pretrain.Seed == 0 {
			t.Errorf("variant %s: the base policy of pretraining seed 0, on which the levers were chosen", v.Name)
		}
		tk, err := task.New(c.Task.Name, c.Task.Params)
		if err != nil {
			t.Fatal(err)
		}
		chose := map[string]bool{}
		for s := uint64(1); s <= 5; s++ {
			for i := range 100 {
				p, err := tk.Prompt(task.Eval, s, i)
				if err != nil {
					t.Fatal(err)
				}
				chose[p.Text] = true
			}
		}
		et, err := c.Eval.Task(tk)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range f.Seeds {
			if s <= 5 {
				t.Errorf("variant %s: seed %d is one the levers were chosen on", v.Name, s)
			}
			for i := range c.Eval.Prompts {
				p, err := et.Prompt(task.Eval, s, i)
				if err != nil {
					t.Fatal(err)
				}
				if chose[p.Text] {
					t.Fatalf("variant %s: seed %d: eval prompt %d %q was an eval prompt of seeds 1–5", v.Name, s, i, p.Text)
				}
			}
		}
	}
}
