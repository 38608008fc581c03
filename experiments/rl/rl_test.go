package rl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/nlpodyssey/spago/ag"
	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"

	"github.com/rollout-rl/rollout/experiments/pretrain"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/openai"
	"github.com/rollout-rl/rollout/policy/serve"
	"github.com/rollout-rl/rollout/search"
	"github.com/rollout-rl/rollout/search/remote"
)

func param(v ...float32) *nn.Param {
	p := &nn.Param{Matrix: mat.NewDense[float32](mat.WithShape(len(v), 1), mat.WithBacking(v))}
	p.SetRequiresGrad(true)
	return p
}

// The objective's gradient matches central finite differences, with the
// KL term, the entropy bonus and correction weights on.
func TestObjectiveGradientMatchesFiniteDifferences(t *testing.T) {
	lpv := []float32{-1.2, -0.3, -2.0, -0.7, -1.5}
	entv := []float32{1.1, 0.4, 0.9, 2.0, 0.3}
	terms := []tokenTerm{
		{row: 0, oldLP: -1.25, behLP: -1.3, refLP: -1.0, adv: 0.8, agg: 0.25, isW: 1.2},
		{row: 1, oldLP: -0.31, behLP: -0.2, refLP: -0.5, adv: -0.5, agg: 0.25, isW: 0.9},
		{row: 3, oldLP: -0.69, behLP: -0.7, refLP: -0.6, adv: 1.5, agg: 0.25, isW: 1},
		{row: 4, oldLP: -1.52, behLP: -1.6, refLP: -1.4, adv: -1.0, agg: 0.25, isW: 1.1},
	}
	cfg := objectiveConfig{clipLow: 0.2, clipHigh: 0.28, klCoef: 0.1, entropyCoef: 0.01}
	lp, ent := param(lpv...), param(entv...)
	loss := ag.NewOperator(&objective{logProbs: lp, entropies: ent, terms: terms, cfg: cfg}).Run()
	if err := ag.Backward(loss); err != nil {
		t.Fatal(err)
	}
	eval := func() float64 {
		o := &objective{logProbs: param(lpv...), entropies: param(entv...), terms: terms, cfg: cfg}
		v, _ := o.Forward()
		return float64(v.Item().F64())
	}
	for _, tc := range []struct {
		name string
		v    []float32
		g    []float32
	}{{"log-probs", lpv, mat.Data[float32](lp.Grad())}, {"entropies", entv, mat.Data[float32](ent.Grad())}} {
		for i := range tc.v {
			old := tc.v[i]
			const h = 1e-3
			tc.v[i] = old + h
			up := eval()
			tc.v[i] = old - h
			down := eval()
			tc.v[i] = old
			fd := (up - down) / (2 * h)
			if math.Abs(fd-float64(tc.g[i])) > 1e-3 {
				t.Errorf("%s[%d]: gradient %.5f, finite difference %.5f", tc.name, i, tc.g[i], fd)
			}
		}
	}
}

// Clipping acts exactly where ρ leaves [1−ε_low, 1+ε_high] on the side the
// advantage's sign says, and nowhere else.
func TestClippingSides(t *testing.T) {
	cfg := objectiveConfig{clipLow: 0.2, clipHigh: 0.28}
	for _, tc := range []struct {
		rho, adv float64
		clipped  bool
	}{
		{1.0, 1, false}, {1.27, 1, false}, {1.29, 1, true}, {2.0, 1, true}, // A > 0: only above 1+ε_high
		{0.5, 1, false}, {0.79, 1, false},
		{1.0, -1, false}, {0.81, -1, false}, {0.79, -1, true}, {0.1, -1, true}, // A < 0: only below 1−ε_low
		{1.5, -1, false}, {3.0, -1, false},
		{2.0, 0, false}, {0.1, 0, false},
	} {
		lp := param(float32(math.Log(tc.rho)))
		o := &objective{logProbs: lp, terms: []tokenTerm{{row: 0, oldLP: 0, adv: tc.adv, agg: 1, isW: 1}}, cfg: cfg}
		loss := ag.NewOperator(o).Run()
		if err := ag.Backward(loss); err != nil {
			t.Fatal(err)
		}
		g := mat.Data[float32](lp.Grad())[0]
		if o.clip[0] != tc.clipped {
			t.Errorf("ρ=%.2f A=%g: clipped %v, want %v", tc.rho, tc.adv, o.clip[0], tc.clipped)
		}
		wantGrad := 0.0
		if !tc.clipped {
			wantGrad = -tc.rho * tc.adv
		}
		if math.Abs(float64(g)-wantGrad) > 1e-4 {
			t.Errorf("ρ=%.2f A=%g: gradient %v, want %v", tc.rho, tc.adv, g, wantGrad)
		}
	}
}

