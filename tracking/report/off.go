package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rollout-rl/rollout/tracking"
)

// offPoints gathers the runs a report's point lies off (beyond a finished
// run's end, between its token marks), and what every run has, so that
// the error can say which points would do.
type offPoints struct {
	off map[string][]offRun // by metric
	// marks counts, per metric and token count, the runs with a row there.
	marks map[string]map[int64]int
	runs  map[string]int // runs noted, per metric
	// minStep and minFLOPs are the smallest ends of the finished runs.
	minStep  int
	minFLOPs float64
	finished bool
	// kind is the report's point: marks are counted for At tokens (token
	// counts of rows and evaluation marks) and At flops (FLOPs marks).
	kind AtKind
}

func newOffPoints(kind AtKind) *offPoints {
	return &offPoints{off: map[string][]offRun{}, marks: map[string]map[int64]int{}, runs: map[string]int{},
		minStep: math.MaxInt, minFLOPs: math.Inf(1), kind: kind}
}

type offRun struct {
	run tracking.Run
	why string
}

// add notes a run the point lies off, and why.
func (o *offPoints) add(metric string, r tracking.Run, why string) {
	o.off[metric] = append(o.off[metric], offRun{r, why})
}

// note records what run r has of a metric: its rows' token counts and the
// token marks (marks, may be nil) at which it has a row.
func (o *offPoints) note(metric string, s, marks *tracking.Series, r tracking.Run) {
	if r.Status == tracking.StatusFinished {
		o.finished = true
		o.minStep = min(o.minStep, r.LastStep)
	}
	if o.kind != AtTokens && o.kind != AtFLOPs {
		return
	}
	if o.marks[metric] == nil {
		o.marks[metric] = map[int64]int{}
	}
	o.runs[metric]++
	seen := map[int64]bool{}
	if o.kind == AtTokens {
		for _, t := range s.Tokens {
			seen[t] = true
		}
	}
	if marks != nil {
		for i, v := range marks.Values {
			if _, ok := slices.BinarySearch(s.Steps, marks.Steps[i]); ok {
				seen[int64(v)] = true
			}
		}
	}
	for t := range seen {
		o.marks[metric][t]++
	}
}

// noteFLOPs records the training FLOPs a finished run ended at.
func (o *offPoints) noteFLOPs(flops *tracking.Series, r tracking.Run) {
	if r.Status == tracking.StatusFinished && flops != nil && flops.Len() > 0 {
		o.minFLOPs = min(o.minFLOPs, flops.Values[flops.Len()-1])
	}
}

// err describes the first metric some run lies off, or returns nil.
func (o *offPoints) err(at At, metrics []string, flopsMetric string) error {
	for _, m := range metrics {
		list := o.off[m]
		if len(list) == 0 {
			continue
		}
		first := list[0]
		why := first.why
		if why == "recorded no training FLOPs" {
			why = fmt.Sprintf("recorded no %s", flopsMetric)
		}
		more := ""
		if len(list) > 1 {
			more = fmt.Sprintf(" (and %d more runs)", len(list)-1)
		}
		return fmt.Errorf("at %s: metric %q: run %s (variant %s, seed %d) %s%s; %s",
			at, m, first.run.ID, first.run.Variant, first.run.Seed, why, more, o.hint(at, m, first.why))
	}
	return nil
}

// hint says which points every run has.
func (o *offPoints) hint(at At, metric, why string) string {
	switch at.Kind {
	case AtFLOPs:
		var common []int64
		for f, n := range o.marks[metric] {
			if n == o.runs[metric] {
				common = append(common, f)
			}
		}
		if len(common) == 0 {
			return fmt.Sprintf("no FLOPs mark has a row of %s in every run", metric)
		}
		slices.Sort(common)
		return fmt.Sprintf("FLOPs marks where every run has a row of %s: %s", metric, listMarks(common))
	case AtTokens:
		var common []int64
		for t, n := range o.marks[metric] {
			if n == o.runs[metric] {
				common = append(common, t)
			}
		}
		if len(common) == 0 {
			return fmt.Sprintf("no token count has a row of %s in every run", metric)
		}
		slices.Sort(common)
		return fmt.Sprintf("token marks where every run has a row of %s: %s", metric, listMarks(common))
	case AtStep:
		if o.finished {
			return fmt.Sprintf("every finished run reaches step %d", o.minStep)
		}
	case AtTrainFLOPs:
		if why == "recorded no training FLOPs" {
			return "compare at tokens:T or step:N instead"
		}
		if !math.IsInf(o.minFLOPs, 1) {
			return fmt.Sprintf("every finished run reaches %s training FLOPs", formatFLOPs(o.minFLOPs))
		}
	}
	return "choose a point inside every run"
}

// listMarks lists token counts, eliding the middle of long lists.
func listMarks(ts []int64) string {
	s := make([]string, 0, min(len(ts), 13))
	if len(ts) <= 12 {
		for _, t := range ts {
			s = append(s, strconv.FormatInt(t, 10))
		}
		return strings.Join(s, ", ")
	}
	for _, t := range ts[:9] {
		s = append(s, strconv.FormatInt(t, 10))
	}
	s = append(s, "…")
	for _, t := range ts[len(ts)-3:] {
		s = append(s, strconv.FormatInt(t, 10))
	}
	return fmt.Sprintf("%s (%d marks)", strings.Join(s, ", "), len(ts))
}
