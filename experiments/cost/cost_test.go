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
			}
			if tot := Total(w); tot.FLOPs != w[0].FLOPs+w[1].FLOPs+w[2].FLOPs+w[3].FLOPs {
				t.Errorf("Total FLOPs %g", tot.FLOPs)
			}
		})
	}
}

// A sweep timed by known constants fits back to them, and predicts its
// held-out points exactly.
func TestFitRecoversConstants(t *testing.T) {
	truth := Model{}
	for p := range NumPhases {
		truth.Coef[p] = Coef{SecPerFLOP: 1 / (float64(p+1) * 2e10), SecPerByte: 1 / (float64(p+1) * 5e9), SecPerCall: float64(p) * 1e-4}
	}
	var sw Sweep
	for _, pt := range Grid() {
		s, err := pt.Step()
		if err != nil {
			t.Fatal(err)
		}
		sw.Samples = append(sw.Samples, Sample{Point: pt, Seconds: truth.Predict(s), Repeats: 1})
	}
	m, err := Fit(sw)
	if err != nil {
		t.Fatal(err)
	}
	for p := range NumPhases {
		got, want := m.Coef[p], truth.Coef[p]
		for _, pair := range [][2]float64{{got.SecPerFLOP, want.SecPerFLOP}, {got.SecPerByte, want.SecPerByte}, {got.SecPerCall, want.SecPerCall}} {
			if math.Abs(pair[0]-pair[1]) > 1e-6*math.Abs(pair[1])+1e-15 {
				t.Errorf("%s: fitted %+v, want %+v", Phase(p), got, want)
				break
			}
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
	if _, err := Fit(Sweep{}); err == nil {
		t.Error("Fit of no points: no error")
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
}

// A sweep that holds every point measures nothing more; one that took
// another statistic of its runs is not resumed.
func TestRunResumes(t *testing.T) {
	prev := Sweep{Statistic: Minimum, LoadStart: 3, WallS: 5}
	for _, p := range Grid() {
		prev.Samples = append(prev.Samples, Sample{Point: p, Seconds: [NumPhases]float64{1, 1, 1, 1}, Repeats: 1})
	}
	sw, err := Run(context.Background(), Grid(), 1, 0, 2, prev, func(Sweep) { t.Error("a point was measured again") })
	if err != nil {
		t.Fatal(err)
	}
	if len(sw.Samples) != len(prev.Samples) || sw.LoadStart != 3 || sw.Resumed != 1 || sw.WallS < 5 || sw.Statistic != Minimum {
		t.Errorf("resumed sweep: %d samples, load %g, resumed %d, wall %g, statistic %q", len(sw.Samples), sw.LoadStart, sw.Resumed, sw.WallS, sw.Statistic)
	}
	median := prev
	median.Statistic = ""
	if _, err := Run(context.Background(), Grid(), 1, 0, 2, median, func(Sweep) { t.Error("a point was measured") }); err == nil || !strings.Contains(err.Error(), "median") {
		t.Errorf("resuming a sweep of medians: error %v", err)
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
	var sw Sweep
	truth := Model{}
	for p := range NumPhases {
		truth.Coef[p] = Coef{SecPerFLOP: 1e-10, SecPerByte: 1e-10, SecPerCall: 1e-5}
	}
	for _, pt := range Grid() {
		s, _ := pt.Step()
		sw.Samples = append(sw.Samples, Sample{Point: pt, Seconds: truth.Predict(s), Repeats: 1})
	}
	m, err := Fit(sw)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteReport(&b, sw, m, "results/cost_model.json"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Validation on the held-out points", "within ±15%", "| medium | 16 | 64 |", "Hardware balance"} {
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
