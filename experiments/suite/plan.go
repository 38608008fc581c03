package suite

import (
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/rollout-rl/rollout/experiments/design"
	"github.com/rollout-rl/rollout/tracking/report"
	"github.com/rollout-rl/rollout/tracking/report/stats"
)

// Estimate is a declared check's pilot estimate and the plan it gives.
type Estimate struct {
	Check Check
	// Against names what the check compares with.
	Against string
	// Pairs is the number of pilot seeds both sides have.
	Pairs int
	// Diff is the pilot's mean paired difference and SD its standard
	// deviation over seeds, σ_d.
	Diff, SD float64
	// Effect is the effect planned for: the check's smallest effect of
	// interest (design.Check.SmallestEffect); 0 when it states none.
	Effect float64
	// Needed is the number of seeds a paired t-test needs for the design's
	// power at Effect and level α (stats.PairsFor); 0 without an effect.
	Needed int
	// MDE is the minimum detectable effect of the design as configured
	// (its number of seeds) at the design's power and level, from SD.
	MDE float64
	// SDUpper is the one-sided upper confidence limit of σ_d at
	// SDUpperLevel from the pilot's Pairs seeds (stats.SDUpperLimit);
	// NeededUpper and MDEUpper are Needed and MDE planned from it, and
	// UpperErr says why NeededUpper is 0 where Needed is not. All are
	// unset for a σ_d declared (pilot_sd) rather than estimated: its
	// pilot's size is unknown.
	SDUpper     float64
	NeededUpper int
	MDEUpper    float64
	UpperErr    error
	// Err says why the check could not be estimated (too few pilot
	// seeds); the other fields are then unset.
	Err error
}

// SDUpperLevel is the level of the upper confidence limit of σ_d that
// rollout plan recommends the seeds from: a pilot of a few seeds
// underestimates σ_d more often than not (3 seeds: in 63% of pilots), and
// seeds planned from its 80% upper limit reach the design's power in 80%
// of them (Browne 1995; Kieser and Wassmer 1996).
const SDUpperLevel = 0.8

// Plan estimates, from the runs of a pilot experiment in src (its
// variants named as the design's), the per-seed standard deviation σ_d of
// the paired difference of every check the design declares, and plans
// from it: the seeds needed for the design's power at the effect the
// check states (n = ((t_{1−α/2} + t_{power}) · σ_d/Δ)², iterated on the t
// degrees of freedom) and the MDE of seeds seeds; and both again from the
// upper confidence limit of σ_d at SDUpperLevel. baseline is the
// experiment's baseline (for checks that name none).
func Plan(src report.Source, experiment, baseline string, d design.Design, seeds int, opts report.Options) ([]Estimate, error) {
	if len(d.Checks) == 0 {
		return nil, fmt.Errorf("plan %s: the design declares no checks (design.checks)", experiment)
	}
	var out []Estimate
	cache := map[[2]string]map[string]map[int64]float64{}
	for _, c := range d.Checks {
		if c.Metric == design.AnswerMetric {
			out = append(out, answerEstimate(c, d, seeds))
			continue
		}
		key := [2]string{c.Metric, c.At}
		vals, ok := cache[key]
		if !ok {
			var err error
			if vals, err = Values(src, experiment, c.Metric, c.At, opts); err != nil {
				return nil, fmt.Errorf("plan %s: check %s: %w", experiment, c.ID(), err)
			}
			cache[key] = vals
		}
		base := baseline
		if c.Baseline != "" {
			base = c.Baseline
		}
		e := Estimate{Check: c, Against: against(c, base), Effect: c.SmallestEffect()}
		diffs := pairedDiffs(c, vals[c.Variant], vals[base])
		e.Pairs = len(diffs)
		if e.Pairs < 2 {
			e.Err = fmt.Errorf("%d pilot seeds with values of both %s and %s (need at least 2)", e.Pairs, c.Variant, e.Against)
			out = append(out, e)
			continue
		}
		e.Diff, e.SD = stats.MeanStd(diffs)
		e.MDE = stats.PairedMDE(e.SD, seeds, d.Alpha, d.Power)
		if e.SD == 0 {
			e.Err = fmt.Errorf("σ_d = 0: the pilot's paired differences do not vary (a degenerate metric, or too small a pilot): no basis to plan")
			out = append(out, e)
			continue
		}
		e.SDUpper = stats.SDUpperLimit(e.SD, e.Pairs, SDUpperLevel)
		e.MDEUpper = stats.PairedMDE(e.SDUpper, seeds, d.Alpha, d.Power)
		if e.Effect > 0 {
			n, err := stats.PairsFor(e.SD, e.Effect, d.Alpha, d.Power)
			if err != nil {
				e.Err = err
			}
			e.Needed = n
			e.NeededUpper, e.UpperErr = stats.PairsFor(e.SDUpper, e.Effect, d.Alpha, d.Power)
		}
		out = append(out, e)
	}
	return out, nil
}

