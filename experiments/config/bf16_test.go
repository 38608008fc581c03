package config

import (
	"encoding/json"
	"strings"
	"testing"
)

// train.bf16 and pretrain.bf16 left out, or false, are the run of a config
// without them (the same id, nothing in the resolved JSON or the recorded
// variant config); true reaches the config and changes the id; anything
// but a boolean is an error naming the key.
func TestBF16Keys(t *testing.T) {
	const base = "task: {name: add, params: {digits: 2}}\n"
	id := func(overrides ...string) (string, Experiment) {
		t.Helper()
		return firstRun(t, base, overrides...)
	}
	plain, c := id()
	if c.Train.BF16 || c.Pretrain.BF16 {
		t.Fatalf("defaults: train.bf16 %v, pretrain.bf16 %v", c.Train.BF16, c.Pretrain.BF16)
	}
	for _, off := range [][]string{{"train.bf16=false"}, {"pretrain.bf16=false"}, {"train.bf16=false", "pretrain.bf16=false"}} {
		got, c := id(off...)
		if got != plain {
			t.Errorf("%v: run id %s, want the defaults' %s", off, got, plain)
		}
		b, _ := json.Marshal(c)
		y, err := Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "bf16") || strings.Contains(string(y), "bf16") {
			t.Errorf("%v: bf16 in the resolved JSON %s or YAML %s", off, b, y)
		}
	}
	seen := map[string]string{plain: "defaults"}
	for _, on := range []string{"train.bf16=true", "pretrain.bf16=true"} {
		got, c := id(on)
		if prev, ok := seen[got]; ok {
			t.Errorf("%s: run id %s, the same as %s", on, got, prev)
		}
		seen[got] = on
		if strings.HasPrefix(on, "train.") != c.Train.BF16 || strings.HasPrefix(on, "pretrain.") != c.Pretrain.BF16 {
			t.Errorf("%s: train.bf16 %v, pretrain.bf16 %v", on, c.Train.BF16, c.Pretrain.BF16)
		}
		y, err := Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(y), "bf16: true") {
			t.Errorf("%s: not in the recorded variant config:\n%s", on, y)
		}
		// The recorded text reads back as the same run.
		back, err := Canonical(string(y))
		if err != nil || back != string(y) {
			t.Errorf("%s: canonical text differs (%v):\n%s\nwant:\n%s", on, err, back, y)
		}
	}
	for _, tc := range []struct{ src, want string }{
		{base + "train:\n  bf16: maybe\n", `c.yaml:3: train.bf16: "maybe" is not true or false`},
		{base + "pretrain:\n  bf16: 1\n", `c.yaml:3: pretrain.bf16: "1" is not true or false`},
	} {
		_, err := Parse("c.yaml", []byte(tc.src), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want %q", tc.src, err, tc.want)
		}
	}
}
