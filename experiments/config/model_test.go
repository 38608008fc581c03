package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/experiments/config/field"
	"github.com/rollout-rl/rollout/experiments/pretrain"
)

// TestModelForms checks the ways of writing model: a size's name, a
// mapping over a size, explicit dimensions, and overrides of them; what
// each resolves to, how it is shown, and that a mapping equal to a size
// is the same run as the size's name.
func TestModelForms(t *testing.T) {
	small := pretrain.ModelSize("small")
	long := small
	long.MaxSeq = 384
	cases := []struct {
		name      string
		src       string
		overrides []string
		want      pretrain.Model
		shown     string // the model's lines of the resolved config
	}{
		{"default", "task: {name: add}\n", nil, pretrain.ModelSize("tiny"), "model: tiny\n"},
		{"name", "task: {name: add}\nmodel: small\n", nil, small, "model: small\n"},
		{"null", "task: {name: add}\nmodel:\n", nil, pretrain.ModelSize("tiny"), "model: tiny\n"},
		{"mapping equal to the size", "task: {name: add}\nmodel: {size: small}\n", nil, small, "model: small\n"},
		{"mapping", "task: {name: long_add}\nmodel: {size: small, max_seq: 384}\n", nil, long,
			"model:\n  size: small\n  dim: 256\n  layers: 6\n  heads: 8\n  hidden: 768\n  max_seq: 384\n"},
		{"explicit", "task: {name: long_add}\nmodel:\n  dim: 192\n  layers: 3\n  heads: 6\n  hidden: 512\n  max_seq: 160\n", nil,
			pretrain.Model{Size: "tiny", Dim: 192, Layers: 3, Heads: 6, Hidden: 512, MaxSeq: 160},
			"model:\n  size: tiny\n  dim: 192\n  layers: 3\n  heads: 6\n  hidden: 512\n  max_seq: 160\n"},
		{"--set below a name", "task: {name: long_add}\nmodel: small\n", []string{"model.max_seq=384"}, long, ""},
		{"--set a name", "task: {name: add}\nmodel: {size: tiny, max_seq: 99}\n", []string{"model=small"}, small, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse("c.yaml", []byte(tc.src), tc.overrides)
			if err != nil {
				t.Fatal(err)
			}
			c := f.Variants[0].Config
			if c.Model != tc.want || c.Pretrain.Model != tc.want {
				t.Fatalf("model %+v, pretrain.model %+v, want %+v", c.Model, c.Pretrain.Model, tc.want)
			}
			shown, err := Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(shown), "\n"+tc.shown) {
				t.Errorf("shown as\n%s\nwant it to contain\n%s", shown, tc.shown)
			}
			if _, err := tc.want.Config(); err != nil {
				t.Errorf("policy config: %v", err)
			}
		})
	}
	id := func(src string) string {
		f, err := Parse("c.yaml", []byte(src), nil)
		if err != nil {
			t.Fatal(err)
		}
		return f.Runs()[0].ID
	}
	if a, b := id("task: {name: add}\nmodel: small\n"), id("task: {name: add}\nmodel: {size: small, max_seq: 128}\n"); a != b {
		t.Errorf("model: small and the same as a mapping are runs %s and %s", a, b)
	}
	if a, b := id("task: {name: add}\nmodel: small\n"), id("task: {name: add}\nmodel: {size: small, max_seq: 256}\n"); a == b {
		t.Error("a longer max_seq is the same run")
	}
}

// TestModelErrors checks bad models: each error names the file, the line
// and the exact key, and the bad value.
func TestModelErrors(t *testing.T) {
	cases := []struct {
		name, src string
		overrides []string
		want      string
		fieldKey  string // the *field.Error's key, if there is one
	}{
		{"unknown size", "task: {name: add}\nmodel: huge\n", nil, `c.yaml:2: model: "huge", unknown model size (known: medium, small, tiny)`, "model.size"},
		{"unknown size in a mapping", "task: {name: add}\nmodel:\n  size: huge\n", nil, `c.yaml:3: model.size: "huge", unknown model size`, "model.size"},
		{"heads do not divide dim", "task: {name: add}\nmodel:\n  size: tiny\n  heads: 5\n", nil, "c.yaml:4: model.heads: 5, must divide dim 128", "model.heads"},
		{"odd head width", "task: {name: add}\nmodel: {dim: 120, heads: 8}\n", nil, "c.yaml:2: model.heads: 8, gives heads of width 15 = dim 120 / heads; rotary embeddings need an even width", "model.heads"},
		{"zero dim", "task: {name: add}\nmodel:\n  dim: 0\n", nil, "c.yaml:3: model.dim: 0, want ≥ 1", "model.dim"},
		{"negative layers", "task: {name: add}\nmodel: {layers: -2}\n", nil, "c.yaml:2: model.layers: -2, want ≥ 1", "model.layers"},
		{"not an integer", "task: {name: add}\nmodel:\n  hidden: wide\n", nil, `c.yaml:3: model.hidden: "wide" is not an integer`, ""},
		{"unknown key", "task: {name: add}\nmodel:\n  size: tiny\n  width: 3\n", nil, "c.yaml:4: model.width: unknown key (known here: dim, heads, hidden, layers, max_seq, size)", ""},
		{"a list", "task: {name: add}\nmodel: [tiny]\n", nil, "c.yaml:2: model: want a mapping of keys, got a list", ""},
		{"too short for the task", "task: {name: long_add}\nmodel: tiny\n", nil,
			"c.yaml:2: model: max_seq 64 is shorter than the 131 positions task long_add needs (longest prompt 13 + longest response 115 + BOS, SEP, EOS); set model: {size: tiny, max_seq: 131} or more", ""},
		{"max_seq too short", "task: {name: chain}\nmodel:\n  size: small\n  max_seq: 150\n", nil,
			"c.yaml:4: model.max_seq: max_seq 150 is shorter than the 156 positions task chain needs", ""},
		{"max_seq too short by --set", "task: {name: long_add}\nmodel: {max_seq: 160}\n", []string{"model.max_seq=100"},
			"c.yaml: --set model.max_seq=100: max_seq 100 is shorter than the 131 positions", ""},
		{"max_seq in a variant", "task: {name: long_add}\nmodel: {max_seq: 160}\nvariants:\n  - name: short\n    set: {model.max_seq: 64}\n", nil,
			"c.yaml:5: variants[0].set.model.max_seq: max_seq 64 is shorter", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("c.yaml", []byte(tc.src), tc.overrides)
			if err == nil {
				t.Fatalf("accepted:\n%s", tc.src)
			}
			if !strings.HasPrefix(err.Error(), tc.want) {
				t.Fatalf("error\n  %s\nwant it to start with\n  %s", err, tc.want)
			}
			var fe *field.Error
			if tc.fieldKey != "" && (!errors.As(err, &fe) || fe.Key != tc.fieldKey) {
				t.Errorf("field error %+v, want key %s", fe, tc.fieldKey)
			}
		})
	}
}

// TestModelWithCheckpoint checks that a checkpoint replaces the model's
// length check: the checkpoint's own shape decides.
func TestModelWithCheckpoint(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(dir+"/c.yaml", []byte("task: {name: long_add}\ncheckpoint: .\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.Variants[0].Config.Model != pretrain.ModelSize("tiny") {
		t.Errorf("model %+v", f.Variants[0].Config.Model)
	}
}
