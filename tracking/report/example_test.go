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
	store, err := tracking.Open(filepath.Join(dir, "rollout.db"), tracking.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.Close()
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
