// Package design holds an experiment's design as data, fixed before its
// runs: the checks its reports test (claim, metric, point of comparison,
// direction, margin, family), the premises those checks rest on, the
// error rates and the correction for multiplicity, and the resolved
// record — every variant's configuration, the seeds, the baseline and the
// checks — whose hash the store keeps with the time it was recorded.
//
// A check declared in the design recorded before the runs it reads is
// confirmatory; any other comparison a report makes is exploratory. A
// design is written in a configuration file under the key design:
//
//	design:
//	  alpha: 0.05            # two-sided level of every test (default 0.05)
//	  power: 0.8             # power that planning aims at (default 0.8)
//	  correction: holm       # over the primary family: holm (default) or none
//	  premises:
//	    - name: gpu_bound
//	      text: generation dominates a step's cost, as on a GPU serving a large model
//	      unmet: a CPU-bound tiny model, whose update costs as much as its generation
//	    - name: reward_model_ranks   # measured by the report, not stated
//	      text: a reward model that orders one prompt's candidates well
//	      measure: within_prompt_auc
//	      min: 0.85
//	  checks:
//	    - name: filter_keeps_accuracy
//	      claim: dynamic sampling does not hurt learning
//	      variant: filter
//	      metric: eval/acc
//	      at: tokens:20000   # final, step:N, tokens:T, train_flops:F, or mean
//	      want: not worse    # higher, lower, not worse, not higher
//	      margin: 0.03
//	      family: primary    # or secondary
//	      effect: 0.03       # smallest effect of interest, for rollout plan
//	      pilot_sd: 0.041    # SD of the paired difference from a pilot
package design

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Direction is what a check expects of a variant against what it is
// compared with.
type Direction string

// The directions a check can test.
const (
	// Higher: the variant's value is above the baseline's.
	Higher Direction = "higher"
	// Lower: the variant's value is below the baseline's.
	Lower Direction = "lower"
	// NotWorse: the variant's value is not below the baseline's by more
	// than the margin (non-inferiority, higher is better).
	NotWorse Direction = "not worse"
	// NotHigher: the variant's value is not above the baseline's by more
	// than the margin (a cost that must not grow).
	NotHigher Direction = "not higher"
)

// Directions lists the directions a check can test.
var Directions = []Direction{Higher, Lower, NotWorse, NotHigher}

// Family is the family of tests a check belongs to: the correction for
// multiplicity runs over each report's primary family.
type Family string

// The families.
const (
	Primary   Family = "primary"
	Secondary Family = "secondary"
)

// Check is one comparison of a variant with the baseline (or another
// variant, or a number) that a claim implies.
type Check struct {
	// Name identifies the check within its design; empty: its ID is made
	// of variant, metric and point.
	Name string `yaml:"name,omitempty" json:"name,omitempty"`
	// Claim says in words what the check tests.
	Claim string `yaml:"claim,omitempty" json:"claim,omitempty"`
	// Variant is the variant tested.
	Variant string `yaml:"variant" json:"variant"`
	// Metric is the metric compared (a run's recorded metric; with At
	// "mean" also steps, wall_s, share/gen_time, share/gen_flops).
	Metric string `yaml:"metric" json:"metric"`
	// At is the point of each run the values are taken at: final,
	// step:N, tokens:T, train_flops:F (see tracking/report.ParseAt), or
	// mean (each run's mean over its steps).
	At string `yaml:"at" json:"at"`
	// Want is the direction the claim expects.
	Want Direction `yaml:"want" json:"want"`
	// Margin is the smallest difference that matters, in the metric's
	// units: NotWorse holds when the interval of the difference lies
	// above −Margin; Higher does not hold when it lies below +Margin.
	Margin float64 `yaml:"margin,omitempty" json:"margin,omitempty"`
	// Baseline is the variant compared with; empty means the
	// experiment's baseline.
	Baseline string `yaml:"baseline,omitempty" json:"baseline,omitempty"`
	// Constant, when Versus is set, replaces the baseline: the variant's
	// values are tested against this number (a one-sample t-test).
	Constant float64 `yaml:"constant,omitempty" json:"constant,omitempty"`
	Versus   bool    `yaml:"versus,omitempty" json:"versus,omitempty"`
	// Family is primary (default) or secondary.
	Family Family `yaml:"family,omitempty" json:"family,omitempty"`
	// Effect is the smallest effect of interest, for planning the number
	// of seeds; 0 takes the margin.
	Effect float64 `yaml:"effect,omitempty" json:"effect,omitempty"`
	// PilotSD is the standard deviation over seeds of the paired
	// difference, from a pilot (rollout plan prints it): with it the
	// design's planned MDE is known before the runs.
	PilotSD float64 `yaml:"pilot_sd,omitempty" json:"pilot_sd,omitempty"`
	// Premise names the premise (Design.Premises) the check rests on.
	Premise string `yaml:"premise,omitempty" json:"premise,omitempty"`
}

