package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// passrateConfig writes a config over a freshly initialised checkpoint
// (no pretraining) and returns its path and the directory.
func passrateConfig(t *testing.T) (string, string) {
	t.Helper()
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "ckpt")
	if code, _, e := rollout(t, "model", "init", "--size", "tiny", "--seed", "3", "--out", ckpt); code != 0 {
		t.Fatal(e)
	}
	cfg := filepath.Join(dir, "pr.yaml")
	src := "name: pr\ntask: {name: add, params: {digits: 2}}\ncheckpoint: " + ckpt + "\n"
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return cfg, dir
}

// rollout passrate on a small sweep: the table has the i.i.d. points and
// every tree, the JSON its rows, and --out writes the three figures.
func TestPassrateCommand(t *testing.T) {
	cfg, dir := passrateConfig(t)
	small := []string{"passrate", cfg, "--prompts", "6", "--k", "4", "--iid-n", "1,4", "--shape", "1,2,1,1",
		"--score", "entropy,random", "--segment", "4,2,2", "--resamples", "100"}
	prefix := filepath.Join(dir, "fig")
	code, out, e := rollout(t, append(small, "--out", prefix)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	for _, want := range []string{"| iid(n=1) | 1.0 |", "| iid(n=4) | 4.0 |", "| entropy(1,2,1,1) | ", "| random(1,2,1,1) | ", "| segment(4,2,2) |", "mean length", "| iid |"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	for _, f := range []string{"_passrate.png", "_leafacc.png", "_entropy.png"} {
		if st, err := os.Stat(prefix + f); err != nil || st.Size() == 0 {
			t.Errorf("figure %s: %v", f, err)
		}
	}
	code, out, e = rollout(t, append(small, "--format", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e)
	}
	var res struct {
		Rows []struct {
			Method string
			Tokens float64
		}
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Rows) != 5 {
		t.Fatalf("json: %v, %d rows, want 5:\n%s", err, len(res.Rows), out)
	}
}

func TestPassrateBadInput(t *testing.T) {
	cfg, _ := passrateConfig(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--shape", "1,2,1"}, `--shape "1,2,1": want 4 comma-separated integers`},
		{[]string{"--shape", "1,x,1,1"}, `"x" is not an integer`},
		{[]string{"--shape", "1,2,1,0"}, "--shape 1,2,1,0 --score entropy: entropy_tree: t = 0"},
		{[]string{"--score", "loud"}, `score = "loud"`},
		{[]string{"--segment", "4,1,2"}, "--segment 4,1,2: segment_tree: b = 1"},
		{[]string{"--k", "4", "--iid-n", "8"}, "n = 8: want 1 to k = 4"},
		{[]string{"--prompts", "0"}, "prompts = 0"},
		{[]string{"--resamples", "10"}, "--resamples 10"},
		{[]string{"--format", "csv"}, `--format "csv"`},
		{[]string{"--variant", "nope"}, `--variant "nope"`},
	} {
		code, _, e := rollout(t, append([]string{"passrate", cfg}, tc.args...)...)
		if code != 2 || !strings.Contains(e, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, e, tc.want)
		}
	}
}
