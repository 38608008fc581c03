package policy

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/nlpodyssey/spago/ag"
	"github.com/nlpodyssey/spago/mat"
	"github.com/nlpodyssey/spago/nn"
)

func trainSteps(t *testing.T, m *Model, tr *Trainer, seqs [][]int, steps int) float64 {
	t.Helper()
	var last float64
	for i := 0; i < steps; i++ {
		b, err := m.NewBatch(seqs)
		if err != nil {
			t.Fatal(err)
		}
		from := make([]int, len(seqs))
		for j := range from {
			from[j] = 1
		}
		loss, _, err := m.NLLLoss(b, from)
		if err != nil {
			t.Fatal(err)
		}
		last = float64(data(loss)[0])
		if _, err := tr.Step(loss); err != nil {
			t.Fatal(err)
		}
	}
	return last
}

// Training on a fixed batch lowers its loss, and a trainer restored from
// MarshalState continues bit-identically to one that never stopped.
func TestTrainerLearnsAndResumesExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	seqs := randomSeqs(rng, 4, 6, 12, testConfig.VocabSize)
	m, _ := NewModel(testConfig, 1)
	tr, err := NewTrainer(m, TrainConfig{LR: 3e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, MaxGradNorm: 1})
	if err != nil {
		t.Fatal(err)
	}
	first := trainSteps(t, m, tr, seqs, 1)
	mid := trainSteps(t, m, tr, seqs, 30)
	if mid > first*0.7 {
		t.Fatalf("loss %.3f after 30 steps, %.3f at the start: not learning", mid, first)
	}

	weights, err := EncodeWeights(m)
	if err != nil {
		t.Fatal(err)
	}
	state, err := tr.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	trainSteps(t, m, tr, seqs, 5)

	m2, err := DecodeWeights(testConfig, weights)
	if err != nil {
		t.Fatal(err)
	}
	tr2, _ := NewTrainer(m2, tr.cfg)
	if err := tr2.UnmarshalState(state); err != nil {
		t.Fatal(err)
	}
	trainSteps(t, m2, tr2, seqs, 5)
	for i, p := range m.NamedParams() {
		a, b := data(p.Param), data(m2.NamedParams()[i].Param)
		for j := range a {
			if a[j] != b[j] {
				t.Fatalf("%s[%d]: uninterrupted %v, resumed %v", p.Name, j, a[j], b[j])
			}
		}
	}
}

func TestTrainConfigValidate(t *testing.T) {
	for _, c := range []TrainConfig{{LR: 0, Eps: 1e-8}, {LR: 1e-3, Beta1: 1, Eps: 1e-8}, {LR: 1e-3, Eps: 0}, {LR: 1e-3, Eps: 1e-8, MaxGradNorm: -1}} {
		if _, err := NewTrainer(&Model{}, c); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
}

// Training is deterministic: the same steps give the same bits whatever the
// number of goroutines the passes are split over, and whether or not the
// buffers of the previous step are recycled (on padded batches of
// changing shapes, so that a recycled buffer's stale contents would show).
func TestTrainingIsDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	full := randomSeqs(rng, 5, 12, 12, testConfig.VocabSize)
	ragged := randomSeqs(rng, 5, 3, 11, testConfig.VocabSize)
	ragged[2] = full[1] // the same [5, 12] shape as full, with padding
	batches := [][][]int{full, ragged, randomSeqs(rng, 3, 2, 9, testConfig.VocabSize), full, ragged}
	for _, bf16 := range []bool{false, true} {
		if bf16 && !BF16Supported() {
			t.Log("no BF16 products here: the BF16 case is the float32 one")
		}
		trainingIsDeterministic(t, batches, bf16)
	}
}

// trainingIsDeterministic is TestTrainingIsDeterministic with the float32
// or the BF16 products.
func trainingIsDeterministic(t *testing.T, batches [][][]int, bf16 bool) {
	t.Helper()
	run := func(procs int, pooled bool) *Model {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		m, _ := NewModel(testConfig, 2)
		m.SetBF16Training(bf16)
		if !pooled {
			m.pool = nil
		}
		tr, err := NewTrainer(m, DefaultTrainConfig)
		if err != nil {
			t.Fatal(err)
		}
		for _, seqs := range batches {
			trainSteps(t, m, tr, seqs, 1)
		}
		return m
	}
	want := run(1, false)
	for _, tc := range []struct {
		procs  int
		pooled bool
	}{{1, true}, {2, true}, {4, true}, {3, false}} {
		got := run(tc.procs, tc.pooled)
		for i, p := range want.NamedParams() {
			a, b := data(p.Param), data(got.NamedParams()[i].Param)
			for j := range a {
				if a[j] != b[j] {
					t.Fatalf("bf16 %v, GOMAXPROCS %d, pooled %v: %s[%d] = %v, want %v", bf16, tc.procs, tc.pooled, p.Name, j, b[j], a[j])
				}
			}
		}
	}
}

