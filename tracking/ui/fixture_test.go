package ui

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rollout-rl/rollout/search/record"
	"github.com/rollout-rl/rollout/tracking"
	"github.com/rollout-rl/rollout/tracking/report"
)

// The fixture store: experiment "exp" with variants flat (baseline) and
// tree, seeds 1 and 2, three steps (0, 1, 2) of 100 sampled tokens each,
// less the seed (a step stops short of a full group: run seed 2 has 196
// tokens after step 2); reward/mean at every step, eval/acc at steps 0
// and 2, at the token marks 0 and 200 (eval/tokens_mark); steps 1 and 2
// commit two groups: treeGroup (index 0) and a filtered flat group.
const (
	fixtureExp = "exp"
	// fixtureSteps is the runs' planned steps: updates 1 and 2 after the
	// base policy's evaluation at step 0.
	fixtureSteps = 2
)

var fixtureVariants = []string{"flat", "tree"}

// fixtureConfig is the resolved config of a fixture variant.
func fixtureConfig(strategy string) string {
	return "rollout: {strategy: " + strategy + "}\ntrain: {lr: 0.001}\n"
}

// runID names a fixture run.
func runID(variant string, seed int64) string { return fmt.Sprintf("%s-%d", variant, seed) }

// reward is the fixture's reward/mean of a run at a step.
func reward(variant string, seed int64, step int) float64 {
	base := 0.1
	if variant == "tree" {
		base = 0.3
	}
	return base + 0.1*float64(step) + 0.01*float64(seed)
}

// acc is the fixture's eval/acc of a run at a step.
func acc(variant string, seed int64, step int) float64 { return reward(variant, seed, step) / 2 }

// treeGroup is a tree of three nodes: root 0 (4 tokens), node 1 forking
// from 0 at 2 (score 0.3), node 2 forking from 1 at 1; a leaf on each.
func treeGroup() record.Group {
	return record.Group{
		Prompt: "1+2=", PromptTokens: []int{1, 5, 40, 6, 45, 3}, Strategy: "entropy_tree",
		Usage: record.Usage{Budget: 100, GeneratedTokens: 9, PrefillTokens: 6, FLOPs: 1234},
		Nodes: []record.Node{
			{ID: 0, Parent: -1, Tokens: []int{7, 4, 5, 2}, LogProbs: []float32{-.1, -.2, -.3, -.4}, Entropies: []float32{.1, .9, .3, .4}, Finish: record.FinishEOS},
			{ID: 1, Parent: 0, ForkAt: 2, Iteration: 1, ForkScore: 0.3, HasForkScore: true, Tokens: []int{6, 2}, LogProbs: []float32{-.5, -.6}, Entropies: []float32{.5, .6}, Finish: record.FinishEOS},
			{ID: 2, Parent: 1, ForkAt: 1, Iteration: 2, ForkScore: 0.6, HasForkScore: true, Tokens: []int{8, 2}, LogProbs: []float32{-.8, -.9}, Entropies: []float32{.8, .9}, Finish: record.FinishEOS},
		},
		Leaves: []record.Leaf{
			{Node: 0, Text: "301", Reward: 0, Scored: true, Reason: "wrong", Advantages: []float64{-1, -1, -1, -1}},
			{Node: 1, Text: "3", Reward: 1, Scored: true, Reason: "exact", Advantages: []float64{.5, .5, .5, .5}},
			{Node: 2, Text: "34", Reward: 0, Scored: true, Reason: "wrong", Advantages: []float64{.5, .5, .5, -.2, -.2}},
		},
	}
}

// flatGroup is a filtered group of two equal-reward responses.
func flatGroup() record.Group {
	return record.Group{
		Prompt: "2+2=", Strategy: "flat", Filtered: true,
		Usage: record.Usage{GeneratedTokens: 4, PrefillTokens: 6, FLOPs: 99},
		Nodes: []record.Node{
			{ID: 0, Parent: -1, Tokens: []int{8, 2}, LogProbs: []float32{-.1, -.1}, Entropies: []float32{.2, .1}},
			{ID: 1, Parent: -1, Tokens: []int{8, 2}, LogProbs: []float32{-.1, -.1}, Entropies: []float32{.2, .1}},
		},
		Leaves: []record.Leaf{
			{Node: 0, Text: "4", Reward: 1, Scored: true, Reason: "exact", Advantages: []float64{0, 0}},
			{Node: 1, Text: "4", Reward: 1, Scored: true, Reason: "exact", Advantages: []float64{0, 0}},
		},
	}
}

