package suite

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/rollout-rl/rollout/experiments/design"
	"github.com/rollout-rl/rollout/tracking"
	"github.com/rollout-rl/rollout/tracking/report/stats"
)

// WriteVerdicts writes, in markdown, the verdict of each experiment's
// declared checks (confirmatory when its design was recorded before its
// runs, the correction over its primary family, premises, planned and
// achieved MDE), its design record and its disclosed settings; the
// experiments' runs must have finished. With more than one experiment —
// the same design on other base policies — it then pools each check
// declared in all of them across the experiments (PoolChecks) beside each
// one's estimate.
func WriteVerdicts(w io.Writer, st *tracking.Store, experiments []string, meta Meta) error {
	p := &printer{w: w}
	byExp := make([][]Outcome, len(experiments))
	for i, name := range experiments {
		r := Report{Name: name}
		exp, runs, err := finishedExperiment(st, name, r)
		if err != nil {
			return err
		}
		outs, d, _, err := evaluateReport(st, r, exp, runs, meta)
		if err != nil {
			return err
		}
		byExp[i] = outs
		verdict, exploratory := overall(outs)
		p.f("## %s\n\n", name)
		label := "Verdict"
		if exploratory {
			label = "Verdict (exploratory)"
		}
		p.f("**%s: %s.** %s\n\n", label, verdict, verdictSentence(verdict, outs))
		p.f("Experiment `%s`: baseline `%s`, variants %s; %d runs over seeds %s.\n\n", exp.Name, exp.Baseline, quoteAll(exp.Variants), len(runs), seedList(runs))
		writeDesignRecord(p, d, outs)
		if err := writeSettings(p, exp, runs); err != nil {
			return err
		}
		writeChecks(p, outs, exp.Baseline)
	}
	if len(experiments) > 1 {
		pools, err := PoolChecks(experiments, byExp)
		if err != nil {
			return err
		}
		writePools(p, experiments, pools)
	}
	return p.err
}

// Pool is one check pooled across experiments (base policies).
type Pool struct {
	Check Check
	// Each is the check's outcome in every experiment, in order.
	Each []Outcome
	// Pooled is the DerSimonian–Laird random-effects estimate of the
	// paired differences, weighted by 1/(SE_b² + τ²).
	Pooled stats.Pooled
	// Err says why the check could not be pooled (an SE of 0).
	Err error
	// HKLo and HKHi bound the Hartung–Knapp interval of the pooled
	// estimate (stats.HartungKnapp: t on K−1 degrees of freedom), shown
	// beside the normal interval, which decides the verdict; NaN when
	// there is none (one experiment).
	HKLo, HKHi float64
	// Verdict decides the pooled estimate as a check is decided in one
	// experiment (decide), on the pooled interval: not testable here when
	// it is so in any experiment, inconclusive when it cannot be pooled.
	// It is exploratory when the check is so in any experiment. PHolds is
	// the normal two-sided p of the claimed side (as Outcome.PHolds), AdjP
	// that p after Holm's correction over the pooled confirmatory,
	// testable checks of the primary family; a pooled check holds only
	// when AdjP < α.
	Verdict     Verdict
	Exploratory bool
	PHolds      float64
	AdjP        float64
	Corrected   bool
}

// PoolChecks pools, for every check (by ID) computed in each of the
// experiments, its paired differences across them with random effects
// (stats.DerSimonianLaird, 95% normal interval; beside it the
// Hartung–Knapp interval, NaN with one experiment). outs[i] are the
// outcomes of experiments[i].
func PoolChecks(experiments []string, outs [][]Outcome) ([]Pool, error) {
	if len(outs) != len(experiments) || len(outs) == 0 {
		return nil, fmt.Errorf("suite: pooling %d experiments with %d outcome lists", len(experiments), len(outs))
	}
	var pools []Pool
	for _, o := range outs[0] {
		pl := Pool{Check: o.Check}
		for _, others := range outs {
			i := slices.IndexFunc(others, func(x Outcome) bool { return x.ID() == o.ID() })
			if i < 0 {
				break
			}
			pl.Each = append(pl.Each, others[i])
		}
		if len(pl.Each) != len(outs) {
			continue
		}
		d := make([]float64, len(pl.Each))
		se := make([]float64, len(pl.Each))
		for i, x := range pl.Each {
			d[i], se[i] = x.Test.Diff, x.Test.StdErr
		}
		pl.Pooled, pl.Err = stats.DerSimonianLaird(d, se, stats.DefaultLevel)
		pl.HKLo, pl.HKHi = math.NaN(), math.NaN()
		if pl.Err == nil {
			if lo, hi, err := stats.HartungKnapp(d, se, pl.Pooled); err == nil {
				pl.HKLo, pl.HKHi = lo, hi
			}
		}
		pools = append(pools, pl)
	}
	decidePools(pools, 1-stats.DefaultLevel)
	return pools, nil
}

// decidePools sets each pool's verdict at level alpha, with Holm's
// correction over the confirmatory, testable pools of the primary family
// (see Pool).
func decidePools(pools []Pool, alpha float64) {
	var family []int
	for i := range pools {
		pl := &pools[i]
		pl.PHolds, pl.Verdict = 1, Inconclusive
		testable := true
		for _, o := range pl.Each {
			pl.Exploratory = pl.Exploratory || o.Exploratory
			testable = testable && o.Verdict != NotTestable
		}
		switch {
		case !testable:
			pl.Verdict = NotTestable
			continue
		case pl.Err != nil:
			continue
		}
		q := pl.Pooled
		pl.Verdict = decide(pl.Check.Want, pl.Check.Margin, q.Lo, q.Hi)
		if num := claimedSide(pl.Check, q.Estimate); num > 0 {
			pl.PHolds = stats.TwoSidedPNormal(num / q.StdErr)
		}
		pl.AdjP = pl.PHolds
		if !pl.Exploratory && pl.Check.InFamily() == design.Primary {
			family = append(family, i)
		}
	}
	if len(family) > 1 {
		ps := make([]float64, len(family))
		for k, i := range family {
			ps[k] = pools[i].PHolds
		}
		for k, adj := range stats.Holm(ps) {
			pools[family[k]].AdjP, pools[family[k]].Corrected = adj, true
		}
	}
	for i := range pools {
		if pools[i].Verdict == Holds && !(pools[i].AdjP < alpha) {
			pools[i].Verdict = Inconclusive
		}
	}
}

