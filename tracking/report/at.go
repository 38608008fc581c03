package report

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/rollout-rl/rollout/tracking"
)

// AtKind says where in a run a report takes a metric's value.
type AtKind string

// The places a report can take values at.
const (
	// AtFinal is the last recorded value.
	AtFinal AtKind = "final"
	// AtBest is the best recorded value: the highest, or the lowest for
	// metrics that are minimised (see Options.Minimize).
	AtBest AtKind = "best"
	// AtStep is the last value recorded at or before a step: comparisons
	// at equal numbers of optimizer updates. A step after the end of a
	// finished run is an error; a run still running that has not reached
	// it has no value.
	AtStep AtKind = "step"
	// AtTokens is the value recorded at the step whose cumulative
	// sampled-token count is exactly T: comparisons at equal sampling
	// compute, on evaluation marks. A T at which a run has no row for the
	// metric is an error listing the marks every run has.
	AtTokens AtKind = "tokens"
	// AtTrainFLOPs is the last value recorded at a step whose cumulative
	// training-FLOP count (Options.FLOPsMetric) is at most F.
	AtTrainFLOPs AtKind = "train_flops"
	// AtFLOPs is the value recorded by the evaluation a run made at its
	// total-FLOP mark F (Options.FLOPsMarkMetric): comparisons at equal
	// total compute (sampling, scoring and updates), on evaluation marks
	// only. An F at which a run has no evaluation is an error listing the
	// marks every run has.
	AtFLOPs AtKind = "flops"
)

// At is a parsed `final | best | step:N | tokens:T | flops:F |
// train_flops:F`.
type At struct {
	Kind   AtKind
	Step   int
	Tokens int64
	FLOPs  float64
}

// suffixes are the multipliers ParseAt accepts after a count.
var suffixes = []struct {
	s    string
	mult float64
}{{"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"G", 1e9}, {"T", 1e12}, {"P", 1e15}}

// parseCount reads a non-negative count with an optional k, M, G, T or P
// suffix (2M, 1.5k, 3e12).
func parseCount(arg string) (float64, bool) {
	mult := 1.0
	for _, sf := range suffixes {
		if rest, ok := strings.CutSuffix(arg, sf.s); ok {
			mult, arg = sf.mult, rest
			break
		}
	}
	f, err := strconv.ParseFloat(arg, 64)
	if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f * mult, true
}

// ParseAt parses `final`, `best`, `step:N`, `tokens:T`, `flops:F` or
// `train_flops:F` (T and F may use a k, M, G, T or P suffix, e.g.
// tokens:2M; F also an exponent, e.g. train_flops:3e12).
func ParseAt(s string) (At, error) {
	kind, arg, hasArg := strings.Cut(s, ":")
	switch AtKind(kind) {
	case AtFinal, AtBest:
		if hasArg {
			return At{}, fmt.Errorf("--at %q: %s takes no argument", s, kind)
		}
		return At{Kind: AtKind(kind)}, nil
	case AtStep:
		n, err := strconv.Atoi(arg)
		if err != nil || n < 0 {
			return At{}, fmt.Errorf("--at %q: want step:N with N a step number ≥ 0", s)
		}
		return At{Kind: AtStep, Step: n}, nil
	case AtTokens:
		f, ok := parseCount(arg)
		if !ok || f > math.MaxInt64/2 {
			return At{}, fmt.Errorf("--at %q: want tokens:T with T a token count ≥ 0 (e.g. tokens:500000 or tokens:2M)", s)
		}
		return At{Kind: AtTokens, Tokens: int64(f)}, nil
	case AtTrainFLOPs:
		f, ok := parseCount(arg)
		if !ok {
			return At{}, fmt.Errorf("--at %q: want train_flops:F with F a FLOP count ≥ 0 (e.g. train_flops:3e12 or train_flops:3T)", s)
		}
		return At{Kind: AtTrainFLOPs, FLOPs: f}, nil
	case AtFLOPs:
		f, ok := parseCount(arg)
		if !ok {
			return At{}, fmt.Errorf("--at %q: want flops:F with F a FLOP mark ≥ 0 (e.g. flops:2e13 or flops:20T)", s)
		}
		return At{Kind: AtFLOPs, FLOPs: f}, nil
	}
	return At{}, fmt.Errorf("--at %q: want final, best, step:N, tokens:T, flops:F or train_flops:F", s)
}

// String returns the form ParseAt reads.
func (a At) String() string {
	switch a.Kind {
	case AtStep:
		return fmt.Sprintf("step:%d", a.Step)
	case AtTokens:
		return fmt.Sprintf("tokens:%d", a.Tokens)
	case AtTrainFLOPs, AtFLOPs:
		return string(a.Kind) + ":" + strconv.FormatFloat(a.FLOPs, 'g', -1, 64)
	case "":
		return string(AtFinal)
	}
	return string(a.Kind)
}

// Axis says in words what a report compares on, e.g. "at 30000 sampled
// tokens (evaluation mark)" or "at step 50 (equal optimizer updates)".
func (a At) Axis() string {
	switch a.Kind {
	case AtBest:
		return "at each run's best value"
	case AtStep:
		return fmt.Sprintf("at step %d (equal optimizer updates)", a.Step)
	case AtTokens:
		return fmt.Sprintf("at %d sampled tokens (evaluation mark)", a.Tokens)
	case AtTrainFLOPs:
		return fmt.Sprintf("at %s training FLOPs (each run's last row at or below)", strconv.FormatFloat(a.FLOPs, 'g', 4, 64))
	case AtFLOPs:
		return fmt.Sprintf("at %s total FLOPs (evaluation mark)", strconv.FormatFloat(a.FLOPs, 'g', 4, 64))
	}
	return "at the end of each run"
}

// TokenMarks returns the points tokens:T can compare an experiment's runs
// at, sorted: the values of markMetric (Options.MarkMetric, the mark an
// evaluation at a token mark records, e.g. 0, 4000, 8000) over its runs;
// when no run recorded it, the cumulative token counts of the rows where
// a run recorded metric (which At tokens then matches exactly). marked
// says which of the two the marks are.
func TokenMarks(src Source, experiment, markMetric, metric string) (marks []int64, marked bool, err error) {
	runs, err := src.Runs(experiment)
	if err != nil {
		return nil, false, err
	}
	if markMetric != "" {
		for _, r := range runs {
			ss, err := src.MetricSeries(r.ID, []string{markMetric})
			if errors.Is(err, tracking.ErrNotFound) {
				continue // a run without metrics yet
			}
			if err != nil {
				return nil, false, err
			}
			for _, v := range ss[0].Values {
				marks = append(marks, int64(math.Round(v)))
			}
		}
	}
	if marked = len(marks) > 0; !marked && metric != "" {
		for _, r := range runs {
			ss, err := src.MetricSeries(r.ID, []string{metric})
			if errors.Is(err, tracking.ErrNotFound) {
				continue
			}
			if err != nil {
				return nil, false, err
			}
			marks = append(marks, ss[0].Tokens...)
		}
	}
	slices.Sort(marks)
	return slices.Compact(marks), marked, nil
}

// BudgetAxis is the axis an experiment's runs are compared on by default:
// tokens when its evaluations fall on token marks (some run recorded
// markMetric), else step.
func BudgetAxis(src Source, experiment, markMetric string) (XAxis, error) {
	if markMetric == "" {
		return XStep, nil
	}
	_, marked, err := TokenMarks(src, experiment, markMetric, "")
	if err != nil {
		return "", err
	}
	if marked {
		return XTokens, nil
	}
	return XStep, nil
}
