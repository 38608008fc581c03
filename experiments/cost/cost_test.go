package cost

import (
	"context"
	"math"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/experiments/config"
	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/policy"
)

func size(t *testing.T, name string) policy.Config {
	t.Helper()
	c, err := policy.Size(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The FLOPs of the scoring and update phases are the project's counts of
// the same batches (policy.Batch.ForwardFLOPs, with rl.Config's passes),
// and prefill and decode add up to every sampled position at its context.
func TestWorkCountsFLOPsAsTheProject(t *testing.T) {
	kl := rl.DefaultConfig()
	kl.KLCoef, kl.Epochs, kl.Minibatches = 0.1, 2, 4
	for _, tc := range []struct {
		name  string
		size  string
		train rl.Config
	}{
		{"tiny default", "tiny", rl.DefaultConfig()},
		{"small with KL, 2 epochs", "small", kl},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := size(t, tc.size)
			s := Step{Model: cfg, Prompts: 2, Batch: 6, PromptLen: 5, Response: 7, Train: tc.train}
			m, err := policy.NewModel(cfg, 1)
			if err != nil {
				t.Fatal(err)
			}
			seqs := make([][]int, s.Batch)
			for i := range seqs {
				seqs[i] = make([]int, s.PromptLen+s.Response)
			}
			b, err := m.NewBatch(seqs)
			if err != nil {
				t.Fatal(err)
			}
			w := s.Work()
			pass := float64(b.ForwardFLOPs(cfg))
			if got, want := w[Score].FLOPs, float64(tc.train.ScoringPasses())*pass; got != want {
				t.Errorf("score FLOPs %g, want %g", got, want)
			}
			if got, want := w[Update].FLOPs, float64(tc.train.GradientPasses())*pass; got != want {
				t.Errorf("update FLOPs %g, want %g", got, want)
			}
			var sampled float64
			for ctx := 1; ctx <= s.PromptLen; ctx++ {
				sampled += float64(s.Prompts) * float64(cfg.ForwardFLOPs(ctx))
			}
			for ctx := s.PromptLen + 1; ctx < s.PromptLen+s.Response; ctx++ {
				sampled += float64(s.Batch) * float64(cfg.ForwardFLOPs(ctx))
			}
			if got := w[Prefill].FLOPs + w[Decode].FLOPs; got != sampled {
				t.Errorf("prefill + decode FLOPs %g, want %g", got, sampled)
			}
			if w[Decode].Calls != float64(s.Response) || w[Update].Calls != float64(tc.train.Epochs*tc.train.Minibatches) {
				t.Errorf("calls: decode %g, update %g", w[Decode].Calls, w[Update].Calls)
			}
			for p, x := range w {
				if !(x.Bytes > 0) {
					t.Errorf("%s moves %g bytes", Phase(p), x.Bytes)
				}
				if got := x.Terms[MatmulFLOPs] + x.Terms[AttentionFLOPs]; math.Abs(got-x.FLOPs) > 1e-9*x.FLOPs {
					t.Errorf("%s: matmul + attention FLOPs %g, want %g", Phase(p), got, x.FLOPs)
				}
				if x.Terms[Calls] != x.Calls || (x.Terms[OptimizerBytes] > 0) != (p == int(Update)) {
					t.Errorf("%s: terms %v", Phase(p), x.Terms)
				}
				byTerms := x.Terms[WeightBytes] + x.Terms[ActivationBytes] + x.Terms[OptimizerBytes]
				if !(byTerms > 0 && byTerms <= x.Bytes) {
					t.Errorf("%s: weights, activations and optimizer %g bytes of %g", Phase(p), byTerms, x.Bytes)
				}
			}
			if tot := Total(w); tot.FLOPs != w[0].FLOPs+w[1].FLOPs+w[2].FLOPs+w[3].FLOPs {
				t.Errorf("Total FLOPs %g", tot.FLOPs)
			}
		})
	}
}

