package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// Configurations that would expand without bound, or that YAML reads
// otherwise than meant, are refused with an *Error that names the file,
// the line and, in the configuration's terms, what is wrong: never a
// library's message.
func TestBounds(t *testing.T) {
	var axes10 strings.Builder
	axes10.WriteString("task: {name: add}\nablate:\n")
	for i := range 10 {
		fmt.Fprintf(&axes10, "  rollout.params.x%d: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n", i)
	}
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for _, c := range "bcdefghi" {
		prev := string(c - 1)
		bomb = fmt.Sprintf("%s%c: &%c [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n", bomb, c, c, prev, prev, prev, prev, prev, prev, prev, prev, prev, prev)
	}
	deep := "task: {name: add}\nname: " + strings.Repeat("[", 200) + strings.Repeat("]", 200) + "\n"
	seeds := make([]string, 50_000)
	for i := range seeds {
		seeds[i] = fmt.Sprint(i + 1)
	}
	seeds[len(seeds)-1] = "17"
	for _, tc := range []struct {
		name string
		src  string
		want string
	}{
		{"grid over the cap", "task: {name: add}\nvariants: [{name: a}, {name: b}]\nablate:\n  train.lr: [1, 2, 3, 4, 5, 6, 7, 8]\n  train.steps: [" + strings.Repeat("1, ", 299) + "1]\n",
			"c.yaml:4: ablate: the grid is 2 variants × 8 (ablate.train.lr) × 300 (ablate.train.steps) = 4800 variants, more than the 4096 a configuration may make"},
		{"grid far over the cap", axes10.String(),
			"c.yaml:3: ablate: the grid is the base × 10 (ablate.rollout.params.x0) × 10 (ablate.rollout.params.x1) × 10 (ablate.rollout.params.x2)"},
		{"runs over the cap", "task: {name: add}\nseeds: [" + strings.Join(seeds[:40_000], ", ") + "]\nablate:\n  train.lr: [1, 2, 3]\n",
			"c.yaml:4: seeds: the base × 3 (ablate.train.lr) = 3 variants × 40000 seeds = 120000 runs, more than the 100000"},
		{"duplicate seed among many", "task: {name: add}\nseeds: [" + strings.Join(seeds, ", ") + "]\n",
			"c.yaml:2: seeds[49999]: seed 17 is listed twice (as seeds[16] too)"},
		{"second document", "task: {name: add}\n---\ntrain: {lr: 1}\n",
			"c.yaml:2: a second YAML document (after ---): a configuration file holds one"},
		{"alias bomb", bomb + "task: {name: add}\n", "c.yaml:5: the configuration stands for more than 100000 values once its aliases are expanded"},
		{"nesting", deep, "c.yaml:2: values nested more than 100 deep"},
		{"syntax", "task: {name: add}\ntrain: [\n", "c.yaml:2: not valid YAML: did not find expected node content"},
		{"seeds as a mapping", "task: {name: add}\nseeds: {a: 1}\n", "c.yaml:2: seeds: want a list, got a mapping"},
		{"alias of nothing to merge", "task: {name: add}\ntrain: {<<: 3}\n", "c.yaml:2: << merges a mapping or a list of mappings, got \"3\""},
		{"file too large", "task: {name: add}\n#" + strings.Repeat("x", MaxFileBytes) + "\n", "c.yaml: the file is larger than the 1048576 bytes (1 MiB) a configuration may have"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("c.yaml", []byte(tc.src), nil)
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("error %v (%T), want a *config.Error", err, err)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error\n  %.300s\nwant it to start with\n  %s", err, tc.want)
			}
			for _, lib := range []string{"go-yaml", "unmarshal", "[]uint64", "struct", "!!"} {
				if strings.Contains(err.Error(), lib) {
					t.Errorf("error %q shows a library's words (%s)", err, lib)
				}
			}
		})
	}
}

