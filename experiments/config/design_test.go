package config

import (
	"errors"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/experiments/design"
)

const designedConfig = `name: d
task: {name: add, params: {digits: 2}}
seeds: [1, 2, 3]
variants:
  - name: base
    set: {train.filter_groups: false}
  - name: filter
    set: {train.filter_groups: true}
design:
  correction: holm
  premises:
    - {name: gpu_bound, text: generation dominates, unmet: a CPU-bound tiny model}
  checks:
    - name: keeps_accuracy
      claim: filtering does not hurt learning
      variant: filter
      metric: eval/acc
      at: final
      want: not worse
      margin: 0.03
    - {variant: filter, metric: share/gen_time, at: mean, want: higher, versus: true, constant: 0.5, family: secondary, premise: gpu_bound}
`

func TestDesignParsed(t *testing.T) {
	f, err := Parse("d.yaml", []byte(designedConfig), nil)
	if err != nil {
		t.Fatal(err)
	}
	d := f.Design
	if d.Alpha != 0.05 || d.Power != 0.8 || d.Correction != design.Holm || len(d.Checks) != 2 || len(d.Premises) != 1 {
		t.Fatalf("design %+v", d)
	}
	c := d.Checks[1]
	if c.ID() != "filter share/gen_time mean" || c.InFamily() != design.Secondary || !c.Versus || c.Constant != 0.5 || c.Premise != "gpu_bound" {
		t.Errorf("second check %+v", c)
	}
	if d.Checks[0].InFamily() != design.Primary || d.Checks[0].SmallestEffect() != 0.03 {
		t.Errorf("first check %+v", d.Checks[0])
	}
	rec, err := f.DesignRecord()
	if err != nil {
		t.Fatal(err)
	}
	text, _ := rec.Text()
	if len(rec.Variants) != 2 || !strings.Contains(text, `"seeds": [`) || !strings.Contains(text, `"filter_groups": true`) {
		t.Errorf("record text lacks seeds or variant configs:\n%s", text)
	}
	// The hash covers the whole resolved design: seeds, settings, checks.
	for _, tc := range []struct {
		what      string
		overrides []string
		edit      func(*File)
	}{
		{"seeds", []string{"seeds=[1, 2]"}, nil},
		{"a setting", []string{"train.lr=0.001"}, nil},
		{"a margin", nil, func(g *File) { g.Design.Checks[0].Margin = 0.02 }},
	} {
		g, err := Parse("d.yaml", []byte(designedConfig), tc.overrides)
		if err != nil {
			t.Fatal(err)
		}
		if tc.edit != nil {
			tc.edit(g)
		}
		r2, _ := g.DesignRecord()
		t2, _ := r2.Text()
		if design.Hash(t2) == design.Hash(text) {
			t.Errorf("%s changed: the design hash did not", tc.what)
		}
	}
	// Run ids do not depend on the design.
	plain, _ := Parse("d.yaml", []byte(designedConfig[:strings.Index(designedConfig, "design:")]), nil)
	if plain.Runs()[0].ID != f.Runs()[0].ID {
		t.Errorf("declaring checks changed the run ids")
	}
}

func TestDesignErrors(t *testing.T) {
	tests := []struct {
		name, from, to, want string
	}{
		{"direction", "want: not worse", "want: better", `d.yaml:19: design.checks[0].want: "better": want one of higher, lower, not worse, not higher`},
		{"variant", "variant: filter\n", "variant: filt\n", `d.yaml:16: design.checks[0].variant: "filt" is not a variant (variants: base, filter)`},
		{"point", "at: final", "at: tokens:x", `d.yaml:18: design.checks[0].at: "tokens:x": want tokens:T`},
		{"premise", "premise: gpu_bound}", "premise: gpu}", `design.checks[1].premise: "gpu" is not a declared premise`},
		{"unknown key", "margin: 0.03", "margn: 0.03", `d.yaml:20: design.checks[0].margn: unknown key`},
		{"family", "family: secondary", "family: tertiary", `design.checks[1].family: "tertiary": want primary or secondary`},
		{"correction", "correction: holm", "correction: bonferroni", `d.yaml:10: design.correction: "bonferroni": want holm or none`},
		{"twice", "name: keeps_accuracy", "name: filter share/gen_time mean", `design.checks[1]: check "filter share/gen_time mean" is declared twice`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			text := strings.Replace(designedConfig, tc.from, tc.to, 1)
			if text == designedConfig {
				t.Fatalf("%q not in the config", tc.from)
			}
			_, err := Parse("d.yaml", []byte(text), nil)
			var e *Error
			if !errors.As(err, &e) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want an *Error containing %q", err, tc.want)
			}
		})
	}
}

// A design recorded by an earlier build, whose variant configs lack a key
// added since, reads as today's design through CanonicalDesign.
func TestCanonicalDesign(t *testing.T) {
	f, err := Parse("d.yaml", []byte(designedConfig), nil)
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := f.DesignRecord()
	today, _ := rec.Text()
	for _, v := range rec.Variants {
		delete(v.Config.(map[string]any)["eval"].(map[string]any), "every_tokens")
	}
	older, _ := rec.Text()
	if older == today {
		t.Fatal("the older text has every key")
	}
	got, err := CanonicalDesign(older)
	if err != nil || got != today {
		t.Errorf("CanonicalDesign: %v\n%s\nwant\n%s", err, got, today)
	}
	if _, err := CanonicalDesign("{"); err == nil {
		t.Error("a bad text was rewritten")
	}
}