// A sweep timed by known constants fits back to them, and predicts its
// held-out points exactly: every term at once, some terms absent, and
// rates that differ by phase.
func TestFitRecoversConstants(t *testing.T) {
	all := func(p int) Coef {
		return Coef{
			MatmulFLOPs: 1 / (float64(p+1) * 2e10), AttentionFLOPs: 1 / (float64(p+1) * 3e9),
			WeightBytes: 1 / (float64(p+1) * 5e9), ActivationBytes: 1 / 4e9, OptimizerBytes: 1 / 8e9, Calls: float64(p+1) * 1e-5,
		}
	}
	for _, tc := range []struct {
		name string
		coef func(p int) Coef
	}{
		{"every term", all},
		{"flops only", func(p int) Coef { return Coef{MatmulFLOPs: 1e-11, AttentionFLOPs: 1e-11} }},
		{"no weights, no calls", func(p int) Coef {
			c := all(p)
			c[WeightBytes], c[Calls] = 0, 0
			return c
		}},
		{"attention slow", func(p int) Coef {
			c := all(p)
			c[AttentionFLOPs] = 1e-9
			return c
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var truth Model
			for p := range NumPhases {
				truth.Coef[p] = tc.coef(int(p))
			}
			sw, err := SweepOf(truth)
			if err != nil {
				t.Fatal(err)
			}
			m, err := Fit(sw)
			if err != nil {
				t.Fatal(err)
			}
			ref := mustWork(t, Point{Size: "small", Batch: 32, Response: 128, Fit: true})
			for p := range NumPhases {
				phase := truth.Coef[p].Seconds(ref[p])
				for k := range NumTerms {
					got, want := m.Coef[p][k], truth.Coef[p][k]
					// A term the phase does not do (the optimizer outside
					// the update) fits to zero whatever the truth says.
					if ref[p].Terms[k] == 0 {
						want = 0
					}
					// Each term's share of the phase's time within 10⁻⁶.
					if math.Abs(got-want)*max(ref[p].Terms[k], 1) > 1e-6*phase {
						t.Errorf("%s %s: fitted %g, want %g", Phase(p), Term(k), got, want)
					}
				}
				if m.FitRMS[p] > 1e-9 {
					t.Errorf("%s: RMS %g on exact data", Phase(p), m.FitRMS[p])
				}
			}
			vals, err := Validate(sw, m)
			if err != nil {
				t.Fatal(err)
			}
			if len(vals) < 12 {
				t.Errorf("%d held-out points, want ≥ 12", len(vals))
			}
			for _, v := range vals {
				if math.Abs(v.Err()) > 1e-6 {
					t.Errorf("%+v: error %g", v.Point, v.Err())
				}
			}
		})
	}
	if _, err := Fit(Sweep{}); err == nil {
		t.Error("Fit of no points: no error")
	}
}

func mustWork(t *testing.T, p Point) [NumPhases]Work {
	t.Helper()
	s, err := p.Step()
	if err != nil {
		t.Fatal(err)
	}
	return s.Work()
}

// Noisy measurements of a known model fit to constants near it: the fit
// is stable, not just exact on exact data.
func TestFitUnderNoise(t *testing.T) {
	var truth Model
	for p := range NumPhases {
		truth.Coef[p] = Coef{MatmulFLOPs: 1e-11, AttentionFLOPs: 5e-11, WeightBytes: 1e-10, ActivationBytes: 2e-10, OptimizerBytes: 1e-10, Calls: 1e-5}
	}
	sw, err := SweepOf(truth)
	if err != nil {
		t.Fatal(err)
	}
	for i := range sw.Samples {
		for p := range sw.Samples[i].Seconds {
			// ±2%, a fixed pattern over the points and phases.
			sw.Samples[i].Seconds[p] *= 1 + 0.02*math.Sin(float64(7*i+3*p))
		}
	}
	m, err := Fit(sw)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := Validate(sw, m)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vals {
		if math.Abs(v.Err()) > 0.05 {
			t.Errorf("%+v: error %.3f with 2%% noise", v.Point, v.Err())
		}
	}
	for p := range NumPhases {
		if m.FitRMS[p] > 0.03 {
			t.Errorf("%s: RMS %.3f with 2%% noise", Phase(p), m.FitRMS[p])
		}
	}
}

