package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/search"
)

// pairTree is a rollout strategy defined outside package search, as a
// research package would add one: P pairs of responses a prompt, each a
// response and one branch forked off it at its best position by fork
// score. It builds on search.EntropyTree (M = P, N = T = L = 1).
type pairTree struct{ search.EntropyTree }

func newPairTree(p *search.Params) (search.Strategy, error) {
	t := pairTree{search.EntropyTree{M: p.Int("pairs", 2), N: 1, L: 1, T: 1,
		Score: search.ForkScore(p.String("score", "late")), As: "pair_tree"}}
	if t.M < 1 {
		return nil, &search.ParamError{Strategy: t.Name(), Key: "pairs", Value: fmt.Sprint(t.M), Msg: fmt.Sprintf("pairs = %d, want >= 1", t.M)}
	}
	return t, t.Validate()
}

// late is a fork score defined outside package search: the later the
// position in the response, the higher.
func late(n *search.Node, i int, _ search.ForkStream) float64 { return float64(n.Start + i) }

// maxBaseline is an advantage estimator defined outside package search:
// a leaf's reward minus the best reward of its group.
type maxBaseline struct{}

func (maxBaseline) Name() string { return "max_baseline" }

func (maxBaseline) Advantages(g *search.Group) ([][]float64, error) {
	best := g.Rewards()[0]
	for _, r := range g.Rewards() {
		best = max(best, r)
	}
	out := make([][]float64, len(g.Leaves()))
	for i, leaf := range g.Leaves() {
		if !leaf.Scored {
			return nil, fmt.Errorf("max_baseline: leaf %d has no reward", leaf.ID)
		}
		out[i] = make([]float64, len(leaf.Response()))
		for j := range out[i] {
			out[i][j] = leaf.Reward - best
		}
	}
	return out, nil
}

func init() {
	search.RegisterStrategy("pair_tree", newPairTree)
	search.RegisterForkScore("late", late)
	search.RegisterEstimator("max_baseline", func() search.Estimator { return maxBaseline{} })
}

// A strategy, a fork score and an estimator registered outside package
// search work wherever the built-in ones do: a config names them (and its
// errors name their keys), rollout sample generates, scores and gives
// advantages with them, the --policy path knows the strategy has a remote
// form, rollout passrate and rollout ttc measure the strategy, and the
// token budget of a run bounds a group by the strategy's own bound.
func TestRegisteredOutsideSearch(t *testing.T) {
	if testing.Short() {
		t.Skip("trains a run")
	}
	dir := t.TempDir()
	ckpt := filepath.Join(dir, "base")
	if code, _, e := rollout(t, "model", "init", "--size", "tiny", "--seed", "3", "--out", ckpt); code != 0 {
		t.Fatal(e)
	}
	write := func(name, rollout, train string) string {
		path := filepath.Join(dir, name)
		src := "name: " + strings.TrimSuffix(name, ".yaml") + "\ntask: {name: add, params: {digits: 1}}\ncheckpoint: base\n" +
			"rollout: " + rollout + "\ntrain: " + train + "\neval: {every: 1, prompts: 2, samples: 2, k: 2}\n"
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}

	// Bad parameters are placed on their key, as for a built-in strategy.
	for _, tc := range []struct{ rollout, want string }{
		{"{strategy: pair_tree, params: {pairs: 0}}", "bad.yaml:4: rollout.params.pairs: pair_tree: pairs = 0, want >= 1"},
		{"{strategy: pair_tree, params: {m: 2}}", `bad.yaml:4: rollout.params.m: pair_tree: unknown parameter "m" (known: pairs, score)`},
		{"{strategy: pair_tree, params: {score: vibes}}", `rollout.params.score: pair_tree: score = "vibes", want entropy, surprisal, random, step_entropy, step_random, attention or late`},
	} {
		cfg := write("bad.yaml", tc.rollout, "{advantage: max_baseline}")
		if code, _, e := rollout(t, "sample", "--config", cfg, "--checkpoint", ckpt); code != 2 || !strings.Contains(e, tc.want) {
			t.Errorf("%s: exit %d, stderr %q, want 2 and %q", tc.rollout, code, e, tc.want)
		}
	}

	// rollout sample, locally and from a server: the group is the
	// strategy's, scored by the estimator.
	cfg := write("pairs.yaml", "{strategy: pair_tree, params: {pairs: 3}, budget: 200}", "{advantage: max_baseline, steps: 2, prompts_per_step: 2, max_resample_rounds: 0}")
	tk, err := task.New("add", task.AddParams{Digits: 1, Scratchpad: true}) // the config's task
	if err != nil {
		t.Fatal(err)
	}
	st, err := search.NewStrategy("pair_tree", map[string]string{"pairs": "3"})
	if err != nil {
		t.Fatal(err)
	}
	gm, _ := search.MaxGroupTokens(st, tk.MaxResponseLen()+1, 200)
	url, _ := serveTiny(t)
	for _, policy := range [][]string{{"--checkpoint", ckpt}, {"--policy", url, "--model", "tiny"}} {
		code, out, e := rollout(t, append([]string{"sample", "--config", cfg, "--format", "json"}, policy...)...)
		if code != 0 {
			t.Fatalf("sample %s: exit %d: %s", policy[0], code, e)
		}
		checkPairs(t, policy[0], out, st.Leaves(), gm)
	}

	// rollout passrate measures it as a --method, rollout ttc as its tree
	// method, scaled to N leaves by its own key (pairs).
	code, out, e := rollout(t, "passrate", cfg, "--prompts", "2", "--k", "2", "--iid-n", "1,2", "--shape", "1,1,1,1", "--score", "entropy",
		"--segment", "2,2,2", "--method", "pair_tree:pairs=1,score=late", "--resamples", "100", "--format", "json")
	if code != 0 || !strings.Contains(out, `"pair_tree:pairs=1,score=late"`) {
		t.Errorf("passrate --method pair_tree: exit %d, the method is not in the result:\n%s\n%s", code, out, e)
	}
	code, out, e = rollout(t, "ttc", "--checkpoint", ckpt, "--task", "add", "--param", "digits=1", "--prompts", "2", "--n", "2,3,4",
		"--tree", "pair_tree:score=late", "--tree-roots", "pairs", "--format", "json")
	var pts []rl.TTCPoint
	if err := json.Unmarshal([]byte(out), &pts); code != 0 || err != nil {
		t.Fatalf("ttc --tree pair_tree: exit %d, %v:\n%s\n%s", code, err, out, e)
	}
	var treeNs []int
	for _, p := range pts {
		if p.Method == "tree_best" {
			treeNs = append(treeNs, p.N)
		}
	}
	if !slices.Equal(treeNs, []int{2, 4}) { // 3 is no multiple of a pair
		t.Errorf("ttc --tree pair_tree: tree points at N %v, want 2 and 4", treeNs)
	}
	if code, _, e := rollout(t, "ttc", "--checkpoint", ckpt, "--task", "add", "--tree", "pair_tree", "--tree-roots", "m"); code != 2 || !strings.Contains(e, `unknown parameter "m"`) {
		t.Errorf("ttc --tree pair_tree --tree-roots m: exit %d, stderr %q, want 2 naming the key", code, e)
	}

	// The token budget of a run: a total below one group's bound is refused
	// naming the bound; one of three groups' bounds runs.
	store := filepath.Join(dir, "s.db")
	code, _, e = rollout(t, "run", cfg, "--store", store, "--cache", dir, "--set", fmt.Sprintf("train.total_tokens=%d", gm-1))
	if want := fmt.Sprintf("one group's longest possible cost, %d tokens (strategy pair_tree", gm); code == 0 || !strings.Contains(e, want) {
		t.Errorf("run with total_tokens %d: exit %d, stderr lacks %q:\n%s", gm-1, code, want, e)
	}
	code, out, e = rollout(t, "run", cfg, "--store", store+"2", "--cache", dir, "--set", fmt.Sprintf("train.total_tokens=%d", 3*gm))
	if code != 0 || !strings.Contains(out, "1 finished") {
		t.Errorf("run with total_tokens %d: exit %d\n%s\n%s", 3*gm, code, out, e)
	}
}