// answerEstimate plans a check on the answer-time measurement, which a
// pilot's runs do not hold: from the σ_d the check declares (pilot_sd,
// from an earlier measurement), else not at all.
func answerEstimate(c Check, d design.Design, seeds int) Estimate {
	e := Estimate{Check: c, Against: c.Baseline, Effect: c.SmallestEffect(), SD: c.PilotSD, Diff: math.NaN()}
	if c.PilotSD <= 0 {
		e.Err = fmt.Errorf("measured at answer time when the report is written, not from the pilot's runs: declare its pilot_sd to plan it")
		return e
	}
	e.MDE = stats.PairedMDE(e.SD, seeds, d.Alpha, d.Power)
	if e.Effect > 0 {
		e.Needed, e.Err = stats.PairsFor(e.SD, e.Effect, d.Alpha, d.Power)
	}
	return e
}

// pairedDiffs are the check's differences a − b (or a − the constant)
// over the seeds both sides have, in seed order.
func pairedDiffs(c Check, a, b map[int64]float64) []float64 {
	var out []float64
	for _, s := range slices.Sorted(maps.Keys(a)) {
		switch y, ok := b[s]; {
		case c.Versus:
			out = append(out, a[s]-c.Constant)
		case ok:
			out = append(out, a[s]-y)
		}
	}
	return out
}

// NeededText renders Estimate.Needed: "—" without an effect.
func (e Estimate) NeededText() string {
	return neededText(e.Effect, e.Needed)
}

// NeededUpperText renders Estimate.NeededUpper: "—" without an effect or
// without an upper limit, the reason when it could not be planned.
func (e Estimate) NeededUpperText() string {
	if e.UpperErr != nil {
		return "— (" + e.UpperErr.Error() + ")"
	}
	return neededText(e.Effect, e.NeededUpper)
}

func neededText(effect float64, n int) string {
	if effect <= 0 || n == 0 {
		return "—"
	}
	return fmt.Sprint(n)
}

// mdeOrInf renders an MDE, ∞ for a design of fewer than two seeds.
func mdeOrInf(x float64) string {
	if math.IsInf(x, 1) {
		return "∞"
	}
	return fmt.Sprintf("%.3g", x)
}

