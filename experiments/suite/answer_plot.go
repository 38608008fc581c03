package suite

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/rollout-rl/rollout/tracking"
	"github.com/rollout-rl/rollout/tracking/report"
	"github.com/rollout-rl/rollout/tracking/report/stats"
)

// answerPlotFile is the answer-time plot's file name of a report's policy.
func answerPlotFile(name, policy string) string {
	return fmt.Sprintf("%s_answer_time_%s.png", name, policy)
}

// errPoints are points with vertical error bars.
type errPoints struct {
	plotter.XYs
	plotter.YErrors
}

// plotAnswerTime draws one policy's accuracy against tokens per prompt:
// one line per selection rule through its Ns (mean over seeds), with 95%
// t-interval error bars on accuracy, into path.
func plotAnswerTime(path string, r answerResults, policy string, a *AnswerTime) error {
	p := report.NewFigurePlot("", "generated tokens per prompt at answer time (mean)", "accuracy of the selected answer (share)")
	p.Add(plotter.NewGrid())
	legend := report.NewFigureLegend()
	entries := 0
	for i, m := range methodNames {
		ns := a.Ns
		if strings.HasPrefix(m.method, "tree") {
			ns = a.TreeLeaves
		}
		var pts errPoints
		for _, n := range ns {
			accs := sortedValues(r.values(policy, m.method, n, acc))
			toks := sortedValues(r.values(policy, m.method, n, tokens))
			if len(accs) == 0 {
				continue
			}
			s := stats.Summarize(accs)
			half := 0.0
			if s.HasInterval {
				half = s.HalfWidth
			}
			pts.XYs = append(pts.XYs, plotter.XY{X: stats.Mean(toks), Y: s.Mean})
			pts.YErrors = append(pts.YErrors, struct{ Low, High float64 }{half, half})
		}
		if len(pts.XYs) == 0 {
			continue
		}
		if err := addRule(p, &legend, m.name, pts, i); err != nil {
			return fmt.Errorf("suite: plot %s: %w", path, err)
		}
		entries++
	}
	p.Y.Min, p.Y.Max = max(p.Y.Min, 0), min(p.Y.Max, 1)
	fig := &report.Figure{Title: fmt.Sprintf("Test-time compute, %s: accuracy against tokens per prompt", policyName(policy)),
		Caption: fmt.Sprintf("mean over %d seeds; bars: 95%% t-intervals; a line joins one rule's numbers of samples (tree rules dashed)", len(r.points[policy])),
		Panels:  []*plot.Plot{p}, Legend: legend, Entries: entries}
	if err := fig.Save(path, 0, 0, report.FigureDPI); err != nil {
		return fmt.Errorf("suite: plot %s: %w", path, err)
	}
	return nil
}

// addRule adds one rule's line, markers and error bars, its points in
// order of tokens; tree rules are dashed.
func addRule(p *plot.Plot, legend *plot.Legend, name string, pts errPoints, idx int) error {
	order := make([]int, len(pts.XYs))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(pts.XYs[a].X, pts.XYs[b].X) })
	var sorted errPoints
	for _, i := range order {
		sorted.XYs = append(sorted.XYs, pts.XYs[i])
		sorted.YErrors = append(sorted.YErrors, pts.YErrors[i])
	}
	col := report.VariantColour(idx)
	line, err := plotter.NewLine(sorted.XYs)
	if err != nil {
		return err
	}
	line.Color, line.Width = col, vg.Points(1.5)
	if strings.HasPrefix(name, "tree") {
		line.Dashes = []vg.Length{vg.Points(4), vg.Points(2)}
	}
	marks, err := plotter.NewScatter(sorted.XYs)
	if err != nil {
		return err
	}
	marks.GlyphStyle.Color, marks.GlyphStyle.Shape = col, plotutil.Shape(idx)
	marks.GlyphStyle.Radius = vg.Points(2.5)
	bars, err := plotter.NewYErrorBars(sorted)
	if err != nil {
		return err
	}
	bars.Color = col
	p.Add(line, marks, bars)
	legend.Add(name, line, marks)
	return nil
}

// answerSection is a report's answer-time part: its measurements and
// the outcomes of its checks and comparisons.
type answerSection struct {
	spec     *AnswerTime
	results  answerResults
	checks   []Outcome
	compared []Outcome
}

// measureAnswerSection measures a report's AnswerTime and evaluates its
// checks and comparisons.
func measureAnswerSection(a *AnswerTime, runs []tracking.Run, m Measurer) (*answerSection, error) {
	res, err := a.measure(runs, m)
	if err != nil {
		return nil, err
	}
	s := &answerSection{spec: a, results: res}
	if s.checks, err = res.outcomes(a.Checks); err != nil {
		return nil, err
	}
	if s.compared, err = res.outcomes(a.Compare); err != nil {
		return nil, err
	}
	return s, nil
}

// write writes the section's tables, comparisons and plots (into dir).
func (s *answerSection) write(p *printer, dir, name string) error {
	p.f("The answer-time tables and plots are measured when the report is written, from the final policies kept beside the store (`STORE.final/<run id>/`) and the base policy and reward model in the cache (`--cache`); they are not stored.\n\n")
	for _, pol := range []string{PolicyBase, PolicyRL} {
		writeAnswerTable(p, s.results, pol, s.spec)
	}
	writeComparisons(p, s.compared)
	if len(s.results.models) > 0 {
		p.f("Reward model: %s.\n\n", strings.Join(s.results.models, "; "))
	}
	for _, pol := range []string{PolicyBase, PolicyRL} {
		file := answerPlotFile(name, pol)
		if err := plotAnswerTime(filepath.Join(dir, file), s.results, pol, s.spec); err != nil {
			return err
		}
		p.f("![accuracy against tokens per prompt at answer time, %s](%s)\n\n", policyName(pol), file)
	}
	return nil
}
