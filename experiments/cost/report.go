package cost

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/rollout-rl/rollout/experiments/rl"
)

// Tolerance is the validation's bound on a held-out point's relative
// error of the step's predicted time.
const Tolerance = 0.15

// Validation is the fitted model against one held-out point.
type Validation struct {
	Sample
	Predicted [NumPhases]float64
}

// Total returns the measured and the predicted time of the step.
func (v Validation) Total() (measured, predicted float64) {
	for p := range NumPhases {
		measured += v.Seconds[p]
		predicted += v.Predicted[p]
	}
	return measured, predicted
}

// Err is the relative error of the predicted step time.
func (v Validation) Err() float64 {
	m, p := v.Total()
	return p/m - 1
}

// Validate predicts the sweep's held-out points (those not marked Fit).
func Validate(sw Sweep, m Model) ([]Validation, error) {
	var out []Validation
	for _, s := range sw.Samples {
		if s.Fit {
			continue
		}
		st, err := s.Point.Step()
		if err != nil {
			return nil, err
		}
		out = append(out, Validation{Sample: s, Predicted: m.Predict(st)})
	}
	return out, nil
}

// referenceStep is the step the crossover tables vary: 8 prompts of 16
// tokens with 8 responses each (64 responses), one scoring pass, one
// epoch of one minibatch, as the default config trains.
func referenceStep(c NamedShape, response int) Step {
	cfg := c.Config
	cfg.MaxSeq = max(cfg.MaxSeq, PromptLen+response)
	return Step{Model: cfg, Prompts: 8, Batch: 64, PromptLen: PromptLen, Response: response, Train: rl.DefaultConfig()}
}

// with returns s with another model shape and response length.
func (s Step) with(c NamedShape, response int) Step {
	s.Model = c.Config
	s.Model.MaxSeq = max(s.Model.MaxSeq, s.PromptLen+response)
	s.Response = response
	return s
}

var (
	crossLengths  = []int{32, 128, 512, 2048, 8192}
	crossBalances = []float64{1, 10, 30, 100, 300}
)

// assumptions are the model's assumptions as the reports print them.
const assumptions = `- FLOPs: policy.Config.ForwardFLOPs per position (matrix products, 2 FLOPs a multiply-add, and attention over the context); a pass with gradients is 3 forward passes (rl.Config.GradientPasses); scoring is rl.Config.ScoringPasses forward passes (π_old, and π_ref with kl_coef > 0).
- Bytes (float32): every pass reads the matrix weights once (decode: once per generated token for the whole batch); a decoding step reads the keys and values of its whole context from the cache, a pass over whole sequences (prefill, scoring, update) reads each position's keys and values once and writes and reads its attention scores (heads × context per layer); prefill and decode write each position's keys and values; a row's activations are written and read once per layer (10·dim + 3·hidden values) and its logits once; an Adam step reads and writes 7 values per parameter. Caches are ignored: bytes are a minimal-traffic count for the roofline, and in the fitted time a cost per unit of each kind of work, not measured traffic.
- Time per phase = Σ work·cost over six terms: the FLOPs of the products with the weight matrices; the FLOPs of attention (in decoding a matrix-vector pass over the KV cache per row, in the other phases small blocked products, so it gets its own rate); the weights read once per pass (a product of few rows — decoding's rows are the batch — pays for its weights' traffic over few FLOPs: this term is what makes the achieved FLOP/s rise with the rows of a product); the activations a row writes and reads (norms, rotary embeddings, the FFN's gate, residual additions, the autodiff's buffers); the optimizer's reads and writes; a fixed cost per call. The costs are non-negative constants per phase, fitted to CPU time (not wall time) of one process on one core, minimizing squared relative error; they do not depend on the model's size, so extrapolating past medium assumes medium's rates (and its products' weights read from a cache level no slower than the measured ones').
- Generation = prefill + decode; training = scoring + update. Steps without the reward model, filtering rounds or tree forks' extra prefills; every response at the same length.
- Roofline: a phase takes max(FLOPs/F, bytes/B) on a machine of peak F FLOP/s and B bytes/s; the share depends only on the balance F/B (FLOP per byte). Shapes marked * are extrapolated (dim 1024 × 16 layers, 2048 × 24), vocabulary 64 as in the reference sizes.`

