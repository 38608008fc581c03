package cost

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/cputime"
)

// MeasureMinibatch is the most sequences one measured update step
// carries: a step of Batch sequences is measured as one epoch of
// ⌈Batch/MeasureMinibatch⌉ minibatches, which bounds the activations a
// backward pass holds.
const MeasureMinibatch = 16

// Measured returns the step that Measure runs for a model, a batch and a
// response length: Batch prompts of promptLen tokens (one per response,
// nothing forked), one scoring pass, one epoch of minibatches of at most
// MeasureMinibatch sequences; the model's max_position_embeddings raised
// to fit the sequences if need be (random weights: only the time counts).
func Measured(model policy.Config, batch, promptLen, response int) Step {
	model.MaxSeq = max(model.MaxSeq, promptLen+response)
	train := rl.DefaultConfig()
	train.Minibatches = (batch + MeasureMinibatch - 1) / MeasureMinibatch
	return Step{Model: model, Prompts: batch, Batch: batch, PromptLen: promptLen, Response: response, Train: train}
}

// Measurement is the CPU time of each phase of one step, the minimum over
// Repeats runs.
type Measurement struct {
	Step    Step
	Seconds [NumPhases]float64
	Repeats int
}

// Measure runs s (a step of Measured's form: one scoring pass, one epoch)
// repeats times back to back on a model with random weights (bench.run)
// and returns each phase's minimum over the runs: other jobs on a shared
// machine only add to a run's CPU time (through the caches and memory
// bandwidth they take), so the least disturbed run is the closest to the
// work's own cost. Fewer runs are made once a run has taken more than
// budget seconds of CPU time (at least one). Run, which measures a grid,
// spreads a point's runs over rounds of the whole grid instead.
func Measure(ctx context.Context, s Step, repeats int, budget float64, seed uint64) (Measurement, error) {
	if repeats < 1 {
		return Measurement{}, fmt.Errorf("cost: measure: %d repeats, want ≥ 1", repeats)
	}
	b, err := newBench(s.Model, seed)
	if err != nil {
		return Measurement{}, err
	}
	var runs [NumPhases][]float64
	for r := 0; r < repeats; r++ {
		secs, err := b.run(ctx, s)
		if err != nil {
			return Measurement{}, err
		}
		total := 0.0
		for p := range secs {
			runs[p] = append(runs[p], secs[p])
			total += secs[p]
		}
		if total > budget {
			break
		}
	}
	out := Measurement{Step: s, Repeats: len(runs[0])}
	for p := range runs {
		out.Seconds[p] = slices.Min(runs[p])
	}
	return out, nil
}

// bench is a model with random weights and its optimizer, kept across the
// runs of the steps measured on it, as the RL loop keeps them across its
// steps: a run after the first reuses the buffers (KV cache segments,
// activations) an earlier one allocated, as a step after the first does.
type bench struct {
	model   *policy.Model
	trainer *policy.Trainer
	prev    *policy.Engine
	seed    uint64
}

// newBench returns a bench for model c (its max_position_embeddings must
// fit every step run on it).
func newBench(c policy.Config, seed uint64) (*bench, error) {
	m, err := policy.NewModel(c, seed)
	if err != nil {
		return nil, fmt.Errorf("cost: measure: %w", err)
	}
	m.SetTeam(nil) // every pass on this goroutine
	tr, err := policy.NewTrainer(m, policy.DefaultTrainConfig)
	if err != nil {
		return nil, fmt.Errorf("cost: measure: %w", err)
	}
	return &bench{model: m, trainer: tr, seed: seed}, nil
}

