package runner

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rollout-rl/rollout/experiments/config"
	"github.com/rollout-rl/rollout/experiments/design"
	"github.com/rollout-rl/rollout/experiments/pretrain"
	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/search"
	"github.com/rollout-rl/rollout/tracking"
	"github.com/rollout-rl/rollout/tracking/report"
)

// testConfig writes a random tiny checkpoint and a config of 2 variants ×
// 2 seeds of short runs that start from it (no pretraining).
func testConfig(t *testing.T, dir string, steps int) *config.File {
	t.Helper()
	return writeConfig(t, dir,
		fmt.Sprintf("{steps: %d, prompts_per_step: 2, max_resample_rounds: 0, lr: 1.0e-3, max_staleness: 1, correction: tis}", steps),
		"{every: 2, prompts: 4, samples: 2, k: 2}")
}

// tokenConfig is testConfig's grid with runs that end at total sampled
// tokens and evaluate every everyTokens sampled tokens.
func tokenConfig(t *testing.T, dir string, total, everyTokens int64) *config.File {
	t.Helper()
	return writeConfig(t, dir,
		fmt.Sprintf("{steps: 0, total_tokens: %d, prompts_per_step: 2, max_resample_rounds: 1, lr: 1.0e-3, max_staleness: 1, correction: tis}", total),
		fmt.Sprintf("{every: 0, every_tokens: %d, prompts: 4, samples: 2, k: 2}", everyTokens))
}

