package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/experiments/config"
	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/experiments/runner"
)

// Each run's line says how it ended in this command.
func TestResultText(t *testing.T) {
	for _, tc := range []struct {
		res  runner.Result
		want string
	}{
		{runner.Result{Outcome: runner.Finished, Step: 8, Resumed: -1}, "finished"},
		{runner.Result{Outcome: runner.Finished, Step: 8, Resumed: 3}, "finished, resumed from step 3"},
		{runner.Result{Outcome: runner.Stopped, Step: 2, Resumed: -1}, "stopped at step 2"},
		{runner.Result{Outcome: runner.Stopped, Step: 5, Resumed: 3}, "stopped at step 5, resumed from step 3"},
		{runner.Result{Outcome: runner.Failed, Step: 1, Resumed: -1, Err: errors.New("nan loss")}, "failed at step 1: nan loss"},
		{runner.Result{Outcome: runner.Failed, Step: -1, Resumed: -1, Err: errors.New("no checkpoint")}, "failed before step 0: no checkpoint"},
		{runner.Result{Outcome: runner.Skipped, Step: 8, Resumed: -1}, "already done"},
		{runner.Result{Outcome: runner.NotStarted, Step: -1, Resumed: -1}, "not started"},
	} {
		if got := resultText(tc.res); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.res, got, tc.want)
		}
	}
}

// The rerun hint repeats the command line, flags as given, quoted for a
// shell.
func TestRerunCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"c.yaml"}, "rollout run c.yaml"},
		{[]string{"c.yaml", "--store", "s.db", "--workers", "2", "--shard", "1/3"}, "rollout run c.yaml --store s.db --workers 2 --shard 1/3"},
		{[]string{"c.yaml", "--store", "shards/{shard}.db", "--shard", "auto", "--shards", "4"}, "rollout run c.yaml --store 'shards/{shard}.db' --shard auto --shards 4"},
		{[]string{"my dir/c.yaml", "--set", "train.lr=1e-3", "--set", "variants=[{name: b}]", "--cache", "it's"},
			`rollout run 'my dir/c.yaml' --set train.lr=1e-3 --set 'variants=[{name: b}]' --cache 'it'\''s'`},
	} {
		root := newRootCmd()
		cmd := newRunCmd()
		root.AddCommand(cmd)
		if err := cmd.ParseFlags(tc.args); err != nil {
			t.Fatal(err)
		}
		a := runArgs{config: cmd.Flags().Arg(0)}
		a.sets, _ = cmd.Flags().GetStringArray("set")
		a.store, _ = cmd.Flags().GetString("store")
		a.cache, _ = cmd.Flags().GetString("cache")
		a.shard.shard, _ = cmd.Flags().GetString("shard")
		a.shard.shards, _ = cmd.Flags().GetInt("shards")
		a.workers, _ = cmd.Flags().GetInt("workers")
		if got := rerunCommand(cmd, a); got != tc.want {
			t.Errorf("%q:\n got %s\nwant %s", tc.args, got, tc.want)
		}
	}
}

func TestShardSize(t *testing.T) {
	for _, tc := range []struct{ n, i, count, want int }{
		{4, 0, 1, 4}, {5, 0, 2, 3}, {5, 1, 2, 2}, {2, 2, 3, 0}, {0, 0, 1, 0},
	} {
		if got := shardSize(tc.n, runner.Shard{Index: tc.i, Count: tc.count}); got != tc.want {
			t.Errorf("%d runs, shard %d/%d: %d, want %d", tc.n, tc.i, tc.count, got, tc.want)
		}
	}
}

