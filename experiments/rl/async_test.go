package rl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/experiments/config/field"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/team"
	"github.com/rollout-rl/rollout/search"
)

// asyncSetup is smallSetup with train.async k, its policy on a team of the
// given size (2: sampling and training run at once; 1: they take turns).
func asyncSetup(t *testing.T, train Config, k, cores int) Setup {
	t.Helper()
	train.Async = k
	s := smallSetup(t, train)
	s.Policy.SetTeam(team.New(cores))
	return s
}

// stepRecord is what a step produced that must not depend on timing: its
// metrics but wall times, its groups as binary records and its marks.
type stepRecord struct {
	metrics         map[string]float64
	groups          [][]byte
	mark, flopsMark int64
}

// timingFree reports whether a metric is the same at any timing.
func timingFree(key string) bool {
	return !strings.HasPrefix(key, "timing_s/") && !strings.HasPrefix(key, "throughput/")
}

func recordStep(t *testing.T, s Setup, res *StepResult) stepRecord {
	t.Helper()
	r := stepRecord{metrics: map[string]float64{}, mark: res.Mark, flopsMark: res.FLOPsMark}
	for k, v := range res.Metrics {
		if timingFree(k) {
			r.metrics[k] = v
		}
	}
	for _, sg := range res.Groups {
		b, err := sg.Record(s.Tokenizer).AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		r.groups = append(r.groups, b)
	}
	return r
}

// stepUntilDone steps loop until it is done (or n steps, n > 0).
func stepUntilDone(t *testing.T, s Setup, loop *Loop, n int) []stepRecord {
	t.Helper()
	var out []stepRecord
	for !loop.Done() && (n <= 0 || len(out) < n) {
		res, err := loop.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, recordStep(t, s, res))
		if len(out) > 1000 {
			t.Fatal("more than 1000 steps")
		}
	}
	return out
}

func sameSteps(t *testing.T, what string, a, b []stepRecord) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d steps against %d", what, len(a), len(b))
	}
	for i := range a {
		if len(a[i].metrics) != len(b[i].metrics) {
			t.Fatalf("%s: step %d: %d metrics against %d", what, i+1, len(a[i].metrics), len(b[i].metrics))
		}
		for k, v := range a[i].metrics {
			if w, ok := b[i].metrics[k]; !ok || w != v {
				t.Fatalf("%s: step %d %s: %v against %v", what, i+1, k, v, w)
			}
		}
		if len(a[i].groups) != len(b[i].groups) {
			t.Fatalf("%s: step %d: %d groups against %d", what, i+1, len(a[i].groups), len(b[i].groups))
		}
		for g := range a[i].groups {
			if !bytes.Equal(a[i].groups[g], b[i].groups[g]) {
				t.Fatalf("%s: step %d group %d differs", what, i+1, g)
			}
		}
		if a[i].mark != b[i].mark || a[i].flopsMark != b[i].flopsMark {
			t.Fatalf("%s: step %d: marks %d/%d against %d/%d", what, i+1, a[i].mark, a[i].flopsMark, b[i].mark, b[i].flopsMark)
		}
	}
}

