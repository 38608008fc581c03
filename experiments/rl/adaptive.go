package rl

import (
	"cmp"
	"fmt"
	"math"
	"slices"

	"github.com/rollout-rl/rollout/search"
)

// Difficulty-adaptive fork budgets (rollout.adaptive). The loop keeps, for
// every train prompt text it has sampled, how many leaves solved it
// (reward 1) out of how many it sampled, and before each group estimates
// the prompt's pass rate p̂ = (solved + 1) / (tried + 2) (the Beta(1, 1)
// posterior mean: ½ for a prompt never seen). The group's fork budget is
//
//	K̂ = ⌈K_max · (1 − V)⌉,  V = (2p̂ − 1)²,  so 1 − V = 4·p̂·(1 − p̂),
//
// the strategy's N (search.ForkBudget) where p̂ = ½ and fewer the surer
// the estimate that the prompt is always or never solved, where forks
// change no outcome. The step's metrics adaptive/forks_mean and
// adaptive/pass_rate_mean are the mean K̂ and p̂ over its groups.
// Limiting forks only lowers a group's cost, so its worst case stays the
// strategy's.

// passCount is a prompt's leaves solved and sampled so far.
type passCount struct{ Solved, Tried int }

// promptPasses is a passCount in a snapshot.
type promptPasses struct {
	Prompt        string
	Solved, Tried int
}

// adaptiveForks returns K̂ and p̂ for a prompt with count c under a
// strategy of kMax forks.
func adaptiveForks(kMax int, c passCount) (int, float64) {
	p := (float64(c.Solved) + 1) / (float64(c.Tried) + 2)
	v := (float64(2*p) - 1) * (float64(2*p) - 1)
	return int(math.Ceil(float64(kMax) * (1 - v))), p
}

// checkAdaptive refuses rollout.adaptive with a strategy without a fork
// budget.
func checkAdaptive(s Setup) error {
	if !s.Adaptive {
		return nil
	}
	if _, ok := s.Strategy.(search.ForkBudget); !ok {
		return fmt.Errorf("rl: rollout.adaptive: strategy %s has no fork budget to adapt (entropy_tree, random_tree and tree_grpo have)", s.Strategy.Name())
	}
	return nil
}

// adaptiveState is the loop's pass counts and the step's statistics.
type adaptiveState struct {
	passes       map[string]passCount
	forks, rates float64 // sums over the step's groups
	groups       int
}

// plan returns K̂ of every prompt text, adding to the step's statistics.
func (a *adaptiveState) plan(kMax int, texts []string) []int {
	out := make([]int, len(texts))
	for i, t := range texts {
		k, p := adaptiveForks(kMax, a.passes[t])
		out[i] = k
		a.forks += float64(k)
		a.rates += p
		a.groups++
	}
	return out
}

// observe adds the leaves of the groups to their prompts' counts.
func (a *adaptiveState) observe(groups []ScoredGroup) {
	if a.passes == nil {
		a.passes = map[string]passCount{}
	}
	for _, sg := range groups {
		c := a.passes[sg.Prompt.Text]
		for _, leaf := range sg.Group.Leaves() {
			c.Tried++
			if leaf.Reward >= 1 {
				c.Solved++
			}
		}
		a.passes[sg.Prompt.Text] = c
	}
}

// metrics sets the step's adaptive metrics and resets its statistics.
func (a *adaptiveState) metrics(m map[string]float64) {
	if a.groups > 0 {
		m["adaptive/forks_mean"] = a.forks / float64(a.groups)
		m["adaptive/pass_rate_mean"] = a.rates / float64(a.groups)
	}
	a.forks, a.rates, a.groups = 0, 0, 0
}

// snapshot returns the counts sorted by prompt text (nil when empty).
func (a *adaptiveState) snapshot() []promptPasses {
	var out []promptPasses
	for t, c := range a.passes {
		out = append(out, promptPasses{Prompt: t, Solved: c.Solved, Tried: c.Tried})
	}
	slices.SortFunc(out, func(x, y promptPasses) int { return cmp.Compare(x.Prompt, y.Prompt) })
	return out
}

// restore sets the counts from a snapshot's.
func (a *adaptiveState) restore(ps []promptPasses) {
	a.passes = nil
	if len(ps) > 0 {
		a.passes = make(map[string]passCount, len(ps))
	}
	for _, p := range ps {
		a.passes[p.Prompt] = passCount{Solved: p.Solved, Tried: p.Tried}
	}
}