// history is what the report says of the model's earlier form and of
// what was seen when the present one was chosen.
const history = "The previous form (per phase one cost per FLOP, one per byte of every kind and one per call; results/cost_model.md at commit c55a120) was fitted to 17 of the present fitted shapes, each measured in 3 runs back to back at load 13–36, and predicted 16 of its 27 held-out steps within ±15%, with a root-mean-square error of 17–24% on the fitted points themselves. Those measurements, fitted and held-out alike, were seen before the present form was chosen; the form was chosen from the fitted points alone: " +
	"the same work (prefill, which does not depend on the response length) measured up to 42% apart (tiny, batch 32), and several points' errors shared one sign over all four phases (a point's runs back to back share one slow spell of the machine: hence the rounds); " +
	"decoding's attention (a matrix-vector pass over the KV cache per row) runs at a small fraction of the products' FLOP rate, and its KV bytes, the weights read per pass and the activations shared one byte cost (hence separate terms). " +
	"The earlier held-out shapes (batch 16 and 64, response 64 and 256) are not used here. The held-out points below are new shapes, fixed in the code (cost.Grid) and committed before any of them was measured; each sample records when it was first measured, and all the points were measured anew in one sweep, the fitted ones first."

// shapes lists the points of samples with fit as the report prints them:
// per size, batch × response lengths.
func shapes(samples []Sample, fit bool) string {
	var parts []string
	for _, size := range gridSizes {
		var per []string
		lastB := -1
		for _, s := range samples {
			if s.Size != size || s.Fit != fit {
				continue
			}
			if s.Batch != lastB {
				per = append(per, fmt.Sprintf("%d × %d", s.Batch, s.Response))
				lastB = s.Batch
			} else {
				per[len(per)-1] += fmt.Sprintf(", %d", s.Response)
			}
		}
		if len(per) > 0 {
			parts = append(parts, size+" "+strings.Join(per, "; "))
		}
	}
	return strings.Join(parts, "; ")
}

