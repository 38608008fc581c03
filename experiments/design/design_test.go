package design

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	ok := Check{Variant: "v", Metric: "eval/acc", At: "final", Want: Higher}
	tests := []struct {
		name string
		edit func(*Design)
		want string // "" for valid
	}{
		{"valid", func(*Design) {}, ""},
		{"alpha", func(d *Design) { d.Alpha = 1 }, "alpha: 1: want 0 < alpha < 1"},
		{"power", func(d *Design) { d.Power = 0 }, "power: 0"},
		{"correction", func(d *Design) { d.Correction = "bonferroni" }, `correction: "bonferroni"`},
		{"unknown variant", func(d *Design) { d.Checks[0].Variant = "w" }, `checks[0].variant: "w" is not a variant (variants: base, v)`},
		{"unknown baseline", func(d *Design) { d.Checks[0].Baseline = "w" }, `checks[0].baseline: "w"`},
		{"no metric", func(d *Design) { d.Checks[0].Metric = "" }, "checks[0].metric: empty"},
		{"direction", func(d *Design) { d.Checks[0].Want = "up" }, `checks[0].want: "up"`},
		{"family", func(d *Design) { d.Checks[0].Family = "third" }, `checks[0].family: "third"`},
		{"premise", func(d *Design) { d.Checks[0].Premise = "p" }, `checks[0].premise: "p" is not a declared premise`},
		{"margin", func(d *Design) { d.Checks[0].Margin = -1 }, "checks[0].margin: -1: want ≥ 0"},
		{"point", func(d *Design) { d.Checks[0].At = "later" }, "checks[0].at: bad point later"},
		{"no point", func(d *Design) { d.Checks[0].At = "" }, "checks[0].at: empty"},
		{"wall time at a point", func(d *Design) { d.Checks[0].Metric = "wall_s" }, `checks[0].at: "final": wall_s is a run's whole-run figure, read only at mean`},
		{"twice", func(d *Design) { d.Checks = append(d.Checks, ok) }, `checks[1]: check "v eval/acc final" is declared twice`},
		{"premise twice", func(d *Design) { d.Premises = []Premise{{Name: "p"}, {Name: "p"}} }, `premises[1].name: premise "p" is declared twice`},
		{"measured premise", func(d *Design) {
			d.Premises = []Premise{{Name: "p", Measure: WithinPromptAUC, Min: 0.85}}
			d.Checks[0].Premise = "p"
		}, ""},
		{"unknown measure", func(d *Design) { d.Premises = []Premise{{Name: "p", Measure: "auc", Min: 0.85}} }, `premises[0].measure: "auc": want one of within_prompt_auc`},
		{"measure without min", func(d *Design) { d.Premises = []Premise{{Name: "p", Measure: WithinPromptAUC}} }, "premises[0].min: 0: want 0 < min ≤ 1 for within_prompt_auc"},
		{"AUC above 1", func(d *Design) { d.Premises = []Premise{{Name: "p", Measure: WithinPromptAUC, Min: 85}} }, "premises[0].min: 85: want 0 < min ≤ 1"},
		{"min without measure", func(d *Design) { d.Premises = []Premise{{Name: "p", Min: 0.85}} }, "premises[0].min: 0.85 without a measure"},
		{"answer time", func(d *Design) {
			d.Checks[0] = Check{Variant: "reward-model best-of-16", Baseline: "reward-model best-of-1", Metric: AnswerMetric, At: "answer time, base policy", Want: Higher}
		}, ""},
		{"answer time against nothing", func(d *Design) {
			d.Checks[0] = Check{Variant: "reward-model best-of-16", Metric: AnswerMetric, At: "answer time, base policy", Want: Higher}
		}, "checks[0].baseline: empty: an answer-time check names the rule it is compared with"},
		{"answer time without a point", func(d *Design) {
			d.Checks[0] = Check{Variant: "majority of 16", Baseline: "majority of 1", Metric: AnswerMetric, Want: Higher}
		}, "checks[0].at: empty"},
	}
	parseAt := func(at string) error {
		if at == "later" {
			return fmt.Errorf("bad point %s", at)
		}
		return nil
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Default()
			d.Checks = []Check{ok}
			tc.edit(&d)
			err := d.Validate([]string{"base", "v"}, parseAt)
			var fe *FieldError
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("valid design: %v", err)
			case tc.want != "" && (!errors.As(err, &fe) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want a *FieldError containing %q", err, tc.want)
			}
		})
	}
}

func TestSameAndDefaults(t *testing.T) {
	c := Check{Variant: "v", Metric: "eval/acc", At: "final", Want: NotWorse, Margin: 0.03}
	named := c
	named.Claim, named.Family = "words", Primary
	if !c.Same(named) || c.InFamily() != Primary || c.SmallestEffect() != 0.03 {
		t.Errorf("a claim's words or the default family make another check")
	}
	planned := c
	planned.Effect, planned.PilotSD = 0.05, 0.02
	if !c.Same(planned) {
		t.Errorf("a check with its planning figures (effect, pilot SD) is another check")
	}
	other := c
	other.Margin = 0.02
	if c.Same(other) {
		t.Errorf("another margin is the same check")
	}
	if c.Effect = 0.05; c.SmallestEffect() != 0.05 {
		t.Errorf("the stated effect is not the one planned for")
	}
	for metric, wall := range map[string]bool{"wall_s": true, "timing_s/gen": true, "share/gen_time": true, "throughput/tokens_per_s": true, "share/gen_flops": false, "budget/train_flops_cum": false, "eval/acc": false} {
		if WallTime(metric) != wall {
			t.Errorf("WallTime(%s) = %v", metric, !wall)
		}
	}
}

func TestRecordRoundTrip(t *testing.T) {
	r := Record{Experiment: "e", Baseline: "base", Seeds: []uint64{1, 2}, Variants: []Variant{{Name: "base", Config: "lr: 1\n"}}, Design: Default()}
	r.Design.Checks = []Check{{Variant: "base", Metric: "m", At: "final", Want: Higher, PilotSD: 0.1}}
	text, err := r.Text()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(text)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := back.Text()
	if again != text || len(Hash(text)) != 64 {
		t.Errorf("record does not round-trip:\n%s\n%s", text, again)
	}
	if _, err := Decode("{"); err == nil {
		t.Error("a bad text decoded")
	}
}

func ExampleDesign_Validate() {
	d := Default()
	d.Checks = []Check{{Variant: "filter", Metric: "eval/acc", At: "tokens:20000", Want: "not worse", Margin: 0.03}}
	fmt.Println(d.Checks[0].ID(), d.Checks[0].InFamily(), d.Validate([]string{"no_filter", "filter"}, nil))
	d.Checks[0].Want = "better"
	fmt.Println(d.Validate([]string{"no_filter", "filter"}, nil))
	// Output:
	// filter eval/acc tokens:20000 primary <nil>
	// checks[0].want: "better": want one of higher, lower, not worse, not higher
}
