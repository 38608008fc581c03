package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rollout-rl/rollout/experiments/runner"
)

// The environment variables --shard auto reads: a Slurm job array's (set
// by sbatch --array for each array task), a Kubernetes Indexed Job's (set
// in each pod) and ours for the number of shards where the scheduler does
// not say it.
const (
	envSlurmTaskID    = "SLURM_ARRAY_TASK_ID"
	envSlurmTaskCount = "SLURM_ARRAY_TASK_COUNT"
	envSlurmTaskMin   = "SLURM_ARRAY_TASK_MIN"
	envSlurmTaskMax   = "SLURM_ARRAY_TASK_MAX"
	envSlurmTaskStep  = "SLURM_ARRAY_TASK_STEP"
	envSlurmJobID     = "SLURM_JOB_ID"
	envK8sIndex       = "JOB_COMPLETION_INDEX"
	envShards         = "ROLLOUT_SHARDS"
)

// shardPlaceholder in --store is replaced by the shard's index,
// shardsPlaceholder by the number of shards.
const (
	shardPlaceholder  = "{shard}"
	shardsPlaceholder = "{shards}"
)

// shardFlags are rollout run's --shard and --shards.
type shardFlags struct {
	shard  string // "", "i/n" or "auto"
	shards int    // --shards N; 0 when not given
}

// shardChoice is the slice of the grid a rollout run computes.
type shardChoice struct {
	runner.Shard
	// Sharded is set when --shard was given (even as 0/1).
	Sharded bool
	// Auto is set for --shard auto.
	Auto bool
	// From says where --shard auto found the slice, e.g.
	// "SLURM_ARRAY_TASK_ID=3 - SLURM_ARRAY_TASK_MIN=1 of SLURM_ARRAY_TASK_COUNT=4";
	// empty for --shard i/n.
	From string
}

// resolveShard turns --shard and --shards into a shard, reading the
// scheduler's variables through lookup (os.LookupEnv) for --shard auto:
// Slurm's array task variables, else Kubernetes' JOB_COMPLETION_INDEX with
// the number of shards from --shards or $ROLLOUT_SHARDS. Every error names
// the flags and variables involved with their values.
func resolveShard(f shardFlags, lookup func(string) (string, bool)) (shardChoice, error) {
	if f.shards < 0 {
		return shardChoice{}, fmt.Errorf("--shards %d: want ≥ 1", f.shards)
	}
	if f.shard != "auto" {
		if f.shards != 0 {
			return shardChoice{}, fmt.Errorf("--shards %d: only with --shard auto (--shard i/n says n itself)", f.shards)
		}
		sh, err := parseShard(f.shard)
		return shardChoice{Shard: sh, Sharded: f.shard != ""}, err
	}
	count, countFrom, err := shardCount(f.shards, lookup)
	if err != nil {
		return shardChoice{}, err
	}
	_, slurm := lookup(envSlurmTaskID)
	k8sIndex, k8s := lookup(envK8sIndex)
	var ch shardChoice
	switch {
	case slurm && k8s:
		id, _ := lookup(envSlurmTaskID)
		return shardChoice{}, fmt.Errorf("--shard auto: both %s=%q (Slurm) and %s=%q (Kubernetes) are set: give --shard i/n", envSlurmTaskID, id, envK8sIndex, k8sIndex)
	case slurm:
		if ch, err = slurmShard(lookup); err != nil {
			return shardChoice{}, err
		}
		if count > 0 && count != ch.Count {
			return shardChoice{}, fmt.Errorf("--shard auto: %s says %d shards, but %s=%d", countFrom, count, envSlurmTaskCount, ch.Count)
		}
	case k8s:
		if count == 0 {
			return shardChoice{}, fmt.Errorf("--shard auto: %s=%q is set but not the number of shards: give --shards N or set %s (the Job's completions)", envK8sIndex, k8sIndex, envShards)
		}
		i, err := strconv.Atoi(k8sIndex)
		if err != nil || i < 0 || i >= count {
			return shardChoice{}, fmt.Errorf("--shard auto: %s=%q: want an index in [0, %d) (%s)", envK8sIndex, k8sIndex, count, countFrom)
		}
		ch = shardChoice{Shard: runner.Shard{Index: i, Count: count}, From: fmt.Sprintf("%s=%d of %s", envK8sIndex, i, countFrom)}
	default:
		msg := fmt.Sprintf("--shard auto: neither %s (a Slurm job array) nor %s (a Kubernetes Indexed Job) is set", envSlurmTaskID, envK8sIndex)
		if job, ok := lookup(envSlurmJobID); ok {
			msg += fmt.Sprintf("; %s=%s is a Slurm job but not an array task: submit it with sbatch --array", envSlurmJobID, job)
		}
		return shardChoice{}, errors.New(msg + "; or give --shard i/n")
	}
	ch.Sharded, ch.Auto = true, true
	return ch, nil
}

