package report_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/rollout-rl/rollout/tracking"
	"github.com/rollout-rl/rollout/tracking/report"
)

// Example writes two variants × three seeds and prints the comparison.
// By hand: flat 0.43 ± 4.303·0.03/√3 = 0.0745; paired differences 0.12,
// 0.09, 0.07 give t = 6.42 on 2 df, p = 0.023.
func Example() {
	dir, _ := os.MkdirTemp("", "report-example")
	defer os.RemoveAll(dir)
	store, err := exampleStore(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()

	rep, err := report.Build(store, "quickstart", report.Options{DefaultMetrics: []string{"eval/acc"}, At: report.At{Kind: report.AtTokens, Tokens: 2000}})
	if err != nil {
		fmt.Println(err)
		return
	}
	rep.Write(os.Stdout, report.FormatMarkdown)
	// Output:
	// quickstart at 2000 sampled tokens (evaluation mark): mean ± 95% t-interval over seeds; p: two-sided t-test of each variant against flat (paired over shared seeds, Welch otherwise).
	//
	// |   variant    | n |    eval/acc     |      p       |
	// |:-------------|--:|----------------:|-------------:|
	// | flat         | 3 | 0.4300 ± 0.0745 |     baseline |
	// | entropy_tree | 3 | 0.5233 ± 0.0625 | 0.023 paired |
}

// ExampleMetric shows the registry: what a figure's y axis says and the
// range its bands are clipped to.
func ExampleMetric() {
	for _, key := range []string{"eval/acc", "timing_s/gen", "actor/pg_loss", "my/custom"} {
		m := report.Metric(key)
		fmt.Printf("%s: %q [%g, %g]\n", key, m.AxisLabel(), m.Lo, m.Hi)
	}
	// Output:
	// eval/acc: "evaluation accuracy (share)" [0, 1]
	// timing_s/gen: "time of gen (s)" [0, +Inf]
	// actor/pg_loss: "policy-gradient loss" [-Inf, +Inf]
	// my/custom: "my/custom" [-Inf, +Inf]
}

// ExampleCurves_diff draws the paired differences of the example's
// experiment: entropy_tree minus flat seed by seed. By hand at step 1:
// differences 0.12, 0.09, 0.07, mean 0.0933, paired t-interval ±
// 4.303·0.02517/√3 = 0.0625.
func ExampleCurves_diff() {
	dir, _ := os.MkdirTemp("", "report-example")
	defer os.RemoveAll(dir)
	store, err := exampleStore(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
	curves, err := report.Curves(store, "quickstart", report.PlotOptions{Metric: "eval/acc", Kind: report.KindDiff})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range curves {
		for i := range c.X {
			fmt.Printf("%s − %s at step %g: %.4f [%.4f, %.4f], n = %d\n", c.Variant, c.Baseline, c.X[i], c.Mean[i], c.Lo[i], c.Hi[i], c.N[i])
		}
	}
	fmt.Println(report.Caption(curves, report.KindDiff))
	// Output:
	// entropy_tree − flat at step 0: 0.0467 [0.0154, 0.0779], n = 3
	// entropy_tree − flat at step 1: 0.0933 [0.0308, 0.1558], n = 3
	// mean paired difference (variant − baseline, same seed) ± 95% CI (paired t-interval) over n = 3 seed pairs at every point
}

// exampleStore writes the examples' experiment into a store in dir:
// quickstart, flat and entropy_tree × three seeds of two steps, eval/acc
// rising to each run's final accuracy.
func exampleStore(dir string) (*tracking.Store, error) {
	store, err := tracking.Open(filepath.Join(dir, "rollout.db"), tracking.Options{})
	if err != nil {
		return nil, err
	}
	store.PutExperiment(tracking.Experiment{Name: "quickstart", Variants: []string{"flat", "entropy_tree"}})
	final := map[string][]float64{"flat": {0.40, 0.46, 0.43}, "entropy_tree": {0.52, 0.55, 0.50}}
	for _, variant := range []string{"flat", "entropy_tree"} {
		for seed := range 3 {
			id := fmt.Sprintf("%s-%d", variant, seed)
			store.BeginRun(tracking.Run{ID: id, Experiment: "quickstart", Variant: variant, Seed: int64(seed)})
			for step := range 2 {
				acc := final[variant][seed] * float64(step+1) / 2
				store.CommitStep(id, tracking.StepRecord{Step: step, Tokens: int64(step+1) * 1000, Metrics: map[string]float64{"eval/acc": acc, "loss": 1}})
			}
			store.EndRun(id, tracking.StatusFinished, "")
		}
	}
	return store, nil
}