// Piped, the run view prints each line once: a finished run's bar ends at
// its last step (not again when it is done), a stopped run's says where it
// stopped instead of jumping to 100%.
func TestRunViewPlain(t *testing.T) {
	var buf bytes.Buffer
	v := newRunView(newProgress(&buf), 2)
	a := config.Run{ID: "a", Variant: "flat", Seed: 1}
	b := config.Run{ID: "b", Variant: "tree", Seed: 1}
	a.Config.Train.Steps, b.Config.Train.Steps = 2, 4
	v.Start(a, 2, 0)
	v.Start(b, 4, 0)
	for step := range 3 {
		v.Step(a, step, map[string]float64{"reward/mean": 0.5})
	}
	v.Step(b, 0, nil)
	v.Step(b, 1, nil) // within 5 s of its last line: not printed
	v.Done(a, runner.Result{Run: a, Outcome: runner.Finished, Step: 2, Resumed: -1})
	v.Done(b, runner.Result{Run: b, Outcome: runner.Stopped, Step: 1, Resumed: -1})
	v.finish()
	got := buf.String()
	want := `flat seed 1: 0/2 (0%) eta ?
tree seed 1: 0/4 (0%) eta ?
flat seed 1: 2/2 (100%) eta 0s reward 0.500
runs: 1/2 (50%) eta 0s
tree seed 1: stopped at step 1
runs: 1 of 2 runs done 1 stopped
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
		if seen[line] {
			t.Errorf("line %q twice", line)
		}
		seen[line] = true
	}
}

// A config that is refused — a grid over the cap, data a local policy
// cannot read, a second YAML document — exits 2 with an error naming the
// file, line and key, before anything is written: no store, no cache.
func TestRunRefusesBadConfigBeforeWriting(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "q.jsonl"), []byte("{\"prompt\": \"1+1\", \"answer\": \"2\"}\n{\"prompt\": \"1\u00d72\", \"answer\": \"2\"}\n"), 0o644)
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"grid", "task: {name: add}\nablate:\n  train.lr: [" + strings.Repeat("1e-4, ", 99) + "1e-4]\n  train.steps: [" + strings.Repeat("1, ", 99) + "1]\n",
			[]string{"grid.yaml:3: ablate: the grid is the base × 100 (ablate.train.lr) × 100 (ablate.train.steps) = 10000 variants, more than the 4096"}},
		{"jsonl", "task: {name: jsonl, params: {path: q.jsonl}}\n",
			[]string{"jsonl.yaml:1: task.params.path:", "q.jsonl:2: the prompt has the character '×'"}},
		{"twodocs", "task: {name: add}\n---\ntask: {name: add}\n", []string{"twodocs.yaml:2: a second YAML document"}},
		{"misspelt", "task: {name: add}\ntrain: {setps: 2}\n", []string{"misspelt.yaml:2: train.setps: unknown key; did you mean train.steps?"}},
		{"tokens", "task: {name: add}\ntrain: {steps: 0, total_tokens: 10}\n", []string{"tokens.yaml:2: train.total_tokens: 10, below one group's longest possible cost"}},
	} {
		cfg := filepath.Join(dir, tc.name+".yaml")
		os.WriteFile(cfg, []byte(tc.src), 0o644)
		store, cache := filepath.Join(dir, tc.name+".db"), filepath.Join(dir, tc.name+"-cache")
		code, out, e := rollout(t, "run", cfg, "--store", store, "--cache", cache)
		for _, want := range tc.want {
			if code != 2 || !strings.Contains(e, want) {
				t.Errorf("%s: exit %d, stderr lacks %q:\n%s%s", tc.name, code, want, out, e)
			}
		}
		for _, p := range []string{store, cache} {
			if _, err := os.Stat(p); err == nil {
				t.Errorf("%s: %s was written", tc.name, p)
			}
		}
	}
}

// A run's bar counts what the run ends at: steps, or sampled tokens
// (train.total_tokens) or FLOPs (train.total_flops) when it has no step
// count.
func TestRunViewGoals(t *testing.T) {
	for _, tc := range []struct {
		name   string
		train  rl.Config
		metric string
		want   string
	}{
		{"steps", rl.Config{Steps: 3}, "", "steps seed 1: 3/3 (100%)"},
		{"tokens", rl.Config{TotalTokens: 900}, "budget/tokens_cum", "tokens seed 1: 900/900 (100%)"},
		{"flops", rl.Config{TotalFLOPs: 5000}, "budget/total_flops_cum", "flops seed 1: 5000/5000 (100%)"},
	} {
		var buf bytes.Buffer
		v := newRunView(newProgress(&buf), 1)
		r := config.Run{ID: tc.name, Variant: tc.name, Seed: 1}
		r.Config.Train = tc.train
		v.Start(r, tc.train.Steps, 0)
		m := map[string]float64{"budget/tokens_cum": 900, "budget/total_flops_cum": 5000}
		v.Step(r, 3, m)
		if got := buf.String(); !strings.Contains(got, tc.want) {
			t.Errorf("%s: the bar does not reach its end after the last step:\n%s", tc.name, got)
		}
	}
}
