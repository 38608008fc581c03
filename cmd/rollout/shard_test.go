package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/experiments/runner"
)

// env is a lookup over a fixed set of variables.
func env(vars map[string]string) func(string) (string, bool) {
	return func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	}
}

// slurmEnv is what Slurm sets in the task with index id of an array
// lo-hi:step.
func slurmEnv(id, lo, hi, step int) map[string]string {
	return map[string]string{
		envSlurmJobID:     "1001",
		envSlurmTaskID:    itoa(id),
		envSlurmTaskMin:   itoa(lo),
		envSlurmTaskMax:   itoa(hi),
		envSlurmTaskStep:  itoa(step),
		envSlurmTaskCount: itoa((hi-lo)/step + 1),
	}
}

// --shard auto finds i/n in Slurm's array variables (arrays from 0, from 1,
// with a step) or in a Kubernetes Indexed Job's index with the count from
// --shards or $ROLLOUT_SHARDS, and refuses missing or inconsistent
// variables, naming them with their values.
func TestResolveShard(t *testing.T) {
	with := func(m map[string]string, kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range m {
			out[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			if kv[i+1] == "-" {
				delete(out, kv[i])
			} else {
				out[kv[i]] = kv[i+1]
			}
		}
		return out
	}
	k8s := map[string]string{envK8sIndex: "2"}
	for _, tc := range []struct {
		name  string
		flags shardFlags
		vars  map[string]string
		want  runner.Shard
		err   string
	}{
		{"no shard", shardFlags{}, nil, runner.Shard{Index: 0, Count: 1}, ""},
		{"i/n", shardFlags{shard: "1/3"}, slurmEnv(2, 0, 3, 1), runner.Shard{Index: 1, Count: 3}, ""},
		{"bad i/n", shardFlags{shard: "3/3"}, nil, runner.Shard{}, `--shard "3/3": want i/n with 0 ≤ i < n, or auto`},
		{"--shards without auto", shardFlags{shard: "1/3", shards: 3}, nil, runner.Shard{}, "--shards 3: only with --shard auto"},
		{"slurm from 0", shardFlags{shard: "auto"}, slurmEnv(0, 0, 3, 1), runner.Shard{Index: 0, Count: 4}, ""},
		{"slurm from 1", shardFlags{shard: "auto"}, slurmEnv(1, 1, 4, 1), runner.Shard{Index: 0, Count: 4}, ""},
		{"slurm last from 1", shardFlags{shard: "auto"}, slurmEnv(4, 1, 4, 1), runner.Shard{Index: 3, Count: 4}, ""},
		{"slurm step", shardFlags{shard: "auto"}, slurmEnv(5, 1, 7, 2), runner.Shard{Index: 2, Count: 4}, ""},
		{"slurm without step or max", shardFlags{shard: "auto"}, with(slurmEnv(3, 1, 4, 1), envSlurmTaskStep, "-", envSlurmTaskMax, "-"), runner.Shard{Index: 2, Count: 4}, ""},
		{"slurm and --shards agree", shardFlags{shard: "auto", shards: 4}, slurmEnv(2, 1, 4, 1), runner.Shard{Index: 1, Count: 4}, ""},
		{"slurm and --shards disagree", shardFlags{shard: "auto", shards: 3}, slurmEnv(2, 1, 4, 1), runner.Shard{}, "--shard auto: --shards 3 says 3 shards, but SLURM_ARRAY_TASK_COUNT=4"},
		{"slurm and ROLLOUT_SHARDS disagree", shardFlags{shard: "auto"}, with(slurmEnv(2, 1, 4, 1), envShards, "2"), runner.Shard{}, "ROLLOUT_SHARDS=2 says 2 shards, but SLURM_ARRAY_TASK_COUNT=4"},
		{"slurm without min", shardFlags{shard: "auto"}, with(slurmEnv(2, 1, 4, 1), envSlurmTaskMin, "-"), runner.Shard{}, `SLURM_ARRAY_TASK_ID="2" is set but not SLURM_ARRAY_TASK_MIN`},
		{"slurm without count", shardFlags{shard: "auto"}, with(slurmEnv(2, 1, 4, 1), envSlurmTaskCount, "-"), runner.Shard{}, `SLURM_ARRAY_TASK_ID="2" is set but not SLURM_ARRAY_TASK_COUNT`},
		{"slurm not a number", shardFlags{shard: "auto"}, with(slurmEnv(2, 1, 4, 1), envSlurmTaskCount, "four"), runner.Shard{}, `SLURM_ARRAY_TASK_COUNT="four" is not an integer`},
		{"slurm id out of the array", shardFlags{shard: "auto"}, with(slurmEnv(2, 1, 4, 1), envSlurmTaskID, "5"), runner.Shard{}, "SLURM_ARRAY_TASK_ID=5 is not an index of the array of SLURM_ARRAY_TASK_MIN=1, SLURM_ARRAY_TASK_STEP=1, SLURM_ARRAY_TASK_COUNT=4"},
		{"slurm id between steps", shardFlags{shard: "auto"}, with(slurmEnv(3, 1, 7, 2), envSlurmTaskID, "4"), runner.Shard{}, "SLURM_ARRAY_TASK_ID=4 is not an index"},
		{"slurm list", shardFlags{shard: "auto"}, with(slurmEnv(2, 1, 3, 1), envSlurmTaskMax, "7"), runner.Shard{}, "not evenly spaced (SLURM_ARRAY_TASK_MIN=1, SLURM_ARRAY_TASK_STEP=1, SLURM_ARRAY_TASK_COUNT=3, SLURM_ARRAY_TASK_MAX=7)"},
		{"k8s with --shards", shardFlags{shard: "auto", shards: 3}, k8s, runner.Shard{Index: 2, Count: 3}, ""},
		{"k8s with ROLLOUT_SHARDS", shardFlags{shard: "auto"}, with(k8s, envShards, "5"), runner.Shard{Index: 2, Count: 5}, ""},
		{"k8s both agree", shardFlags{shard: "auto", shards: 5}, with(k8s, envShards, "5"), runner.Shard{Index: 2, Count: 5}, ""},
		{"k8s both disagree", shardFlags{shard: "auto", shards: 4}, with(k8s, envShards, "5"), runner.Shard{}, "--shards 4, but ROLLOUT_SHARDS=5"},
		{"k8s without count", shardFlags{shard: "auto"}, k8s, runner.Shard{}, `JOB_COMPLETION_INDEX="2" is set but not the number of shards: give --shards N or set ROLLOUT_SHARDS`},
		{"k8s index too large", shardFlags{shard: "auto", shards: 2}, k8s, runner.Shard{}, `JOB_COMPLETION_INDEX="2": want an index in [0, 2) (--shards 2)`},
		{"k8s index not a number", shardFlags{shard: "auto", shards: 2}, map[string]string{envK8sIndex: "x"}, runner.Shard{}, `JOB_COMPLETION_INDEX="x": want an index`},
		{"bad ROLLOUT_SHARDS", shardFlags{shard: "auto"}, with(k8s, envShards, "0"), runner.Shard{}, `ROLLOUT_SHARDS="0": want a number of shards ≥ 1`},
		{"negative --shards", shardFlags{shard: "auto", shards: -1}, k8s, runner.Shard{}, "--shards -1: want ≥ 1"},
		{"both schedulers", shardFlags{shard: "auto", shards: 4}, with(slurmEnv(2, 1, 4, 1), envK8sIndex, "1"), runner.Shard{}, `both SLURM_ARRAY_TASK_ID="2" (Slurm) and JOB_COMPLETION_INDEX="1" (Kubernetes) are set`},
		{"neither", shardFlags{shard: "auto"}, nil, runner.Shard{}, "neither SLURM_ARRAY_TASK_ID (a Slurm job array) nor JOB_COMPLETION_INDEX (a Kubernetes Indexed Job) is set; or give --shard i/n"},
		{"slurm job, no array", shardFlags{shard: "auto"}, map[string]string{envSlurmJobID: "77"}, runner.Shard{}, "SLURM_JOB_ID=77 is a Slurm job but not an array task: submit it with sbatch --array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolveShard(tc.flags, env(tc.vars))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Shard != tc.want || got.Sharded != (tc.flags.shard != "") || got.Auto != (tc.flags.shard == "auto") {
				t.Fatalf("shard %+v, want %+v", got, tc.want)
			}
			if (tc.flags.shard == "auto") != (got.From != "") {
				t.Fatalf("from %q for --shard %q", got.From, tc.flags.shard)
			}
		})
	}
}

