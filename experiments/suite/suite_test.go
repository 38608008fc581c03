package suite

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rollout-rl/rollout/experiments/config"
	"github.com/rollout-rl/rollout/experiments/design"
	"github.com/rollout-rl/rollout/tracking"
	"github.com/rollout-rl/rollout/tracking/report"
)

// The verdict rules on intervals of the difference variant − baseline.
func TestDecide(t *testing.T) {
	for _, tc := range []struct {
		want   Direction
		margin float64
		lo, hi float64
		v      Verdict
	}{
		{Higher, 0.02, 0.01, 0.05, Holds},
		{Higher, 0.02, -0.01, 0.05, Inconclusive},
		{Higher, 0.02, -0.05, 0.015, DoesNotHold}, // rules out a gain of the margin
		{Higher, 0, -0.05, -0.01, DoesNotHold},
		{Lower, 0, -0.05, -0.01, Holds},
		{Lower, 0.02, -0.01, 0.03, DoesNotHold},
		{Lower, 0.02, -0.03, 0.03, Inconclusive},
		{NotWorse, 0.03, -0.02, 0.05, Holds},
		{NotWorse, 0.03, -0.05, 0.07, Inconclusive},
		{NotWorse, 0.03, -0.08, -0.01, DoesNotHold},
		{NotHigher, 0, -3, -1, Holds},
		{NotHigher, 0, 1, 3, DoesNotHold},
		{NotHigher, 0, -1, 3, Inconclusive},
	} {
		if got := decide(tc.want, tc.margin, tc.lo, tc.hi); got != tc.v {
			t.Errorf("%s (margin %g) on [%g, %g]: %s, want %s", tc.want, tc.margin, tc.lo, tc.hi, got, tc.v)
		}
	}
}

func TestOverall(t *testing.T) {
	o := func(vs ...Verdict) []Outcome {
		var out []Outcome
		for _, v := range vs {
			out = append(out, Outcome{Verdict: v})
		}
		return out
	}
	for _, tc := range []struct {
		outs []Outcome
		want Verdict
	}{
		{o(Holds, Holds), Holds},
		{o(Holds, Inconclusive), Inconclusive},
		{o(Inconclusive, DoesNotHold, Holds), DoesNotHold},
		{o(NotTestable, Holds), Holds},
		{o(NotTestable, NotTestable), NotTestable},
		{o(NotTestable, Inconclusive), Inconclusive},
		// A confirmatory primary check decides; exploratory and secondary
		// ones do not.
		{[]Outcome{{Verdict: Holds}, {Verdict: DoesNotHold, Exploratory: true}, {Verdict: Inconclusive, Check: Check{Family: design.Secondary}}}, Holds},
		{nil, Inconclusive},
	} {
		if got := Overall(tc.outs); got != tc.want {
			t.Errorf("%v: %s, want %s", tc.outs, got, tc.want)
		}
	}
}

// Every report has a config that exists, a unique name, checks on its
// own variants, and a place in the priority list.
func TestReportsAreComplete(t *testing.T) {
	seen := map[string]bool{}
	for i, r := range Reports() {
		if r.Number != i+1 || seen[r.Name] || r.Claim == "" || r.Source == "" || len(r.Checks) == 0 || len(r.Plots) == 0 || r.Minutes <= 0 {
			t.Errorf("report %d %q: incomplete or duplicate", i+1, r.Name)
		}
		seen[r.Name] = true
		// The figure each check's claim is about: its metric, the parts of
		// a derived share, or a plot against wall time for wall_s.
		for _, c := range r.Checks {
			plotted := func(m string) bool { return slices.ContainsFunc(r.Plots, func(p Plot) bool { return p.Metric == m }) }
			ok := plotted(c.Metric)
			if pair, isShare := shareOf(c.Metric); isShare {
				ok = plotted(pair[0]) && plotted(pair[1])
			}
			if c.Metric == "wall_s" {
				ok = slices.ContainsFunc(r.Plots, func(p Plot) bool { return p.X == report.XTime })
			}
			if !ok {
				t.Errorf("report %s: a check on %s, and no plot of it", r.Name, c.Metric)
			}
		}
		raw, err := os.ReadFile(filepath.Join("..", "..", r.Config()))
		if err != nil {
			t.Errorf("report %s: %v", r.Name, err)
			continue
		}
		if !strings.Contains(string(raw), "\nname: "+r.Experiment()+"\n") {
			t.Errorf("report %s: its config is not named %s", r.Name, r.Experiment())
		}
		variants := []string{}
		for _, c := range r.Checks {
			variants = append(variants, c.Variant, c.Baseline)
		}
		if r.AnswerTime != nil {
			variants = append(variants, r.AnswerTime.Variant)
		}
		for _, v := range variants {
			if v != "" && !strings.Contains(string(raw), "- name: "+v+"\n") {
				t.Errorf("report %s: check on variant %q, which its config does not have", r.Name, v)
			}
		}
		// The checks rollout suite declares make a valid design.
		f, err := config.Load(filepath.Join("..", "..", r.Config()), nil)
		if err != nil {
			t.Errorf("report %s: %v", r.Name, err)
			continue
		}
		var names []string
		for _, v := range f.Variants {
			names = append(names, v.Name)
		}
		d := r.Declared(f.Design)
		if err := d.Validate(names, func(at string) error { _, err := report.ParseAt(at); return err }); err != nil {
			t.Errorf("report %s: its checks are not a valid design: %v", r.Name, err)
		}
	}
	for _, name := range Priority() {
		if _, ok := Find(name); !ok {
			t.Errorf("priority names %q, which is no report", name)
		}
	}
	if len(Priority()) != len(Reports()) {
		t.Errorf("%d reports, %d in the priority list", len(Reports()), len(Priority()))
	}
}