func TestCorrectionWeights(t *testing.T) {
	for _, tc := range []struct {
		mode          string
		old, beh, cap float64
		want          float64
	}{
		{"none", -1, -3, 2, 1},
		{"tis", -1, -1.5, 2, math.Exp(0.5)},
		{"tis", -1, -3, 2, 2}, // capped at C
		{"tis", -2, -1, 2, math.Exp(-1)},
		{"decoupled", -1, -3, 2, math.Exp(2)}, // no cap
		{"decoupled", -2, -1, 2, math.Exp(-1)},
	} {
		if got := correctionWeight(tc.mode, tc.old, tc.beh, tc.cap); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s(old %g, behave %g): %g, want %g", tc.mode, tc.old, tc.beh, got, tc.want)
		}
	}
}

func TestAggregationWeights(t *testing.T) {
	lens := []int{2, 4}
	for _, tc := range []struct {
		mode string
		want [][]float64
	}{
		{"token_mean", [][]float64{{1. / 6, 1. / 6}, {1. / 6, 1. / 6, 1. / 6, 1. / 6}}},
		{"seq_mean_token_mean", [][]float64{{1. / 4, 1. / 4}, {1. / 8, 1. / 8, 1. / 8, 1. / 8}}},
		{"seq_mean_token_sum_norm", [][]float64{{1. / 20, 1. / 20}, {1. / 20, 1. / 20, 1. / 20, 1. / 20}}},
	} {
		got := aggregationWeights(tc.mode, lens, 10)
		for i := range tc.want {
			for j := range tc.want[i] {
				if math.Abs(got[i][j]-tc.want[i][j]) > 1e-15 {
					t.Fatalf("%s: %v, want %v", tc.mode, got, tc.want)
				}
			}
		}
	}
}

func TestPassAtKAndMajority(t *testing.T) {
	for _, tc := range []struct {
		n, c, k int
		want    float64
	}{
		{8, 0, 4, 0}, {8, 8, 1, 1}, {8, 2, 1, 0.25},
		{8, 2, 4, 1 - 15.0/70}, // 1 − C(6,4)/C(8,4)
		{5, 1, 2, 1 - 6.0/10},  // 1 − C(4,2)/C(5,2)
		{4, 1, 4, 1},
	} {
		if got := PassAtK(tc.n, tc.c, tc.k); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("pass@%d n=%d c=%d: %g, want %g", tc.k, tc.n, tc.c, got, tc.want)
		}
	}
	v := func(ans string, r float64) task.Verdict { return task.Verdict{Answer: ans, Reward: r} }
	for _, tc := range []struct {
		vs     []task.Verdict
		answer string
		ok     bool
	}{
		{[]task.Verdict{v("12", 0), v("13", 1), v("13", 1), v("12", 0), v("", 0)}, "12", true}, // tie: first seen
		{[]task.Verdict{v("12", 0), v("13", 1), v("13", 1)}, "13", true},
		{[]task.Verdict{v("", 0), v("", 0)}, "", false},
	} {
		got, ok := MajorityVote(tc.vs)
		if ok != tc.ok || got.Answer != tc.answer {
			t.Errorf("majority of %v: %q %v, want %q %v", tc.vs, got.Answer, ok, tc.answer, tc.ok)
		}
	}
}

