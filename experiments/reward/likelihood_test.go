package reward

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/nlpodyssey/spago/ag"
	"github.com/nlpodyssey/spago/mat"

	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
)

// likelihoodModel is a small model scored by its likelihood.
func likelihoodModel(t *testing.T, seed uint64) *Model {
	m := smallModel(t, seed)
	m.Scoring = LikelihoodScore
	return m
}

// The likelihood score of a pair is the sum, over the response's tokens
// and EOS, of log softmax of the body's logits at the position before
// (computed here in float64 from one sequence's logits), whatever the
// other sequences of its batch.
func TestLikelihoodScoreIsResponseLogLikelihood(t *testing.T) {
	m := likelihoodModel(t, 3)
	pairs := []Pair{{"12+34", "06 04=46"}, {"9+9", "18"}, {"10+10", ""}}
	batch, err := m.Scores(pairs)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range pairs {
		ids, err := m.Encode(p.Prompt, p.Response)
		if err != nil {
			t.Fatal(err)
		}
		b, err := m.Body.NewBatch([][]int{ids})
		if err != nil {
			t.Fatal(err)
		}
		logits := mat.Data[float32](m.Body.Logits(b).Value())
		v := m.Body.Config.VocabSize
		var want float64
		sep := len(ids) - len(p.Response) - 2 // BOS prompt SEP response EOS
		if ids[sep] != policy.SEP {
			t.Fatalf("pair %d: token %d is %d, want SEP", i, sep, ids[sep])
		}
		for k := sep + 1; k < len(ids); k++ {
			row := logits[b.Row(0, k-1)*v : (b.Row(0, k-1)+1)*v]
			var z float64
			for _, l := range row {
				z += math.Exp(float64(l))
			}
			want += float64(row[ids[k]]) - math.Log(z)
		}
		alone, err := m.Scores([]Pair{p})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(batch[i]-want) > 1e-4 || math.Abs(alone[0]-batch[i]) > 1e-5 {
			t.Errorf("pair %d: score %v in a batch, %v alone, want %v", i, batch[i], alone[0], want)
		}
	}
	c := m.Body.Config // the whole forward pass, the language-model head included
	if got, want := m.ScoreFLOPs(3), c.ForwardFLOPs(1)+c.ForwardFLOPs(2)+c.ForwardFLOPs(3); got != want {
		t.Errorf("ScoreFLOPs(3) = %d, want %d", got, want)
	}
}

// The pairwise loss over log-likelihoods has the gradient that finite
// differences give, on the rows of each candidate's response only.
func TestLikelihoodRankGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	lp := newParam(make([]float32, 8), 8, 1)
	v := mat.Data[float32](lp) // the parameter's own storage
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	rows := [][]int{{0, 1}, {3}, {4, 5, 6}} // row 2 and 7 belong to no response
	mk := func() *likelihoodRank {
		return &likelihoodRank{lp: lp, rows: rows, labels: []bool{true, false, false}, prompt: []int{0, 0, 0}}
	}
	lossOf := func() float64 {
		out, err := mk().Forward()
		if err != nil {
			t.Fatal(err)
		}
		return float64(mat.Data[float32](out)[0])
	}
	if err := ag.Backward(ag.NewOperator(mk()).Run()); err != nil {
		t.Fatal(err)
	}
	g := mat.Data[float32](lp.Grad())
	for i := range v {
		if num := finiteDiff(v, i, lossOf); math.Abs(num-float64(g[i])) > 2e-3 {
			t.Errorf("row %d: gradient %v, finite difference %v", i, g[i], num)
		}
	}
	if g[2] != 0 || g[7] != 0 {
		t.Errorf("rows outside the responses got gradient %v, %v", g[2], g[7])
	}
}

// Trained with the pairwise loss, the likelihood scoring orders held-out
// prompts' right candidates above their wrong ones better than before.
func TestTrainRankingLikelihood(t *testing.T) {
	tk := smallTask(t)
	train, held := Groups(demoData(t, tk, task.Train, 400)), Groups(demoData(t, tk, task.Eval, 100))
	m := likelihoodModel(t, 1)
	before, _, err := m.WithinPromptAUC(held)
	if err != nil {
		t.Fatal(err)
	}
	if err := TrainRanking(context.Background(), m, train, RankConfig{Steps: 200, PromptsPerStep: 16, LR: 1e-3, Seed: 1}, nil); err != nil {
		t.Fatal(err)
	}
	after, _, err := m.WithinPromptAUC(held)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("held-out within-prompt AUC of the likelihood: %.3f before, %.3f after 200 steps", before, after)
	if after < 0.7 || after < before+0.2 {
		t.Errorf("held-out within-prompt AUC %.3f after training (%.3f before), want ≥ 0.7 and 0.2 higher", after, before)
	}
	err = TrainRanking(context.Background(), m, train, RankConfig{Steps: 1, BCE: 0.1}, nil)
	if err == nil || !strings.Contains(err.Error(), "bce") {
		t.Errorf("likelihood with bce 0.1: error %v", err)
	}
}

// A checkpoint keeps the scoring: the loaded model scores as the saved
// one, through Save/Load and EncodeWeights/DecodeWeights, and a mixer
// refuses it as a probability.
func TestLikelihoodRoundTrip(t *testing.T) {
	m := likelihoodModel(t, 4)
	if _, got := saveLoad(t, m); got.Scoring != LikelihoodScore {
		t.Errorf("loaded scoring %v", got.Scoring)
	}
	b, err := EncodeWeights(m)
	if err != nil {
		t.Fatal(err)
	}
	dec, err := DecodeWeights(smallConfig, policy.DefaultTokenizer(), b)
	if err != nil {
		t.Fatal(err)
	}
	if dec.Scoring != LikelihoodScore {
		t.Errorf("decoded scoring %v", dec.Scoring)
	}
	sameScores(t, m, dec)
	if _, err := NewMixer(Config{Verifier: 1, Model: 0.5}, smallTask(t), m); err == nil || !strings.Contains(err.Error(), "likelihood") {
		t.Errorf("mixer over a likelihood model: error %v", err)
	}
}

func TestParseScoring(t *testing.T) {
	for _, s := range []Scoring{HeadScore, LikelihoodScore} {
		if got, err := ParseScoring(s.String()); err != nil || got != s {
			t.Errorf("ParseScoring(%q) = %v, %v", s, got, err)
		}
	}
	if _, err := ParseScoring("eos"); err == nil || !strings.Contains(err.Error(), `"eos"`) {
		t.Errorf("ParseScoring(eos): error %v", err)
	}
}
