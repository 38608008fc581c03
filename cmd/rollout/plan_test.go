package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/tracking"
)

const planConfig = `name: syn
task: {name: add, params: {digits: 1}}
checkpoint: base
train: {steps: 1, prompts_per_step: 2, max_resample_rounds: 0}
eval: {every: 1, prompts: 3, samples: 2, k: 2}
seeds: [1, 2]
variants:
  - {name: base, set: {rollout.temperature: 1.0}}
  - {name: hot, set: {rollout.temperature: 1.2}}
design:
  checks:
    - {name: gain, variant: hot, metric: eval/acc, at: final, want: higher, effect: 0.05}
`

// rollout plan reads a pilot from the store and plans from it; without
// checks, or without a pilot and --pilot, it exits 2 saying why.
func TestPlanFromTheStore(t *testing.T) {
	dir := t.TempDir()
	if code, _, e := rollout(t, "model", "init", "--size", "tiny", "--out", filepath.Join(dir, "base")); code != 0 {
		t.Fatal(e)
	}
	cfg := filepath.Join(dir, "syn.yaml")
	os.WriteFile(cfg, []byte(planConfig), 0o644)
	store := filepath.Join(dir, "s.db")
	st, err := tracking.Open(store, tracking.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.PutExperiment(tracking.Experiment{Name: "syn", Variants: []string{"base", "hot"}, Baseline: "base"}); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for seed := int64(1); seed <= 30; seed++ {
		acc := 0.5 + 0.05*rng.NormFloat64()
		for _, v := range []string{"base", "hot"} {
			id := fmt.Sprintf("%s%d", v, seed)
			if v == "hot" {
				acc += 0.04 * rng.NormFloat64()
			}
			if _, err := st.BeginRun(tracking.Run{ID: id, Experiment: "syn", Variant: v, Seed: seed}); err != nil {
				t.Fatal(err)
			}
			for step := range 2 {
				if err := st.CommitStep(id, tracking.StepRecord{Step: step, Metrics: map[string]float64{"eval/acc": acc}}); err != nil {
					t.Fatal(err)
				}
			}
			if err := st.EndRun(id, tracking.StatusFinished, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	st.Close()
	code, out, e := rollout(t, "plan", cfg, "--store", store)
	for _, want := range []string{"pilot: experiment syn in", "(60 runs)", "the design runs 2 seeds", "gain", "checks[0] (gain): pilot_sd: 0.0"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("plan: exit %d, output lacks %q:\n%s%s", code, want, out, e)
		}
	}

	// config show prints the design and the hash rollout run records.
	code, out, e = rollout(t, "config", "show", cfg)
	if code != 0 || !regexp.MustCompile(`# design [0-9a-f]{64} \(the hash of the whole resolved design`).MatchString(out) || !strings.Contains(out, "    - name: gain\n      variant: hot\n") {
		t.Errorf("config show: exit %d\n%s%s", code, out, e)
	}

	noChecks := filepath.Join(dir, "plain.yaml")
	os.WriteFile(noChecks, []byte(planConfig[:strings.Index(planConfig, "design:")]), 0o644)
	other := filepath.Join(dir, "other.yaml")
	os.WriteFile(other, []byte(strings.Replace(planConfig, "name: syn", "name: fresh", 1)), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", noChecks, "--store", store}, "declares no checks (design.checks)"},
		{[]string{"plan", other, "--store", store}, "holds no finished runs of fresh or fresh_pilot: give --pilot N"},
		{[]string{"plan", other, "--store", store, "--pilot", "1"}, "--pilot 1"},
	} {
		code, _, e := rollout(t, tc.args...)
		if code != 2 || !strings.Contains(e, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want 2 and %q", tc.args, code, e, tc.want)
		}
	}
}

// With --pilot N and no pilot in the store, rollout plan runs one as
// NAME_pilot with N seeds beyond the design's, then plans from it, with
// the base policy from the cache --cache names.
func TestPlanRunsAPilot(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a pilot")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "syn.yaml")
	os.WriteFile(cfg, []byte(strings.Replace(planConfig, "checkpoint: base", "pretrain: {steps: 20}", 1)), 0o644)
	// The base policy is pretrained into the cache --cache names, and
	// $ROLLOUT_CACHE names a file, where no cache can be: a pilot that
	// ignored --cache fails, as the control without it shows.
	cache := filepath.Join(dir, "cache")
	if code, out, e := rollout(t, "pretrain", cfg, "--cache", cache); code != 0 || !strings.Contains(out, "trained base policy") {
		t.Fatalf("pretrain: exit %d\n%s%s", code, out, e)
	}
	notACache := filepath.Join(dir, "not-a-cache")
	if err := os.WriteFile(notACache, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("ROLLOUT_CACHE", notACache)
	if code, out, e := rollout(t, "plan", cfg, "--store", filepath.Join(dir, "control.db"), "--pilot", "2"); code == 0 || !strings.Contains(e, "not-a-cache") {
		t.Fatalf("plan --pilot 2 without --cache: exit %d, want a failure naming $ROLLOUT_CACHE's file\n%s%s", code, out, e)
	}
	store := filepath.Join(dir, "s.db")
	code, out, e := rollout(t, "plan", cfg, "--store", store, "--pilot", "2", "--workers", "2", "--cache", cache)
	if code != 0 || !strings.Contains(out, "pilot: experiment syn_pilot in") || !strings.Contains(out, "(4 runs)") {
		t.Fatalf("plan --pilot 2 --cache: exit %d\n%s\n%s", code, out, e)
	}
	if strings.Contains(e, "pretrain add") {
		t.Errorf("the pilot pretrained its base policy again instead of taking it from --cache:\n%s", e)
	}
	st, err := tracking.Open(store, tracking.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, _ := st.Runs("syn_pilot")
	for _, r := range runs {
		if r.Seed != 3 && r.Seed != 4 {
			t.Errorf("pilot run %s has seed %d, want 3 or 4 (after the design's 1, 2)", r.ID, r.Seed)
		}
	}
	if _, err := st.Experiment("syn"); err == nil {
		t.Errorf("the pilot recorded the experiment itself")
	}
	st.Close()

	// The experiment itself records its design before its runs; a changed
	// design is then refused, exit 2, naming the key, nothing run.
	if code, out, e := rollout(t, "run", cfg, "--store", store, "--cache", cache, "--workers", "2"); code != 0 || !strings.Contains(out, "4 finished") {
		t.Fatalf("run: exit %d\n%s%s", code, out, e)
	}
	code, out, e = rollout(t, "run", cfg, "--store", store, "--cache", cache, "--set", "design.alpha=0.01")
	if code != 2 || !strings.Contains(e, `experiment "syn": its design is recorded`) || !strings.Contains(e, "design.alpha is 0.05 in the store, 0.01 now") {
		t.Errorf("a changed design: exit %d\n%s%s", code, out, e)
	}
	code, out, e = rollout(t, "verdict", "syn", "--store", store)
	if code != 0 || !strings.Contains(out, "| gain | confirmatory, primary |") || !strings.Contains(out, "before its first run") {
		t.Errorf("verdict: exit %d\n%s%s", code, out, e)
	}
}
