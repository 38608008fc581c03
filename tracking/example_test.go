package tracking_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/rollout-rl/rollout/tracking"

	"github.com/rollout-rl/rollout/search/record"
)

// Example writes two variants × three seeds and reads their evaluation
// series back (package report compares them).
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
	runs, _ := reader.Runs("quickstart")
	for _, r := range runs {
		acc, _ := reader.Series(r.ID, "eval/acc")
		fmt.Printf("%s seed %d: eval/acc %v at %v tokens\n", r.Variant, r.Seed, acc.Values, acc.Tokens)
	}
	// Output:
	// entropy_tree seed 0: eval/acc [0.26 0.52] at [1000 2000] tokens
	// entropy_tree seed 1: eval/acc [0.275 0.55] at [1000 2000] tokens
	// entropy_tree seed 2: eval/acc [0.25 0.5] at [1000 2000] tokens
	// flat seed 0: eval/acc [0.2 0.4] at [1000 2000] tokens
	// flat seed 1: eval/acc [0.23 0.46] at [1000 2000] tokens
	// flat seed 2: eval/acc [0.215 0.43] at [1000 2000] tokens
}

// ExampleMigrate upgrades a store to the current schema in place (here
// one already current, which it leaves untouched); a store of an older
// schema is refused by Open with a *SchemaError saying to migrate it.
func ExampleMigrate() {
	dir, _ := os.MkdirTemp("", "tracking-migrate")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "rollout.db")
	store, err := tracking.Open(path, tracking.Options{})
	if err != nil {
		fmt.Println(err)
		return
	}
	store.Close()
	st, err := tracking.Migrate(path, tracking.Options{})
	fmt.Printf("schema %d → %d, %d records sealed, %v\n", st.From, st.To, st.Records, err)
	// Output: schema 2 → 2, 0 records sealed, <nil>
}