// fakeStore is a store with one experiment of two variants over seeds
// 1–5: the variant's final eval/acc is the baseline's plus the seed's
// gain, and its per-step cost is the baseline's minus one.
func fakeStore(t *testing.T, gains []float64) *tracking.Store {
	t.Helper()
	return fakeDesigned(t, gains, nil, time.Unix(0, 0))
}

// fakeConfigs are the resolved configs of fakeStore's variants: the
// defaults on two-digit addition, v with another learning rate.
func fakeConfigs(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, v := range []string{"base", "v"} {
		cfg := config.Defaults()
		cfg.Task = config.Task{Name: "add", Params: map[string]int{"digits": 2}}
		if v == "v" {
			cfg.Train.LR = 3e-4
		}
		text, err := config.Marshal(cfg)
		if err != nil {
			t.Fatal(err)
		}
		out[v] = string(text)
	}
	return out
}

// fakeDesigned is fakeStore with the experiment recorded with design d
// (none when nil) and its runs started at start (zero: when they begin).
func fakeDesigned(t *testing.T, gains []float64, d *design.Design, start time.Time) *tracking.Store {
	t.Helper()
	st, err := tracking.Open(filepath.Join(t.TempDir(), "s.db"), tracking.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	fakeInto(t, st, "econ_x", gains, d, start)
	return st
}

// fakeInto writes fakeDesigned's experiment into st under name.
func fakeInto(t *testing.T, st *tracking.Store, name string, gains []float64, d *design.Design, start time.Time) {
	t.Helper()
	var err error
	configs := fakeConfigs(t)
	exp := tracking.Experiment{Name: name, Config: "x", Variants: []string{"base", "v"}, Baseline: "base", Configs: configs}
	if d == nil {
		err = st.PutExperiment(exp)
	} else {
		rec := design.Record{Experiment: name, Baseline: "base", Seeds: []uint64{1, 2, 3, 4, 5}, Design: *d,
			Variants: []design.Variant{{Name: "base", Config: configs["base"]}, {Name: "v", Config: configs["v"]}}}
		text, _ := rec.Text()
		err = st.PutDesigned(exp, tracking.DesignRecord{Hash: design.Hash(text), Text: text, Checks: len(d.Checks)})
	}
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range gains {
		seed := int64(i + 1)
		for _, variant := range []string{"base", "v"} {
			id := fmt.Sprintf("%s%d", variant, seed)
			if name != "econ_x" {
				id = name + "-" + id
			}
			if _, err := st.BeginRun(tracking.Run{ID: id, Experiment: name, Variant: variant, Seed: seed, Config: configs[variant], Version: "test", Start: start}); err != nil {
				t.Fatal(err)
			}
			acc, cost := 0.5+0.01*float64(seed), 10.0+float64(seed)
			if variant == "v" {
				acc, cost = acc+g, cost-1
			}
			for step := 0; step <= 2; step++ {
				m := map[string]float64{"eval/acc": acc * float64(step) / 2, "timing_s/gen": cost, "timing_s/update": 2}
				if err := st.CommitStep(id, tracking.StepRecord{Step: step, Tokens: int64(100 * step), Metrics: m}); err != nil {
					t.Fatal(err)
				}
			}
			if err := st.EndRun(id, tracking.StatusFinished, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// Checks read the store: a consistent gain holds, a gain within noise is
// inconclusive with its MDE, a share is tested against a constant.
func TestEvaluateOnAStore(t *testing.T) {
	opts := report.Options{}
	st := fakeStore(t, []float64{0.05, 0.06, 0.04, 0.05, 0.05})
	o, err := Evaluate(st, "econ_x", "base", Check{Variant: "v", Metric: "eval/acc", At: "final", Want: Higher, Margin: 0.02}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if o.Verdict != Holds || math.Abs(o.Test.Diff-0.05) > 1e-9 || o.Test.N1 != 5 || !(o.MDE > 0) {
		t.Fatalf("outcome %+v, want a held gain of 0.05 over 5 paired seeds", o)
	}
	o, err = Evaluate(st, "econ_x", "base", Check{Variant: "v", Metric: "timing_s/gen", At: "mean", Want: Lower}, opts)
	if err != nil || o.Verdict != Holds || math.Abs(o.Test.Diff+1) > 1e-9 {
		t.Fatalf("mean cost: %+v %v, want −1, holds", o, err)
	}
	o, err = Evaluate(st, "econ_x", "base", Check{Variant: "base", Metric: "share/gen_time", At: "mean", Want: Higher, Versus: true, Constant: 0.5}, opts)
	if err != nil || o.Verdict != Holds || o.Against != "0.5" {
		t.Fatalf("share against 0.5: %+v %v", o, err)
	}
	noisy := fakeStore(t, []float64{0.1, -0.1, 0.08, -0.09, 0.02})
	o, err = Evaluate(noisy, "econ_x", "base", Check{Variant: "v", Metric: "eval/acc", At: "final", Want: NotWorse, Margin: 0.03}, opts)
	if err != nil || o.Verdict != Inconclusive || o.MDE < 0.1 {
		t.Fatalf("noisy: %+v %v, want inconclusive with an MDE above 0.1", o, err)
	}
	if _, err := Evaluate(st, "econ_x", "base", Check{Variant: "w", Metric: "eval/acc", At: "final"}, opts); err == nil || !strings.Contains(err.Error(), `"w"`) {
		t.Fatalf("unknown variant: %v", err)
	}
}

// Render writes the verdict line the index reads back, the claim, every
// table and the reproduction command; the index replaces its own block
// and keeps the rest of the file.
func TestRenderAndIndex(t *testing.T) {
	st := fakeStore(t, []float64{0.05, 0.06, 0.04, 0.05, 0.05})
	dir := t.TempDir()
	r := Report{Number: 2, Name: "x", Title: "X", Claim: "v beats base", Source: "a paper", Design: "d",
		Tables:  []Table{{Title: "final", At: "final", Metrics: []string{"eval/acc"}}, {Title: "cost", At: "mean", Metrics: []string{"timing_s/gen", "steps"}}},
		Checks:  []Check{{Variant: "v", Metric: "eval/acc", At: "final", Want: Higher, Margin: 0.02}},
		Minutes: 1}
	v, err := Write(st, r, dir, Meta{Command: "rollout suite DIR --only x", Commit: "abc", Machine: "m", Store: "s.db"})
	if err != nil || v != Holds {
		t.Fatalf("write: %v %v", v, err)
	}
	// No design recorded: the check and the verdict are exploratory.
	raw, err := os.ReadFile(filepath.Join(dir, "x.md"))
	if err != nil {
		t.Fatal(err)
	}
	md := string(raw)
	for _, want := range []string{"**Verdict (exploratory): holds.**", "v beats base", "## final", "## cost", "rollout suite DIR --only x", "Written by commit abc on m",
		"| v eval/acc final | exploratory | v | base | eval/acc | final | higher |", "**holds** (exploratory)", "No design was recorded",
		"| `train.lr` | 0.0001 | 0.0001 | 0.0003 |", "| `train.filter_groups` † | true | true | true |", "| `task.params.digits` | — | 2 | 2 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if got, _, ok := ReadVerdict(md); !ok || got != "holds (exploratory)" {
		t.Errorf("verdict read back: %q %v", got, ok)
	}
	if w, ok := ReadWall(md); !ok || w <= 0 { // the fake runs start in 1970 and end now
		t.Errorf("wall time read back: %v %v", w, ok)
	}
	index := filepath.Join(dir, "README.md")
	os.WriteFile(index, []byte("# Results\n\nkept\n"), 0o644)
	reports := []Report{r, {Number: 10, Name: "recipe", Title: "R", Claim: "c", Minutes: 3}}
	for range 2 { // the second write replaces the block
		if err := WriteIndex(index, reports, dir, "rollout suite DIR"); err != nil {
			t.Fatal(err)
		}
	}
	raw, _ = os.ReadFile(index)
	idx := string(raw)
	if strings.Count(idx, indexBegin) != 1 || !strings.HasPrefix(idx, "# Results\n\nkept\n") || !strings.Contains(idx, "| 2 | [X](x.md) | v beats base | **holds (exploratory)** |") ||
		!strings.Contains(idx, "not generated yet (`rollout suite DIR --only recipe`, about 3 min") || !strings.Contains(idx, "The 1 reports written took") {
		t.Errorf("index:\n%s", idx)
	}
	os.WriteFile(index, []byte(indexBegin+"\n"), 0o644)
	if err := WriteIndex(index, reports, dir, "rollout suite DIR"); err == nil {
		t.Error("an index with one marker line was overwritten")
	}
}
