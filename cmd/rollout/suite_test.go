package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/experiments/suite"
	"github.com/rollout-rl/rollout/tracking"
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

// rollout suite --no-run on a store that has not run a report's
// experiment: with --only naming it, or when the store holds none of the
// suite, an error naming the store and each missing report (exit 2);
// otherwise the missing reports are skipped with a note and the others
// written (here the one present has no runs, which stays an error).
func TestSuiteNoRunMissing(t *testing.T) {
	dir := t.TempDir()
	empty, partial := filepath.Join(dir, "empty.db"), filepath.Join(dir, "partial.db")
	for path, exp := range map[string]string{empty: "quickstart", partial: "econ_compute_sizes"} {
		st, err := tracking.Open(path, tracking.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.PutExperiment(tracking.Experiment{Name: exp}); err != nil {
			t.Fatal(err)
		}
		st.Close()
	}
	out := filepath.Join(dir, "out")
	os.Mkdir(out, 0o755)
	t.Chdir("../..") // the suite's configs are read from the repository's root
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"none in the store", []string{"--store", empty}, 2,
			[]string{"--no-run: the store " + empty + " has not run filtering (experiment econ_filtering_v2), max_length (experiment econ_max_length_detours)", "recipe (experiment econ_recipe_v2): run them first"}},
		{"only names a missing one", []string{"--store", partial, "--only", "filtering", "--only", "compute"}, 2,
			[]string{"has not run filtering (experiment econ_filtering_v2): run them first"}},
		{"others skipped", []string{"--store", partial}, 1,
			[]string{"skipped filtering (experiment econ_filtering_v2): not in the store " + partial + " (--no-run)", "skipped recipe (", "experiment econ_compute_sizes has no runs"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, errOut := rollout(t, append([]string{"suite", out, "--no-run"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr %q does not contain %q", errOut, w)
				}
			}
			if strings.Contains(errOut, "skipped compute") {
				t.Errorf("stderr %q: compute is in the store", errOut)
			}
		})
	}
}

// The answer-time measurer of rollout suite refuses, before loading any
// policy, a run its config does not make and a final policy the store
// does not keep.
func TestAnswerMeasurerRefuses(t *testing.T) {
	t.Chdir("../..")
	f, err := loadConfig("experiments/configs/econ/ttc.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := tracking.Open(filepath.Join(t.TempDir(), "s.db"), tracking.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m := answerMeasurer(context.Background(), f, st, t.TempDir())
	r := f.Runs()[0]
	for _, tc := range []struct {
		name string
		run  tracking.Run
		want string
	}{
		{"not the config's", tracking.Run{ID: "feedbeef", Variant: "k1", Seed: 1}, "run feedbeef is not a run of experiments/configs/econ/ttc.yaml"},
		{"no final policy", tracking.Run{ID: r.ID, Variant: r.Variant, Seed: int64(r.Seed)}, "the run's config needs train.save_final"},
	} {
		if _, err := m(tc.run, suite.PolicyRL, suite.Spec{Ns: []int{1}}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
}
