package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/tracking"
)

// rollout runs the command line in-process and returns its exit status
// and output.
func rollout(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// Bad input exits with status 2 and a message that names what is wrong.
func TestBadInputExitsTwo(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("task: {name: add}\ntrain:\n  lrr: 1\n"), 0o644)
	store := filepath.Join(dir, "s.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"nosuch"}, "unknown command"},
		{[]string{"task", "show", "sudoku"}, `unknown task "sudoku"`},
		{[]string{"task", "show", "add", "--split", "test"}, `unknown split "test"`},
		{[]string{"task", "verify", "add", "--prompt", "12+3x", "--response", "1"}, "--prompt"},
		{[]string{"model", "init", "--size", "huge", "--out", dir}, `--size: unknown model size "huge"`},
		{[]string{"model", "init", "--size", "tiny", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"config", "show", bad}, "bad.yaml:3: train.lrr: unknown key"},
		{[]string{"config", "show", bad, "--set", "train.lr"}, "override must be key=value"},
		{[]string{"run", bad, "--store", store}, "train.lrr: unknown key"},
		{[]string{"run", filepath.Join(dir, "missing.yaml")}, "missing.yaml"},
		{[]string{"run", bad, "--shard", "3/2"}, "train.lrr"},
		{[]string{"sample", "--task", "add", "--strategy", "beam", "--checkpoint", dir}, `unknown strategy "beam"`},
		{[]string{"sample", "--task", "add", "--strategy", "entropy_tree", "--strategy-param", "t=0", "--checkpoint", dir}, "entropy_tree"},
		{[]string{"report", "x", "--at", "sometime", "--store", store}, `--at "sometime"`},
		{[]string{"plot", "x", "--metric", "m", "--out", "p.gif", "--store", store}, "want a .png or .svg file"},
	} {
		code, _, errOut := rollout(t, tc.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (stderr %q)", tc.args, code, errOut)
		}
		if !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: stderr %q, want it to contain %q", tc.args, errOut, tc.want)
		}
	}
	if _, err := os.Stat(store); !os.IsNotExist(err) {
		t.Errorf("a refused run created the store %s", store)
	}
}

func TestTaskVerifyPrintsJSON(t *testing.T) {
	code, out, errOut := rollout(t, "task", "verify", "add", "--prompt", "12+34", "--response", "6 4=46")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var v struct {
		Reward float64 `json:"reward"`
		Reason string  `json:"reason"`
		Answer string  `json:"answer"`
	}
	if err := json.Unmarshal([]byte(out), &v); err != nil || v.Reward != 1 || v.Reason != "correct" || v.Answer != "46" {
		t.Fatalf("output %q (%v)", out, err)
	}
	code, out, _ = rollout(t, "task", "verify", "add", "--prompt", "12+34", "--response", "((((")
	if code != 0 || !strings.Contains(out, `"reward":0`) {
		t.Fatalf("garbage response: exit %d, %q", code, out)
	}
}

// model init, logits and sample --format json work on a fresh checkpoint, and the
// JSON of sample has the documented shape.
func TestModelAndSample(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ckpt")
	if code, _, e := rollout(t, "model", "init", "--size", "tiny", "--seed", "3", "--out", dir); code != 0 {
		t.Fatal(e)
	}
	code, out, e := rollout(t, "model", "logits", "--checkpoint", dir, "--prompt", "12+3")
	if code != 0 {
		t.Fatal(e)
	}
	var lg struct {
		Tokens []int       `json:"tokens"`
		Logits [][]float64 `json:"logits"`
	}
	if err := json.Unmarshal([]byte(out), &lg); err != nil || len(lg.Tokens) != 5 || len(lg.Logits) != 5 || len(lg.Logits[0]) != 64 {
		t.Fatalf("logits output: %v, %d tokens", err, len(lg.Tokens))
	}
	code, out, e = rollout(t, "sample", "--checkpoint", dir, "--task", "add", "--strategy", "entropy_tree", "--strategy-param", "m=2", "--strategy-param", "n=1", "--strategy-param", "t=2", "--format", "json", "--budget", "400")
	if code != 0 {
		t.Fatal(e)
	}
	var g struct {
		Prompt   string `json:"prompt"`
		Strategy string `json:"strategy"`
		Budget   struct {
			Limit     *int64 `json:"limit"`
			Generated int64  `json:"generated_tokens"`
		} `json:"budget"`
		Nodes []struct {
			ID      int   `json:"id"`
			Parent  *int  `json:"parent"`
			ForkAt  *int  `json:"fork_at"`
			Tokens  []int `json:"tokens"`
			Logprob []any `json:"logprobs"`
		} `json:"nodes"`
		Leaves []struct {
			Node       int       `json:"node"`
			Reason     string    `json:"reason"`
			Advantages []float64 `json:"advantages"`
		} `json:"leaves"`
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatalf("sample --format json: %v\n%s", err, out)
	}
	if g.Strategy != "entropy_tree" || g.Budget.Limit == nil || *g.Budget.Limit != 400 || g.Budget.Generated > 400 || len(g.Leaves) == 0 {
		t.Fatalf("sample --format json: %+v", g)
	}
	roots := 0
	for _, n := range g.Nodes {
		if n.Parent == nil {
			roots++
		} else if n.ForkAt == nil {
			t.Fatalf("node %d has a parent but no fork_at", n.ID)
		}
		if len(n.Logprob) != len(n.Tokens) {
			t.Fatalf("node %d: %d logprobs for %d tokens", n.ID, len(n.Logprob), len(n.Tokens))
		}
	}
	if roots != 2 {
		t.Fatalf("%d roots, want m=2", roots)
	}
}