// A shard's store is --store with its placeholders replaced, or a file
// named after the shard in a directory; without --shard a placeholder is
// an error.
func TestShardStorePath(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "plain.db")
	newDir := filepath.Join(dir, "new") + "/"
	sh := shardChoice{Shard: runner.Shard{Index: 2, Count: 4}, Sharded: true}
	for _, tc := range []struct {
		name, path string
		ch         shardChoice
		want, err  string
	}{
		{"unsharded file", file, shardChoice{Shard: runner.Shard{Count: 1}}, file, ""},
		{"unsharded placeholder", "s-{shard}.db", shardChoice{Shard: runner.Shard{Count: 1}}, "", "store s-{shard}.db: {shard} and {shards} stand for a shard: give --shard"},
		{"placeholders", filepath.Join(dir, "run-{shard}-of-{shards}.db"), sh, filepath.Join(dir, "run-2-of-4.db"), ""},
		{"existing directory", dir, sh, filepath.Join(dir, "shard-2-of-4.db"), ""},
		{"new directory", newDir, sh, filepath.Join(newDir, "shard-2-of-4.db"), ""},
		{"plain file", file, sh, file, ""},
		{"plain file, auto", file, shardChoice{Shard: sh.Shard, Sharded: true, Auto: true}, "", "store " + file + ": with --shard auto every shard would write this one file: give a directory (" + strings.TrimSuffix(file, ".db") + "/) or a name with {shard}"},
		{"default store, auto", "rollout.db", shardChoice{Shard: sh.Shard, Sharded: true, Auto: true}, "", "store rollout.db: with --shard auto"},
		{"directory, auto", dir, shardChoice{Shard: sh.Shard, Sharded: true, Auto: true}, filepath.Join(dir, "shard-2-of-4.db"), ""},
		{"shard 0/1", dir, shardChoice{Shard: runner.Shard{Index: 0, Count: 1}, Sharded: true}, filepath.Join(dir, "shard-0-of-1.db"), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := shardStorePath(tc.path, tc.ch)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("%q, %v; want %q", got, err, tc.want)
			}
		})
	}
	if fi, err := os.Stat(newDir); err != nil || !fi.IsDir() {
		t.Fatalf("%s was not created: %v", newDir, err)
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// rollout run refuses a shard it cannot place, or a store every shard
// would share, with exit status 2 before it writes anything.
func TestRunShardAutoRefusals(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(cfg, []byte("task: {name: add}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{envSlurmTaskID, envSlurmJobID, envK8sIndex, envShards, "ROLLOUT_STORE"} {
		t.Setenv(name, "")
		os.Unsetenv(name)
	}
	store := filepath.Join(dir, "s.db")
	for _, tc := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"--shard", "auto", "--store", dir + "/"}, "--shard auto: neither SLURM_ARRAY_TASK_ID"},
		{map[string]string{envK8sIndex: "1"}, []string{"--shard", "auto", "--store", dir + "/"}, `JOB_COMPLETION_INDEX="1" is set but not the number of shards`},
		{map[string]string{envK8sIndex: "1"}, []string{"--shard", "auto", "--shards", "2", "--store", store}, "with --shard auto every shard would write this one file"},
		{nil, []string{"--shards", "2", "--store", store}, "--shards 2: only with --shard auto"},
		{nil, []string{"--store", filepath.Join(dir, "{shard}.db")}, "stand for a shard: give --shard"},
	} {
		for k, v := range tc.env {
			t.Setenv(k, v)
		}
		code, _, e := rollout(t, append([]string{"run", cfg}, tc.args...)...)
		if code != 2 || !strings.Contains(e, tc.want) {
			t.Errorf("%v %v: exit %d, stderr %q; want 2 and %q", tc.env, tc.args, code, e, tc.want)
		}
		for k := range tc.env {
			os.Unsetenv(k)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("refused runs wrote into %s: %v", dir, entries)
	}
}