// writeConfig writes the tiny checkpoint and the grid of testConfig with
// the given train and eval sections.
func writeConfig(t *testing.T, dir, train, eval string) *config.File {
	t.Helper()
	ckpt := filepath.Join(dir, "base")
	if _, err := os.Stat(ckpt); err != nil {
		cfg, _ := policy.Size("tiny")
		m, err := policy.NewModel(cfg, 5)
		if err != nil {
			t.Fatal(err)
		}
		if err := policy.Save(ckpt, m, policy.DefaultTokenizer()); err != nil {
			t.Fatal(err)
		}
	}
	src := fmt.Sprintf(`name: tiny-test
task: {name: add, params: {digits: 1}}
checkpoint: base
train: %s
eval: %s
seeds: [1, 2]
ablate:
  rollout.strategy: [flat, entropy_tree]
variants:
  - name: a
    set: {rollout.params: {}}
`, train, eval)
	path := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := config.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// series returns every run's metrics, wall times left out, by run id.
func series(t *testing.T, path string) map[string][]map[string]float64 {
	t.Helper()
	st, err := tracking.Open(path, tracking.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs("tiny-test")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]map[string]float64{}
	for _, r := range runs {
		ms, err := st.Metrics(r.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			vals := map[string]float64{"step": float64(m.Step), "tokens": float64(m.Tokens)}
			for k, v := range m.Values {
				if !strings.HasPrefix(k, "timing_s/") && !strings.HasPrefix(k, "throughput/") {
					vals[k] = v
				}
			}
			out[r.ID] = append(out[r.ID], vals)
		}
	}
	return out
}

func sameSeries(t *testing.T, what string, a, b map[string][]map[string]float64) {
	t.Helper()
	if len(a) != len(b) || len(a) == 0 {
		t.Fatalf("%s: %d runs against %d", what, len(a), len(b))
	}
	for id, sa := range a {
		sb := b[id]
		if len(sa) != len(sb) {
			t.Fatalf("%s: run %s has %d steps against %d", what, id, len(sa), len(sb))
		}
		for i := range sa {
			if len(sa[i]) != len(sb[i]) {
				t.Fatalf("%s: run %s step %d: %d metrics against %d", what, id, i, len(sa[i]), len(sb[i]))
			}
			for k, v := range sa[i] {
				if sb[i][k] != v {
					t.Fatalf("%s: run %s step %d %s: %v against %v", what, id, i, k, v, sb[i][k])
				}
			}
		}
	}
}

// openStore opens the store at path for a test's runs (one checkpoint
// kept, no fsync); the caller closes it.
func openStore(t *testing.T, path string) *tracking.Store {
	t.Helper()
	st, err := tracking.Open(path, tracking.Options{KeepCheckpoints: 1, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func runInto(t *testing.T, f *config.File, path string, workers int) Summary {
	t.Helper()
	st := openStore(t, path)
	defer st.Close()
	sum, err := Run(context.Background(), f, st, Options{Workers: workers, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return sum
}

// The same config gives bit-identical metrics with 1 worker and with 4,
// and a second run of it skips the finished runs.
func TestResultsDoNotDependOnWorkers(t *testing.T) {
	dir := t.TempDir()
	f := testConfig(t, dir, 3)
	one, four := filepath.Join(dir, "one.db"), filepath.Join(dir, "four.db")
	if s := runInto(t, f, one, 1); s.Finished != 4 {
		t.Fatalf("summary %+v", s)
	}
	runInto(t, f, four, 4)
	sameSeries(t, "1 vs 4 workers", series(t, one), series(t, four))
	if s := runInto(t, f, four, 2); s.Skipped != 4 || s.Finished != 0 {
		t.Fatalf("rerun: %+v, want 4 skipped", s)
	}
	for id, s := range series(t, one) {
		if len(s) != 4 { // step 0 (the base policy's evaluation) and 3 steps
			t.Fatalf("run %s: %d steps recorded, want 4", id, len(s))
		}
		if _, ok := s[0]["eval/acc"]; !ok {
			t.Fatalf("run %s: step 0 has no evaluation", id)
		}
		if _, ok := s[3]["eval/acc"]; !ok {
			t.Fatalf("run %s: the last step has no evaluation", id)
		}
	}
}

// The child process of TestResumeAfterKill: it runs the config into the
// store and prints a line per committed step until it is killed.
func TestRunnerChild(t *testing.T) {
	dir := os.Getenv("ROLLOUT_RUNNER_CHILD")
	if dir == "" {
		t.Skip("helper process of TestResumeAfterKill")
	}
	f := killConfig(t, dir, os.Getenv("ROLLOUT_RUNNER_CHILD_ASYNC"))
	st, err := tracking.Open(filepath.Join(dir, "killed.db"), tracking.Options{KeepCheckpoints: 1})
	if err != nil {
		t.Fatal(err)
	}
	Run(context.Background(), f, st, Options{Workers: 1, CacheDir: dir, Progress: printer{}})
}

type printer struct{ nopProgress }

func (printer) Step(r config.Run, step int, _ map[string]float64) {
	fmt.Printf("committed %s %d\n", r.ID, step)
}

// asyncConfig is testConfig's grid of 6-step runs with asynchronous
// rollouts of staleness k (train.async) and an entropy bonus, so that an
// untrained policy's updates change its weights.
func asyncConfig(t *testing.T, dir, k string) *config.File {
	t.Helper()
	return writeConfig(t, dir,
		fmt.Sprintf("{steps: 6, prompts_per_step: 2, filter_groups: false, lr: 1.0e-2, entropy_coef: 0.1, async: %s, correction: tis}", k),
		"{every: 2, prompts: 4, samples: 2, k: 2}")
}

// killConfig is the config TestResumeAfterKill kills a run of: testConfig's
// 6-step grid, or asyncConfig's with staleness async when it is not "".
func killConfig(t *testing.T, dir, async string) *config.File {
	if async == "" {
		return testConfig(t, dir, 6)
	}
	return asyncConfig(t, dir, async)
}

// A run killed with SIGKILL mid-way resumes from its last committed step
// and ends bit-identical to an uninterrupted run; so does an asynchronous
// one (train.async 1 and 2), whose rollouts sampled ahead of its last
// committed step are lost and sampled again. The child runs with 1 worker,
// whose team of the machine's cores an asynchronous run splits between
// sampling and updates running at once, the others with 2, whose teams of
// one core (on two cores) they take turns on: the runs the child finished
// are compared across worker counts too.
func TestResumeAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	for _, async := range []string{"", "1", "2"} {
		t.Run("async="+async, func(t *testing.T) { resumeAfterKill(t, async) })
	}
}

func resumeAfterKill(t *testing.T, async string) {
	dir := t.TempDir()
	f := killConfig(t, dir, async)
	cmd := exec.Command(os.Args[0], "-test.run", "^TestRunnerChild$", "-test.v")
	cmd.Env = append(os.Environ(), "ROLLOUT_RUNNER_CHILD="+dir, "ROLLOUT_RUNNER_CHILD_ASYNC="+async)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	commits := 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "committed ") {
			commits++
			if commits == 10 { // mid-way through the second run
				break
			}
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	if commits < 10 {
		t.Fatalf("child committed only %d steps before it ended", commits)
	}

	killed := filepath.Join(dir, "killed.db")
	// What rollout ls shows: the killed run interrupted, never running;
	// once a writer opened the store, stopped.
	if ls := listRuns(t, killed); strings.Contains(ls, "running") || !strings.Contains(ls, "interrupted at step") {
		t.Errorf("rollout ls after a kill shows:\n%s", ls)
	}
	deadline := time.Now().Add(time.Minute) // the lock goes with the process; a guard against a hang
	for {
		st, err := tracking.Open(killed, tracking.Options{KeepCheckpoints: 1})
		if err == nil {
			st.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("store still locked after the kill: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if ls := listRuns(t, killed); strings.Contains(ls, "running") || strings.Contains(ls, "interrupted") || !strings.Contains(ls, "stopped at step") {
		t.Errorf("rollout ls after a writer opened the killed store shows:\n%s", ls)
	}
	sum := runInto(t, f, killed, 2)
	if sum.Finished+sum.Skipped != 4 || sum.Skipped < 1 {
		t.Fatalf("resume summary %+v", sum)
	}
	resumed := 0
	for _, res := range sum.Runs {
		if res.Resumed >= 0 {
			resumed++
			if res.Outcome != Finished || res.Resumed < 1 || res.Step != 6 {
				t.Errorf("resumed run %s: %v after step %d, ended at step %d", res.Run.ID, res.Outcome, res.Resumed, res.Step)
			}
		}
	}
	if resumed != 1 {
		t.Errorf("%d runs resumed, want the killed one: %+v", resumed, sum.Runs)
	}
	whole := filepath.Join(dir, "whole.db")
	runInto(t, f, whole, 2)
	sameSeries(t, "killed and resumed vs uninterrupted", series(t, killed), series(t, whole))
	if async == "" {
		return
	}
	stale, _ := strconv.Atoi(async)
	for id, s := range series(t, whole) {
		for i, m := range s[1:] { // step 0 is the base policy's evaluation
			if want := float64(min(i, stale)); m["async/staleness"] != want {
				t.Fatalf("run %s step %d: async/staleness %v, want %v", id, i+1, m["async/staleness"], want)
			}
		}
	}
}

// listRuns is what rollout ls prints of the store at path.
func listRuns(t *testing.T, path string) string {
	t.Helper()
	st, err := tracking.Open(path, tracking.Options{ReadOnly: true, NoSnapshot: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs("")
	if err != nil {
		t.Fatal(err)
	}
	var ls bytes.Buffer
	if err := report.WriteRuns(&ls, runs); err != nil {
		t.Fatal(err)
	}
	return ls.String()
}

// Runs with a learned reward model in the mix train it once (then it is
// cached) and reward by the mix.
func TestRewardModelMix(t *testing.T) {
	if testing.Short() {
		t.Skip("pretrains a base policy")
	}
	dir := t.TempDir()
	// A base policy that answers some prompts right, so the reward model
	// sees both labels.
	tk, _ := task.New("add", task.AddParams{Digits: 1, Scratchpad: true})
	pc := pretrain.DefaultConfig()
	pc.Steps, pc.BatchSize, pc.LR, pc.EvalPrompts = 150, 16, 3e-3, 10
	base, err := pretrain.Train(context.Background(), tk, pc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := policy.Save(filepath.Join(dir, "base"), base.Model, base.Tokenizer); err != nil {
		t.Fatal(err)
	}
	src := `name: rm
task: {name: add, params: {digits: 1}}
checkpoint: base
train: {steps: 2, prompts_per_step: 2, filter_groups: false}
eval: {every: 2, prompts: 2, samples: 2, k: 2}
reward: {verifier: 1, model: 0.5, length: 0.1}
reward_model: {prompts: 16, samples: 2, eval_prompts: 8, train: {steps: 3, batch_size: 8}}
seeds: [1, 2]
`
	path := filepath.Join(dir, "rm.yaml")
	os.WriteFile(path, []byte(src), 0o644)
	f, err := config.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := tracking.Open(filepath.Join(dir, "rm.db"), tracking.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	cache := t.TempDir()
	sum, err := Run(context.Background(), f, st, Options{Workers: 2, CacheDir: cache})
	if err != nil || sum.Finished != 2 {
		t.Fatalf("summary %+v, %v", sum, err)
	}
	entries, _ := os.ReadDir(filepath.Join(cache, "reward"))
	if len(entries) != 1 {
		t.Fatalf("%d cached reward models, want 1", len(entries))
	}
	runs, _ := st.Runs("rm")
	groups, err := st.Groups(runs[0].ID, 1)
	if err != nil || len(groups) == 0 {
		t.Fatalf("groups: %v", err)
	}
	// With a length term and a model term, rewards are not just 0 or 1.
	mixed := false
	for _, g := range groups {
		for _, l := range g.Leaves {
			if l.Reward != 0 && l.Reward != 1 {
				mixed = true
			}
		}
	}
	if !mixed {
		t.Fatal("every reward is 0 or 1: the mix was not applied")
	}
}

// cancelAfter cancels a context after n committed steps.
type cancelAfter struct {
	nopProgress
	mu     sync.Mutex
	n      *int
	cancel context.CancelFunc
}

func (c *cancelAfter) Step(config.Run, int, map[string]float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if *c.n--; *c.n == 0 {
		c.cancel()
	}
}

// Cancelling (Ctrl-C) stops the runs after the steps in flight commit;
// running again resumes them and ends as an uninterrupted run does.
func TestStopAndResume(t *testing.T) {
	t.Run("steps", func(t *testing.T) { stopAndResume(t, testConfig(t, t.TempDir(), 4), 1) })
	t.Run("tokens", func(t *testing.T) { stopAndResume(t, tokenConfig(t, t.TempDir(), 500, 250), 2) })
}

func stopAndResume(t *testing.T, f *config.File, workers int) {
	dir := filepath.Dir(f.Path)
	stopped := filepath.Join(dir, "stopped.db")
	st, err := tracking.Open(stopped, tracking.Options{KeepCheckpoints: 1, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := 3
	sum, err := Run(ctx, f, st, Options{Workers: workers, CacheDir: t.TempDir(), Progress: &cancelAfter{n: &n, cancel: cancel}})
	if err != nil || sum.Stopped+sum.NotStarted != 4 || sum.Stopped < 1 || sum.Finished != 0 || len(sum.Runs) != 4 {
		t.Fatalf("cancelled run: %+v, %v", sum, err)
	}
	// Each run begun is recorded as stopped at the step it reached; the
	// others are left alone.
	began := 0
	for _, res := range sum.Runs {
		rec, err := st.Run(res.Run.ID)
		switch res.Outcome {
		case Stopped:
			began++
			if err != nil || rec.Status != tracking.StatusStopped || rec.LastStep != res.Step || res.Step < 0 || res.Resumed != -1 {
				t.Errorf("run %s stopped at step %d: the store has it %s at step %d (%v)", res.Run.ID, res.Step, rec.Status, rec.LastStep, err)
			}
		case NotStarted:
			if !errors.Is(err, tracking.ErrNotFound) {
				t.Errorf("run %s was not started, yet the store has it %s (%v)", res.Run.ID, rec.Status, err)
			}
		default:
			t.Errorf("run %s: %v after a cancel", res.Run.ID, res.Outcome)
		}
	}
	st.Close()
	if began < 1 || began > workers {
		t.Errorf("%d runs began with %d workers", began, workers)
	}
	resumed := runInto(t, f, stopped, 2)
	if resumed.Finished != 4 {
		t.Fatalf("resumed: %+v", resumed)
	}
	for i, res := range resumed.Runs {
		if prev := sum.Runs[i]; prev.Outcome == Stopped && res.Resumed != prev.Step {
			t.Errorf("run %s stopped at step %d, resumed after step %d", res.Run.ID, prev.Step, res.Resumed)
		}
	}
	whole := filepath.Join(dir, "whole.db")
	runInto(t, f, whole, 2)
	sameSeries(t, "stopped and resumed vs uninterrupted", series(t, stopped), series(t, whole))
}

// With eval.every_tokens E, every run of every variant is evaluated at
// token marks 0, E, 2E, … (eval/tokens_mark), the same in every run, each
// at a step whose cumulative tokens are at most the mark and within one
// group's longest cost of it; the runs end at total_tokens, evaluated, and
// spend it to within one group.
func TestEvalAtTokenMarks(t *testing.T) {
	const total, every = 900, 300
	dir := t.TempDir()
	f := tokenConfig(t, dir, total, every)
	path := filepath.Join(dir, "marks.db")
	if s := runInto(t, f, path, 2); s.Finished != 4 {
		t.Fatalf("summary %+v", s)
	}
	byVariant := map[string]bool{}
	for _, r := range f.Runs() {
		tk, err := task.New(r.Config.Task.Name, r.Config.Task.Params)
		if err != nil {
			t.Fatal(err)
		}
		st, err := search.NewStrategy(r.Config.Rollout.Strategy, r.Config.Rollout.Params)
		if err != nil {
			t.Fatal(err)
		}
		gm, _ := search.MaxGroupTokens(st, tk.MaxResponseLen()+1, 0)
		if gm > every {
			t.Fatalf("%s: a group may cost %d tokens, more than every_tokens", r.Variant, gm)
		}
		byVariant[r.Config.Rollout.Strategy] = true
		rows := series(t, path)[r.ID]
		var marks []float64
		for i, m := range rows {
			mark, hasMark := m["eval/tokens_mark"]
			_, evaluated := m["eval/acc"]
			if hasMark && !evaluated {
				t.Errorf("run %s step %d: a mark without an evaluation", r.ID, i)
			}
			if !hasMark {
				continue
			}
			if tok := m["tokens"]; tok > mark || mark-tok >= float64(gm) {
				t.Errorf("run %s step %d: mark %v at %v tokens, want within one group (%d) below", r.ID, i, mark, tok, gm)
			}
			marks = append(marks, mark)
		}
		if !slices.Equal(marks, []float64{0, every, 2 * every, 3 * every}) {
			t.Errorf("run %s (%s): marks %v, want 0, %d, %d, %d", r.ID, r.Variant, marks, every, 2*every, 3*every)
		}
		last := rows[len(rows)-1]
		if _, ok := last["eval/acc"]; !ok || last["tokens"] > total || total-last["tokens"] >= float64(gm) || last["budget/unspent"] != total-last["tokens"] {
			t.Errorf("run %s: ends at %v tokens (unspent %v, evaluated %v), want ≤ %d within one group (%d)", r.ID, last["tokens"], last["budget/unspent"], ok, total, gm)
		}
	}
	if len(byVariant) != 2 {
		t.Fatalf("strategies %v, want flat and entropy_tree", byVariant)
	}
}

// An experiment name stands for one set of resolved variant configs: a
// rerun with another setting is refused before anything is written; more
// seeds and new variants are run into the same experiment.
func TestExperimentIdentity(t *testing.T) {
	dir := t.TempDir()
	f := testConfig(t, dir, 1)
	path := filepath.Join(dir, "s.db")
	if s := runInto(t, f, path, 2); s.Finished != 4 {
		t.Fatalf("first run: %+v", s)
	}
	load := func(overrides ...string) *config.File {
		t.Helper()
		g, err := config.Load(filepath.Join(dir, "c.yaml"), overrides)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	st := openStore(t, path)
	defer st.Close()
	before, _ := st.Runs("tiny-test")
	exp, _ := st.Experiment("tiny-test")
	if len(exp.Configs) != 2 || !strings.Contains(exp.Configs["a,strategy=flat"], "strategy: flat") {
		t.Fatalf("recorded configs %v", exp.Configs)
	}

	_, err := Run(context.Background(), load("train.total_tokens=3000"), st, Options{Workers: 2, CacheDir: t.TempDir()})
	var conflict *tracking.ConfigConflictError
	if !errors.As(err, &conflict) || len(conflict.Conflicts) != 2 {
		t.Fatalf("other config: %v", err)
	}
	if !strings.Contains(err.Error(), `variant "a,strategy=flat": train.total_tokens is 0 in the store, 3000 now`) {
		t.Errorf("error does not name the key and values: %v", err)
	}
	after, _ := st.Runs("tiny-test")
	if exp2, _ := st.Experiment("tiny-test"); len(after) != len(before) || !reflect.DeepEqual(exp, exp2) {
		t.Errorf("a refused run wrote: %d runs, then %d", len(before), len(after))
	}

	// More seeds: only the new ones run.
	sum, err := Run(context.Background(), load("seeds=[1, 2, 3]"), st, Options{Workers: 2, CacheDir: t.TempDir()})
	if err != nil || sum.Finished != 2 || sum.Skipped != 4 {
		t.Fatalf("more seeds: %+v, %v", sum, err)
	}
	// A new variant (another strategy): runs beside the others.
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // register only
	if _, err := Run(ctx, load(`variants=[{name: b, set: {rollout.params: {}}}]`), st, Options{CacheDir: t.TempDir()}); err != nil {
		t.Fatalf("new variant: %v", err)
	}
	exp, _ = st.Experiment("tiny-test")
	if len(exp.Configs) != 4 || len(exp.Variants) != 4 {
		t.Errorf("after a new variant: %v", exp.Variants)
	}
}

// With train.save_final a finished run leaves exactly its final policy, a
// checkpoint directory beside the store that loads and samples as the
// final policy of the same run computed in memory does; without it, a
// finished run leaves nothing to resume from and no final policy.
func TestSaveFinal(t *testing.T) {
	for _, tc := range []struct {
		name      string
		saveFinal bool
	}{{"save_final", true}, {"without", false}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			f := writeConfig(t, dir,
				fmt.Sprintf("{steps: 2, prompts_per_step: 2, max_resample_rounds: 0, lr: 1.0e-3, save_final: %v}", tc.saveFinal),
				"{every: 0, prompts: 2, samples: 1, k: 1}")
			runs := f.Runs()[:1]
			path := filepath.Join(dir, "final.db")
			st := openStore(t, path)
			defer st.Close()
			r := runs[0]
			if err := st.PutExperiment(tracking.Experiment{Name: f.Name}); err != nil {
				t.Fatal(err)
			}
			res := runOne(context.Background(), r, f.Name, filepath.Join(dir, "base"), "", st, Options{Progress: nopProgress{}}, nil)
			if res.Outcome != Finished {
				t.Fatalf("outcome %v: %v", res.Outcome, res.Err)
			}
			if _, _, err := st.LatestCheckpoint(r.ID); !errors.Is(err, tracking.ErrNotFound) {
				t.Fatalf("a finished run's resume state: %v, want none", err)
			}
			final := st.FinalDir(r.ID)
			entries, _ := os.ReadDir(filepath.Dir(final))
			if !tc.saveFinal {
				if len(entries) != 0 || st.HasFinal(r.ID) {
					t.Fatalf("without save_final: %d entries in %s", len(entries), filepath.Dir(final))
				}
				return
			}
			if len(entries) != 1 || entries[0].Name() != r.ID {
				t.Fatalf("%s holds %v, want only %s", filepath.Dir(final), entries, r.ID)
			}
			files, _ := os.ReadDir(final)
			var names []string
			for _, e := range files {
				names = append(names, e.Name())
			}
			if want := []string{policy.ConfigFile, policy.WeightsFile, policy.VocabFile}; !slices.Equal(names, want) {
				t.Fatalf("%s holds %v, want %v", final, names, want)
			}
			// The same run's final policy, computed in memory.
			setup, err := NewSetup(r.Config, r.Seed, filepath.Join(dir, "base"), "")
			if err != nil {
				t.Fatal(err)
			}
			loop, err := rl.New(setup)
			if err != nil {
				t.Fatal(err)
			}
			for !loop.Done() {
				if _, err := loop.Step(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			m, tok, err := policy.Load(final)
			if err != nil {
				t.Fatal(err)
			}
			a, b := sampleAll(t, setup.Policy, setup.Tokenizer), sampleAll(t, m, tok)
			if !reflect.DeepEqual(a, b) {
				t.Fatalf("the saved final policy samples\n%v\nthe in-memory one\n%v", b, a)
			}
			want, _ := policy.EncodeWeights(setup.Policy)
			got, _ := policy.EncodeWeights(m)
			if !bytes.Equal(want, got) {
				t.Fatal("the saved weights differ from the in-memory final policy's")
			}
		})
	}
}

// sampleAll samples 4 responses to a prompt with their log-probs and
// entropies.
func sampleAll(t *testing.T, m *policy.Model, tok *policy.Tokenizer) []policy.Sample {
	t.Helper()
	ids, err := tok.EncodePrompt("3+4=")
	if err != nil {
		t.Fatal(err)
	}
	e := policy.NewEngine(m)
	root, err := e.Prefill(ids, policy.Stream{Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	out, err := policy.Generate(e, root, 4, policy.Sampling{Temperature: 1, TopP: 1}, 7, m.Config.MaxSeq)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A run's evaluations (step 0, every 2 steps, the end), made by one
// evaluator that reuses its buffers, record what a new evaluation of the
// same policy computes, bit for bit.
func TestEvaluationsMatchFreshOnes(t *testing.T) {
	dir := t.TempDir()
	f := testConfig(t, dir, 3)
	r := f.Runs()[0]
	st := openStore(t, filepath.Join(dir, "eval.db"))
	defer st.Close()
	if err := st.PutExperiment(tracking.Experiment{Name: f.Name}); err != nil {
		t.Fatal(err)
	}
	if res := runOne(context.Background(), r, f.Name, filepath.Join(dir, "base"), "", st, Options{Progress: nopProgress{}}, nil); res.Outcome != Finished {
		t.Fatalf("outcome %v: %v", res.Outcome, res.Err)
	}
	recorded, err := st.Metrics(r.ID)
	if err != nil {
		t.Fatal(err)
	}
	// The same run in memory, evaluated by rl.Evaluate at the same steps.
	c := r.Config
	setup, err := NewSetup(c, r.Seed, filepath.Join(dir, "base"), "")
	if err != nil {
		t.Fatal(err)
	}
	loop, err := rl.New(setup)
	if err != nil {
		t.Fatal(err)
	}
	evaluated := 0
	for step := 0; ; step++ {
		if step >= len(recorded) || recorded[step].Step != step {
			t.Fatalf("step %d is not recorded in order", step)
		}
		if _, ok := recorded[step].Values["eval/acc"]; ok {
			ev, err := rl.Evaluate(setup.Policy, setup.Tokenizer, setup.Task, c.Eval, c.Rollout.Sampling(), r.Seed)
			if err != nil {
				t.Fatal(err)
			}
			for k, v := range ev.Metrics() {
				if got := recorded[step].Values[k]; got != v {
					t.Errorf("step %d %s: %v recorded, %v evaluated afresh", step, k, got, v)
				}
			}
			evaluated++
		}
		if loop.Done() {
			break
		}
		if _, err := loop.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if evaluated != 3 {
		t.Fatalf("%d evaluations recorded, want 3 (steps 0, 2 and 3)", evaluated)
	}
}

// Run records the whole resolved design before any run; a designed
// experiment's changed design (a check's margin, more seeds) is refused
// before anything is written.
func TestDesignRecordedAndFixed(t *testing.T) {
	dir := t.TempDir()
	testConfig(t, dir, 1)
	check := `design={checks: [{name: c, variant: "a,strategy=entropy_tree", metric: eval/acc, at: final, want: higher, margin: %s}]}`
	load := func(overrides ...string) *config.File {
		t.Helper()
		g, err := config.Load(filepath.Join(dir, "c.yaml"), overrides)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	st := openStore(t, filepath.Join(dir, "s.db"))
	defer st.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // record only
	f := load(fmt.Sprintf(check, "0.01"))
	if _, err := Run(ctx, f, st, Options{CacheDir: t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	rec, err := st.Design("tiny-test")
	if err != nil || rec.Checks != 1 || !strings.Contains(rec.Text, `"margin": 0.01`) {
		t.Fatalf("recorded design %+v, %v", rec, err)
	}
	want, _ := f.DesignRecord()
	if text, _ := want.Text(); rec.Text != text || rec.Hash != design.Hash(text) {
		t.Errorf("recorded text or hash is not the config's resolved design")
	}
	for _, tc := range []struct {
		o    []string
		want string
	}{
		{[]string{fmt.Sprintf(check, "0.02")}, "design.checks[0].margin is 0.01 in the store, 0.02 now"},
		{[]string{fmt.Sprintf(check, "0.01"), "seeds=[1, 2, 3]"}, "seeds[2] is (absent) in the store, 3 now"},
		{[]string{fmt.Sprintf(check, "0.01"), "train.total_tokens=3000"}, "variants[0].config.train.total_tokens is 0 in the store, 3000 now"},
	} {
		o := tc.o
		_, err := Run(ctx, load(o...), st, Options{CacheDir: t.TempDir()})
		var conflict *tracking.DesignConflictError
		if !errors.As(err, &conflict) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want a *tracking.DesignConflictError saying %q", o, err, tc.want)
		}
		if after, _ := st.Design("tiny-test"); after.Hash != rec.Hash || after.Text != rec.Text || !after.Recorded.Equal(rec.Recorded) {
			t.Errorf("%v: a refused design changed the record", o)
		}
	}
}

// Every run records the machine's load beside it (start and end); with
// Interleave the grid runs seed by seed.
func TestLoadsAndInterleave(t *testing.T) {
	if _, err := os.Stat("/proc/loadavg"); err != nil {
		t.Skip("no /proc/loadavg")
	}
	dir := t.TempDir()
	f := testConfig(t, dir, 1)
	st := openStore(t, filepath.Join(dir, "s.db"))
	defer st.Close()
	sum, err := Run(context.Background(), f, st, Options{Workers: 1, CacheDir: t.TempDir(), Interleave: true})
	if err != nil || sum.Finished != 4 {
		t.Fatalf("run: %+v, %v", sum, err)
	}
	runs, _ := st.Runs("tiny-test")
	slices.SortFunc(runs, func(a, b tracking.Run) int { return a.Start.Compare(b.Start) })
	var seeds []int64
	for _, r := range runs {
		seeds = append(seeds, r.Seed)
		loads, err := st.Loads(r.ID)
		if err != nil || len(loads) != 2 || loads[0].Event != "start" || loads[1].Event != "end" || loads[0].CPUs < 1 || loads[1].At.Before(loads[0].At) {
			t.Errorf("run %s: loads %+v, %v; want a start and an end sample", r.ID, loads, err)
		}
	}
	if !slices.Equal(seeds, []int64{1, 1, 2, 2}) {
		t.Errorf("interleaved runs started in seed order %v, want 1 1 2 2", seeds)
	}
}

// With eval.every_flops E, every run of every variant is evaluated at
// FLOPs marks 0, E, 2E, … (eval/flops_mark), the same in every run, each
// at a step whose cumulative total FLOPs are at most the mark; the runs end
// at train.total_flops, evaluated, never past it.
func TestEvalAtFLOPsMarks(t *testing.T) {
	const total, every = 2.4e10, 8e9
	dir := t.TempDir()
	f := writeConfig(t, dir,
		fmt.Sprintf("{steps: 0, total_tokens: 0, total_flops: %g, prompts_per_step: 2, max_resample_rounds: 1, lr: 1.0e-3, max_staleness: 1, correction: tis}", total),
		fmt.Sprintf("{every: 0, every_flops: %g, prompts: 4, samples: 2, k: 2}", every))
	path := filepath.Join(dir, "marks.db")
	if s := runInto(t, f, path, 2); s.Finished != 4 {
		t.Fatalf("summary %+v", s)
	}
	for _, r := range f.Runs() {
		rows := series(t, path)[r.ID]
		var marks []float64
		for i, m := range rows {
			if cum := m["budget/total_flops_cum"]; cum > total {
				t.Errorf("run %s step %d: %v FLOPs, past train.total_flops", r.ID, i, cum)
			}
			mark, hasMark := m["eval/flops_mark"]
			_, evaluated := m["eval/acc"]
			if hasMark && !evaluated {
				t.Errorf("run %s step %d: a mark without an evaluation", r.ID, i)
			}
			if !hasMark {
				continue
			}
			if cum := m["budget/total_flops_cum"]; cum > mark {
				t.Errorf("run %s step %d: mark %v at %v FLOPs, past it", r.ID, i, mark, cum)
			}
			marks = append(marks, mark)
		}
		if !slices.Equal(marks, []float64{0, every, 2 * every, 3 * every}) {
			t.Errorf("run %s (%s): marks %v, want 0, %g, %g, %g", r.ID, r.Variant, marks, every, 2*every, 3*every)
		}
		last := rows[len(rows)-1]
		if _, ok := last["eval/acc"]; !ok || last["budget/unspent_flops"] != total-last["budget/total_flops_cum"] {
			t.Errorf("run %s: ends at %v FLOPs (unspent %v, evaluated %v), want the rest of %g recorded", r.ID, last["budget/total_flops_cum"], last["budget/unspent_flops"], ok, total)
		}
	}
}