// WriteReport writes the markdown report: how it was made, the fitted
// constants, the held-out validation table and the crossovers.
func WriteReport(w io.Writer, sw Sweep, m Model, path string) error {
	vals, err := Validate(sw, m)
	if err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# Cost model of the RL step\n\n")
	fmt.Fprintf(&b, "Generated: `rollout cost --measure %s --points fit`, then `rollout cost --measure %s --points held-out` (the measurements), then `rollout cost --validate --measurements %s > results/cost_model.md` (this report, from those measurements; no number here is typed by hand). `rollout cost CONFIG` prints the same model's prediction for a config.\n\n", path, path, path)
	fmt.Fprintf(&b, "## Measurements\n\n")
	fit := 0
	for _, s := range sw.Samples {
		if s.Fit {
			fit++
		}
	}
	fmt.Fprintf(&b, "%d points: the tiny, small and medium models (random weights), prompts of %d tokens. %d points fitted (batch × response: %s) and %d held out (%s). ", len(sw.Samples), PromptLen, fit, shapes(sw.Samples, true), len(sw.Samples)-fit, shapes(sw.Samples, false))
	fmt.Fprintf(&b, "The shapes are capped so that the sweep finishes on a shared machine: the largest (medium above batch × response = 4,096, small above 4,096, tiny above 16,384) are extrapolated, not measured. ")
	stat := "the median"
	switch sw.Statistic {
	case Minimum:
		stat = "every pass on one goroutine (no helper threads), the minimum"
	case MinimumOfRounds:
		stat = "every pass on one goroutine (no helper threads), the minimum per phase"
	}
	fmt.Fprintf(&b, "Each phase's CPU time of the process (policy/cputime) on one core, %s of up to %d runs", stat, sw.Repeats)
	if sw.Statistic == MinimumOfRounds {
		fmt.Fprintf(&b, " made in rounds (each round runs every point once, so that a point's runs are minutes apart and one slow spell of the machine does not slow all of them; the points of a size share one model and its buffers, as an RL run's steps do)")
	}
	fmt.Fprintf(&b, "; fewer once a point's phases added up to %g CPU s (the runs column below). ", sw.Budget)
	lo, hi, n := math.Inf(1), math.Inf(-1), 0
	for _, s := range sw.Samples {
		ls := s.Loads
		if len(ls) == 0 && s.Load > 0 {
			ls = []float64{s.Load}
		}
		for _, l := range ls {
			if l > 0 {
				lo, hi = min(lo, l), max(hi, l)
			}
		}
		if len(ls) > 0 {
			n++
		}
	}
	fmt.Fprintf(&b, "The machine has %d CPUs shared with other jobs", sw.CPUs)
	if n > 0 {
		fmt.Fprintf(&b, ": its one-minute load average was between %.1f and %.1f after the runs of the %d points whose load was recorded (of %d)", lo, hi, n, len(sw.Samples))
	}
	first := [2]string{}
	for _, s := range sw.Samples {
		k := 0
		if !s.Fit {
			k = 1
		}
		if s.MeasuredAt != "" && (first[k] == "" || s.MeasuredAt < first[k]) {
			first[k] = s.MeasuredAt
		}
	}
	if first[0] != "" && first[1] != "" {
		fmt.Fprintf(&b, "; the first fitted point was measured at %s, the first held-out point at %s", first[0], first[1])
	}
	if sw.Resumed > 0 {
		fmt.Fprintf(&b, "; the sweep was stopped or extended and resumed %d time(s), %.0f s of wall time recorded", sw.Resumed, sw.WallS)
	} else {
		fmt.Fprintf(&b, "; %.0f s of wall time", sw.WallS)
	}
	fmt.Fprintf(&b, ". CPU time is steadier than wall time under load but not immune to it: the other jobs share the caches and the memory bandwidth, and only add to a run's time.\n\n")
	fmt.Fprintf(&b, "## What was seen when the form was chosen\n\n%s\n\n", history)
	fmt.Fprintf(&b, "## Assumptions\n\n%s\n\n", assumptions)
	fmt.Fprintf(&b, "## Fit\n\n| phase | matmul GFLOP/s | attention GFLOP/s | weights GB/s | activations GB/s | optimizer GB/s | µs per call | RMS relative error, %d fitted points |\n|---|---|---|---|---|---|---|---|\n", m.Points)
	for p := range NumPhases {
		c := m.Coef[p]
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %.1f | %.1f%% |\n", Phase(p), inv(c[MatmulFLOPs], 1e9), inv(c[AttentionFLOPs], 1e9), inv(c[WeightBytes], 1e9), inv(c[ActivationBytes], 1e9), inv(c[OptimizerBytes], 1e9), c[Calls]*1e6, 100*m.FitRMS[p])
	}
	fmt.Fprintf(&b, "\nEach rate is 1 ÷ the fitted cost of a unit of its term (the time that term alone would take); ∞ is a cost of zero: a term the phase does not have (the optimizer outside the update) or one the fitted points gave no weight to.\n\n")
	within, phaseWithin := 0, [NumPhases]int{}
	for _, v := range vals {
		if math.Abs(v.Err()) <= Tolerance {
			within++
		}
		for p := range NumPhases {
			if math.Abs(v.Predicted[p]/v.Seconds[p]-1) <= Tolerance {
				phaseWithin[p]++
			}
		}
	}
	fmt.Fprintf(&b, "## Validation on the held-out points\n\n")
	fmt.Fprintf(&b, "**%d of %d held-out steps predicted within ±%.0f%%** of the measured step time", within, len(vals), 100*Tolerance)
	for p := range NumPhases {
		fmt.Fprintf(&b, "; %s %d of %d", Phase(p), phaseWithin[p], len(vals))
	}
	fmt.Fprintf(&b, " (phases alone)")
	if len(vals) > 0 {
		se, worst := 0.0, 0.0
		for _, v := range vals {
			se += v.Err() * v.Err()
			worst = max(worst, math.Abs(v.Err()))
		}
		fmt.Fprintf(&b, "; step time's root-mean-square error %.1f%%, largest %.1f%%", 100*math.Sqrt(se/float64(len(vals))), 100*worst)
	}
	fmt.Fprintf(&b, ".\n\n")
	fmt.Fprintf(&b, "| size | batch | response | runs | load | measured s | predicted s | error | prefill | decode | score | update | generation share measured | predicted |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, v := range vals {
		ms, ps := v.Total()
		fmt.Fprintf(&b, "| %s | %d | %d | %d | %.1f | %.3f | %.3f | %+.1f%% |", v.Size, v.Batch, v.Response, v.Repeats, v.Load, ms, ps, 100*v.Err())
		for p := range NumPhases {
			fmt.Fprintf(&b, " %+.0f%% |", 100*(v.Predicted[p]/v.Seconds[p]-1))
		}
		fmt.Fprintf(&b, " %.0f%% | %.0f%% |\n", 100*GenerationShare(v.Seconds), 100*GenerationShare(v.Predicted))
	}
	fmt.Fprintf(&b, "\nThe phase columns are each phase's relative error; load is the mean one-minute load average after the point's runs.\n\n")
	fmt.Fprintf(&b, "## Where generation becomes the larger share\n\n")
	fmt.Fprintf(&b, "For a reference step (8 prompts × 8 responses, prompts of %d tokens, one epoch of one minibatch, no KL term):\n\n", PromptLen)
	writeCrossover(&b, func(c NamedShape, r int) Step { return referenceStep(c, r) }, m)
	_, err = io.WriteString(w, b.String())
	return err
}

