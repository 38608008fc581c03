package suite

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/experiments/cost"
)

// The compute report's cost-model section predicts each variant's step
// from a sweep (here one made by a known model) and prints the
// assumptions and the crossovers; a missing sweep is an error naming it.
func TestWriteCostModel(t *testing.T) {
	r, ok := Find("compute")
	if !ok || r.CostModel == "" {
		t.Fatal("the compute report has no cost model")
	}
	truth := cost.Model{Coef: [cost.NumPhases]cost.Coef{
		{cost.MatmulFLOPs: 1e-10, cost.Calls: 1e-4}, {cost.MatmulFLOPs: 2e-11, cost.AttentionFLOPs: 1e-10, cost.WeightBytes: 1e-10}, {cost.MatmulFLOPs: 2e-11, cost.AttentionFLOPs: 2e-11}, {cost.MatmulFLOPs: 1.5e-11, cost.ActivationBytes: 1e-11, cost.OptimizerBytes: 1e-11},
	}}
	sw, err := cost.SweepOf(truth)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(sw)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	r.CostModel = filepath.Join(dir, "sweep.json")
	if err := os.WriteFile(r.CostModel, b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Chdir("../..") // the report's config is read from the repository's root
	var buf bytes.Buffer
	if err := writeCostModel(&printer{w: &buf}, r); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"## The cost model's extrapolation", "| tiny | dim 128 × 4 layers", "| small | dim 256 × 6 layers", "| medium | dim 512 × 8 layers", "Cost of one RL step of variant medium", "Assumptions:", "Hardware balance"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	r.CostModel = filepath.Join(dir, "none.json")
	if err := writeCostModel(&printer{w: &buf}, r); err == nil || !strings.Contains(err.Error(), "none.json") {
		t.Errorf("a missing sweep: error %v", err)
	}
}
