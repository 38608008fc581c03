package suite

import (
	"fmt"
	"io"
	"slices"
	"strings"

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
}

// PoolChecks pools, for every check (by ID) computed in each of the
// experiments, its paired differences across them with random effects
// (stats.DerSimonianLaird, 95% normal interval). outs[i] are the outcomes
// of experiments[i].
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
		pools = append(pools, pl)
	}
	return pools, nil
}

// writePools writes the pooled table: each experiment's estimate beside
// the pooled one.
func writePools(p *printer, experiments []string, pools []Pool) {
	p.f("## Pooled across %s\n\nEach check's paired difference (variant − what it is compared with) in each experiment, with its 95%% t-interval, and the random-effects estimate pooled across them (DerSimonian–Laird: weights 1/(SE_b² + τ²), τ² from Cochran's Q; 95%% normal interval), with τ², Q and I². The pooled interval is normal, so with few experiments and few seeds each it is optimistic.\n\n", quoteAll(experiments))
	p.f("| check | %s | pooled [95%% CI] | p | τ² | Q | I² |\n|---|%s---|--:|--:|--:|--:|\n", strings.Join(experiments, " | "), strings.Repeat("---|", len(experiments)))
	for _, pl := range pools {
		p.f("| %s |", pl.Check.ID())
		for _, o := range pl.Each {
			p.f(" %+.4g [%+.4g, %+.4g] |", o.Test.Diff, o.Test.Lo, o.Test.Hi)
		}
		if pl.Err != nil {
			p.f(" — (%v) | | | | |\n", pl.Err)
			continue
		}
		q := pl.Pooled
		p.f(" %+.4g [%+.4g, %+.4g] | %.3g | %.3g | %.3g | %.0f%% |\n", q.Estimate, q.Lo, q.Hi, q.P, q.Tau2, q.Q, 100*q.I2)
	}
	p.f("\n")
}