// fixture writes the fixture store and returns its path and the writer,
// still open. Every run is finished except, when running is set, tree
// seed 2, which has committed steps 0 and 1 only.
func fixture(t testing.TB, running bool) (string, *tracking.Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	st, err := tracking.Open(path, tracking.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	configs := map[string]string{"flat": fixtureConfig("flat"), "tree": fixtureConfig("entropy_tree")}
	err = st.PutExperiment(tracking.Experiment{Name: fixtureExp, Config: "name: exp\n", Variants: fixtureVariants, Configs: configs, Baseline: "flat"})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range fixtureVariants {
		for seed := int64(1); seed <= 2; seed++ {
			id := runID(v, seed)
			_, err := st.BeginRun(tracking.Run{ID: id, Experiment: fixtureExp, Variant: v, Seed: seed, Config: configs[v], Version: "test",
				TotalSteps: fixtureSteps, Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
			if err != nil {
				t.Fatal(err)
			}
			last := fixtureSteps
			if running && id == runID("tree", 2) {
				last = 1
			}
			for step := 0; step <= last; step++ {
				commitStep(t, st, v, seed, step)
			}
			if last == fixtureSteps {
				if err := st.EndRun(id, tracking.StatusFinished, ""); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if _, err := st.AddNote(runID("tree", 1), fixtureNote); err != nil {
		t.Fatal(err)
	}
	return path, st
}

// fixtureNote is the note on run tree-1.
const fixtureNote = "the reward jumps at step 1: check the verifier"

// commitStep commits one step of a fixture run.
func commitStep(t testing.TB, st *tracking.Store, variant string, seed int64, step int) {
	t.Helper()
	rec := tracking.StepRecord{Step: step, Tokens: fixtureTokens(seed, step), Elapsed: time.Duration(step+1) * time.Second,
		Metrics: map[string]float64{"reward/mean": reward(variant, seed, step)}}
	if step%2 == 0 {
		rec.Metrics["eval/acc"] = acc(variant, seed, step)
		rec.Metrics["eval/tokens_mark"] = float64(100 * step)
	}
	if step > 0 {
		rec.Groups = []record.Group{treeGroup(), flatGroup()}
	}
	if err := st.CommitStep(runID(variant, seed), rec); err != nil {
		t.Fatalf("commit step %d of %s: %v", step, runID(variant, seed), err)
	}
}

// fixtureTokens is a fixture run's cumulative sampled tokens after a step.
func fixtureTokens(seed int64, step int) int64 { return int64(step) * (100 - seed) }

// reportOptions are the report defaults the tests give the handler, as
// `rollout report` has them.
func reportOptions() report.Options {
	return report.Options{DefaultMetrics: []string{"eval/acc", "reward/mean"}, FLOPsMetric: "budget/train_flops_cum", MarkMetric: "eval/tokens_mark"}
}

// tokenText is the tests' token text: "t" and the id.
func tokenText(id int) string { return "t" + strconv.Itoa(id) }

// newHandler serves the store at path read-only.
func newHandler(t testing.TB, path string) *Handler {
	t.Helper()
	h, err := New(Options{
		Open:      func() (*tracking.Store, error) { return tracking.Open(path, tracking.Options{ReadOnly: true}) },
		Report:    reportOptions(),
		TokenText: tokenText,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// get requests path of h and returns the status and body.
func get(t testing.TB, h http.Handler, method, path string) (int, []byte) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
	return rec.Code, rec.Body.Bytes()
}

// resumeRun reopens a run in a new writer (a writer's open marks the runs a
// dead writer left running as stopped; steps go on after BeginRun).
func resumeRun(t testing.TB, st *tracking.Store, id string) {
	t.Helper()
	r, err := st.Run(id)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.BeginRun(r); err != nil {
		t.Fatalf("resume %s: %v", id, err)
	}
}
