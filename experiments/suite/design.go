package suite

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/rollout-rl/rollout/experiments/config"
	"github.com/rollout-rl/rollout/experiments/design"
	"github.com/rollout-rl/rollout/tracking"
	"github.com/rollout-rl/rollout/tracking/report/stats"
)

// wallPremise is the premise every check on wall time rests on; its
// Unmet is filled in per check (wallTimeUnusable).
var wallPremise = design.Premise{
	Name: "interleaved_wall_time",
	Text: "wall times of the variants measured interleaved in one sitting, with the machine's load recorded beside them",
}

// Declared is the design rollout suite records for the report's config,
// whose design is d: d itself when it declares checks, else d with the
// report's checks and premises, so that the runs record them before they
// start and the report computes them as confirmatory.
func (r Report) Declared(d design.Design) design.Design {
	if len(d.Checks) == 0 {
		d.Checks = slices.Clone(r.Checks)
		d.Premises = append(slices.Clone(d.Premises), r.Premises...)
	}
	return d
}

// designed is what a report knows of its experiment's design.
type designed struct {
	// Record is the design recorded in the store; nil when none is.
	Record *tracking.DesignRecord
	// Design is the recorded design decoded (design.Default when none).
	Design design.Design
	// Seeds is the number of seeds the design planned.
	Seeds int
	// Premises are the recorded design's premises, then the report's
	// (a report's statement of one replaces the recorded one).
	Premises []design.Premise
	// FirstRun is the earliest start of the experiment's runs.
	FirstRun time.Time
	// Loads are the load samples recorded beside each run, by run id.
	Loads map[string][]tracking.LoadSample
}

// loadDesign reads the design recorded for the experiment.
func loadDesign(st *tracking.Store, exp string, runs []tracking.Run, r Report) (designed, error) {
	d := designed{Design: design.Default(), Loads: map[string][]tracking.LoadSample{}}
	for _, run := range runs {
		if d.FirstRun.IsZero() || run.Start.Before(d.FirstRun) {
			d.FirstRun = run.Start
		}
		loads, err := st.Loads(run.ID)
		if err != nil {
			return d, fmt.Errorf("suite: report %s: %w", r.Name, err)
		}
		d.Loads[run.ID] = loads
	}
	rec, err := st.Design(exp)
	switch {
	case errors.Is(err, tracking.ErrNotFound):
	case err != nil:
		return d, fmt.Errorf("suite: report %s: %w", r.Name, err)
	default:
		decoded, err := design.Decode(rec.Text)
		if err != nil {
			return d, fmt.Errorf("suite: report %s: experiment %s: %w", r.Name, exp, err)
		}
		d.Record, d.Design, d.Seeds = &rec, decoded.Design, len(decoded.Seeds)
	}
	d.Premises = slices.Clone(d.Design.Premises)
	for _, p := range r.Premises {
		if i := slices.IndexFunc(d.Premises, func(q design.Premise) bool { return q.Name == p.Name }); i >= 0 {
			d.Premises[i] = p
		} else {
			d.Premises = append(d.Premises, p)
		}
	}
	return d, nil
}

// checks lists the checks a report computes from its runs' records: the
// recorded design's declared checks (but those on the answer-time
// measurement, design.AnswerMetric, which the report's AnswerTime
// computes), then the report's own that the design does not declare.
func (d designed) checks(r Report) []Check {
	var out []Check
	for _, c := range d.Design.Checks {
		if c.Metric != design.AnswerMetric {
			out = append(out, c)
		}
	}
	for _, c := range r.Checks {
		if _, ok := d.Design.Find(c); !ok || d.Record == nil {
			out = append(out, c)
		}
	}
	return out
}