// The grid holds at least 12 held-out points at every size, none of them
// a fitted shape or one of the earlier sweep's held-out shapes (batch 16
// or 64, response 64 or 256), all within the fitted ranges.
func TestGrid(t *testing.T) {
	fit := map[[3]any]bool{}
	for _, p := range FitGrid() {
		fit[[3]any{p.Size, p.Batch, p.Response}] = true
	}
	held := HeldOutGrid()
	if len(held) < 12 || len(FitGrid()) < int(NumTerms) || len(held)+len(FitGrid()) != len(Grid()) {
		t.Errorf("%d held-out and %d fitted points of %d", len(held), len(FitGrid()), len(Grid()))
	}
	sizes := map[string]int{}
	for _, p := range held {
		sizes[p.Size]++
		switch {
		case fit[[3]any{p.Size, p.Batch, p.Response}]:
			t.Errorf("%+v is also fitted", p)
		case p.Batch == 16 || p.Batch == 64 || p.Response == 64 || p.Response == 256:
			t.Errorf("%+v has a shape of the earlier held-out points", p)
		case p.Batch < 8 || p.Batch > 128 || p.Response < 32 || p.Response > 512:
			t.Errorf("%+v is outside the fitted ranges", p)
		}
	}
	for _, size := range gridSizes {
		if sizes[size] == 0 {
			t.Errorf("no held-out point of %s", size)
		}
	}
}

// The roofline share grows with the hardware balance, and the crossover
// balance is where it is one half.
func TestCrossoverBalance(t *testing.T) {
	for _, sh := range Shapes() {
		s := referenceStep(sh, 512)
		lo, hi := RooflineShare(s, 1), RooflineShare(s, 1e4)
		if !(lo <= hi) {
			t.Errorf("%s: share %g at balance 1 > %g at 10⁴", sh.Name, lo, hi)
		}
		bal, ok, below := CrossoverBalance(s, 1, 1e4)
		switch {
		case ok && math.Abs(RooflineShare(s, bal)-0.5) > 1e-6:
			t.Errorf("%s: share %g at the crossover %g", sh.Name, RooflineShare(s, bal), bal)
		case !ok && below && hi >= 0.5, !ok && !below && lo < 0.5:
			t.Errorf("%s: no crossover reported, shares %g … %g", sh.Name, lo, hi)
		}
	}
}