// pooledOverall is the verdict of the pooled checks, as overall is of one
// experiment's.
func pooledOverall(pools []Pool) (Verdict, bool) {
	return overall(pooledOutcomes(pools))
}

// pooledOutcomes are the pools as outcomes, for the pooled verdict and its
// sentence: the pooled estimate and its normal interval as the test, its
// MDE at 80% power and α = 0.05 from the normal quantiles.
func pooledOutcomes(pools []Pool) []Outcome {
	outs := make([]Outcome, len(pools))
	for i, pl := range pools {
		o := Outcome{Check: pl.Check, Verdict: pl.Verdict, Exploratory: pl.Exploratory, PHolds: pl.PHolds, AdjP: pl.AdjP, Corrected: pl.Corrected}
		if len(pl.Each) > 0 {
			o.Against = pl.Each[0].Against
		}
		if pl.Err == nil {
			q := pl.Pooled
			o.Test = stats.TestResult{Diff: q.Estimate, StdErr: q.StdErr, Lo: q.Lo, Hi: q.Hi, P: q.P}
			o.MDE = (normalQuantile(0.975) + normalQuantile(0.8)) * q.StdErr
		}
		for _, x := range pl.Each {
			if x.Premise != "" {
				o.Premise = x.Premise
			}
		}
		outs[i] = o
	}
	return outs
}

// writePools writes the pooled table: each experiment's estimate beside
// the pooled one.
func writePools(p *printer, experiments []string, pools []Pool) {
	p.f("## Pooled across %s\n\n", quoteAll(experiments))
	outs := pooledOutcomes(pools)
	v, exploratory := overall(outs)
	sentence := verdictSentence(v, outs)
	for _, pl := range pools {
		if pl.Verdict == Holds && !math.IsNaN(pl.HKLo) && decide(pl.Check.Want, pl.Check.Margin, pl.HKLo, pl.HKHi) != Holds {
			sentence += fmt.Sprintf(" `%s` holds on the normal interval only: its Hartung–Knapp interval [%+.3g, %+.3g] does not lie wholly on the claimed side.", pl.Check.ID(), pl.HKLo, pl.HKHi)
		}
	}
	p.f("**Pooled verdict: %s.** %s\n\n", verdictLabel(v, exploratory), sentence)
	p.f("Each check's paired difference (variant − what it is compared with) in each experiment, with its 95%% t-interval, and the random-effects estimate pooled across them (DerSimonian–Laird: weights 1/(SE_b² + τ²), τ² from Cochran's Q; 95%% normal interval), with τ², Q and I². A pooled check is decided on the pooled interval as a check is in one experiment; p is the normal test that decides \"holds\" (the pooled difference against 0, or against the margin for \"not worse\" and \"not higher\"; 1 when the estimate lies on the other side), as in each experiment's checks, and Holm's correction runs over it for the pooled confirmatory checks of the primary family. The pooled interval is normal, so with few experiments it is optimistic; beside it, not deciding the verdict, the Hartung–Knapp interval (t on %d degrees of freedom, t₀.₉₇₅ = %.2f, and the spread of the experiments' estimates around the pooled one) shows what allowing for so few experiments does to it.\n\n", len(experiments)-1, stats.TQuantile(0.975, float64(len(experiments)-1)))
	p.f("| check | family | %s | pooled [95%% CI] | Hartung–Knapp [95%% CI] | p | Holm p | τ² | Q | I² | verdict |\n|---|---|%s--:|--:|--:|--:|--:|--:|--:|---|\n", strings.Join(experiments, " | "), strings.Repeat("---|", len(experiments)))
	for _, pl := range pools {
		p.f("| %s | %s |", pl.Check.ID(), pl.Check.InFamily())
		for _, o := range pl.Each {
			p.f(" %+.4g [%+.4g, %+.4g] |", o.Test.Diff, o.Test.Lo, o.Test.Hi)
		}
		if pl.Err != nil {
			p.f(" — (%v) | | | | | | | %s |\n", pl.Err, verdictLabel(pl.Verdict, pl.Exploratory))
			continue
		}
		q := pl.Pooled
		adj := "—"
		if pl.Corrected {
			adj = fmt.Sprintf("%.3g", pl.AdjP)
		}
		hk := "—"
		if !math.IsNaN(pl.HKLo) {
			hk = fmt.Sprintf("[%+.4g, %+.4g]", pl.HKLo, pl.HKHi)
		}
		p.f(" %+.4g [%+.4g, %+.4g] | %s | %.3g | %s | %.3g | %.3g | %.0f%% | %s |\n", q.Estimate, q.Lo, q.Hi, hk, pl.PHolds, adj, q.Tau2, q.Q, 100*q.I2, verdictLabel(pl.Verdict, pl.Exploratory))
	}
	p.f("\n")
}

// normalQuantile is the standard normal distribution's p-quantile.
func normalQuantile(p float64) float64 { return math.Sqrt2 * math.Erfinv(2*p-1) }