// answered reports an error for a check the design declares on the
// answer-time measurement that none of outs (the report's answer-time
// checks) is.
func (d designed) answered(r Report, outs []Outcome) error {
	for _, c := range d.Design.Checks {
		if c.Metric != design.AnswerMetric {
			continue
		}
		if r.AnswerTime == nil {
			return fmt.Errorf("suite: report %s: the design declares check %s at answer time, and the report measures nothing at answer time", r.Name, c.ID())
		}
		if !slices.ContainsFunc(outs, func(o Outcome) bool { return c.Same(o.Check) }) {
			var have []string
			for _, o := range outs {
				have = append(have, fmt.Sprintf("%s against %s at %q (%s, margin %g)", o.Variant, o.Baseline, o.At, o.Want, o.Margin))
			}
			return fmt.Errorf("suite: report %s: the design's check %s (%s against %s at %q, %s, margin %g) is none of the report's checks at answer time: %s", r.Name, c.ID(), c.Variant, c.Baseline, c.At, c.Want, c.Margin, strings.Join(have, "; "))
		}
	}
	return nil
}

// classify marks an outcome confirmatory or exploratory, plans its MDE,
// and turns its verdict into not testable here when a premise it rests on
// is unmet (wall time always rests on one).
func (d designed) classify(o *Outcome, runs []tracking.Run) {
	declared, ok := d.Design.Find(o.Check)
	switch {
	case d.Record == nil:
		o.Exploratory, o.Why = true, "no design was recorded before the runs"
	case !ok:
		o.Exploratory, o.Why = true, "not declared in the recorded design"
	default:
		o.Check = declared
		first := firstStart(runs, o.Variant, o.Against)
		if o.Metric == design.AnswerMetric { // it reads the policies of the experiment's runs
			first = d.FirstRun
		}
		if !first.IsZero() && d.Record.Recorded.After(first) {
			o.Exploratory, o.Why = true, fmt.Sprintf("declared %s, after its runs began (%s)", stamp(d.Record.Recorded), stamp(first))
		}
		o.MDE = mdeAt(o.Test, d.Design.Alpha, d.Design.Power)
		if declared.PilotSD > 0 && d.Seeds > 0 {
			o.PlannedMDE = stats.PairedMDE(declared.PilotSD, d.Seeds, d.Design.Alpha, d.Design.Power)
		}
	}
	if o.Check.Premise != "" {
		for _, p := range d.Premises {
			if p.Name != o.Check.Premise {
				continue
			}
			if p.Unmet == "" && p.Measure != "" {
				p.Unmet, o.PremiseMet = measuredPremise(p, *o)
			}
			if p.Unmet != "" {
				o.Verdict, o.Premise = NotTestable, premiseText(p)
			}
		}
	}
	if design.WallTime(o.Metric) {
		if why, load := d.wallTime(o, runs); why != "" {
			p := wallPremise
			p.Unmet = why + ", so this wall-time figure is reported and decides nothing (CPU seconds or FLOPs can)"
			o.Verdict, o.Premise = NotTestable, premiseText(p)
		} else {
			o.Load = load
		}
	}
}

// wallTime says why a check on wall time cannot decide a verdict ("" when
// it can: every seed's runs of the variant and of what it is compared
// with ran side by side, and the load was recorded beside each), and
// otherwise the load beside its runs.
func (d designed) wallTime(o *Outcome, runs []tracking.Run) (why, load string) {
	bySeed := map[int64]map[string]tracking.Run{}
	for _, r := range runs {
		if r.Variant == o.Variant || r.Variant == o.Against {
			if bySeed[r.Seed] == nil {
				bySeed[r.Seed] = map[string]tracking.Run{}
			}
			bySeed[r.Seed][r.Variant] = r
		}
	}
	lo, hi, cpus := math.Inf(1), math.Inf(-1), 0
	for _, seed := range slices.Sorted(maps.Keys(bySeed)) {
		v, ok := bySeed[seed][o.Variant]
		if !ok {
			continue
		}
		if !o.Versus {
			b, ok := bySeed[seed][o.Against]
			if !ok {
				continue
			}
			if !(v.Start.Before(b.End) && b.Start.Before(v.End)) {
				return fmt.Sprintf("the runs of %s and %s at seed %d ran one after another, not side by side in one sitting (rollout run --interleave runs them so)", o.Variant, o.Against, seed), ""
			}
			if why := d.loadOf(b, &lo, &hi, &cpus); why != "" {
				return why, ""
			}
		}
		if why := d.loadOf(v, &lo, &hi, &cpus); why != "" {
			return why, ""
		}
	}
	if cpus == 0 {
		return "no runs to compare", ""
	}
	return "", fmt.Sprintf("load average %.2f–%.2f on %d CPUs beside these runs", lo, hi, cpus)
}