// The rollouts of step t come from exactly policy version t−k (version 0
// in the first k steps): sampling step t again from the weights after t−k
// updates gives the same groups, bit for bit, and from the current
// weights other groups.
func TestAsyncSamplesFromVersionTMinusK(t *testing.T) {
	for _, k := range []int{1, 2} {
		// An untrained policy solves nothing: the entropy bonus makes the
		// updates change the weights.
		s := asyncSetup(t, Config{Steps: 5, PromptsPerStep: 2, FilterGroups: false, LR: 3e-2, EntropyCoef: 0.1, Correction: "tis"}, k, 2)
		loop, err := New(s)
		if err != nil {
			t.Fatal(err)
		}
		w0, _ := policy.EncodeWeights(s.Policy)
		versions := [][]byte{w0}
		var results []*StepResult
		for !loop.Done() {
			res, err := loop.Step(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			w, _ := policy.EncodeWeights(s.Policy)
			versions = append(versions, w)
			results = append(results, res)
		}
		loop.Close()
		if len(results) != 5 {
			t.Fatalf("k=%d: %d steps, want 5", k, len(results))
		}
		differs := 0
		for step, res := range results {
			v := max(0, step-k)
			if got := res.Metrics["async/staleness"]; got != float64(step-v) {
				t.Errorf("k=%d step %d: async/staleness %v, want %d", k, step+1, got, step-v)
			}
			again := func(version int) [][]byte {
				m, err := policy.DecodeWeights(s.Policy.Config, versions[version])
				if err != nil {
					t.Fatal(err)
				}
				rs := s
				rs.Policy = m
				ids := []int{2 * step, 2*step + 1}
				prompts, err := rs.Prompts(0, ids)
				if err != nil {
					t.Fatal(err)
				}
				groups, err := rs.Rollouts(context.Background(), step, prompts, ids)
				if err != nil {
					t.Fatal(err)
				}
				return recordStep(t, s, &StepResult{Groups: groups}).groups
			}
			got := recordStep(t, s, res).groups
			want := again(v)
			for g := range want {
				if !bytes.Equal(got[g], want[g]) {
					t.Fatalf("k=%d step %d group %d: not the groups of version %d", k, step+1, g, v)
				}
			}
			if v != step {
				cur := again(step)
				for g := range cur {
					if !bytes.Equal(got[g], cur[g]) {
						differs++
						break
					}
				}
			}
		}
		if differs == 0 {
			t.Errorf("k=%d: every step's groups are also those of the current version: the test cannot tell versions apart", k)
		}
	}
}

// An asynchronous run is the same, bit for bit, whether its sampling runs
// beside its updates (a team of two) or takes turns with them (one), and
// when killed after any step and resumed from that step's snapshot: the
// budget in tokens and in FLOPs is never exceeded, and the evaluation
// marks are reached as in a synchronous run.
func TestAsyncDeterministicAndResumable(t *testing.T) {
	for _, k := range []int{1, 2} {
		for _, budget := range []string{"tokens", "flops"} {
			name := fmt.Sprintf("k=%d/%s", k, budget)
			train := Config{Steps: 1000, PromptsPerStep: 3, FilterGroups: false, LR: 1e-2, EntropyCoef: 0.1, Correction: "tis", TreePacking: budget == "flops"}
			mk := func(cores int) (Setup, *Loop) {
				s := asyncSetup(t, train, k, cores)
				if budget == "flops" {
					s.Train.TotalFLOPs = 1 << 60 // for the probe's bound
				}
				probe, err := New(s)
				if err != nil {
					t.Fatal(err)
				}
				probe.Close()
				gm, _ := search.MaxGroupTokens(s.Strategy, probe.maxTokens(), 0)
				if budget == "tokens" {
					s.Train.TotalTokens, s.EvalEveryTokens = 7*gm+gm/2, 2*gm+5
				} else {
					f := probe.flopsMax.total(0)
					s.Train.TotalFLOPs, s.EvalEveryFLOPs = 14*f+f/3, 4*f
				}
				s.Policy.SetTeam(team.New(cores))
				loop, err := New(s)
				if err != nil {
					t.Fatal(err)
				}
				return s, loop
			}
			s2, turns2 := mk(2)
			whole := stepUntilDone(t, s2, turns2, 0)
			turns2.Close()
			if len(whole) < 4 {
				t.Fatalf("%s: %d steps; the test wants a few", name, len(whole))
			}
			s1, turns1 := mk(1)
			sameSteps(t, name+": team of 2 vs 1", whole, stepUntilDone(t, s1, turns1, 0))
			turns1.Close()

			// Budget and marks, in tokens or in FLOPs.
			cumKey, unspentKey, limit := "budget/tokens_cum", "budget/unspent", s2.Train.TotalTokens
			markOf := func(r stepRecord) int64 { return r.mark }
			if budget == "flops" {
				cumKey, unspentKey, limit = "budget/total_flops_cum", "budget/unspent_flops", s2.Train.TotalFLOPs
				markOf = func(r stepRecord) int64 { return r.flopsMark }
			}
			marks := 0
			for i, r := range whole {
				cum := r.metrics[cumKey]
				if cum > float64(limit) {
					t.Fatalf("%s: step %d at %v, past the budget %d", name, i+1, cum, limit)
				}
				if _, ok := r.metrics[unspentKey]; ok != (i == len(whole)-1) {
					t.Errorf("%s: step %d of %d: %s recorded %v", name, i+1, len(whole), unspentKey, ok)
				}
				if mark := markOf(r); mark > 0 {
					marks++
					if cum > float64(mark) {
						t.Errorf("%s: step %d at %v reached mark %d, past it", name, i+1, cum, mark)
					}
				}
			}
			if marks < 2 {
				t.Errorf("%s: %d marks reached, want at least 2", name, marks)
			}

			// Killed after step `at`, resumed from its snapshot on a fresh loop.
			for _, at := range []int{1, k + 1} {
				s, first := mk(2)
				head := stepUntilDone(t, s, first, at)
				snap, err := first.Snapshot()
				if err != nil {
					t.Fatal(err)
				}
				first.Close() // the kill: what was sampled ahead is lost
				s, second := mk(2)
				if err := second.Restore(snap); err != nil {
					t.Fatal(err)
				}
				sameSteps(t, fmt.Sprintf("%s: resumed after step %d", name, at), whole, append(head, stepUntilDone(t, s, second, 0)...))
				second.Close()
			}
		}
	}
}

// train.async 0 is the synchronous loop; a negative staleness, and
// train.async with train.max_staleness, are refused naming the key.
func TestAsyncConfig(t *testing.T) {
	loop, err := New(smallSetup(t, Config{Steps: 1}))
	if err != nil {
		t.Fatal(err)
	}
	if loop.async != nil {
		t.Fatal("train.async 0 built a pipeline")
	}
	loop.Close() // a no-op
	for _, c := range []Config{{Steps: 1, Async: -1}, {Steps: 1, Async: 1, MaxStaleness: 1}} {
		_, err := New(smallSetup(t, c))
		var fe *field.Error
		if !errors.As(err, &fe) || fe.Key != "train.async" {
			t.Errorf("async %d, max_staleness %d: %v, want an error naming train.async", c.Async, c.MaxStaleness, err)
		}
	}
}
