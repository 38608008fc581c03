package rl

import "github.com/rollout-rl/rollout/search"

// ThinBaselinesMetric is the step metric counting the baselines of the
// step's groups estimated from a single rollout (search.ThinBaselines),
// set only for estimators that can have them (tree_grpo, spo); the
// command line warns when it is above 0.
const ThinBaselinesMetric = "adv/thin_baselines"

// thinBaselineMetrics sets ThinBaselinesMetric over groups when the
// estimator called advantage implements search.ThinBaselines.
func thinBaselineMetrics(groups []ScoredGroup, advantage string, m map[string]float64) {
	est, err := search.NewEstimator(advantage)
	if err != nil {
		return // New has checked the name
	}
	tb, ok := est.(search.ThinBaselines)
	if !ok {
		return
	}
	n := 0
	for _, sg := range groups {
		n += tb.ThinBaselines(sg.Group)
	}
	m[ThinBaselinesMetric] = float64(n)
}
