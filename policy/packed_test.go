package policy

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nlpodyssey/spago/ag"
	"github.com/nlpodyssey/spago/mat"
)

// randomForest returns n sequences that share prefixes as rollout trees
// do: a few prompts, each sequence a random prefix of an earlier one (or a
// prompt) continued with random tokens; some end inside another sequence
// and some repeat one.
func randomForest(rng *rand.Rand, n, maxLen, vocab int) [][]int {
	tok := func() int { return 4 + rng.IntN(vocab-4) }
	var seqs [][]int
	for len(seqs) < n {
		var s []int
		switch k := rng.IntN(8); {
		case len(seqs) == 0 || k == 0: // a new prompt
			for range 2 + rng.IntN(4) {
				s = append(s, tok())
			}
		case k == 1: // a repeat
			s = append(s, seqs[rng.IntN(len(seqs))]...)
		default: // a fork of an earlier sequence
			prev := seqs[rng.IntN(len(seqs))]
			s = append(s, prev[:1+rng.IntN(len(prev))]...)
		}
		for l := len(s) + rng.IntN(maxLen-len(s)+1); len(s) < l; {
			s = append(s, tok())
		}
		seqs = append(seqs, s)
	}
	return seqs
}

// A packed batch computes at every position of every sequence the logits
// of the padded layout, with fewer rows.
func TestPackedLogitsMatchPadded(t *testing.T) {
	m := randomModel(t, testConfig, 11)
	rng := rand.New(rand.NewPCG(12, 12))
	for trial := range 4 {
		seqs := randomForest(rng, 3+4*trial, testConfig.MaxSeq, testConfig.VocabSize)
		padded, err := m.NewBatch(seqs)
		if err != nil {
			t.Fatal(err)
		}
		packed, err := m.NewPackedBatch(seqs)
		if err != nil {
			t.Fatal(err)
		}
		if !packed.Packed() || padded.Packed() {
			t.Fatal("Packed() does not tell the layouts apart")
		}
		distinct, total := 0, 0
		seen := map[string]bool{}
		for _, s := range seqs {
			for t := range s {
				total++
				if k := fmt.Sprint(s[:t+1]); !seen[k] {
					seen[k] = true
					distinct++
				}
			}
		}
		if packed.Rows() != distinct {
			t.Errorf("trial %d: %d packed rows, want %d distinct prefixes (of %d positions)", trial, packed.Rows(), distinct, total)
		}
		want, got := data(m.Logits(padded)), data(m.Logits(packed))
		v := testConfig.VocabSize
		var worst float64
		for i, s := range seqs {
			for p := range s {
				a, b := padded.Row(i, p)*v, packed.Row(i, p)*v
				for j := range v {
					worst = math.Max(worst, relErr(got[b+j], want[a+j]))
				}
			}
		}
		if worst > 1e-5 {
			t.Errorf("trial %d: packed vs padded logits: worst relative error %.3g > 1e-5", trial, worst)
		}
	}
}

// TestPackedGradientMatchesPadded: a loss over the log-probs and
// entropies of every sequence's tokens has the same parameter gradients in
// the packed layout as in the padded one, to float32 rounding (each
// parameter's gradient within a relative L2 distance of 1e-5), when each
// packed output's weight is the sum of the weights of the positions it
// stands for.
func TestPackedGradientMatchesPadded(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 13))
	for trial := range 3 {
		m := randomModel(t, testConfig, uint64(20+trial))
		seqs := randomForest(rng, 4+5*trial, testConfig.MaxSeq, testConfig.VocabSize)
		type weight struct{ lp, ent float32 }
		w := make([][]weight, len(seqs))
		for i, s := range seqs {
			w[i] = make([]weight, len(s)-1)
			for p := range w[i] {
				w[i][p] = weight{float32(rng.NormFloat64()), float32(0.3 * rng.NormFloat64())}
			}
		}
		grads := func(packed bool) [][]float32 {
			newBatch := m.NewBatch
			if packed {
				newBatch = m.NewPackedBatch
			}
			b, err := newBatch(seqs)
			if err != nil {
				t.Fatal(err)
			}
			logits := m.Logits(b)
			lp, ent := m.TokenLogProbs(b, logits, 0.9), m.TokenEntropies(b, logits, 0.9)
			wl, we := make([]float32, b.Rows()), make([]float32, b.Rows())
			for i := range seqs {
				for p, x := range w[i] {
					wl[b.Target(i, p)] += x.lp
					we[b.Target(i, p)] += x.ent
				}
			}
			loss := ag.Add(ag.ReduceSum(ag.Prod(lp, dense(len(wl), 1, wl))), ag.ReduceSum(ag.Prod(ent, dense(len(we), 1, we))))
			if err := ag.Backward(loss); err != nil {
				t.Fatal(err)
			}
			var out [][]float32
			for _, p := range m.Params() {
				out = append(out, append([]float32(nil), mat.Data[float32](p.Grad())...))
				p.ZeroGrad()
			}
			return out
		}
		want, got := grads(false), grads(true)
		for k, np := range m.NamedParams() {
			if d := relDist(got[k], want[k]); d > 1e-5 {
				t.Errorf("trial %d: %s: packed gradient at relative distance %.3g from the padded one (> 1e-5)", trial, np.Name, d)
			}
		}
	}
}

// relDist is ‖a − b‖ / ‖b‖ (‖a‖ when b is 0).
func relDist(a, b []float32) float64 {
	var diff, norm float64
	for i := range b {
		d := float64(a[i]) - float64(b[i])
		diff += d * d
		norm += float64(b[i]) * float64(b[i])
	}
	if norm == 0 {
		return math.Sqrt(diff)
	}
	return math.Sqrt(diff / norm)
}

// A packed batch has no NLL loss: its rows are not NewBatch's.
func TestNLLLossRejectsPackedBatch(t *testing.T) {
	m := randomModel(t, testConfig, 1)
	b, err := m.NewPackedBatch([][]int{{5, 6, 7}, {5, 6, 8}})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := m.NLLLoss(b, []int{1, 1}); err == nil {
		t.Fatal("NLLLoss accepted a packed batch")
	}
}

// Two responses forked from one prompt after a shared token: packed, the
// prompt and the shared token are rows once, and each sequence's positions
// map to the rows of its own prefix.
func ExampleModel_NewPackedBatch() {
	cfg, _ := Size("tiny")
	m, _ := NewModel(cfg, 1)
	seqs := [][]int{{BOS, 5, 6, SEP, 7, 8, EOS}, {BOS, 5, 6, SEP, 7, 9, 9, EOS}}
	padded, _ := m.NewBatch(seqs)
	packed, _ := m.NewPackedBatch(seqs)
	fmt.Println("rows:", padded.Rows(), "padded,", packed.Rows(), "packed")
	fmt.Println("row of position 5:", packed.Row(0, 5), packed.Row(1, 5))
	fmt.Println("log-prob of token 5 in TokenLogProbs row:", packed.Target(0, 4), packed.Target(1, 4))
	fmt.Println("FLOPs of a forward pass, packed/padded:", float64(packed.ForwardFLOPs(cfg))/float64(padded.ForwardFLOPs(cfg)) < 0.7)
	// Output:
	// rows: 16 padded, 10 packed
	// row of position 5: 5 7
	// log-prob of token 5 in TokenLogProbs row: 5 7
	// FLOPs of a forward pass, packed/padded: true
}