// ID is the check's name, or "variant metric at" when it has none.
func (c Check) ID() string {
	if c.Name != "" {
		return c.Name
	}
	return c.Variant + " " + c.Metric + " " + c.At
}

// InFamily is the check's family, primary when unset.
func (c Check) InFamily() Family {
	if c.Family == "" {
		return Primary
	}
	return c.Family
}

// SmallestEffect is the effect planning aims at: Effect, else Margin
// (0 when neither is set).
func (c Check) SmallestEffect() float64 {
	if c.Effect > 0 {
		return c.Effect
	}
	return c.Margin
}

// Same reports whether two checks test the same thing: every field but
// the words of the claim and the planning figures (Effect, PilotSD), which
// change how many seeds a design runs, not what it tests, agree (a check
// with a new margin, point or family is another check).
func (c Check) Same(d Check) bool {
	c.Claim, d.Claim = "", ""
	c.Effect, d.Effect, c.PilotSD, d.PilotSD = 0, 0, 0, 0
	c.Family, d.Family = c.InFamily(), d.InFamily()
	return c == d
}

// Premise is a condition a claim takes for granted. A test bed that does
// not meet it cannot test the checks resting on it: their verdict is "not
// testable here". A premise is stated unmet by the design (Unmet), or
// measured: with Measure set, the report measures that figure for each
// check resting on the premise, and the premise is unmet for a check
// whose figure (its mean over seeds) is below Min.
type Premise struct {
	Name string `yaml:"name,omitempty" json:"name"`
	// Text states the premise.
	Text string `yaml:"text,omitempty" json:"text,omitempty"`
	// Unmet, when set, says why this test bed does not meet it.
	Unmet string `yaml:"unmet,omitempty" json:"unmet,omitempty"`
	// Measure names the figure that decides the premise (Measures), and
	// Min the least value that meets it.
	Measure string  `yaml:"measure,omitempty" json:"measure,omitempty"`
	Min     float64 `yaml:"min,omitempty" json:"min,omitempty"`
}

// WithinPromptAUC is the measure of a premise on a reward model's
// quality: for a check at answer time whose rule selects by the reward
// model, the share of the right–wrong pairs of one prompt's candidates
// that the model scores in the right order (ties half), averaged over
// the held-out prompts that have both, on the very candidates the rule
// reranks.
const WithinPromptAUC = "within_prompt_auc"

// Measures lists the figures a premise can be measured by.
var Measures = []string{WithinPromptAUC}

// Correction names a correction for multiplicity.
type Correction string

// The corrections.
const (
	Holm Correction = "holm"
	None Correction = "none"
)

// Design is an experiment's checks and how they are tested.
type Design struct {
	// Alpha is the two-sided level of every test. Default 0.05.
	Alpha float64 `yaml:"alpha" json:"alpha"`
	// Power is the power planning aims at. Default 0.8.
	Power float64 `yaml:"power" json:"power"`
	// Correction is applied over each report's primary family: holm
	// (default) or none.
	Correction Correction `yaml:"correction" json:"correction"`
	Premises   []Premise  `yaml:"premises,omitempty" json:"premises,omitempty"`
	Checks     []Check    `yaml:"checks" json:"checks,omitempty"`
}