// smallSetup is a quick setup on two-digit addition with a fresh, small
// (untrained) policy.
func smallSetup(t *testing.T, train Config) Setup {
	train = withDefaults(train)
	t.Helper()
	tk, err := task.New("add", task.AddParams{Digits: 2, Scratchpad: true})
	if err != nil {
		t.Fatal(err)
	}
	cfg := policy.Config{VocabSize: 64, Dim: 32, Hidden: 64, Layers: 1, Heads: 2, KVHeads: 2, MaxSeq: 32, NormEps: 1e-5, RopeTheta: 10000}
	m, err := policy.NewModel(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := search.NewStrategy("flat", map[string]string{"n": "4"})
	return Setup{Task: tk, Tokenizer: policy.DefaultTokenizer(), Policy: m, Strategy: st, Sampling: policy.DefaultSampling, Train: train, Seed: 3}
}

// An untrained policy never answers correctly: every group has equal
// rewards, so filtering draws more prompts and stops after
// max_resample_rounds without error and without an update.
func TestFilteringStopsAtMaxResampleRounds(t *testing.T) {
	loop, err := New(smallSetup(t, Config{Steps: 1, PromptsPerStep: 3, FilterGroups: true, MaxResampleRounds: 2}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := loop.Step(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m := res.Metrics
	if m["groups/resample_rounds"] != 2 || m["groups/filtered"] != 9 || m["groups/kept"] != 0 || len(res.Groups) != 9 {
		t.Fatalf("rounds %v filtered %v kept %v groups %d; want 2 rounds, 9 filtered of 9", m["groups/resample_rounds"], m["groups/filtered"], m["groups/kept"], len(res.Groups))
	}
	if _, ok := m["actor/pg_loss"]; ok {
		t.Fatal("an update ran on an empty batch")
	}
	if loop.nextPrompt != 9 {
		t.Fatalf("drew %d prompts, want 9", loop.nextPrompt)
	}
}

// Stale groups are trained on for max_staleness versions after the one
// that sampled them, and not after.
func TestStalenessBound(t *testing.T) {
	for _, maxStale := range []int{0, 1, 2} {
		loop, err := New(smallSetup(t, Config{Steps: 4, PromptsPerStep: 2, FilterGroups: false, MaxStaleness: maxStale}))
		if err != nil {
			t.Fatal(err)
		}
		for step := 0; step < 4; step++ {
			res, err := loop.Step(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			want := float64(2 * min(step, maxStale))
			if got := res.Metrics["buffer/stale_groups"]; got != want {
				t.Fatalf("max_staleness %d, step %d: %v stale groups trained on, want %v", maxStale, step+1, got, want)
			}
			for _, sg := range loop.buffer {
				if loop.step-sg.version > maxStale {
					t.Fatalf("buffer holds a group of version %d at version %d", sg.version, loop.step)
				}
			}
		}
	}
}

// Same setup and seed, same metrics, bit for bit (wall times aside).
func TestStepsAreDeterministic(t *testing.T) {
	run := func() []map[string]float64 {
		loop, err := New(smallSetup(t, Config{Steps: 2, PromptsPerStep: 2, FilterGroups: true, MaxResampleRounds: 1}))
		if err != nil {
			t.Fatal(err)
		}
		var out []map[string]float64
		for !loop.Done() {
			res, err := loop.Step(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			delete(res.Metrics, "timing_s/gen")
			delete(res.Metrics, "timing_s/update")
			out = append(out, res.Metrics)
		}
		return out
	}
	a, b := run(), run()
	for i := range a {
		for k, v := range a[i] {
			if b[i][k] != v {
				t.Fatalf("step %d %s: %v then %v", i+1, k, v, b[i][k])
			}
		}
	}
}

// End to end: RL on two-digit addition raises the greedy accuracy of a
// briefly pretrained tiny policy by a clear margin, deterministically.
func TestRLRaisesAccuracy(t *testing.T) {
	if testing.Short() {
		t.Skip("about 25 s")
	}
	tk, _ := task.New("add", task.AddParams{Digits: 2, Scratchpad: true})
	ptCfg := pretrain.DefaultConfig()
	ptCfg.Steps, ptCfg.EvalPrompts, ptCfg.LR = 300, 100, 3e-3
	base, err := pretrain.Train(context.Background(), tk, ptCfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := search.NewStrategy("flat", nil)
	train := DefaultConfig()
	train.Steps, train.LR = 40, 5e-4
	loop, err := New(Setup{Task: tk, Tokenizer: base.Tokenizer, Policy: base.Model, Strategy: st, Sampling: policy.DefaultSampling,
		Train: train, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for !loop.Done() {
		if _, err := loop.Step(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	evalCfg := DefaultEvalConfig()
	evalCfg.Prompts = 100
	after, err := Evaluate(base.Model, base.Tokenizer, tk, evalCfg, policy.DefaultSampling, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("greedy accuracy: base %.2f, after RL %.2f; pass@1 %.2f, pass@4 %.2f, maj@4 %.2f", base.EvalAcc, after.Acc, after.PassAt1, after.PassAtK, after.MajAtK)
	if after.Acc < base.EvalAcc+0.3 {
		t.Fatalf("RL moved greedy accuracy from %.2f to %.2f; want a rise of at least 0.3", base.EvalAcc, after.Acc)
	}
}

// A run restored from a snapshot continues bit-identically: weights,
// optimizer, prompt counter and stale buffer all come back.
func TestSnapshotRestoreContinuesExactly(t *testing.T) {
	train := Config{Steps: 4, PromptsPerStep: 2, FilterGroups: false, MaxStaleness: 1, Correction: "tis", LR: 1e-3}
	metricsOf := func(loop *Loop, steps int) []map[string]float64 {
		var out []map[string]float64
		for i := 0; i < steps; i++ {
			res, err := loop.Step(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			delete(res.Metrics, "timing_s/gen")
			delete(res.Metrics, "timing_s/update")
			out = append(out, res.Metrics)
		}
		return out
	}
	whole, err := New(smallSetup(t, train))
	if err != nil {
		t.Fatal(err)
	}
	want := metricsOf(whole, 4)

	first, _ := New(smallSetup(t, train))
	metricsOf(first, 2)
	snap, err := first.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	second, _ := New(smallSetup(t, train)) // fresh weights, overwritten by Restore
	if err := second.Restore(snap); err != nil {
		t.Fatal(err)
	}
	got := metricsOf(second, 2)
	for i := range got {
		for k, v := range want[2+i] {
			if got[i][k] != v {
				t.Fatalf("step %d %s: resumed %v, uninterrupted %v", 3+i, k, got[i][k], v)
			}
		}
	}
	a, _ := whole.Snapshot()
	b, _ := second.Snapshot()
	if !bytes.Equal(a, b) {
		t.Fatal("final snapshots differ")
	}
	if err := second.Restore([]byte("garbage")); err == nil {
		t.Fatal("restore of garbage: no error")
	}
}

// Test-time compute: more candidates cost more tokens, and best-of-N with
// the verifier (an oracle) is never below majority vote.
// The same holds for the policy served by rollout serve on loopback and
// sampled remotely.
func TestMeasureTTC(t *testing.T) {
	s := smallSetup(t, Config{})
	cfg := TTCConfig{Prompts: 6, Ns: []int{1, 3, 6}, Sampling: policy.DefaultSampling, Seed: 2, Tree: TreeWithLeaves}
	t.Run("local", func(t *testing.T) {
		pts, err := MeasureTTC(context.Background(), s.Policy, s.Tokenizer, s.Task, cfg)
		if err != nil {
			t.Fatal(err)
		}
		checkTTC(t, pts)
	})
	t.Run("remote", func(t *testing.T) {
		srv, err := serve.New(policy.NewEngine(s.Policy), s.Tokenizer, serve.Options{ModelName: "tiny"})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { srv.Run(ctx); close(done) }()
		hs := httptest.NewServer(srv.Handler())
		defer func() { hs.Close(); cancel(); <-done }()
		rs, err := remote.Dial(context.Background(), openai.Options{BaseURL: hs.URL}, "tiny")
		if err != nil {
			t.Fatal(err)
		}
		pts, err := MeasureRemoteTTC(context.Background(), rs, s.Task, cfg)
		if err != nil {
			t.Fatal(err)
		}
		checkTTC(t, pts)
		bad := cfg
		bad.Sampling.TopK = 3
		if _, err := MeasureRemoteTTC(context.Background(), rs, s.Task, bad); err == nil || !strings.Contains(err.Error(), "top-k 3") {
			t.Errorf("top-k with a remote policy: error %v", err)
		}
	})
}

// checkTTC checks a test-time compute sweep over N = 1, 3, 6.
func checkTTC(t *testing.T, pts []TTCPoint) {
	t.Helper()
	byMethod := map[string][]TTCPoint{}
	for _, p := range pts {
		byMethod[p.Method] = append(byMethod[p.Method], p)
	}
	if len(byMethod["best_of_n"]) != 3 || len(byMethod["majority"]) != 3 || len(byMethod["tree_best"]) != 2 {
		t.Fatalf("points %+v", pts)
	}
	for m, ps := range byMethod {
		for i := 1; i < len(ps); i++ {
			if ps[i].Tokens <= ps[i-1].Tokens {
				t.Errorf("%s: N=%d costs %.1f tokens, N=%d %.1f", m, ps[i].N, ps[i].Tokens, ps[i-1].N, ps[i-1].Tokens)
			}
		}
	}
	for i, p := range byMethod["best_of_n"] {
		if p.Acc < byMethod["majority"][i].Acc {
			t.Errorf("N=%d: oracle best-of-N %.2f below majority %.2f", p.N, p.Acc, byMethod["majority"][i].Acc)
		}
	}
}

// MeasureTTC hands the scorer every candidate of every prompt in one call
// per sweep point (so a reward model scores them in batched forwards),
// selects by its scores, and reports a scorer's error.
func TestMeasureTTCScoresInOneCallPerPoint(t *testing.T) {
	s := smallSetup(t, Config{})
	const prompts = 5
	oracle := func(ps []task.Prompt, rs []string) ([]float64, error) {
		out := make([]float64, len(rs))
		for i := range rs {
			out[i] = s.Task.Verify(ps[i], rs[i]).Reward
		}
		return out, nil
	}
	var sizes []int
	counting := func(ps []task.Prompt, rs []string) ([]float64, error) {
		sizes = append(sizes, len(rs))
		return oracle(ps, rs)
	}
	cfg := TTCConfig{Prompts: prompts, Ns: []int{1, 3, 6}, Sampling: policy.DefaultSampling, Seed: 2, Tree: TreeWithLeaves}
	want, err := MeasureTTC(context.Background(), s.Policy, s.Tokenizer, s.Task, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Scorer = counting
	got, err := MeasureTTC(context.Background(), s.Policy, s.Tokenizer, s.Task, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// With a scorer, the verifier's choice among the same candidates comes
	// beside it (oracle, tree_oracle) and equals the default's best-of-N.
	var gotScored, gotOracle []TTCPoint
	for _, p := range got {
		switch p.Method {
		case "oracle", "tree_oracle":
			p.Method = map[string]string{"oracle": "best_of_n", "tree_oracle": "tree_best"}[p.Method]
			gotOracle = append(gotOracle, p)
		default:
			gotScored = append(gotScored, p)
		}
	}
	if !slices.Equal(gotScored, want) {
		t.Errorf("with the verifier as scorer: %+v, want the default's %+v", gotScored, want)
	}
	var wantOracle []TTCPoint
	for _, p := range want {
		if p.Method == "best_of_n" || p.Method == "tree_best" {
			wantOracle = append(wantOracle, p)
		}
	}
	if !slices.Equal(gotOracle, wantOracle) {
		t.Errorf("oracle points %+v, want the default's best-of-N %+v", gotOracle, wantOracle)
	}
	// best-of-1, best-of-3, tree of 3, best-of-6, tree of 6: every candidate
	// at once (a tree has at most N leaves a prompt: a response that ends
	// before its fork point does not fork).
	wantSizes := []int{prompts, 3 * prompts, 3 * prompts, 6 * prompts, 6 * prompts}
	isTree := []bool{false, false, true, false, true}
	if len(sizes) != len(wantSizes) {
		t.Fatalf("scorer calls of %v candidates, want %v", sizes, wantSizes)
	}
	for i, n := range sizes {
		if (!isTree[i] && n != wantSizes[i]) || n < prompts || n > wantSizes[i] {
			t.Errorf("scorer call %d of %d candidates, want %d (at least %d for a tree)", i, n, wantSizes[i], prompts)
		}
	}
	for _, tc := range []struct {
		name    string
		scorer  Scorer
		wantErr string
	}{
		{"error", func([]task.Prompt, []string) ([]float64, error) { return nil, errors.New("model gone") }, "model gone"},
		{"too few scores", func([]task.Prompt, []string) ([]float64, error) { return []float64{1}, nil }, "1 scores"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg.Scorer = tc.scorer
			cfg.Ns = []int{3}
			if _, err := MeasureTTC(context.Background(), s.Policy, s.Tokenizer, s.Task, cfg); err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %v, want one containing %q", err, tc.wantErr)
			}
		})
	}
}

// Select picks by the scores (the first of equal ones), by the verifier
// and by the most frequent answer, each counting 1 when its choice is
// correct: hand-made candidates where the three rules disagree.
func TestSelect(t *testing.T) {
	right := task.Verdict{Reward: 1, Answer: "42"}
	wrong := task.Verdict{Reward: 0, Answer: "41"}
	other := task.Verdict{Reward: 0, Answer: "40"}
	none := task.Verdict{Reward: 0}
	for _, tc := range []struct {
		name   string
		vs     []task.Verdict
		scores []float64
		want   Selected
	}{
		{"no candidates", nil, nil, Selected{}},
		{"one right", []task.Verdict{right}, []float64{-3}, Selected{Best: 1, Majority: 1, Oracle: 1}},
		{"one wrong", []task.Verdict{wrong}, []float64{5}, Selected{}},
		{"scorer prefers a wrong minority", []task.Verdict{right, right, wrong}, []float64{0.1, 0.2, 0.9}, Selected{Majority: 1, Oracle: 1}},
		{"scorer finds the right minority", []task.Verdict{wrong, right, wrong}, []float64{-1, 2, 0.5}, Selected{Best: 1, Oracle: 1}},
		{"equal scores: the first", []task.Verdict{wrong, right}, []float64{1, 1}, Selected{Oracle: 1}},
		{"equal scores, right first", []task.Verdict{right, wrong}, []float64{1, 1}, Selected{Best: 1, Majority: 1, Oracle: 1}},
		{"majority tie: the answer seen first", []task.Verdict{other, right, right, other}, []float64{0, 0, 0, 0}, Selected{Oracle: 1}},
		{"unanswered candidates do not vote", []task.Verdict{none, none, right}, []float64{3, 2, 1}, Selected{Majority: 1, Oracle: 1}},
		{"nothing answered", []task.Verdict{none, none}, []float64{1, 2}, Selected{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Select(tc.vs, tc.scores); got != tc.want {
				t.Errorf("Select = %+v, want %+v", got, tc.want)
			}
		})
	}
	if got := (Selected{1, 2, 3}).Add(Selected{1, 0, 1}); got != (Selected{2, 2, 4}) {
		t.Errorf("Add = %+v", got)
	}
}

// PairAUC counts the (right, wrong) pairs a scorer orders right, ties
// half, and has no value without both kinds.
func TestPairAUC(t *testing.T) {
	right := task.Verdict{Reward: 1, Answer: "42"}
	wrong := task.Verdict{Reward: 0, Answer: "41"}
	for _, tc := range []struct {
		name   string
		vs     []task.Verdict
		scores []float64
		want   float64
		ok     bool
	}{
		{"none", nil, nil, 0, false},
		{"all right", []task.Verdict{right, right}, []float64{1, 2}, 0, false},
		{"all wrong", []task.Verdict{wrong}, []float64{1}, 0, false},
		{"perfect", []task.Verdict{wrong, right, wrong}, []float64{0, 3, 1}, 1, true},
		{"reversed", []task.Verdict{right, wrong}, []float64{-1, 2}, 0, true},
		{"a tie", []task.Verdict{right, wrong}, []float64{1, 1}, 0.5, true},
		{"two wins and a tie of four pairs", []task.Verdict{right, right, wrong, wrong}, []float64{2, 0, 1, 0}, 0.625, true},
		{"partial rewards are wrong", []task.Verdict{right, {Reward: 0.5}}, []float64{0, 1}, 0, true},
	} {
		got, ok := PairAUC(tc.vs, tc.scores)
		if ok != tc.ok || math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: PairAUC = %g, %v; want %g, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

// TreeWithLeaves shapes an entropy tree of n leaves, M·(1 + N), with two
// fork points a root when n is a multiple of 3 and three when it is a
// multiple of 4; other n are an error.
func TestTreeWithLeaves(t *testing.T) {
	for _, tc := range []struct {
		n, m, forks int
	}{{3, 1, 2}, {4, 1, 3}, {12, 4, 2}, {16, 4, 3}, {8, 2, 3}, {1, 0, 0}, {5, 0, 0}, {0, 0, 0}, {-4, 0, 0}} {
		st, err := TreeWithLeaves(tc.n)
		if tc.m == 0 {
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("has %d leaves", tc.n)) {
				t.Errorf("n=%d: %v, %v; want an error naming n", tc.n, st, err)
			}
			continue
		}
		e, ok := st.(search.EntropyTree)
		if err != nil || !ok || e.M != tc.m || e.N != tc.forks || e.T != 1 || e.L != 1 || e.M*(1+e.L*e.N*e.T) != tc.n {
			t.Errorf("n=%d: %+v, %v; want M=%d, N=%d, T=1, L=1", tc.n, st, err, tc.m, tc.forks)
		}
	}
}

// withDefaults fills the fields a test leaves zero from DefaultConfig,
// except FilterGroups, MaxResampleRounds and MaxStaleness, whose zero is
// meaningful and which the tests set as they need.
func withDefaults(c Config) Config {
	d := DefaultConfig()
	if c.Steps == 0 {
		c.Steps = d.Steps
	}
	if c.PromptsPerStep == 0 {
		c.PromptsPerStep = d.PromptsPerStep
	}
	if c.LR == 0 {
		c.LR = d.LR
	}
	if c.Correction == "" {
		c.Correction = d.Correction
	}
	c.MaxGradNorm, c.Advantage, c.ClipLow, c.ClipHigh, c.LossAgg = d.MaxGradNorm, d.Advantage, d.ClipLow, d.ClipHigh, d.LossAgg
	c.Epochs, c.Minibatches, c.TISCap = d.Epochs, d.Minibatches, d.TISCap
	c.TreePacking = d.TreePacking
	return c
}

// runAll steps loop until it is done and returns every step's result.
func runAll(t *testing.T, loop *Loop) []*StepResult {
	t.Helper()
	var out []*StepResult
	for !loop.Done() {
		res, err := loop.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, res)
		if len(out) > 1000 {
			t.Fatal("more than 1000 steps")
		}
	}
	return out
}

// tokenStrategies are a flat and two tree strategies for the token-limit
// tests.
var tokenStrategies = []struct {
	name   string
	params map[string]string
}{
	{"flat", map[string]string{"n": "4"}},
	{"entropy_tree", map[string]string{"m": "2", "n": "1", "l": "1", "t": "2"}},
	{"segment_tree", map[string]string{"s": "4", "b": "2", "w": "4"}},
}

// train.total_tokens is never exceeded and is spent to within one group's
// longest possible cost; the last step, and only it, records what is left
// as budget/unspent; filtering rounds stay within the step's limit.
func TestTotalTokensExact(t *testing.T) {
	for _, sc := range tokenStrategies {
		for _, filter := range []bool{false, true} {
			s := smallSetup(t, Config{Steps: 1000, PromptsPerStep: 3, FilterGroups: filter, MaxResampleRounds: 2})
			s.Strategy, _ = search.NewStrategy(sc.name, sc.params)
			probe, err := New(s)
			if err != nil {
				t.Fatal(err)
			}
			gm, err := search.MaxGroupTokens(s.Strategy, probe.maxTokens(), 0)
			if err != nil {
				t.Fatal(err)
			}
			s.Train.TotalTokens = 5*gm + gm/2 // a few steps; the last ones cannot draw 3 prompts
			loop, err := New(s)
			if err != nil {
				t.Fatal(err)
			}
			steps := runAll(t, loop)
			total, cum := s.Train.TotalTokens, loop.TokensCum()
			if cum > total || total-cum >= gm {
				t.Errorf("%s filter=%v: %d tokens sampled of %d, want ≤ and within one group (%d)", sc.name, filter, cum, total, gm)
			}
			var sum int64
			for i, res := range steps {
				sum += int64(res.Metrics["budget/tokens"])
				u, ok := res.Metrics["budget/unspent"]
				if last := i == len(steps)-1; ok != last || (last && u != float64(total-cum)) {
					t.Errorf("%s filter=%v: step %d of %d: budget/unspent %v (recorded %v), want %d at the last step only", sc.name, filter, i+1, len(steps), u, ok, total-cum)
				}
			}
			if sum != cum {
				t.Errorf("%s: steps sum to %d tokens, TokensCum %d", sc.name, sum, cum)
			}
		}
	}
	s := smallSetup(t, Config{Steps: 1000})
	s.Train.TotalTokens = 10
	if _, err := New(s); err == nil || !strings.Contains(err.Error(), "train.total_tokens = 10") {
		t.Errorf("total_tokens below one group: %v, want an error naming it", err)
	}
	s.Train.TotalTokens, s.EvalEveryTokens = 0, 10
	if _, err := New(s); err == nil || !strings.Contains(err.Error(), "eval.every_tokens = 10") {
		t.Errorf("every_tokens below one group: %v, want an error naming it", err)
	}
}

// With eval.every_tokens E, the steps stop at every multiple of E: no step
// goes past one, each is reached (reported in Mark) by the step after
// which no further group fits before it, once, in order, and the run's end
// at a multiple of E is a mark too.
func TestEvalMarks(t *testing.T) {
	for _, sc := range tokenStrategies {
		s := smallSetup(t, Config{Steps: 1000, PromptsPerStep: 3, FilterGroups: true, MaxResampleRounds: 1})
		s.Strategy, _ = search.NewStrategy(sc.name, sc.params)
		probe, _ := New(s)
		gm, _ := search.MaxGroupTokens(s.Strategy, probe.maxTokens(), 0)
		e := 4*gm + 7
		s.EvalEveryTokens, s.Train.TotalTokens = e, 3*e
		loop, err := New(s)
		if err != nil {
			t.Fatal(err)
		}
		var marks []int64
		var cum int64
		for _, res := range runAll(t, loop) {
			after := cum + int64(res.Metrics["budget/tokens"])
			next := (cum/e + 1) * e // the next mark not yet reached
			if len(marks) > 0 && marks[len(marks)-1] == next {
				next += e
			}
			if after > next {
				t.Errorf("%s: step %d goes from %d to %d tokens, past the mark %d", sc.name, res.Step, cum, after, next)
			}
			if res.Mark != 0 {
				if res.Mark != next || next-after >= gm {
					t.Errorf("%s: step %d at %d tokens reached mark %d; want %d, within one group (%d)", sc.name, res.Step, after, res.Mark, next, gm)
				}
				marks = append(marks, res.Mark)
			} else if next-after < gm {
				t.Errorf("%s: step %d at %d tokens: no group fits before %d, but no mark reached", sc.name, res.Step, after, next)
			}
			cum = after
		}
		if !slices.Equal(marks, []int64{e, 2 * e, 3 * e}) {
			t.Errorf("%s: marks %v, want %d, %d, %d", sc.name, marks, e, 2*e, 3*e)
		}
	}
}

// budget/train_flops counts what runs, 1 + 3·epochs passes over the
// batch: per leaf, every sequence position at its context's forward FLOPs;
// packed, every distinct prefix of the batch's sequences once. The _cum
// metric adds up.
func TestTrainFLOPs(t *testing.T) {
	for _, packed := range []bool{false, true} {
		s := smallSetup(t, Config{Steps: 2, PromptsPerStep: 2, FilterGroups: false, Epochs: 2})
		s.Strategy, _ = search.NewStrategy("entropy_tree", map[string]string{"m": "2", "n": "2", "l": "1", "t": "2"})
		s.Train.TreePacking = packed
		loop, err := New(s)
		if err != nil {
			t.Fatal(err)
		}
		loop.s.Train.Epochs = 2
		var cum float64
		for _, res := range runAll(t, loop) {
			var want int64
			prefixes := map[string]bool{}
			for _, sg := range res.Groups {
				for _, leaf := range sg.Group.Leaves() {
					seq := append(slices.Clone(sg.Group.Prompt), leaf.Response()...)
					for c := 1; c <= len(seq); c++ {
						if k := fmt.Sprint(seq[:c]); !packed || !prefixes[k] {
							prefixes[k] = true
							want += 7 * loop.s.Policy.Config.ForwardFLOPs(c)
						}
					}
				}
			}
			cum += float64(want)
			if got := res.Metrics["budget/train_flops"]; got != float64(want) || want == 0 {
				t.Errorf("packed %v: step %d: train flops %v, want %d", packed, res.Step, got, want)
			}
			if got := res.Metrics["budget/train_flops_cum"]; got != cum {
				t.Errorf("packed %v: step %d: train flops cum %v, want %v", packed, res.Step, got, cum)
			}
		}
	}
}

// train.bf16 sets the policy to train with the BF16 products: where the CPU
// runs them, a step's update differs from float32 training's; elsewhere the
// products are the float32 ones and the update is the same. Without the
// key the policy trains in float32 even if it was set to BF16 before.
func TestBF16TrainingKey(t *testing.T) {
	step := func(bf16, before bool) []float32 {
		t.Helper()
		s := smallSetup(t, Config{Steps: 1, PromptsPerStep: 2, FilterGroups: false, EntropyCoef: 0.1, BF16: bf16})
		s.Policy.SetBF16Training(before)
		loop, err := New(s)
		if err != nil {
			t.Fatal(err)
		}
		if s.Policy.BF16Training() != bf16 {
			t.Fatalf("train.bf16 %v: the policy's BF16 training is %v", bf16, s.Policy.BF16Training())
		}
		res, err := loop.Step(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := res.Metrics["actor/pg_loss"]; !ok {
			t.Fatalf("train.bf16 %v: no update", bf16)
		}
		got, ok := res.Metrics["train/bf16"]
		switch {
		case ok != bf16:
			t.Fatalf("train.bf16 %v: metric train/bf16 reported: %v", bf16, ok)
		case bf16 && (got == 1) != policy.BF16Supported():
			t.Fatalf("train/bf16 = %v; BF16 products run here: %v", got, policy.BF16Supported())
		}
		var out []float32
		for _, p := range s.Policy.NamedParams() {
			out = append(out, mat.Data[float32](p.Param.Value())...)
		}
		return out
	}
	f32, bf16, reset := step(false, false), step(true, false), step(false, true)
	if !slices.Equal(f32, reset) {
		t.Error("train.bf16 false after SetBF16Training(true): not the float32 update")
	}
	if got := !slices.Equal(f32, bf16); got != policy.BF16Supported() {
		t.Errorf("BF16 update differs from float32's: %v; BF16 products run here: %v", got, policy.BF16Supported())
	}
}