// A whole experiment through the command line: run, the reading commands,
// a rerun that skips, merge twice, and a writer that finds the store busy.
func TestRunAndReadingCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an experiment")
	}
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "base")
	if code, _, e := rollout(t, "model", "init", "--size", "tiny", "--out", ckpt); code != 0 {
		t.Fatal(e)
	}
	cfg := filepath.Join(dir, "exp.yaml")
	os.WriteFile(cfg, []byte(`name: cli
task: {name: add, params: {digits: 1}}
checkpoint: base
train: {steps: 2, prompts_per_step: 2, max_resample_rounds: 0}
eval: {every: 1, prompts: 3, samples: 2, k: 2}
seeds: [1, 2]
ablate: {rollout.strategy: [flat, random_tree]}
`), 0o644)
	store := filepath.Join(dir, "s.db")
	code, out, e := rollout(t, "run", cfg, "--store", store, "--cache", dir, "--workers", "2")
	if code != 0 || !strings.Contains(out, "4 finished") || !strings.Contains(out, "strategy=random_tree") {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, e)
	}
	code, out, _ = rollout(t, "run", cfg, "--store", store, "--cache", dir)
	if code != 0 || !strings.Contains(out, "4 already done") {
		t.Fatalf("rerun: exit %d\n%s", code, out)
	}
	// Another setting under the same name is refused, before anything is
	// written, naming the key with both values.
	code, out, e = rollout(t, "run", cfg, "--store", store, "--cache", dir, "--set", "train.total_tokens=3000")
	for _, want := range []string{`variant "strategy=flat": train.total_tokens is 0 in the store, 3000 now`, `variant "strategy=random_tree"`, "give the config a new name: to make a new experiment, or use another --store"} {
		if code != 2 || !strings.Contains(e, want) {
			t.Errorf("rerun with another setting: exit %d, stderr lacks %q:\n%s%s", code, want, out, e)
		}
	}
	code, out, _ = rollout(t, "ls", "--store", store)
	if code != 0 || strings.Count(out, "finished") != 4 {
		t.Fatalf("ls:\n%s", out)
	}
	// The design was recorded before the runs; its settings are disclosed.
	code, out, e = rollout(t, "verdict", "cli", "--store", store)
	for _, want := range []string{"## cli", "0 declared checks), recorded", "before its first run", "| `rollout.strategy` | flat | flat | random_tree |", "| `train.filter_groups` † | true | true | true |"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("verdict: exit %d, output lacks %q:\n%s%s", code, want, out, e)
		}
	}
	// Reports on exact axes: every output names its axis; a point between
	// token marks or beyond the runs is an error, not a clamp.
	for _, tc := range []struct {
		at   string
		code int
		want string
	}{
		{"tokens:0", 0, "cli at 0 sampled tokens (evaluation mark): mean ± 95% t-interval"},
		{"step:2", 0, "cli at step 2 (equal optimizer updates)"},
		{"final", 0, "cli at the end of each run"},
		{"tokens:1", 2, `at tokens:1: metric "eval/acc": run `},
		{"tokens:1", 2, "token marks where every run has a row of eval/acc: 0"},
		{"tokens:99999999", 2, "sampled tokens (and 3 more runs); token marks where every run has a row of eval/acc: 0"},
		{"step:9999", 2, "ended at step 2 (and 3 more runs); every finished run reaches step 2"},
		{"train_flops:1e30", 2, "at train_flops:1e+30"},
	} {
		code, out, e := rollout(t, "report", "cli", "--store", store, "--metric", "eval/acc", "--at", tc.at, "--format", "markdown")
		if code != tc.code || !strings.Contains(out+e, tc.want) {
			t.Errorf("report --at %s: exit %d, want %d and %q in\n%s%s", tc.at, code, tc.code, tc.want, out, e)
		}
	}
	code, out, _ = rollout(t, "report", "cli", "--store", store, "--format", "csv", "--metric", "eval/acc")
	if code != 0 || !strings.Contains(out, "strategy=flat") {
		t.Fatalf("report:\n%s", out)
	}
	st, err := tracking.Open(store, tracking.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	runs, _ := st.Runs("cli")
	st.Close()
	code, out, e = rollout(t, "trees", runs[0].ID, "--store", store, "--step", "1", "--group", "0")
	if code != 0 || strings.Contains(out, "group 0") || !strings.HasPrefix(out, "prompt ") || !strings.Contains(out, "tree 0") {
		t.Fatalf("trees: exit %d\n%s%s", code, out, e)
	}
	code, out, _ = rollout(t, "export", "cli", "--what", "trajectories", "--format", "jsonl", "--store", store)
	if code != 0 || strings.Count(out, "\n") < 8 {
		t.Fatalf("export:\n%s", out)
	}
	png := filepath.Join(dir, "acc.png")
	if code, _, e := rollout(t, "plot", "cli", "--metric", "eval/acc", "--x", "tokens", "--out", png, "--store", store); code != 0 {
		t.Fatal(e)
	}
	if b, _ := os.ReadFile(png); !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Fatal("plot wrote no PNG")
	}
	// The paired differences from the baseline, on the experiment's budget
	// axis (no --x).
	code, out, e = rollout(t, "plot", "cli", "--metric", "eval/acc", "--kind", "diff", "--out", filepath.Join(dir, "d.svg"), "--store", store)
	if code != 0 || !strings.Contains(out, "wrote "+filepath.Join(dir, "d.svg")+" (x: ") {
		t.Fatalf("plot --kind diff: exit %d\n%s%s", code, out, e)
	}
	if code, _, e := rollout(t, "plot", "cli", "--metric", "eval/acc", "--kind", "pie", "--out", filepath.Join(dir, "k.png"), "--store", store); code != 2 || !strings.Contains(e, `--kind "pie"`) {
		t.Errorf("plot --kind pie: exit %d: %s", code, e)
	}
	// Notes on a run: added, listed, an empty one refused.
	if code, out, e := rollout(t, "note", runs[0].ID, "diverged", "early", "--store", store); code != 0 || !strings.Contains(out, "noted on run "+runs[0].ID) {
		t.Fatalf("note: exit %d\n%s%s", code, out, e)
	}
	if code, out, _ := rollout(t, "note", runs[0].ID, "--store", store); code != 0 || !strings.HasSuffix(out, "  diverged early\n") {
		t.Errorf("note listing: exit %d: %q", code, out)
	}
	if code, _, e := rollout(t, "note", runs[0].ID, " ", "--store", store); code != 2 || !strings.Contains(e, "empty text") {
		t.Errorf("empty note: exit %d: %s", code, e)
	}
	// Refusals before any file is made: groups as CSV, an unknown variant.
	outFile := filepath.Join(dir, "groups.csv")
	if code, _, e := rollout(t, "export", "cli", "--what", "groups", "--format", "csv", "--out", outFile, "--store", store); code != 2 || !strings.Contains(e, "only as jsonl") {
		t.Errorf("export groups as csv: exit %d: %s", code, e)
	}
	if code, _, e := rollout(t, "plot", "cli", "--metric", "eval/acc", "--variant", "nosuch", "--out", filepath.Join(dir, "n.png"), "--store", store); code != 2 || !strings.Contains(e, "nosuch") {
		t.Errorf("plot --variant nosuch: exit %d: %s", code, e)
	}
	// An export that fails leaves no file behind; one that succeeds writes it.
	if code, _, _ := rollout(t, "export", "nosuchrun", "--what", "metrics", "--out", outFile, "--store", store); code == 0 {
		t.Error("export of no run: exit 0")
	}
	if code, _, _ := rollout(t, "export", "cli", "--what", "groups", "--out", outFile, "--store", store); code != 0 {
		t.Error("export of groups failed")
	}
	if entries, _ := filepath.Glob(filepath.Join(dir, "*groups.csv*")); len(entries) != 1 {
		t.Errorf("export files: %v, want only %s", entries, outFile)
	}
	merged := filepath.Join(dir, "m.db")
	if code, _, e := rollout(t, "merge", store, "--into", merged); code != 0 {
		t.Fatal(e)
	}
	code, out, _ = rollout(t, "merge", store, "--into", merged)
	if code != 0 || !strings.Contains(out, "0 experiments and 0 runs copied, 4 runs already there") {
		t.Fatalf("second merge: %s", out)
	}

	// A writer holds the store: another run says who; report still reads
	// (a snapshot). (How long the run waits for the lock is tracking's
	// Options.Timeout, tested there without a wall-clock bound.)
	holder, err := tracking.Open(store, tracking.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	code, _, e = rollout(t, "run", cfg, "--store", store, "--cache", dir)
	if code == 0 || !strings.Contains(e, "is locked by") {
		t.Fatalf("run on a locked store: exit %d: %s", code, e)
	}
	code, out, e = rollout(t, "report", "cli", "--store", store)
	if code != 0 || !strings.Contains(e, "reading a snapshot") || !strings.Contains(out, "strategy=flat") {
		t.Fatalf("report while a writer holds the store: exit %d\n%s\n%s", code, out, e)
	}
}