// run runs s (a step of Measured's form, on the bench's model shape up
// to max_position_embeddings) once, every pass on the calling goroutine
// (sampling, scoring and the update alike: no team of helpers, whose
// spinning and waiting would count as CPU time that depends on the
// load), and returns each phase's CPU time of the process
// (policy/cputime). A garbage collection runs before each phase, outside
// its time.
func (b *bench) run(ctx context.Context, s Step) ([NumPhases]float64, error) {
	var secs [NumPhases]float64
	if err := s.Validate(); err != nil {
		return secs, err
	}
	if s.Prompts != s.Batch || s.Train.ScoringPasses() != 1 || s.Train.Epochs != 1 {
		return secs, fmt.Errorf("cost: measure: a step of Measured's form (one prompt per response, one scoring pass, one epoch), got %d prompts for %d responses, %d scoring passes, %d epochs",
			s.Prompts, s.Batch, s.Train.ScoringPasses(), s.Train.Epochs)
	}
	mc, sc := b.model.Config, s.Model
	mc.MaxSeq, sc.MaxSeq = 0, 0
	if mc != sc || b.model.Config.MaxSeq < s.PromptLen+s.Response {
		return secs, fmt.Errorf("cost: measure: a step of model %+v on a bench of model %+v", s.Model, b.model.Config)
	}
	if err := ctx.Err(); err != nil {
		return secs, err
	}
	rng := rand.New(rand.NewPCG(b.seed, 1))
	prompts := make([][]int, s.Batch)
	streams := make([]policy.Stream, s.Batch)
	for i := range prompts {
		for range s.PromptLen {
			prompts[i] = append(prompts[i], 4+rng.IntN(s.Model.VocabSize-4))
		}
		streams[i] = policy.Stream{Seed: b.seed, ID: uint64(i)}
	}
	e := policy.NewEngine(b.model, policy.WithTeam(nil), policy.WithCachesFrom(b.prev))
	b.prev = e
	var states []policy.State
	var seqs [][]int
	err := timeOne(&secs[Prefill], func() (err error) { states, err = e.PrefillBatch(prompts, streams); return err })
	if err == nil {
		err = timeOne(&secs[Decode], func() (err error) { seqs, err = decode(e, states, s.Response); return err })
	}
	if err == nil {
		err = timeOne(&secs[Score], func() error { return score(b.model, seqs) })
	}
	if err == nil {
		err = timeOne(&secs[Update], func() error { return update(b.model, b.trainer, seqs, s.PromptLen, s.Train.Minibatches) })
	}
	if err != nil {
		return secs, fmt.Errorf("cost: measure: %w", err)
	}
	return secs, nil
}

// timeOne stores fn's CPU time of the process in secs, after a garbage
// collection that is not counted.
func timeOne(secs *float64, fn func() error) error {
	runtime.GC()
	t0 := cputime.Process()
	err := fn()
	*secs = (cputime.Process() - t0).Seconds()
	return err
}

// decode samples n tokens for each state and returns the states'
// sequences, prompt and response, releasing the states.
func decode(e *policy.Engine, states []policy.State, n int) ([][]int, error) {
	out := make([]policy.Token, len(states))
	for range n {
		if err := e.Step(states, policy.DefaultSampling, out); err != nil {
			return nil, err
		}
	}
	seqs := make([][]int, len(states))
	for i, st := range states {
		seqs[i] = slices.Clone(st.Tokens())
		st.Release()
	}
	return seqs, nil
}

// score runs the scoring passes: log-probs of every token without
// gradients, in chunks of ScoreChunk sequences, as the RL loop sets
// π_old's (policy.Model.TokenLogProbValues, whose buffers go back to the
// model's pool).
func score(m *policy.Model, seqs [][]int) error {
	for lo := 0; lo < len(seqs); lo += ScoreChunk {
		b, err := m.NewBatch(seqs[lo:min(lo+ScoreChunk, len(seqs))])
		if err != nil {
			return err
		}
		_ = m.TokenLogProbValues(b, 1)
	}
	return nil
}

// update runs one epoch of minibatches optimizer steps on the responses'
// negative log-likelihood.
func update(m *policy.Model, tr *policy.Trainer, seqs [][]int, promptLen, minibatches int) error {
	for mb := 0; mb < minibatches; mb++ {
		part := seqs[len(seqs)*mb/minibatches : len(seqs)*(mb+1)/minibatches]
		if len(part) == 0 {
			continue
		}
		b, err := m.NewBatch(part)
		if err != nil {
			return err
		}
		from := make([]int, len(part))
		for i := range from {
			from[i] = promptLen
		}
		loss, _, err := m.NLLLoss(b, from)
		if err != nil {
			return err
		}
		if _, err := tr.Step(loss); err != nil {
			return err
		}
	}
	return nil
}

// LoadAverage returns the machine's one-minute load average, or −1 where
// /proc/loadavg cannot be read.
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return -1
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return -1
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return -1
	}
	return v
}