// loadOf widens [lo, hi] by the load samples of run r, or says that it
// has none.
func (d designed) loadOf(r tracking.Run, lo, hi *float64, cpus *int) string {
	samples := d.Loads[r.ID]
	if len(samples) == 0 {
		return fmt.Sprintf("no load was recorded beside run %s (%s seed %d; made by a build that did not record it)", r.ID, r.Variant, r.Seed)
	}
	for _, s := range samples {
		*lo, *hi, *cpus = math.Min(*lo, s.Load1), math.Max(*hi, s.Load1), s.CPUs
	}
	return ""
}

// measuredPremise decides a premise measured by a figure of the
// outcome: why it is unmet, or, when it is met, a sentence saying so with
// the figure.
func measuredPremise(p design.Premise, o Outcome) (unmet, met string) {
	switch p.Measure {
	case design.WithinPromptAUC:
		s := o.RankAUC
		if s.N == 0 {
			return fmt.Sprintf("the report measures no within-prompt AUC for %s (%s), which does not select by the reward model", o.Variant, o.At), ""
		}
		figure := fmt.Sprintf("the reward model's within-prompt AUC on the candidates %s reranks (%s) is %s over %d seeds (mean ± 95%% t-interval)", o.Variant, o.At, formatSummary(s), s.N)
		if s.Mean < p.Min {
			return fmt.Sprintf("%s, below the %g it needs", figure, p.Min), ""
		}
		return "", fmt.Sprintf("%s (%s) is met: %s, at least %g", p.Name, p.Text, figure, p.Min)
	}
	return fmt.Sprintf("no report measures %q", p.Measure), ""
}

func premiseText(p design.Premise) string {
	return fmt.Sprintf("%s (%s) is not met: %s", p.Name, p.Text, p.Unmet)
}