// The groups a run stored print exactly as rollout sample prints the same
// group made afresh (text and JSON), for every strategy, fork scores by
// surprisal and at random, a budget-limited group, mixed reward terms and
// filtered groups.
func TestTreesPrintWhatSamplePrinted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an experiment")
	}
	dir := t.TempDir()
	t.Setenv("ROLLOUT_CACHE", dir)
	cfg := filepath.Join(dir, "same.yaml")
	os.WriteFile(cfg, []byte(`name: same
task: {name: add, params: {digits: 1}}
pretrain: {steps: 40, lr: 3.0e-3, eval_prompts: 8}
reward: {verifier: 1, length: 0.1}
train: {steps: 1, prompts_per_step: 2, max_resample_rounds: 1}
eval: {every: 1, prompts: 2, samples: 1, k: 1}
seeds: [5]
variants:
  - {name: flat, set: {rollout.strategy: flat, rollout.params: {n: 3}}}
  - {name: surprisal, set: {rollout.strategy: entropy_tree, rollout.params: {m: 2, n: 1, l: 1, t: 2, score: surprisal}, train.advantage: tree}}
  - {name: random, set: {rollout.strategy: random_tree, rollout.params: {m: 1, n: 2, l: 1, t: 1}}}
  - {name: segment, set: {rollout.strategy: segment_tree, rollout.params: {s: 2, b: 2, w: 4}, rollout.budget: 20}}
`), 0o644)
	store := filepath.Join(dir, "s.db")
	if code, out, e := rollout(t, "run", cfg, "--store", store, "--workers", "2"); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, e)
	}
	st, err := tracking.Open(store, tracking.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	runs, _ := st.Runs("same")
	counts := map[string]int{}
	filtered, total := 0, 0
	for _, r := range runs {
		gs, err := st.Groups(r.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		counts[r.ID] = len(gs)
		total += len(gs)
		for _, g := range gs {
			if g.Filtered {
				filtered++
			}
		}
	}
	st.Close()
	if len(runs) != 4 {
		t.Fatalf("%d runs, want 4", len(runs))
	}
	for _, r := range runs {
		for g := range counts[r.ID] {
			for _, format := range []string{"text", "json"} {
				gs := strconv.Itoa(g)
				_, stored, e1 := rollout(t, "trees", r.ID, "--store", store, "--step", "1", "--group", gs, "--format", format)
				_, fresh, e2 := rollout(t, "sample", "--config", cfg, "--variant", r.Variant, "--seed", "5", "--split", "train", "--index", gs, "--step", "0", "--format", format)
				if stored == "" || stored != fresh {
					t.Errorf("%s group %d (%s): trees printed\n%s%s\nsample printed\n%s%s", r.Variant, g, format, stored, e1, fresh, e2)
				}
			}
		}
	}
	if filtered == 0 || filtered == total {
		t.Errorf("%d of %d groups filtered: want some of each", filtered, total)
	}
}