func TestMeasure(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no process CPU time on", runtime.GOOS)
	}
	s := Measured(size(t, "tiny"), 2, 4, 6)
	m, err := Measure(context.Background(), s, 2, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	if m.Repeats != 2 {
		t.Errorf("%d runs, want 2", m.Repeats)
	}
	total := 0.0
	for _, x := range m.Seconds {
		total += x
	}
	if !(total > 0) {
		t.Errorf("measured %v CPU seconds", m.Seconds)
	}
	bad := s
	bad.Prompts = 1
	if _, err := Measure(context.Background(), bad, 1, 1, 1); err == nil || !strings.Contains(err.Error(), "Measured's form") {
		t.Errorf("a forked step: error %v", err)
	}
	if _, err := Measure(context.Background(), s, 0, 1, 1); err == nil {
		t.Error("0 repeats: no error")
	}
	b, err := newBench(size(t, "tiny"), 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.run(context.Background(), Measured(size(t, "small"), 2, 4, 6)); err == nil || !strings.Contains(err.Error(), "bench") {
		t.Errorf("a small step on a tiny bench: error %v", err)
	}
}

// Run measures in rounds: each point gets one run a round, each phase
// keeps its minimum, and a sweep resumed with more rounds adds runs to
// the points it holds; one that took another statistic of its runs is
// not resumed.
func TestRunRounds(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skip("no process CPU time on", runtime.GOOS)
	}
	pts := []Point{{Size: "tiny", Batch: 2, Response: 3, Fit: true}, {Size: "tiny", Batch: 3, Response: 2}}
	var calls int
	sw, err := Run(context.Background(), pts, 2, 100, 2, Sweep{}, func(_ Sweep, s Sample) { calls++ })
	if err != nil {
		t.Fatal(err)
	}
	if calls != 4 || len(sw.Samples) != 2 || sw.Statistic != MinimumOfRounds {
		t.Fatalf("%d runs, %d samples, statistic %q", calls, len(sw.Samples), sw.Statistic)
	}
	for _, s := range sw.Samples {
		if s.Repeats != 2 || len(s.Loads) != 2 || s.MeasuredAt == "" || !(s.total() > 0) {
			t.Errorf("sample %+v", s)
		}
	}
	more, err := Run(context.Background(), pts[:1], 3, 100, 2, sw, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(more.Samples) != 2 || more.Samples[0].Repeats != 3 || more.Samples[1].Repeats != 2 || more.Resumed != 1 {
		t.Fatalf("resumed: %+v", more.Samples)
	}
	for p := range NumPhases {
		if more.Samples[0].Seconds[p] > sw.Samples[0].Seconds[p] {
			t.Errorf("%s: minimum rose from %g to %g", Phase(p), sw.Samples[0].Seconds[p], more.Samples[0].Seconds[p])
		}
	}
}

// A sweep that holds every point measures nothing more; one that took
// another statistic of its runs is not resumed.
func TestRunResumes(t *testing.T) {
	prev := Sweep{Statistic: MinimumOfRounds, LoadStart: 3, WallS: 5}
	for _, p := range Grid() {
		prev.Samples = append(prev.Samples, Sample{Point: p, Seconds: [NumPhases]float64{1, 1, 1, 1}, Repeats: 1})
	}
	sw, err := Run(context.Background(), Grid(), 1, 0, 2, prev, func(Sweep, Sample) { t.Error("a point was measured again") })
	if err != nil {
		t.Fatal(err)
	}
	if len(sw.Samples) != len(prev.Samples) || sw.LoadStart != 3 || sw.Resumed != 1 || sw.WallS < 5 || sw.Statistic != MinimumOfRounds {
		t.Errorf("resumed sweep: %d samples, load %g, resumed %d, wall %g, statistic %q", len(sw.Samples), sw.LoadStart, sw.Resumed, sw.WallS, sw.Statistic)
	}
	for _, stat := range []string{"", Minimum} {
		other := prev
		other.Statistic = stat
		if _, err := Run(context.Background(), Grid(), 1, 0, 2, other, func(Sweep, Sample) { t.Error("a point was measured") }); err == nil || !strings.Contains(err.Error(), "another statistic") {
			t.Errorf("resuming a sweep of statistic %q: error %v", stat, err)
		}
	}
}

func TestStepOf(t *testing.T) {
	f, err := config.Load(filepath.Join("..", "configs", "quickstart.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := StepOf(f.Variants[0].Config) // flat, n = 8
	if err != nil {
		t.Fatal(err)
	}
	if s.Prompts != 8 || s.Batch != 64 || s.Model.Dim != 128 || s.Response < 2 || s.PromptLen < 3 {
		t.Errorf("quickstart's step: %+v", s)
	}
	bad := s
	bad.Batch = 1
	if err := bad.Validate(); err == nil {
		t.Error("fewer responses than prompts: no error")
	}
}

func TestWriteReportAndConfig(t *testing.T) {
	truth := Model{}
	for p := range NumPhases {
		truth.Coef[p] = Coef{MatmulFLOPs: 1e-10, AttentionFLOPs: 1e-10, WeightBytes: 1e-10, ActivationBytes: 1e-10, OptimizerBytes: 1e-10, Calls: 1e-5}
	}
	sw, err := SweepOf(truth)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Fit(sw)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteReport(&b, sw, m, "results/cost_model.json"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Validation on the held-out points", "**24 of 24 held-out steps predicted within ±15%**", "| medium | 12 | 192 |", "Hardware balance", "tiny 8 × 32, 128, 512; 32 × 32, 128, 512; 128 × 32, 128", "What was seen when the form was chosen"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	b.Reset()
	s := referenceStep(Shapes()[0], 64)
	if err := WriteConfig(&b, "x.yaml", s, m); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| decode |") || !strings.Contains(b.String(), "Assumptions") {
		t.Errorf("config output:\n%s", b.String())
	}
}