// Default is the design of a configuration that declares none: α = 0.05,
// 80% power, Holm's correction, no checks.
func Default() Design { return Design{Alpha: 0.05, Power: 0.8, Correction: Holm} }

// FieldError is a design's value out of range: its dotted key under
// design (checks[1].want) and what is wrong.
type FieldError struct {
	Key string
	Msg string
}

func (e *FieldError) Error() string { return e.Key + ": " + e.Msg }

// Validate checks the design against the experiment's variants: known
// directions, families and premises, variants that exist, distinct check
// IDs, points that parse (parseAt, e.g. tracking/report.ParseAt; "mean"
// is always accepted), margins, effects and SDs ≥ 0. Errors are
// *FieldError.
func (d Design) Validate(variants []string, parseAt func(string) error) error {
	fail := func(key, format string, args ...any) error {
		return &FieldError{Key: key, Msg: fmt.Sprintf(format, args...)}
	}
	if !(d.Alpha > 0 && d.Alpha < 1) {
		return fail("alpha", "%v: want 0 < alpha < 1", d.Alpha)
	}
	if !(d.Power > 0 && d.Power < 1) {
		return fail("power", "%v: want 0 < power < 1", d.Power)
	}
	if d.Correction != Holm && d.Correction != None {
		return fail("correction", "%q: want holm or none", d.Correction)
	}
	var premises []string
	for i, p := range d.Premises {
		key := fmt.Sprintf("premises[%d]", i)
		if p.Name == "" {
			return fail(key+".name", "empty: name the premise")
		}
		if slices.Contains(premises, p.Name) {
			return fail(key+".name", "premise %q is declared twice", p.Name)
		}
		switch {
		case p.Measure == "" && p.Min != 0:
			return fail(key+".min", "%v without a measure: name the figure it bounds (measure: %s)", p.Min, strings.Join(Measures, ", "))
		case p.Measure == "":
		case !slices.Contains(Measures, p.Measure):
			return fail(key+".measure", "%q: want one of %s", p.Measure, strings.Join(Measures, ", "))
		case !(p.Min > 0 && p.Min <= 1):
			return fail(key+".min", "%v: want 0 < min ≤ 1 for %s", p.Min, p.Measure)
		}
		premises = append(premises, p.Name)
	}
	var ids []string
	for i, c := range d.Checks {
		key := fmt.Sprintf("checks[%d]", i)
		switch {
		case c.Variant == "":
			return fail(key+".variant", "empty: name the variant the check tests")
		case c.Metric == AnswerMetric && c.Baseline == "":
			return fail(key+".baseline", "empty: an answer-time check names the rule it is compared with")
		case c.Metric == AnswerMetric:
		case !slices.Contains(variants, c.Variant):
			return fail(key+".variant", "%q is not a variant (variants: %s)", c.Variant, strings.Join(variants, ", "))
		case c.Baseline != "" && !slices.Contains(variants, c.Baseline):
			return fail(key+".baseline", "%q is not a variant (variants: %s)", c.Baseline, strings.Join(variants, ", "))
		case c.Metric == "":
			return fail(key+".metric", "empty: name the metric")
		case !slices.Contains(Directions, c.Want):
			return fail(key+".want", "%q: want one of higher, lower, not worse, not higher", c.Want)
		case c.Family != "" && c.Family != Primary && c.Family != Secondary:
			return fail(key+".family", "%q: want primary or secondary", c.Family)
		case c.Premise != "" && !slices.Contains(premises, c.Premise):
			return fail(key+".premise", "%q is not a declared premise", c.Premise)
		case !(c.Margin >= 0):
			return fail(key+".margin", "%v: want ≥ 0", c.Margin)
		case !(c.Effect >= 0):
			return fail(key+".effect", "%v: want ≥ 0", c.Effect)
		case !(c.PilotSD >= 0):
			return fail(key+".pilot_sd", "%v: want ≥ 0", c.PilotSD)
		}
		if c.At == "" {
			return fail(key+".at", "empty: give final, step:N, tokens:T, train_flops:F or mean")
		}
		if c.At != "mean" && slices.Contains(meanOnly, c.Metric) {
			return fail(key+".at", "%q: %s is a run's whole-run figure, read only at mean", c.At, c.Metric)
		}
		if c.At != "mean" && c.Metric != AnswerMetric && parseAt != nil {
			if err := parseAt(c.At); err != nil {
				return fail(key+".at", "%v", err)
			}
		}
		if slices.Contains(ids, c.ID()) {
			return fail(key, "check %q is declared twice", c.ID())
		}
		ids = append(ids, c.ID())
	}
	return nil
}