// shardCount is the number of shards --shards or $ROLLOUT_SHARDS gives (0
// when neither does) and which of them said it.
func shardCount(flag int, lookup func(string) (string, bool)) (int, string, error) {
	env, ok := lookup(envShards)
	if !ok {
		if flag > 0 {
			return flag, fmt.Sprintf("--shards %d", flag), nil
		}
		return 0, "", nil
	}
	n, err := strconv.Atoi(strings.TrimSpace(env))
	if err != nil || n < 1 {
		return 0, "", fmt.Errorf("--shard auto: %s=%q: want a number of shards ≥ 1", envShards, env)
	}
	if flag > 0 && flag != n {
		return 0, "", fmt.Errorf("--shard auto: --shards %d, but %s=%d", flag, envShards, n)
	}
	return n, fmt.Sprintf("%s=%d", envShards, n), nil
}

// slurmShard reads a Slurm array task's shard: the array's tasks
// SLURM_ARRAY_TASK_MIN, MIN+STEP, …, MAX (STEP 1 when not set) are the
// shards 0, 1, …, SLURM_ARRAY_TASK_COUNT−1, so --array=0-3, 1-4 and 0-6:2
// all make 4 shards. Arrays whose indices are not evenly spaced (a list
// like --array=1,2,7) are refused.
func slurmShard(lookup func(string) (string, bool)) (shardChoice, error) {
	vals := map[string]int{envSlurmTaskStep: 1}
	for _, name := range []string{envSlurmTaskID, envSlurmTaskCount, envSlurmTaskMin, envSlurmTaskMax, envSlurmTaskStep} {
		s, ok := lookup(name)
		if !ok {
			if name == envSlurmTaskCount || name == envSlurmTaskMin {
				return shardChoice{}, fmt.Errorf("--shard auto: %s=%q is set but not %s (Slurm sets both in an array task)", envSlurmTaskID, envValue(lookup, envSlurmTaskID), name)
			}
			continue
		}
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return shardChoice{}, fmt.Errorf("--shard auto: %s=%q is not an integer", name, s)
		}
		vals[name] = v
	}
	id, count, lo, step := vals[envSlurmTaskID], vals[envSlurmTaskCount], vals[envSlurmTaskMin], vals[envSlurmTaskStep]
	array := fmt.Sprintf("%s=%d, %s=%d, %s=%d", envSlurmTaskMin, lo, envSlurmTaskStep, step, envSlurmTaskCount, count)
	if count < 1 || step < 1 {
		return shardChoice{}, fmt.Errorf("--shard auto: an array of %s: want a count and a step ≥ 1", array)
	}
	if hi, ok := vals[envSlurmTaskMax]; ok && hi != lo+(count-1)*step {
		return shardChoice{}, fmt.Errorf("--shard auto: the array's indices are not evenly spaced (%s, %s=%d): submit a range, --array=0-%d (or 1-%d)", array, envSlurmTaskMax, hi, count-1, count)
	}
	off := id - lo
	if off < 0 || off%step != 0 || off/step >= count {
		return shardChoice{}, fmt.Errorf("--shard auto: %s=%d is not an index of the array of %s", envSlurmTaskID, id, array)
	}
	from := fmt.Sprintf("%s=%d of %s", envSlurmTaskID, id, array)
	return shardChoice{Shard: runner.Shard{Index: off / step, Count: count}, From: from}, nil
}

// envValue is the value of the variable name, empty when it is not set.
func envValue(lookup func(string) (string, bool), name string) string {
	v, _ := lookup(name)
	return v
}

// parseShard parses --shard i/n; an empty flag is the whole grid, 0/1.
func parseShard(s string) (runner.Shard, error) {
	if s == "" {
		return runner.Shard{Index: 0, Count: 1}, nil
	}
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return runner.Shard{}, fmt.Errorf("--shard %q: want i/n with 0 ≤ i < n, or auto", s)
	}
	return runner.Shard{Index: i, Count: n}, nil
}

// shardStorePath is the store file of a shard: path with {shard} replaced
// by the shard's index and {shards} by the number of shards, or, when path
// is a directory (or ends in a separator, and then it is created), the file
// shard-I-of-N.db in it. Any other path is used as it is with --shard i/n
// and refused with --shard auto, whose shards, started alike, would all
// write the one file. Without --shard, a path with a placeholder is an
// error and a directory is left to the store to refuse.
func shardStorePath(path string, ch shardChoice) (string, error) {
	placeholder := strings.Contains(path, shardPlaceholder) || strings.Contains(path, shardsPlaceholder)
	if !ch.Sharded {
		if placeholder {
			return "", fmt.Errorf("store %s: %s and %s stand for a shard: give --shard", path, shardPlaceholder, shardsPlaceholder)
		}
		return path, nil
	}
	if placeholder {
		r := strings.NewReplacer(shardPlaceholder, strconv.Itoa(ch.Index), shardsPlaceholder, strconv.Itoa(ch.Count))
		return r.Replace(path), nil
	}
	name := fmt.Sprintf("shard-%d-of-%d.db", ch.Index, ch.Count)
	if strings.HasSuffix(path, string(filepath.Separator)) || strings.HasSuffix(path, "/") {
		if err := os.MkdirAll(path, 0o755); err != nil {
			return "", fmt.Errorf("store %s: %w", path, err)
		}
		return filepath.Join(path, name), nil
	}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return filepath.Join(path, name), nil
	}
	if ch.Auto {
		return "", fmt.Errorf("store %s: with --shard auto every shard would write this one file: give a directory (%s/) or a name with %s (the shard's index)", path, strings.TrimSuffix(path, filepath.Ext(path)), shardPlaceholder)
	}
	return path, nil
}
