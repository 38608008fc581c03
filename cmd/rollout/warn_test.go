package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/experiments/config"
	"github.com/rollout-rl/rollout/experiments/rl"
)

// A run whose baselines rest on a single rollout is warned of once, on
// the first step that has any.
func TestThinBaselineWarning(t *testing.T) {
	var buf bytes.Buffer
	v := newRunView(newProgress(&buf), 1)
	r := config.Run{ID: "a", Variant: "tree", Seed: 2}
	v.Step(r, 1, map[string]float64{"reward/mean": 0.5})
	v.Step(r, 2, map[string]float64{rl.ThinBaselinesMetric: 3})
	v.Step(r, 3, map[string]float64{rl.ThinBaselinesMetric: 5})
	out := buf.String()
	if n := strings.Count(out, "warning:"); n != 1 || !strings.Contains(out, "tree seed 2 step 2: 3 baselines from a single rollout (adv/thin_baselines") {
		t.Errorf("%d warnings in %q", n, out)
	}
}
