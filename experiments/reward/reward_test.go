package reward

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/nlpodyssey/spago/ag"
	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"

	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
)

// smallConfig is a body small enough to train in a few seconds.
var smallConfig = policy.Config{VocabSize: 64, Dim: 32, Hidden: 64, Layers: 2, Heads: 2, KVHeads: 2, MaxSeq: 32, NormEps: 1e-5, RopeTheta: 10000}

func smallTask(t *testing.T) task.Task {
	t.Helper()
	tk, err := task.New("add", task.AddParams{Digits: 2, Scratchpad: true})
	if err != nil {
		t.Fatal(err)
	}
	return tk
}

func smallModel(t *testing.T, seed uint64) *Model { return modelOf(t, smallConfig, seed) }

// modelOf is a reward model of body cfg with random weights from seed.
func modelOf(t testing.TB, cfg policy.Config, seed uint64) *Model {
	t.Helper()
	base, err := policy.NewModel(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewModel(base, policy.DefaultTokenizer())
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// demoData returns, for n prompts of a split, the correct demonstration
// labelled true and a flawed one labelled false.
func demoData(t *testing.T, tk task.Task, split task.Split, n int) []Example {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, uint64(split)))
	var out []Example
	for i := 0; i < n; i++ {
		p, err := tk.Prompt(split, 7, i)
		if err != nil {
			t.Fatal(err)
		}
		flawed := tk.FlawedDemo(p, rng)
		if v := tk.Verify(p, flawed); v.Reward == 1 {
			t.Fatalf("flawed demo %q for %q is correct", flawed, p.Text)
		}
		out = append(out,
			Example{Prompt: p.Text, Response: p.Demo, Label: true, Reason: task.Correct},
			Example{Prompt: p.Text, Response: flawed, Label: false, Reason: task.WrongAnswer})
	}
	return out
}

func TestNewModelCopiesBaseAndStartsAtHalf(t *testing.T) {
	base, err := policy.NewModel(smallConfig, 3)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewModel(base, policy.DefaultTokenizer())
	if err != nil {
		t.Fatal(err)
	}
	bp, mp := base.Params(), m.Body.Params()
	for i := range bp {
		if bp[i] == mp[i] {
			t.Fatalf("parameter %d is shared with the base, want a copy", i)
		}
		if !slices.Equal(mat.Data[float32](bp[i]), mat.Data[float32](mp[i])) {
			t.Fatalf("parameter %d differs from the base", i)
		}
	}
	scores, err := m.Scores([]Pair{{"12+34", "06 04=46"}, {"99+99", "18 19=198"}})
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range scores {
		if s != 0 {
			t.Errorf("score %d of an untrained head = %v, want 0", i, s)
		}
	}
	if _, err := NewModel(base, nil); err == nil {
		t.Error("NewModel without a tokenizer: no error")
	}
}

// TestHeadGradients checks the head+loss functions (binary cross-entropy;
// pairwise, alone and with a BCE term) against finite differences and
// that only each sequence's last row gets gradient.
func TestHeadGradients(t *testing.T) {
	const rows, dim = 6, 4
	// Three sequences ending at rows 1, 2 and 5: the first two of one
	// prompt (right, wrong), the third of another.
	lastRows := []int{1, 2, 5}
	for _, tc := range []struct {
		name string
		loss func(h *head) lossFunc
	}{
		{"bce", func(h *head) lossFunc { return &headBCE{head: h, y: []float32{1, 0, 1}} }},
		{"pairwise", func(h *head) lossFunc {
			return &headRank{head: h, labels: []bool{true, false, true}, prompt: []int{0, 0, 1}}
		}},
		{"pairwise+bce", func(h *head) lossFunc {
			return &headRank{head: h, labels: []bool{true, false, true}, prompt: []int{0, 0, 1}, bce: 0.5}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			rnd := func(n int) []float32 {
				v := make([]float32, n)
				for i := range v {
					v[i] = float32(rng.NormFloat64())
				}
				return v
			}
			h := newParam(rnd(rows*dim), rows, dim)
			w := newParam(rnd(dim), 1, dim)
			b := newParam([]float32{0.3}, 1, 1)
			mk := func() lossFunc { return tc.loss(&head{hidden: h, w: w, bias: b, dim: dim, rows: lastRows}) }
			lossOf := func() float64 {
				out, err := mk().Forward()
				if err != nil {
					t.Fatal(err)
				}
				return float64(mat.Data[float32](out)[0])
			}
			loss := ag.NewOperator(mk()).Run()
			if err := ag.Backward(loss); err != nil {
				t.Fatal(err)
			}
			check := func(name string, p *nn.Param, i int) {
				t.Helper()
				num := finiteDiff(mat.Data[float32](p), i, lossOf)
				got := float64(mat.Data[float32](p.Grad())[i])
				if math.Abs(num-got) > 2e-3 {
					t.Errorf("%s[%d]: gradient %v, finite difference %v", name, i, got, num)
				}
			}
			for i := 0; i < dim; i++ {
				check("score.weight", w, i)
			}
			check("score.bias", b, 0)
			gh := mat.Data[float32](h.Grad())
			for r := 0; r < rows; r++ {
				for j := 0; j < dim; j++ {
					if slices.Contains(lastRows, r) {
						check("hidden", h, r*dim+j)
					} else if gh[r*dim+j] != 0 {
						t.Errorf("hidden row %d (not a last row) got gradient %v", r, gh[r*dim+j])
					}
				}
			}
		})
	}
}