// An alias stands for its anchor's value wherever a value may be: in the
// base, a variant's set, an ablation axis (as the axis or one of its
// values), the seeds, the variants list; merge keys (<<) add a mapping's
// keys. Each file resolves exactly as the same file written without them.
func TestAliases(t *testing.T) {
	for _, tc := range []struct{ name, aliased, plain string }{
		{"ablation axis",
			"task: {name: add}\nvariants:\n  - {name: a, set: {train.steps: 2}}\nablate:\n  train.lr: &lrs [1e-4, 3e-4]\n  reward.format: *lrs\n",
			"task: {name: add}\nvariants:\n  - {name: a, set: {train.steps: 2}}\nablate:\n  train.lr: [1e-4, 3e-4]\n  reward.format: [1e-4, 3e-4]\n"},
		{"ablation value",
			"task: {name: add}\nrollout: {params: &p {n: 4}}\nablate:\n  rollout.params: [*p, {n: 2}]\n",
			"task: {name: add}\nrollout: {params: {n: 4}}\nablate:\n  rollout.params: [{n: 4}, {n: 2}]\n"},
		{"variant set and seeds",
			"task: {name: add, params: {digits: &d 2}}\nseeds: [*d, 5]\nvariants:\n  - &v {name: a, set: {task.params.digits: *d}}\n  - {name: b, set: {train.steps: *d}}\n",
			"task: {name: add, params: {digits: 2}}\nseeds: [2, 5]\nvariants:\n  - {name: a, set: {task.params.digits: 2}}\n  - {name: b, set: {train.steps: 2}}\n"},
		{"variants list and baseline",
			"task: {name: add}\nvariants: &vs\n  - {name: a}\n  - {name: b, set: {train.lr: 1e-4}}\nbaseline: &base b\n",
			"task: {name: add}\nvariants:\n  - {name: a}\n  - {name: b, set: {train.lr: 1e-4}}\nbaseline: b\n"},
		{"merge key",
			"task: {name: add}\ntrain: &t {lr: 1e-4, steps: 3}\neval: {<<: {k: 2}, samples: 4}\nvariants:\n  - {name: a, set: {train: {<<: *t, steps: 5}}}\n",
			"task: {name: add}\ntrain: {lr: 1e-4, steps: 3}\neval: {k: 2, samples: 4}\nvariants:\n  - {name: a, set: {train: {lr: 1e-4, steps: 5}}}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Parse("c.yaml", []byte(tc.aliased), nil)
			if err != nil {
				t.Fatalf("with aliases: %v", err)
			}
			p, err := Parse("c.yaml", []byte(tc.plain), nil)
			if err != nil {
				t.Fatalf("without: %v", err)
			}
			a.Text, p.Text = "", ""
			if !reflect.DeepEqual(a, p) {
				t.Errorf("with aliases the file resolves to\n%+v\nwithout\n%+v", a, p)
			}
		})
	}
	// In a --set value too.
	a, err := Parse("c.yaml", []byte("task: {name: add}\n"), []string{"eval={samples: &s 4, k: *s}"})
	p, err2 := Parse("c.yaml", []byte("task: {name: add}\n"), []string{"eval={samples: 4, k: 4}"})
	if err != nil || err2 != nil || !reflect.DeepEqual(a.Variants, p.Variants) {
		t.Errorf("alias in a --set value: %v, %v", err, err2)
	}
	// An error inside an aliased value points at the alias.
	_, err = Parse("c.yaml", []byte("x: &bad [1e-4, -1]\n"), nil)
	if err == nil {
		t.Fatal("unknown key x accepted")
	}
	_, err = Parse("c.yaml", []byte("task: {name: add}\ntrain: {lr: &bad -1}\nablate:\n  train.lr:\n    - 1e-4\n    - *bad\n"), nil)
	if err == nil || !strings.HasPrefix(err.Error(), "c.yaml:6: ablate.train.lr: -1, want > 0") {
		t.Errorf("error in an aliased axis value: %v", err)
	}
}

// An unknown key is answered with the nearest valid key at that place,
// when one is near enough to be a misspelling, and the full list of keys
// valid there.
func TestUnknownKeySuggestions(t *testing.T) {
	for _, tc := range []struct {
		src, want string
	}{
		{"task: {name: add}\ntrian: {lr: 1}\n", "c.yaml:2: trian: unknown key; did you mean train? (known here: checkpoint, eval, model, name, pretrain, reward, reward_model, rollout, task, train)"},
		{"task: {name: add}\ntrain: {stpes: 1}\n", "c.yaml:2: train.stpes: unknown key; did you mean train.steps? (known here: advantage,"},
		{"task: {name: add}\nmodel: {size: tiny, max_sq: 64}\n", "c.yaml:2: model.max_sq: unknown key; did you mean model.max_seq? (known here: dim, heads, hidden, layers, max_seq, size)"},
		{"task: {name: add}\nrollout: {temprature: 1}\n", "c.yaml:2: rollout.temprature: unknown key; did you mean rollout.temperature?"},
		{"task: {name: add}\nvariants:\n  - {name: a, set: {eval.smaples: 2}}\n", "c.yaml:3: variants[0].set.eval.smaples: unknown key; did you mean eval.samples?"},
		{"task: {name: add}\nzzz: 1\n", "c.yaml:2: zzz: unknown key (known here: checkpoint,"},
		{"task: {name: add}\nmodel: {size: tiny, width: 3}\n", "c.yaml:2: model.width: unknown key (known here: dim,"},
	} {
		_, err := Parse("c.yaml", []byte(tc.src), nil)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q:\n  %v\nwant it to start with\n  %s", tc.src, err, tc.want)
		}
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		d    int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"steps", "steps", 0}, {"stpes", "steps", 1},
		{"trian", "train", 1}, {"é", "e", 1}, {"lr", "lx", 1}, {"lr", "kl", 2}, {"kitten", "sitting", 3}, {"ca", "abc", 3},
	} {
		if got := EditDistance(tc.a, tc.b); got != tc.d {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.d)
		}
		if got := EditDistance(tc.b, tc.a); got != tc.d {
			t.Errorf("EditDistance(%q, %q) = %d, want %d", tc.b, tc.a, got, tc.d)
		}
	}
}

// Data a local policy cannot read (a character outside the task alphabet
// in a jsonl file) is refused when the config is checked, naming the
// data file, its line and the character.
func TestJSONLAlphabetAtCheck(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "q.jsonl")
	os.WriteFile(data, []byte("{\"prompt\": \"1+1\", \"answer\": \"2\"}\n{\"prompt\": \"2+1\", \"answer\": \"3\"}\n{\"prompt\": \"caf\u00e9\", \"answer\": \"1\"}\n"), 0o644)
	cfg := filepath.Join(dir, "c.yaml")
	_, err := Parse(cfg, []byte("task:\n  name: jsonl\n  params: {path: q.jsonl}\n"), nil)
	var ce *Error
	if !errors.As(err, &ce) || ce.Key != "task.params.path" || ce.Line != 3 || !strings.Contains(err.Error(), data+":3: the prompt has the character 'é'") {
		t.Errorf("jsonl data outside the alphabet: %v", err)
	}
}
