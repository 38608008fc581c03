package tracking_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/rollout-rl/rollout/tracking"

	"github.com/rollout-rl/rollout/search/record"
)

// Example writes two variants × three seeds and prints the comparison.
// By hand: flat 0.43 ± 4.303·0.03/√3 = 0.0745; paired differences 0.12,
// 0.09, 0.07 give t = 6.42 on 2 df, p = 0.023.
func Example() {
	dir, _ := os.MkdirTemp("", "tracking-example")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "rollout.db")

	store, err := tracking.Open(path, tracking.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	store.PutExperiment(tracking.Experiment{Name: "quickstart", Variants: []string{"flat", "entropy_tree"}})
	final := map[string][]float64{"flat": {0.40, 0.46, 0.43}, "entropy_tree": {0.52, 0.55, 0.50}}
	for _, variant := range []string{"flat", "entropy_tree"} {
		for seed := range 3 {
			id := fmt.Sprintf("%s-%d", variant, seed)
			run, _ := store.BeginRun(tracking.Run{ID: id, Experiment: "quickstart", Variant: variant, Seed: int64(seed)})
			for step := run.LastStep + 1; step < 2; step++ {
				acc := final[variant][seed] * float64(step+1) / 2
				err := store.CommitStep(id, tracking.StepRecord{
					Step:    step,
					Tokens:  int64(step+1) * 1000,
					Metrics: map[string]float64{"eval/acc": acc},
					Groups:  []record.Group{{Prompt: "2+2=", Strategy: variant, Nodes: []record.Node{{ID: 0, Parent: -1, Tokens: []int{4}}}, Leaves: []record.Leaf{{Node: 0, Text: "4", Reward: 1, Scored: true}}}},
				})
				if err != nil {
					fmt.Println(err)
					return
				}
			}
			store.EndRun(id, tracking.StatusFinished, "")
		}
	}
	store.Close()

	reader, err := tracking.Open(path, tracking.Options{ReadOnly: true})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer reader.Close()
	report, err := reader.Report("quickstart", tracking.ReportOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	report.Write(os.Stdout, tracking.FormatMarkdown)
	// Output:
	// quickstart at final: mean ± 95% t-interval over seeds; p: two-sided t-test of each variant against flat (paired over shared seeds, Welch otherwise).
	//
	// |   variant    | n |    eval/acc     |      p       |
	// |:-------------|--:|----------------:|-------------:|
	// | flat         | 3 | 0.4300 ± 0.0745 |     baseline |
	// | entropy_tree | 3 | 0.5233 ± 0.0625 | 0.023 paired |
}