// AnswerMetric is the metric of a check on a report's measurement at
// answer time (test-time compute) rather than on its runs' records: its
// variant and baseline name the selection rules compared, as the report
// names them ("reward-model best-of-16", "majority of 16 at the same
// tokens"), and its point the policy measured ("answer time, base
// policy", "answer time, after RL").
const AnswerMetric = "answer accuracy"

// meanOnly lists the metrics a report derives from a whole run, which a
// check reads only at "mean": no step, token mark or run's end has them.
var meanOnly = []string{"steps", "wall_s", "share/gen_time", "share/gen_flops"}

// PremiseOf returns the premise a check rests on, and whether it has one.
func (d Design) PremiseOf(c Check) (Premise, bool) {
	for _, p := range d.Premises {
		if p.Name == c.Premise && c.Premise != "" {
			return p, true
		}
	}
	return Premise{}, false
}

// Find returns the declared check that is the same as c (Check.Same),
// and whether there is one.
func (d Design) Find(c Check) (Check, bool) {
	for _, dc := range d.Checks {
		if dc.Same(c) {
			return dc, true
		}
	}
	return Check{}, false
}

// Variant is a variant's name and resolved configuration: the tree of
// its YAML (mappings, sequences, scalars), so that the record's text names
// every setting by its own key (variants[1].config.train.lr).
type Variant struct {
	Name   string `json:"name"`
	Config any    `json:"config"`
}

// ConfigTree parses a resolved configuration text into the tree a
// Variant holds.
func ConfigTree(text string) (any, error) {
	var tree any
	if err := yaml.Unmarshal([]byte(text), &tree); err != nil {
		return nil, fmt.Errorf("resolved config: %w", err)
	}
	return tree, nil
}

// Record is the whole resolved design of an experiment: what its runs
// are (every variant's resolved configuration, the seeds, the baseline)
// and what its reports test. Its hash is recorded in the store before the
// first run.
type Record struct {
	Experiment string    `json:"experiment"`
	Baseline   string    `json:"baseline"`
	Seeds      []uint64  `json:"seeds"`
	Variants   []Variant `json:"variants"`
	Design     Design    `json:"design"`
}

// Text is the record's canonical encoding: JSON, fields in a fixed
// order, one key per line, so that two records differ in their text
// exactly when they differ.
func (r Record) Text() (string, error) {
	b, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return "", fmt.Errorf("design of %s: %w", r.Experiment, err)
	}
	return string(b), nil
}

// Hash is the SHA-256 of a record's text, in hex.
func Hash(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:])
}

// Decode reads a record from its text.
func Decode(text string) (Record, error) {
	var r Record
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		return r, fmt.Errorf("design record: %w", err)
	}
	return r, nil
}

// WallTime reports whether a metric is a wall-clock time (or derived from
// one): such figures follow the machine's load, and a verdict may rest on
// them only when the variants ran interleaved in one sitting with the load
// recorded beside them. CPU seconds and FLOPs are not wall time.
func WallTime(metric string) bool {
	return metric == "wall_s" || strings.HasPrefix(metric, "timing_s/") || strings.HasPrefix(metric, "throughput/") || metric == "share/gen_time"
}