// WriteConfig writes the cost model's prediction for one config's step,
// with its assumptions and the crossovers around it.
func WriteConfig(w io.Writer, name string, s Step, m Model) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Cost of one RL step of %s (predicted; rollout cost --validate shows the fit)\n\n", name)
	fmt.Fprintf(&b, "Step: %d prompts of %d tokens, %d responses of %d tokens (every response at the cap: the worst case), model dim %d × %d layers, hidden %d, %d heads, vocab %d (%.2f M matrix weights); %d scoring pass(es), %d epoch(s) of %d minibatch(es).\n\n",
		s.Prompts, s.PromptLen, s.Batch, s.Response, s.Model.Dim, s.Model.Layers, s.Model.Hidden, s.Model.Heads, s.Model.VocabSize, float64(s.Model.MatmulParams())/1e6, s.Train.ScoringPasses(), s.Train.Epochs, s.Train.Minibatches)
	secs := m.Predict(s)
	work := s.Work()
	total := 0.0
	for _, x := range secs {
		total += x
	}
	fmt.Fprintf(&b, "| phase | GFLOPs | MB moved | FLOP/byte | predicted CPU s | share |\n|---|---|---|---|---|---|\n")
	for p := range NumPhases {
		fmt.Fprintf(&b, "| %s | %.3f | %.1f | %.1f | %.3f | %.0f%% |\n", Phase(p), work[p].FLOPs/1e9, work[p].Bytes/1e6, work[p].Intensity(), secs[p], 100*secs[p]/total)
	}
	fmt.Fprintf(&b, "\nGeneration (prefill + decode): %.0f%% of the step on this machine's fitted constants; %.0f%% on a roofline machine of balance 10 FLOP/byte (a CPU), %.0f%% at 300 (a GPU at bf16).\n\n",
		100*GenerationShare(secs), 100*RooflineShare(s, 10), 100*RooflineShare(s, 300))
	fmt.Fprintf(&b, "Assumptions:\n%s\n\n", assumptions)
	fmt.Fprintf(&b, "Around this step (its batch and passes, other shapes and lengths):\n\n")
	writeCrossover(&b, s.with, m)
	_, err := io.WriteString(w, b.String())
	return err
}

