package report

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/rollout-rl/rollout/tracking"
)

// variantRuns is one variant's runs, all of one resolved configuration.
type variantRuns struct {
	Name string
	Runs []tracking.Run
}

// byVariant groups runs by variant, in the order reports and plots show
// them: the experiment's variant order, then any others by name. It never
// pools configurations: a variant whose runs carry two different resolved
// configs (possible in stores written before an experiment name stood for
// one set of configs) is an error naming the variant and a differing key.
// Runs without a recorded config join any.
func byVariant(exp tracking.Experiment, runs []tracking.Run) ([]variantRuns, error) {
	index := map[string]int{}
	var out []variantRuns
	for _, r := range runs {
		i, ok := index[r.Variant]
		if !ok {
			i = len(out)
			index[r.Variant] = i
			out = append(out, variantRuns{Name: r.Variant})
		}
		out[i].Runs = append(out[i].Runs, r)
	}
	for _, v := range out {
		if err := sameConfig(exp.Name, v); err != nil {
			return nil, err
		}
	}
	rank := func(name string) int {
		if i := slices.Index(exp.Variants, name); i >= 0 {
			return i
		}
		return len(exp.Variants)
	}
	slices.SortFunc(out, func(a, b variantRuns) int {
		return cmp.Or(cmp.Compare(rank(a.Name), rank(b.Name)), cmp.Compare(a.Name, b.Name))
	})
	return out, nil
}

// sameConfig checks that the runs of one variant share one resolved config.
func sameConfig(experiment string, v variantRuns) error {
	var first *tracking.Run
	for i := range v.Runs {
		r := &v.Runs[i]
		if r.Config == "" {
			continue
		}
		if first == nil {
			first = r
			continue
		}
		if r.Config == first.Config {
			continue
		}
		diffs, err := tracking.DiffConfigs(first.Config, r.Config)
		if err != nil {
			return fmt.Errorf("variant %q of experiment %q: run %s: %w", v.Name, experiment, r.ID, err)
		}
		if len(diffs) > 0 {
			d := diffs[0]
			return fmt.Errorf("variant %q of experiment %q has runs of different configs, which a report does not pool: %s is %s in run %s (seed %d) and %s in run %s (seed %d)%s; rerun one setting under a new experiment name",
				v.Name, experiment, d.Key, d.Recorded, first.ID, first.Seed, d.Given, r.ID, r.Seed, moreKeys(len(diffs)-1))
		}
	}
	return nil
}

func moreKeys(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" (and %d more keys)", n)
}