// checkPairs checks the JSON record of a pair_tree group of three pairs:
// its strategy, at most leaves leaves, at most bound tokens, branches
// scored by late, and max_baseline advantages (none above 0, some 0).
func checkPairs(t *testing.T, from, out string, leaves int, bound int64) {
	t.Helper()
	var g struct {
		Strategy string `json:"strategy"`
		Budget   struct {
			Generated int64 `json:"generated_tokens"`
		} `json:"budget"`
		Nodes []struct {
			Parent    *int     `json:"parent"`
			ForkAt    *int     `json:"fork_at"`
			ForkScore *float64 `json:"fork_score"`
		} `json:"nodes"`
		Leaves []struct {
			Advantages []float64 `json:"advantages"`
		} `json:"leaves"`
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil {
		t.Fatalf("sample %s --format json: %v\n%s", from, err, out)
	}
	if g.Strategy != "pair_tree" || len(g.Leaves) == 0 || len(g.Leaves) > leaves || g.Budget.Generated > bound {
		t.Fatalf("sample %s: strategy %s, %d leaves (at most %d), %d tokens (bound %d)", from, g.Strategy, len(g.Leaves), leaves, g.Budget.Generated, bound)
	}
	roots, best := 0, 0
	for i, n := range g.Nodes {
		if n.Parent == nil {
			roots++
			continue
		}
		// late: the score is the fork position in the response (a branch of a root).
		if n.ForkAt == nil || n.ForkScore == nil || *n.ForkScore != float64(*n.ForkAt) {
			t.Errorf("sample %s: node %d: fork at %v with score %v, want the score late gives", from, i, n.ForkAt, n.ForkScore)
		}
	}
	for _, l := range g.Leaves {
		if slices.Max(l.Advantages) > 0 {
			t.Errorf("sample %s: max_baseline advantage %v above 0", from, l.Advantages)
		}
		if l.Advantages[0] == 0 {
			best++
		}
	}
	if roots != 3 || best == 0 {
		t.Errorf("sample %s: %d roots (want 3), %d leaves at the best reward (want some)", from, roots, best)
	}
}
