package policy

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/nlpodyssey/spago/ag"
	"github.com/nlpodyssey/spago/mat"
)

// engineKinds are the engines that every engine property must hold for:
// float32 and int8 (W8A8 or weight-only, as the kernel path has it).
var engineKinds = []struct {
	name string
	opts []EngineOption
}{{"float32", nil}, {"int8", []EngineOption{WithInt8()}}}

// testConfig is a small shape that still has several heads and layers.
var testConfig = Config{VocabSize: 16, Dim: 32, Hidden: 48, Layers: 2, Heads: 4, KVHeads: 4, MaxSeq: 24, NormEps: 1e-5, RopeTheta: 10000}

// randomModel returns a model whose weights are scaled up from the default
// initialisation so that logits differ clearly between tokens and
// positions, and whose norm weights are not all 1.
func randomModel(t testing.TB, cfg Config, seed uint64) *Model {
	t.Helper()
	m, err := NewModel(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	for _, p := range m.NamedParams() {
		v := data(p.Param)
		for i := range v {
			if len(p.Shape) == 1 {
				v[i] = float32(1 + 0.3*rng.NormFloat64())
			} else {
				v[i] = float32(0.25 * rng.NormFloat64())
			}
		}
	}
	return m
}

func randomSeqs(rng *rand.Rand, n, minLen, maxLen, vocab int) [][]int {
	seqs := make([][]int, n)
	for i := range seqs {
		l := minLen + rng.IntN(maxLen-minLen+1)
		for j := 0; j < l; j++ {
			seqs[i] = append(seqs[i], 4+rng.IntN(vocab-4))
		}
	}
	return seqs
}

func relErr(a, b float32) float64 {
	return math.Abs(float64(a-b)) / math.Max(1, math.Abs(float64(b)))
}

// The inference engine computes the same logits as the autodiff forward
// pass, on batches of different lengths (padding must not leak).
func TestEngineMatchesAutodiff(t *testing.T) {
	m := randomModel(t, testConfig, 1)
	rng := rand.New(rand.NewPCG(2, 2))
	seqs := randomSeqs(rng, 5, 3, testConfig.MaxSeq, testConfig.VocabSize)
	b, err := m.NewBatch(seqs)
	if err != nil {
		t.Fatal(err)
	}
	logits := data(m.Logits(b))
	e := NewEngine(m)
	v := testConfig.VocabSize
	var worst float64
	for i, s := range seqs {
		got, err := e.Logits(s)
		if err != nil {
			t.Fatal(err)
		}
		for pos := range s {
			want := logits[b.Row(i, pos)*v : (b.Row(i, pos)+1)*v]
			for j := range want {
				worst = math.Max(worst, relErr(got[pos][j], want[j]))
			}
		}
	}
	if worst > 1e-4 {
		t.Fatalf("engine vs autodiff logits: worst relative error %.3g > 1e-4", worst)
	}
}

// Decoding token by token with the KV cache gives, at every position, the
// logits of a full-sequence forward pass over the same tokens.
func TestCachedDecodingMatchesFullForward(t *testing.T) {
	m := randomModel(t, testConfig, 3)
	e := NewEngine(m)
	prompt := []int{BOS, 5, 6, 7, SEP}
	st, err := e.Prefill(prompt, Stream{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var cached [][]float32
	out := make([]Token, 1)
	for len(st.Tokens()) < testConfig.MaxSeq {
		cached = append(cached, append([]float32(nil), st.(*state).nextLogits()...))
		if err := e.Step([]State{st}, DefaultSampling, out); err != nil {
			t.Fatal(err)
		}
	}
	full, err := NewEngine(m).Logits(st.Tokens()[:testConfig.MaxSeq-1])
	if err != nil {
		t.Fatal(err)
	}
	for i, c := range cached {
		pos := len(prompt) - 1 + i
		for j := range c {
			if relErr(c[j], full[pos][j]) > 1e-5 {
				t.Fatalf("position %d token %d: cached %v, full %v", pos, j, c[j], full[pos][j])
			}
		}
	}
}

// A forked child samples exactly what a state decoded from scratch with the
// same tokens and stream samples, and a state's samples do not depend on
// the other states of its batch.
func TestForkAndBatchIndependence(t *testing.T) {
	for _, kind := range engineKinds {
		t.Run(kind.name, func(t *testing.T) {
			m := randomModel(t, testConfig, 4)
			prompt := []int{BOS, 8, 9, SEP}
			cfg := Sampling{Temperature: 1.3, TopK: 10, TopP: 0.95}

			// Reference: one state alone, decoded 12 tokens.
			alone := NewEngine(m, kind.opts...)
			ref, _ := alone.Prefill(prompt, Stream{Seed: 9, ID: 1})
			var refToks []Token
			out := make([]Token, 1)
			for i := 0; i < 12; i++ {
				if err := alone.Step([]State{ref}, cfg, out); err != nil {
					t.Fatal(err)
				}
				refToks = append(refToks, out[0])
			}

			// The same stream as a fork at position 7 of a different parent, which
			// is forced onto the reference's first tokens by decoding a copy, and
			// stepped inside a batch with unrelated states.
			e := NewEngine(m, kind.opts...)
			parent, _ := e.Prefill(prompt, Stream{Seed: 9, ID: 1})
			others := []State{}
			for i := 0; i < 5; i++ {
				o, _ := e.Prefill([]int{BOS, 4 + i, SEP}, Stream{Seed: 3, ID: uint64(i)})
				others = append(others, o)
			}
			batch := append([]State{parent}, others...)
			outs := make([]Token, len(batch))
			for i := 0; i < 7; i++ {
				if err := e.Step(batch, cfg, outs); err != nil {
					t.Fatal(err)
				}
				if outs[0] != refToks[i] {
					t.Fatalf("step %d in a batch: %+v, alone: %+v", i, outs[0], refToks[i])
				}
			}
			child, err := parent.Fork(len(prompt)+4, Stream{Seed: 9, ID: 1})
			if err != nil {
				t.Fatal(err)
			}
			batch = append([]State{child, parent}, others...)
			outs = make([]Token, len(batch))
			for i := 4; i < 12; i++ {
				if err := e.Step(batch, cfg, outs); err != nil {
					t.Fatal(err)
				}
				if outs[0] != refToks[i] {
					t.Fatalf("forked child step %d: %+v, decoded from scratch: %+v", i, outs[0], refToks[i])
				}
			}
			if got, want := e.Counters().PrefillTokens, int64(len(prompt)+5*3); got != want {
				t.Errorf("prefill tokens %d, want %d", got, want)
			}
			child.Release()
			parent.Release()
			if _, err := parent.Fork(len(prompt), Stream{}); err == nil {
				t.Error("fork of a released state: no error")
			}
		})
	}
}

// Gradients of the autodiff path match central finite differences of the
// float32 loss within 2% of the gradient (or 0.02 below 1), with the
// float32 products and with the BF16 ones (operands of 8 significant bits;
// the largest difference seen with them was 0.84%).
func TestGradientsMatchFiniteDifferences(t *testing.T) {
	for _, tc := range []struct {
		name string
		bf16 bool
		tol  float64
	}{{"float32", false, 2e-2}, {"bf16", true, 2e-2}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.bf16 && !BF16Supported() {
				t.Skip("no BF16 products on this CPU")
			}
			gradientsMatchFiniteDifferences(t, tc.bf16, tc.tol)
		})
	}
}

// gradientsMatchFiniteDifferences checks the gradients of the products
// chosen by bf16 against finite differences of the float32 loss, to a
// relative tolerance tol.
func gradientsMatchFiniteDifferences(t *testing.T, bf16 bool, tol float64) {
	cfg := Config{VocabSize: 8, Dim: 8, Hidden: 12, Layers: 2, Heads: 2, KVHeads: 2, MaxSeq: 8, NormEps: 1e-5, RopeTheta: 10000}
	m := randomModel(t, cfg, 5)
	rng := rand.New(rand.NewPCG(6, 6))
	seqs := randomSeqs(rng, 3, 3, 7, cfg.VocabSize)
	b, err := m.NewBatch(seqs)
	if err != nil {
		t.Fatal(err)
	}
	weights := make([]float64, b.Rows())
	for i := range weights {
		weights[i] = rng.NormFloat64()
	}
	loss := func() float64 {
		lp := data(m.TokenLogProbs(b, m.Logits(b), 0.8))
		ent := data(m.TokenEntropies(b, m.Logits(b), 0.8))
		var s float64
		for i := range lp {
			s += weights[i]*float64(lp[i]) + 0.5*weights[(i+1)%len(weights)]*float64(ent[i])
		}
		return s
	}
	// Analytic gradients: d/dθ Σ w·logp + 0.5·w'·H through one graph.
	m.SetBF16Training(bf16)
	logits := m.Logits(b)
	lp := m.TokenLogProbs(b, logits, 0.8)
	ent := m.TokenEntropies(b, logits, 0.8)
	wl := make([]float32, len(weights))
	we := make([]float32, len(weights))
	for i := range weights {
		wl[i] = float32(weights[i])
		we[i] = float32(0.5 * weights[(i+1)%len(weights)])
	}
	total := ag.Add(ag.ReduceSum(ag.Prod(lp, dense(len(wl), 1, wl))), ag.ReduceSum(ag.Prod(ent, dense(len(we), 1, we))))
	if err := ag.Backward(total); err != nil {
		t.Fatal(err)
	}
	m.SetBF16Training(false) // the differences of the float32 loss
	checked := 0
	for _, np := range m.NamedParams() {
		v := data(np.Param)
		g := np.Param.Grad()
		if g == nil {
			t.Fatalf("%s: no gradient", np.Name)
		}
		grad := mat.Data[float32](g)
		for trial := 0; trial < 4; trial++ {
			i := rng.IntN(len(v))
			old := v[i]
			const h = 1e-2
			v[i] = old + h
			up := loss()
			v[i] = old - h
			down := loss()
			v[i] = old
			fd := (up - down) / (2 * h)
			if d := math.Abs(fd - float64(grad[i])); d > tol*math.Max(1, math.Abs(fd)) {
				t.Errorf("%s[%d]: autodiff %.5g, finite difference %.5g", np.Name, i, grad[i], fd)
			}
			checked++
		}
	}
	if checked == 0 {
		t.Fatal("no parameter checked")
	}
}

func TestNewBatchRejectsBadInput(t *testing.T) {
	m := randomModel(t, testConfig, 1)
	for _, tc := range []struct {
		name string
		seqs [][]int
	}{
		{"no sequences", nil},
		{"empty sequence", [][]int{{1, 2}, {}}},
		{"too long", [][]int{make([]int, testConfig.MaxSeq+1)}},
		{"id out of range", [][]int{{1, testConfig.VocabSize}}},
		{"negative id", [][]int{{1, -1}}},
	} {
		if _, err := m.NewBatch(tc.seqs); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
}

// The model computes the same function as Hugging Face's LlamaForCausalLM:
// logits of the committed checkpoint equal those of the reference forward
// pass (testdata/hf_llama_reference.py, PyTorch), on both paths.
func TestMatchesHuggingFaceLlama(t *testing.T) {
	m, _, err := Load("testdata/hf_tiny")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/hf_tiny/logits.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Sequences [][]int       `json:"sequences"`
		Logits    [][][]float64 `json:"logits"`
	}
	if err := json.Unmarshal(raw, &ref); err != nil {
		t.Fatal(err)
	}
	b, err := m.NewBatch(ref.Sequences)
	if err != nil {
		t.Fatal(err)
	}
	train := data(m.Logits(b))
	e := NewEngine(m)
	var worst float64
	for i, s := range ref.Sequences {
		inf, err := e.Logits(s)
		if err != nil {
			t.Fatal(err)
		}
		for p := range s {
			for j, want := range ref.Logits[i][p] {
				got := train[b.Row(i, p)*m.Config.VocabSize+j]
				worst = math.Max(worst, relErr(got, float32(want)))
				worst = math.Max(worst, relErr(inf[p][j], float32(want)))
			}
		}
	}
	t.Logf("worst relative error against the Hugging Face reference: %.2g", worst)
	if worst > 1e-4 {
		t.Fatalf("logits differ from Hugging Face Llama: worst relative error %.3g", worst)
	}
}

// Splitting a forward or sampling pass over goroutines changes no bit: an
// engine on one goroutine and engines split several ways sample the same
// tokens with the same log-probabilities and entropies, from a batched
// prefill of prompts of different lengths and forks sharing a parent.
func TestEngineSplitDoesNotChangeResults(t *testing.T) {
	for _, kind := range engineKinds {
		t.Run(kind.name, func(t *testing.T) {
			m := randomModel(t, testConfig, 8)
			rng := rand.New(rand.NewPCG(8, 8))
			prompts := randomSeqs(rng, 9, 2, 6, testConfig.VocabSize)
			run := func(workers int) [][]Token {
				e := NewEngine(m, kind.opts...)
				e.workers = workers
				streams := make([]Stream, len(prompts))
				for i := range streams {
					streams[i] = Stream{Seed: 5, ID: uint64(i)}
				}
				states, err := e.PrefillBatch(prompts, streams)
				if err != nil {
					t.Fatal(err)
				}
				out := make([]Token, len(states))
				if err := e.Step(states, DefaultSampling, out); err != nil {
					t.Fatal(err)
				}
				for i := 0; i < 3; i++ { // forks of the first states, stepped with their parents
					f, err := states[i].Fork(len(states[i].Tokens()), Stream{Seed: 6, ID: uint64(i)})
					if err != nil {
						t.Fatal(err)
					}
					states = append(states, f)
				}
				var toks [][]Token
				for step := 0; step < 8; step++ {
					out := make([]Token, len(states))
					if err := e.Step(states, Sampling{Temperature: 0.9}, out); err != nil {
						t.Fatal(err)
					}
					toks = append(toks, out)
				}
				return toks
			}
			want := run(1)
			for _, w := range []int{2, 3, 8} {
				got := run(w)
				for s := range want {
					for i := range want[s] {
						if got[s][i] != want[s][i] {
							t.Fatalf("%d workers, step %d, state %d: %+v; one worker: %+v", w, s, i, got[s][i], want[s][i])
						}
					}
				}
			}
		})
	}
}

// A state given twice to one Step is an error, not a silent double step.
func TestStepRejectsDuplicateState(t *testing.T) {
	e := NewEngine(randomModel(t, testConfig, 1))
	st, err := e.Prefill([]int{BOS, 5}, Stream{})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Step([]State{st, st}, DefaultSampling, make([]Token, 2)); err == nil {
		t.Fatal("no error for a state given twice")
	}
}

// A fork copies the cache it shares, so releasing a parent returns the
// parent's cache at once, while its forks go on sampling what they would
// have sampled with the parent alive.
func TestReleasedParentFreesItsCache(t *testing.T) {
	for _, kind := range engineKinds {
		t.Run(kind.name, func(t *testing.T) {
			m := randomModel(t, testConfig, 5)
			cfg := Sampling{Temperature: 1.1}
			run := func(releaseParent bool) ([]Token, int) {
				e := NewEngine(m, kind.opts...)
				parent, err := e.Prefill([]int{BOS, 8, 9, SEP}, Stream{Seed: 2, ID: 1})
				if err != nil {
					t.Fatal(err)
				}
				out := make([]Token, 1)
				for range 6 {
					if err := e.Step([]State{parent}, cfg, out); err != nil {
						t.Fatal(err)
					}
				}
				child, err := parent.Fork(7, Stream{Seed: 2, ID: 2})
				if err != nil {
					t.Fatal(err)
				}
				grandchild, err := child.Fork(7, Stream{Seed: 2, ID: 3})
				if err != nil {
					t.Fatal(err)
				}
				if releaseParent {
					parent.Release()
					child.Release()
				}
				freed := len(e.free)
				var toks []Token
				for range 8 {
					if err := e.Step([]State{grandchild}, cfg, out); err != nil {
						t.Fatal(err)
					}
					toks = append(toks, out[0])
				}
				return toks, freed
			}
			kept, freedKept := run(false)
			alone, freed := run(true)
			if freedKept != 0 || freed != 2 {
				t.Errorf("caches free: %d with parents live, %d after releasing both, want 0 and 2", freedKept, freed)
			}
			if !slices.Equal(kept, alone) {
				t.Errorf("grandchild samples %v with its parents released, %v with them live", alone, kept)
			}
		})
	}
}

// An engine built over a previous engine's buffers (WithCachesFrom) reuses
// its released caches instead of allocating new ones, reads the model's
// weights as they are after an update (quantizing them anew for int8), and
// samples exactly what a fresh engine samples.
func TestEngineWithCachesFromSamplesAsFresh(t *testing.T) {
	prompts := [][]int{{BOS, 5, 6, SEP}, {BOS, 7, SEP}, {BOS, 8, 9, 10, 11, SEP}}
	const forks = 3
	// job prefills the prompts, forks each root and releases it (the next
	// root's forks reuse its cache), completes the forks and releases them:
	// the engine ends with 1 + len(prompts)·forks free caches.
	job := func(t *testing.T, e *Engine) [][]Token {
		t.Helper()
		streams := make([]Stream, len(prompts))
		for i := range streams {
			streams[i] = Stream{Seed: 4, ID: uint64(i)}
		}
		roots, err := e.PrefillBatch(prompts, streams)
		if err != nil {
			t.Fatal(err)
		}
		var states []State
		for i, r := range roots {
			for j := range forks {
				f, err := r.Fork(len(prompts[i]), Stream{Seed: 5, ID: uint64(i*forks + j)})
				if err != nil {
					t.Fatal(err)
				}
				states = append(states, f)
			}
			r.Release()
		}
		out, err := Complete(e, states, Sampling{Temperature: 1.3}, testConfig.MaxSeq)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range states {
			st.Release()
		}
		return out
	}
	for _, kind := range engineKinds {
		t.Run(kind.name, func(t *testing.T) {
			m := randomModel(t, testConfig, 9)
			prev := NewEngine(m, kind.opts...)
			before := job(t, prev)
			caches := 1 + len(prompts)*forks
			if len(prev.free) != caches {
				t.Fatalf("%d caches free after the first job, want %d", len(prev.free), caches)
			}
			// An optimizer step's worth of change, in place.
			rng := rand.New(rand.NewPCG(9, 9))
			for _, p := range m.NamedParams() {
				v := data(p.Param)
				for i := range v {
					v[i] += float32(0.05 * rng.NormFloat64())
				}
			}
			e := NewEngine(m, append(slices.Clip(kind.opts), WithCachesFrom(prev))...)
			if len(prev.free) != 0 || len(e.free) != caches {
				t.Fatalf("caches free: %d left in the previous engine, %d taken over; want 0 and %d", len(prev.free), len(e.free), caches)
			}
			got := job(t, e)
			if len(e.free) != caches {
				t.Errorf("%d caches free after the job, want the %d taken over and no new one", len(e.free), caches)
			}
			want := job(t, NewEngine(m, kind.opts...))
			if reflect.DeepEqual(want, before) {
				t.Fatal("the weight update changed no sample: the test cannot see stale weights")
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("reused buffers sample\n%v\na fresh engine\n%v", got, want)
			}
		})
	}
	// Caches of another shape are left where they are.
	m := randomModel(t, testConfig, 9)
	prev := NewEngine(m)
	job(t, prev)
	other := testConfig
	other.MaxSeq++
	if e := NewEngine(randomModel(t, other, 9), WithCachesFrom(prev)); len(e.free) != 0 || len(prev.free) == 0 {
		t.Fatalf("an engine of max_position_embeddings %d took %d caches of %d", other.MaxSeq, len(e.free), testConfig.MaxSeq)
	}
}

// TokenLogProbValues gives TokenLogProbs's values bit for bit, on a padded
// and a packed batch, and gives the buffers its pass kept back to the
// pool: a second pass takes them all from it again, and FreeBuffers then
// empties it.
func TestTokenLogProbValuesReleasesItsBuffers(t *testing.T) {
	for _, packed := range []bool{false, true} {
		m := randomModel(t, testConfig, 3)
		seqs := randomSeqs(rand.New(rand.NewPCG(5, 5)), 6, 3, testConfig.MaxSeq, testConfig.VocabSize)
		newBatch := m.NewBatch
		if packed {
			seqs = append(seqs, append(slices.Clone(seqs[0][:2]), 5, 6, 7)) // a shared prefix
			newBatch = m.NewPackedBatch
		}
		b, err := newBatch(seqs)
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Clone(data(m.TokenLogProbs(b, m.Logits(b), 0.7)))
		// What the pass keeps includes every layer's gate and up projections.
		kept := m.pool.pooled + b.Rows()*2*testConfig.Hidden*testConfig.Layers
		var pooled int
		for pass := range 2 {
			got := m.TokenLogProbValues(b, 0.7)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("packed %v, pass %d: row %d: %g, want %g", packed, pass, i, got[i], want[i])
				}
			}
			switch {
			case pass == 0 && m.pool.pooled < kept:
				t.Errorf("packed %v: the pass gave back %d floats, want at least %d", packed, m.pool.pooled, kept)
			case pass == 1 && m.pool.pooled != pooled:
				t.Errorf("packed %v: the second pass left %d floats in the pool, the first %d: it did not take the first's buffers", packed, m.pool.pooled, pooled)
			}
			pooled = m.pool.pooled
		}
		if n := m.FreeBuffers(); n != 4*int64(pooled) || m.pool.pooled != 0 || len(m.pool.free) != 0 {
			t.Errorf("packed %v: FreeBuffers dropped %d bytes of %d, left %d floats", packed, n, 4*pooled, m.pool.pooled)
		}
	}
}
