package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/gguf"
)

// model export writes a GGUF file holding the checkpoint (float32 exactly,
// Q8_0 as 8-bit blocks); bad flags exit 2 naming the flag and leave an
// existing file as it was.
func TestModelExportGGUF(t *testing.T) {
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "ckpt")
	if code, _, e := rollout(t, "model", "init", "--size", "tiny", "--seed", "5", "--out", ckpt); code != 0 {
		t.Fatal(e)
	}
	m, _, err := policy.Load(ckpt)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []string{"f32", "q8_0"} {
		out := filepath.Join(dir, typ+".gguf")
		code, stdout, e := rollout(t, "model", "export", "--checkpoint", ckpt, "--format", "gguf", "--type", typ, "--out", out)
		if code != 0 || !strings.Contains(stdout, "wrote "+out) {
			t.Fatalf("export %s: exit %d: %s%s", typ, code, stdout, e)
		}
		raw, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		f, err := gguf.Read(raw)
		if err != nil {
			t.Fatal(err)
		}
		if name, _ := f.Get("general.name"); name != "ckpt" {
			t.Errorf("%s: general.name %v, want the directory's name", typ, name)
		}
		back, _, err := gguf.Import(f)
		if err != nil {
			t.Fatal(err)
		}
		want, got := m.NamedParams()[1].Values(), back.NamedParams()[1].Values()
		if typ == "f32" && !slices.Equal(got, want) {
			t.Errorf("%s: %s differs after export", typ, m.NamedParams()[1].Name)
		}
	}
	existing := filepath.Join(dir, "f32.gguf")
	before, _ := os.ReadFile(existing)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--checkpoint", ckpt, "--format", "onnx", "--out", filepath.Join(dir, "x")}, `--format "onnx"`},
		{[]string{"--checkpoint", ckpt, "--type", "q4_0", "--out", filepath.Join(dir, "x")}, `--type "q4_0"`},
		{[]string{"--checkpoint", ckpt}, "--out: a file name is required"},
		{[]string{"--checkpoint", ckpt, "--type", "q8_0", "--out", existing}, "exists"},
		{[]string{"--checkpoint", filepath.Join(dir, "none"), "--out", filepath.Join(dir, "x")}, "no checkpoint there"},
	} {
		code, _, e := rollout(t, append([]string{"model", "export"}, tc.args...)...)
		if code != 2 || !strings.Contains(e, tc.want) {
			t.Errorf("model export %v: exit %d, %q; want 2 and %q", tc.args, code, e, tc.want)
		}
	}
	if after, _ := os.ReadFile(existing); !slices.Equal(after, before) {
		t.Error("a refused export changed the existing file")
	}
}