// firstStart is the earliest start of the runs of the given variants.
func firstStart(runs []tracking.Run, variants ...string) time.Time {
	var first time.Time
	for _, r := range runs {
		if slices.Contains(variants, r.Variant) && (first.IsZero() || r.Start.Before(first)) {
			first = r.Start
		}
	}
	return first
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

// stampMilli is stamp to the millisecond: a design is recorded moments
// before its first run starts, often within the same second.
func stampMilli(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.000Z") }

// correct applies the design's correction over the primary family of
// confirmatory, testable checks, and the design's α to every check: a
// check holds only when its (adjusted) PHolds is below α.
func (d designed) correct(outs []Outcome) {
	var family []int
	for i, o := range outs {
		if !o.Exploratory && o.InFamily() == design.Primary && o.Verdict != NotTestable {
			family = append(family, i)
		}
	}
	if d.Design.Correction == design.Holm && len(family) > 1 {
		ps := make([]float64, len(family))
		for k, i := range family {
			ps[k] = outs[i].PHolds
		}
		for k, adj := range stats.Holm(ps) {
			outs[family[k]].AdjP, outs[family[k]].Corrected = adj, true
		}
	}
	for i := range outs {
		if outs[i].Verdict == Holds && !(outs[i].AdjP < d.Design.Alpha) {
			outs[i].Verdict = Inconclusive
		}
	}
}

// family lists the IDs of the checks the correction ran over.
func correctedFamily(outs []Outcome) []string {
	var ids []string
	for _, o := range outs {
		if o.Corrected {
			ids = append(ids, o.ID())
		}
	}
	return ids
}

// pHolds is the two-sided p-value of the test that decides "holds": the
// difference against the boundary of the claimed side (0 for higher and
// lower, the margin for not worse and not higher), 1 when the estimate
// lies on the other side of it.
func pHolds(c Check, t stats.TestResult) float64 {
	num := claimedSide(c, t.Diff)
	switch {
	case num <= 0 || t.DF <= 0:
		return 1
	case t.StdErr == 0:
		return 0
	}
	return stats.TwoSidedP(num/t.StdErr, t.DF)
}

// claimedSide is how far the difference lies on the side the check
// claims, past its boundary (0 for higher and lower, the margin for not
// worse and not higher): positive exactly when the estimate is on the
// claimed side; 0 for an unknown direction.
func claimedSide(c Check, diff float64) float64 {
	switch c.Want {
	case Higher:
		return diff
	case Lower:
		return -diff
	case NotWorse:
		return diff + c.Margin
	case NotHigher:
		return c.Margin - diff
	}
	return 0
}

// writeDesignRecord says which design the report's checks were declared
// in and when, the correction and the premises.
func writeDesignRecord(p *printer, d designed, outs []Outcome) {
	p.f("## Design record\n\n")
	if d.Record == nil {
		p.f("No design was recorded in the store for this experiment (its runs were made by a build that did not record designs): **every check below is exploratory**, and so is the verdict.\n\n")
	} else {
		when := "before its first run (started " + stampMilli(d.FirstRun) + ")"
		if d.Record.Recorded.After(d.FirstRun) {
			when = "after its first run began (" + stampMilli(d.FirstRun) + "): checks on runs made before it are exploratory"
		}
		p.f("Design `%.16s` (SHA-256 of the resolved design: every variant's settings, the %d seeds, the baseline and %d declared check%s), recorded %s, %s.\n\n",
			d.Record.Hash, d.Seeds, d.Record.Checks, plural(d.Record.Checks), stampMilli(d.Record.Recorded), when)
	}
	fam := correctedFamily(outs)
	if len(fam) == 0 {
		for _, o := range outs {
			if !o.Exploratory && o.InFamily() == design.Primary && o.Verdict != NotTestable {
				fam = append(fam, o.ID())
			}
		}
	}
	switch {
	case d.Design.Correction == design.None:
		p.f("Multiplicity: no correction (the design says `correction: none`); α = %g.\n\n", d.Design.Alpha)
	case len(fam) > 1:
		p.f("Multiplicity: Holm's step-down correction over the primary family of confirmatory checks (%d tests: %s), α = %g; secondary and exploratory checks are not corrected. A check holds only when its adjusted p is below α; \"does not hold\" uses the uncorrected interval.\n\n",
			len(fam), quoteAll(fam), d.Design.Alpha)
	default:
		untestable := 0
		for _, o := range outs {
			if !o.Exploratory && o.InFamily() == design.Primary && o.Verdict == NotTestable {
				untestable++
			}
		}
		why := "nothing to correct"
		if untestable > 0 {
			why = fmt.Sprintf("nothing to correct; %d primary check%s not testable here, outside the family", untestable, plural(untestable))
		}
		p.f("Multiplicity: Holm's correction over the primary family of confirmatory, testable checks, which has %d test%s here (%s); α = %g.\n\n", len(fam), plural(len(fam)), why, d.Design.Alpha)
	}
	var lines []string
	for _, pr := range d.Premises {
		state := "met"
		if pr.Unmet != "" {
			state = "**not met here**: " + pr.Unmet
		}
		lines = append(lines, fmt.Sprintf("- `%s`: %s — %s", pr.Name, pr.Text, state))
	}
	var unmet, met, within []string
	for _, o := range outs {
		switch {
		case !design.WallTime(o.Metric):
		case o.Load == "":
			unmet = append(unmet, "`"+o.ID()+"`")
		case o.Versus:
			within = append(within, "`"+o.ID()+"`")
		default:
			met = append(met, "`"+o.ID()+"`")
		}
	}
	if len(unmet) > 0 {
		lines = append(lines, fmt.Sprintf("- `%s`: %s — **not met here** for %s (see the checks)", wallPremise.Name, wallPremise.Text, strings.Join(unmet, ", ")))
	}
	if len(met) > 0 {
		lines = append(lines, fmt.Sprintf("- `%s`: %s — met for %s", wallPremise.Name, wallPremise.Text, strings.Join(met, ", ")))
	}
	if len(within) > 0 {
		lines = append(lines, fmt.Sprintf("- `%s`: %s — not needed for %s, which compare wall times within each run with a number, not runs with each other (the load beside their runs is in the checks)", wallPremise.Name, wallPremise.Text, strings.Join(within, ", ")))
	}
	if len(lines) > 0 {
		p.f("Premises:\n\n%s\n\n", strings.Join(lines, "\n"))
	}
	if e := evaluations(outs); e != "" {
		p.f("%s\n\n", e)
	}
}

// evaluations describes the evaluation metrics the checks read, so that
// a report says which estimate of accuracy it uses.
func evaluations(outs []Outcome) string {
	kinds := map[string]string{
		"eval/acc":    "greedy accuracy (one greedy response a prompt, on `eval.prompts` held-out prompts)",
		"eval/pass@1": "unbiased pass@1 (per prompt, the share of `eval.samples` samples at `rollout.temperature` that are correct; mean over `eval.prompts` prompts)",
		"eval/pass@k": "unbiased pass@k, 1 − C(n−c, k)/C(n, k) from `eval.samples` samples at `rollout.temperature`",
		"eval/maj@k":  "maj@k (majority vote over the first `eval.k` samples)",
	}
	var used []string
	for _, o := range outs {
		if text, ok := kinds[o.Metric]; ok && !slices.Contains(used, "`"+o.Metric+"`: "+text) {
			used = append(used, "`"+o.Metric+"`: "+text)
		}
	}
	if len(used) == 0 {
		return ""
	}
	return "Evaluation the checks read: " + strings.Join(used, "; ") + "."
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// writeSettings discloses, from the store, every variant's resolved
// settings that differ from the defaults and those that change what the
// budget or the metric means even at their defaults (config.Disclose).
func writeSettings(p *printer, exp tracking.Experiment, runs []tracking.Run) error {
	variants := baselineFirst(exp)
	byVariant := map[string]map[string]config.Setting{}
	var keys []string
	defaults := map[string]string{}
	meaning := map[string]bool{}
	for _, v := range variants {
		text, ok := exp.Configs[v]
		if i := slices.IndexFunc(runs, func(r tracking.Run) bool { return r.Variant == v }); !ok && i >= 0 {
			text, ok = runs[i].Config, true
		}
		if !ok {
			return fmt.Errorf("suite: experiment %s: no resolved config recorded for variant %s", exp.Name, v)
		}
		settings, err := config.Disclose(text)
		if err != nil {
			return fmt.Errorf("suite: experiment %s variant %s: %w", exp.Name, v, err)
		}
		byVariant[v] = map[string]config.Setting{}
		for _, s := range settings {
			byVariant[v][s.Key] = s
			if !slices.Contains(keys, s.Key) {
				keys = append(keys, s.Key)
			}
			defaults[s.Key], meaning[s.Key] = s.Default, s.Meaning
		}
	}
	slices.Sort(keys)
	p.f("## Settings\n\nFrom the store: each variant's resolved settings that differ from the defaults, and (marked †) every setting that changes what the budget or the metric means even at its default — dynamic sampling (`train.filter_groups`: groups whose rewards are all equal are sampled, counted in the budget and not trained on; `train.max_resample_rounds`), the budget, the length cap and overlong treatment, and the evaluation (greedy accuracy on `eval.prompts` prompts; pass@k and maj@k from `eval.samples` samples a prompt at `rollout.temperature`). The eval prompts and the evaluation's random streams are drawn from the run's seed: variants at the same seed are evaluated on the same prompts with the same streams (common random numbers), so the paired tests compare them on identical prompts; each seed has its own eval prompts.\n\n")
	p.f("| setting | default |")
	for _, v := range variants {
		p.f(" %s |", v)
	}
	p.f("\n|---|---|%s\n", strings.Repeat("---|", len(variants)))
	for _, k := range keys {
		name := "`" + k + "`"
		if meaning[k] {
			name += " †"
		}
		def := defaults[k]
		if def == "(absent)" || def == "" {
			def = "—"
		}
		p.f("| %s | %s |", name, def)
		for _, v := range variants {
			val := def
			if s, ok := byVariant[v][k]; ok {
				val = s.Value
			}
			p.f(" %s |", val)
		}
		p.f("\n")
	}
	p.f("\n")
	return nil
}

// mdeText renders an MDE; "—" when none was planned.
func mdeText(x float64) string {
	if math.IsNaN(x) {
		return "—"
	}
	return fmt.Sprintf("%.3g", x)
}
