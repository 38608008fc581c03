package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rollout suite refuses unknown reports and a DIR that is not a
// directory with exit status 2, before opening any store.
func TestSuiteBadInput(t *testing.T) {
	dir := t.TempDir()
	store := filepath.Join(dir, "s.db")
	file := filepath.Join(dir, "f.txt")
	os.WriteFile(file, []byte("x"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"suite", dir, "--only", "speed", "--store", store}, `--only "speed": no such report (reports: filtering, max_length`},
		{[]string{"suite", file, "--store", store}, "f.txt: not a directory"},
		{[]string{"suite", dir, "--workers", "-1", "--store", store}, "--workers -1"},
		{[]string{"suite"}, "accepts 1 arg"},
	} {
		code, _, errOut := rollout(t, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
	if _, err := os.Stat(store); !os.IsNotExist(err) {
		t.Errorf("a refused suite created the store %s", store)
	}
}

// The command that regenerates one report names it and the store.
func TestSuiteCommand(t *testing.T) {
	for _, tc := range []struct {
		a    suiteArgs
		want string
	}{
		{suiteArgs{dir: "results/"}, "go run ./cmd/rollout suite results/ --only filtering"},
		{suiteArgs{dir: "results/", store: "my store.db"}, "go run ./cmd/rollout suite results/ --only filtering --store 'my store.db'"},
	} {
		if got := suiteCommand(tc.a, "filtering"); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.a, got, tc.want)
		}
	}
}