// SetFlushSubnormals zeroes the vocabulary softmax's subnormal gradients,
// in the log-probabilities' backward pass and the entropies': on logits
// whose softmax gives probabilities below 2^-126, the logits' gradient
// holds subnormal values without the flush and exactly zeros in their
// place with it; every other value and the outputs are the same.
func TestFlushSubnormals(t *testing.T) {
	m, _ := NewModel(testConfig, 1)
	const vocab = 6
	logits := []float32{
		0, -90, -95, -5, 1, -100, // about e^-91, e^-96 and e^-101: subnormal floats
		3, 2, -89, -200, 0, 1, // e^-92 subnormal, e^-203 underflows to 0
	}
	for _, tc := range []struct {
		name string
		op   func(z mat.Tensor, flush bool) ag.AutoGradFunction
		want int // subnormal gradient values without the flush
	}{
		{"log-probs", func(z mat.Tensor, flush bool) ag.AutoGradFunction {
			return &tokenLogProbs{logits: z, targets: []int{0, 4}, vocab: vocab, invTemp: 1, flush: flush, pool: m.pool, team: m.team}
		}, 4},
		{"entropies", func(z mat.Tensor, flush bool) ag.AutoGradFunction {
			return &tokenEntropy{logits: z, src: []int{0, 1}, vocab: vocab, invTemp: 1, flush: flush, pool: m.pool, team: m.team}
		}, 3}, // p·(z − E[z]) lifts e^-91·91 above 2^-126
	} {
		run := func(flush bool) (out, grad []float32) {
			z := nn.NewParam(mat.NewDense[float32](mat.WithShape(2, vocab), mat.WithBacking(append([]float32(nil), logits...))))
			op := ag.NewOperator(tc.op(z, flush)).Run()
			out = append([]float32(nil), mat.Data[float32](op.Value())...)
			if err := ag.Backward(ag.ReduceSum(op)); err != nil {
				t.Fatal(err)
			}
			return out, append([]float32(nil), mat.Data[float32](z.Grad())...)
		}
		outOff, off := run(false)
		outOn, on := run(true)
		if !slices.Equal(outOff, outOn) {
			t.Errorf("%s: outputs %v with the flush, %v without", tc.name, outOn, outOff)
		}
		subnormal := 0
		for i := range off {
			if tiny := off[i] != 0 && math.Abs(float64(off[i])) < 0x1p-126; tiny {
				subnormal++
				if on[i] != 0 {
					t.Errorf("%s: gradient %d: %g with the flush, want 0", tc.name, i, on[i])
				}
			} else if on[i] != off[i] {
				t.Errorf("%s: gradient %d: %g with the flush, %g without", tc.name, i, on[i], off[i])
			}
		}
		if subnormal != tc.want {
			t.Errorf("%s: %d subnormal gradient values without the flush, want %d (the test's logits)", tc.name, subnormal, tc.want)
		}
	}
}

// SetLR changes the step size of the following steps and keeps the bias
// correction: a trainer set to 2e-3 after a step at 1e-3 has the
// bias-corrected step size of a trainer made at 2e-3 after one step.
func TestTrainerSetLR(t *testing.T) {
	m, _ := NewModel(testConfig, 1)
	a, _ := NewTrainer(m, TrainConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, MaxGradNorm: 1})
	b, _ := NewTrainer(m, TrainConfig{LR: 2e-3, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, MaxGradNorm: 1})
	a.adam.IncExample()
	b.adam.IncExample()
	a.SetLR(2e-3)
	if a.adam.Alpha != b.adam.Alpha || a.adam.TimeStep != b.adam.TimeStep || a.LR() != 2e-3 {
		t.Errorf("after SetLR: α %v at time step %d, want %v at %d", a.adam.Alpha, a.adam.TimeStep, b.adam.Alpha, b.adam.TimeStep)
	}
}