// finiteDiff is the central difference of loss in v[i] (step 0.01),
// v[i] restored after.
func finiteDiff(v []float32, i int, loss func() float64) float64 {
	const eps = 1e-2
	old := v[i]
	v[i] = old + eps
	up := loss()
	v[i] = old - eps
	down := loss()
	v[i] = old
	return (up - down) / (2 * eps)
}

// lossFunc is an autograd function of the head's operands.
type lossFunc = ag.AutoGradFunction

// TestTrainSeparatesCorrectFromFlawed trains a small reward model from
// scratch on demonstrations (label 1) and flawed demonstrations (label 0)
// of train prompts and checks that it ranks held-out eval prompts' correct
// responses above wrong ones.
func TestTrainSeparatesCorrectFromFlawed(t *testing.T) {
	tk := smallTask(t)
	m := smallModel(t, 1)
	train, held := demoData(t, tk, task.Train, 400), demoData(t, tk, task.Eval, 100)
	before, err := m.Evaluate(held)
	if err != nil {
		t.Fatal(err)
	}
	var losses []float64
	res, err := Train(context.Background(), m, train, TrainConfig{Steps: 300, BatchSize: 32, LR: 1e-3, HeadLR: 1e-2, Seed: 1}, func(s Step) {
		losses = append(losses, s.Loss)
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(losses) != 300 {
		t.Fatalf("progress called %d times, want 300", len(losses))
	}
	after, err := m.Evaluate(held)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("held-out before: %+v; after: %+v; final train loss %.3f", before, after, res.Loss)
	if after.AUC < 0.7 {
		t.Errorf("held-out AUC %.3f after training, want > 0.7", after.AUC)
	}
	if !(res.Loss < losses[0]) || !(after.LogLoss < before.LogLoss) {
		t.Errorf("loss did not fall: first batch %.3f → last steps %.3f; held-out %.3f → %.3f", losses[0], res.Loss, before.LogLoss, after.LogLoss)
	}
}

func TestTrainIsDeterministic(t *testing.T) {
	tk := smallTask(t)
	data := demoData(t, tk, task.Train, 40)
	run := func() []float32 {
		m := smallModel(t, 5)
		if _, err := Train(context.Background(), m, data, TrainConfig{Steps: 6, BatchSize: 16, LR: 1e-3, HeadLR: 1e-2, Seed: 9}, nil); err != nil {
			t.Fatal(err)
		}
		var all []float32
		for _, p := range m.Params() {
			all = append(all, mat.Data[float32](p)...)
		}
		return all
	}
	a, b := run(), run()
	if !slices.Equal(a, b) {
		t.Error("two identical training runs ended with different weights")
	}
	base := smallModel(t, 5)
	var init []float32
	for _, p := range base.Params() {
		init = append(init, mat.Data[float32](p)...)
	}
	if slices.Equal(a, init) {
		t.Error("training left the weights unchanged")
	}
}

func TestTrainErrors(t *testing.T) {
	tk := smallTask(t)
	m := smallModel(t, 1)
	good := demoData(t, tk, task.Train, 2)
	cases := []struct {
		name string
		data []Example
		cfg  TrainConfig
		want string
	}{
		{"no data", nil, TrainConfig{}, "no examples"},
		{"negative steps", good, TrainConfig{Steps: -1}, "reward_model.train.steps"},
		{"negative lr", good, TrainConfig{LR: -1}, "reward_model.train.lr"},
		{"NaN head lr", good, TrainConfig{HeadLR: math.NaN()}, "reward_model.train.head_lr"},
		{"negative batch", good, TrainConfig{BatchSize: -2}, "reward_model.train.batch_size"},
		{"negative clip", good, TrainConfig{MaxGradNorm: -1}, "reward_model.train.max_grad_norm"},
		{"negative decay", good, TrainConfig{WeightDecay: -1}, "reward_model.train.weight_decay"},
		{"unknown character", []Example{{Prompt: "1+2", Response: "A"}}, TrainConfig{Steps: 1}, `example 0`},
		{"too long", []Example{{Prompt: "1+2", Response: strings.Repeat("1", 40)}}, TrainConfig{Steps: 1}, "max_position_embeddings 32"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Train(context.Background(), m, c.data, c.cfg, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Train error = %v, want one containing %q", err, c.want)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Train(ctx, m, good, TrainConfig{Steps: 1}, nil); err != context.Canceled {
		t.Errorf("Train with a cancelled context: %v, want context.Canceled", err)
	}
}

func TestScoresBatchIndependent(t *testing.T) {
	m := smallModel(t, 2)
	// Give the head something to read.
	for i, v := range mat.Data[float32](m.Weight) {
		_ = v
		mat.Data[float32](m.Weight)[i] = float32(i%5) - 2
	}
	pairs := []Pair{{"12+34", "06 04=46"}, {"99+99", "18 19=198"}, {"10+10", "00 02=20"}}
	all, err := m.Scores(pairs)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pairs {
		one, err := m.Scores([]Pair{p})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(one[0]-all[i]) > 1e-5 {
			t.Errorf("pair %d scores %v alone, %v in a batch", i, one[0], all[i])
		}
	}
	if all[0] == all[1] {
		t.Error("different responses got the same score")
	}
	if _, err := m.Scores([]Pair{{"1+2", "3"}, {"1+2", "é"}}); err == nil || !strings.Contains(err.Error(), "pair 1") {
		t.Errorf("unreadable pair: error %v, want one naming pair 1", err)
	}
}

func TestScoresConcurrently(t *testing.T) {
	m := smallModel(t, 2)
	mat.Data[float32](m.Bias)[0] = 0.5
	pairs := []Pair{{"12+34", "06 04=46"}, {"99+99", "18 19=198"}}
	want, err := m.Scores(pairs)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			got, err := m.Scores(pairs)
			if err == nil && !slices.Equal(got, want) {
				err = fmt.Errorf("concurrent scores %v, want %v", got, want)
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// SelectionScores scores many candidates of many prompts in batched
// forwards; each score must equal the pair's score alone, and a pair the
// model cannot read must score −Inf without failing the others.
func TestSelectionScoresMatchOneAtATime(t *testing.T) {
	m := smallModel(t, 2)
	for i := range mat.Data[float32](m.Weight) {
		mat.Data[float32](m.Weight)[i] = float32(i%5) - 2
	}
	mat.Data[float32](m.Bias)[0] = 0.25
	tk := smallTask(t)
	rng := rand.New(rand.NewPCG(4, 5))
	var many []Pair // more pairs than one forward's chunk, of mixed lengths
	for i := 0; len(many) < scoreChunk+40; i++ {
		p, err := tk.Prompt(task.Eval, 3, i)
		if err != nil {
			t.Fatal(err)
		}
		many = append(many, Pair{p.Text, p.Demo}, Pair{p.Text, tk.FlawedDemo(p, rng)}, Pair{p.Text, p.Demo[:len(p.Demo)/2]})
	}
	for _, tc := range []struct {
		name  string
		pairs []Pair
	}{
		{"none", nil},
		{"one", []Pair{{"12+34", "06 04=46"}}},
		{"unreadable among readable", []Pair{{"1+2", "3"}, {"1+2", "é"}, {"99+99", "18 19=198"}, {"1+2", strings.Repeat("1", 40)}}},
		{"every pair unreadable", []Pair{{"1+2", "é"}}},
		{"many prompts, several chunks", many},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prompts := make([]task.Prompt, len(tc.pairs))
			responses := make([]string, len(tc.pairs))
			for i, p := range tc.pairs {
				prompts[i], responses[i] = task.Prompt{Text: p.Prompt}, p.Response
			}
			got, err := m.SelectionScores(prompts, responses)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.pairs) {
				t.Fatalf("%d scores for %d pairs", len(got), len(tc.pairs))
			}
			for i, p := range tc.pairs {
				one, err := m.Scores([]Pair{p})
				if err != nil {
					if !math.IsInf(got[i], -1) {
						t.Errorf("pair %d (%q → %q) is unreadable (%v) but scores %v, want −Inf", i, p.Prompt, p.Response, err, got[i])
					}
					continue
				}
				if math.Abs(one[0]-got[i]) > 1e-5 {
					t.Errorf("pair %d (%q → %q) scores %v alone, %v batched", i, p.Prompt, p.Response, one[0], got[i])
				}
			}
		})
	}
	if _, err := m.SelectionScores(make([]task.Prompt, 2), []string{"1"}); err == nil {
		t.Error("2 prompts for 1 response: no error")
	}
}