// writeCrossover writes generation's share over model shapes and response
// lengths, on the fitted constants and on roofline machines, and the
// balance at which it reaches one half.
func writeCrossover(b *strings.Builder, step func(NamedShape, int) Step, m Model) {
	header := func(title string, cols []string) {
		fmt.Fprintf(b, "| %s | %s |\n|---|%s\n", title, strings.Join(cols, " | "), strings.Repeat("---|", len(cols)))
	}
	var lengths, balances []string
	for _, r := range crossLengths {
		lengths = append(lengths, fmt.Sprint(r))
	}
	for _, bal := range crossBalances {
		balances = append(balances, fmt.Sprint(bal))
	}
	fmt.Fprintf(b, "Generation's share of the step on this machine (fitted constants), by model and response length:\n\n")
	header("model \\ response tokens", lengths)
	var firstOver []string
	for _, sh := range Shapes() {
		fmt.Fprintf(b, "| %s |", sh.Name)
		over := ""
		for _, r := range crossLengths {
			g := GenerationShare(m.Predict(step(sh, r)))
			fmt.Fprintf(b, " %.0f%% |", 100*g)
			if g > 0.5 && over == "" {
				over = fmt.Sprintf("%s from %d tokens", sh.Name, r)
			}
		}
		if over == "" {
			over = fmt.Sprintf("%s never up to %d tokens", sh.Name, crossLengths[len(crossLengths)-1])
		}
		firstOver = append(firstOver, over)
		fmt.Fprintf(b, "\n")
	}
	fmt.Fprintf(b, "\nOn this machine generation is the larger share for: %s.\n\n", strings.Join(firstOver, "; "))
	fmt.Fprintf(b, "Hardware balance (peak FLOP/s ÷ bytes/s) above which generation is the larger share on a roofline machine (— : not between 1 and 10,000 FLOP/byte):\n\n")
	header("model \\ response tokens", lengths)
	for _, sh := range Shapes() {
		fmt.Fprintf(b, "| %s |", sh.Name)
		for _, r := range crossLengths {
			bal, ok, below := CrossoverBalance(step(sh, r), 1, 1e4)
			switch {
			case ok:
				fmt.Fprintf(b, " %.0f |", bal)
			case below:
				fmt.Fprintf(b, " > 10⁴ |")
			default:
				fmt.Fprintf(b, " any |")
			}
		}
		fmt.Fprintf(b, "\n")
	}
	fmt.Fprintf(b, "\nGeneration's roofline share at response length 512, by balance:\n\n")
	header("model \\ FLOP/byte", balances)
	for _, sh := range Shapes() {
		fmt.Fprintf(b, "| %s |", sh.Name)
		for _, bal := range crossBalances {
			fmt.Fprintf(b, " %.0f%% |", 100*RooflineShare(step(sh, 512), bal))
		}
		fmt.Fprintf(b, "\n")
	}
	fmt.Fprintf(b, "\nFor scale: a CPU core of this class sustains roughly 10–30 FLOP/byte, a GPU at bf16 100–300 (e.g. 312 TFLOP/s over 2 TB/s ≈ 156).\n")
}

// inv formats 1/x in units of unit (∞ when x is 0).
func inv(x, unit float64) string {
	if x == 0 {
		return "∞"
	}
	return fmt.Sprintf("%.1f", 1/x/unit)
}