// WritePlan prints the estimates: per check its pilot, σ_d and its upper
// confidence limit at SDUpperLevel, the seeds needed and the MDE of the
// design as configured with seeds seeds from each; the seeds it
// recommends (from the upper limit), then the design lines that make the
// plan part of the design (pilot_sd).
func WritePlan(w io.Writer, ests []Estimate, d design.Design, seeds int) error {
	p := &printer{w: w}
	p.f("power %.0f%%, α = %g (two-sided), paired t-test over seeds; the design runs %d seeds\n\n", 100*d.Power, d.Alpha, seeds)
	tab := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p.w = tab
	ucl := fmt.Sprintf("%.0f%% UCL", 100*SDUpperLevel)
	p.f("check\tvariant\tagainst\tmetric\tat\tpilot seeds\tpilot diff\tσ_d\tσ_d %s\teffect\tseeds needed (σ_d)\tseeds needed (UCL)\tMDE at %d seeds (σ_d)\tMDE (UCL)\n", ucl, seeds)
	for _, e := range ests {
		if e.Err != nil && e.Pairs < 2 && e.SD == 0 {
			p.f("%s\t%s\t%s\t%s\t%s\t%d\t—\t—\t—\t%g\t—\t—\t—\t— (%v)\n", e.Check.ID(), e.Check.Variant, e.Against, e.Check.Metric, e.Check.At, e.Pairs, e.Effect, e.Err)
			continue
		}
		needed := e.NeededText()
		if e.Err != nil {
			needed = "— (" + e.Err.Error() + ")"
		}
		effect := "none stated"
		if e.Effect > 0 {
			effect = fmt.Sprintf("%.3g", e.Effect)
		}
		pilot, diff := fmt.Sprint(e.Pairs), fmt.Sprintf("%+.4g", e.Diff)
		if e.Check.Metric == design.AnswerMetric {
			pilot, diff = "declared pilot_sd", "—"
		}
		upper, mdeUpper := "—", "—"
		if e.SDUpper > 0 {
			upper, mdeUpper = fmt.Sprintf("%.4g", e.SDUpper), mdeOrInf(e.MDEUpper)
		}
		p.f("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.4g\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Check.ID(), e.Check.Variant, e.Against, e.Check.Metric, e.Check.At, pilot, diff, e.SD, upper, effect, needed, e.NeededUpperText(), mdeOrInf(e.MDE), mdeUpper)
	}
	if p.err == nil {
		p.err = tab.Flush()
	}
	p.w = w
	writeRecommendation(p, ests, seeds)
	p.f("\nTo quote the planned MDE in the reports, add to each check of design.checks (before the runs):\n")
	for i, e := range ests {
		if e.Pairs >= 2 && e.SD > 0 {
			p.f("  checks[%d] (%s): pilot_sd: %.4g\n", i, e.Check.ID(), e.SD)
		}
	}
	return p.err
}

// writeRecommendation recommends the seeds of the design: the most any
// primary check stating an effect needs at the upper confidence limit of
// σ_d (any check when no primary one has a plan), beside the most they
// need at σ_d itself; the secondary checks' need is said apart.
func writeRecommendation(p *printer, ests []Estimate, seeds int) {
	var skipped []string
	var planned, primary []*Estimate
	for i, e := range ests {
		if e.Err == nil && e.UpperErr != nil {
			skipped = append(skipped, fmt.Sprintf("%s (%v)", e.Check.ID(), e.UpperErr))
		}
		if e.Err != nil || e.UpperErr != nil || e.NeededUpper == 0 {
			continue
		}
		planned = append(planned, &ests[i])
		if e.Check.InFamily() == design.Primary {
			primary = append(primary, &ests[i])
		}
	}
	defer func() {
		if len(skipped) > 0 {
			p.f("Not counted, no plan at the upper limit: %s.\n", strings.Join(skipped, "; "))
		}
	}()
	if len(planned) == 0 {
		p.f("\nNo recommendation: no check states an effect with a σ_d the pilot estimates (an upper limit needs the pilot's size).\n")
		return
	}
	which, counted := "check", planned
	if len(primary) > 0 {
		which, counted = "primary check", primary
	}
	top, point := counted[0], 0
	for _, e := range counted {
		point = max(point, e.Needed)
		if e.NeededUpper > top.NeededUpper {
			top = e
		}
	}
	p.f("\nRecommended: %d seeds (the design runs %d), from the %.0f%% upper confidence limit of σ_d:\n", top.NeededUpper, seeds, 100*SDUpperLevel)
	p.f("the most any %s needs at it (%s, σ_d ≤ %.4g with %.0f%% confidence from %d pilot seeds).\n", which, top.Check.ID(), top.SDUpper, 100*SDUpperLevel, top.Pairs)
	p.f("At the pilot's σ_d itself the %ss need %d seeds, but a pilot of %d seeds underestimates σ_d\n", which, point, top.Pairs)
	p.f("in %.0f%% of pilots (normal differences), and a design planned from it then falls short of its power;\n", 100*stats.SDBelowProb(top.Pairs))
	p.f("one planned from the upper limit reaches it in %.0f%% of them (Browne 1995; Kieser and Wassmer 1996).\n", 100*SDUpperLevel)
	if len(counted) < len(planned) {
		var most *Estimate
		for _, e := range planned {
			if e.Check.InFamily() != design.Primary && (most == nil || e.NeededUpper > most.NeededUpper) {
				most = e
			}
		}
		p.f("The secondary checks, not counted, need up to %d at the limit (%s).\n", most.NeededUpper, most.Check.ID())
	}
}
