package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/experiments/cost"
)

// rollout cost prints a config's phase shares and the validation report
// from a measurement file, and refuses bad input with exit status 2.
func TestCost(t *testing.T) {
	dir := t.TempDir()
	meas := filepath.Join(dir, "m.json")
	var truth cost.Model
	for p := range cost.NumPhases {
		truth.Coef[p] = cost.Coef{cost.MatmulFLOPs: 2e-11, cost.AttentionFLOPs: 1e-10, cost.WeightBytes: 1e-10, cost.ActivationBytes: 1e-10, cost.Calls: 1e-5}
	}
	sw, err := cost.SweepOf(truth)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(sw)
	if err := os.WriteFile(meas, b, 0o644); err != nil {
		t.Fatal(err)
	}
	quickstart := "../../experiments/configs/quickstart.yaml"
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"cost", quickstart, "--measurements", meas}, 0, "| decode |"},
		{[]string{"cost", quickstart, "--measurements", meas, "--set", "model=small"}, 0, "model dim 256"},
		{[]string{"cost", "--validate", "--measurements", meas}, 0, "held-out steps predicted within ±15%"},
		{[]string{"cost", "--measurements", meas}, 2, "exactly one of CONFIG, --validate and --measure"},
		{[]string{"cost", quickstart, "--validate", "--measurements", meas}, 2, "exactly one of"},
		{[]string{"cost", quickstart, "--measurements", filepath.Join(dir, "none.json")}, 2, "--measurements"},
		{[]string{"cost", "--measure", meas, "--repeats", "0"}, 2, "--repeats 0"},
		{[]string{"cost", "--measure", meas, "--points", "some"}, 2, `--points "some"`},
		{[]string{"cost", filepath.Join(dir, "none.yaml"), "--measurements", meas}, 2, "none.yaml"},
	} {
		code, out, errOut := rollout(t, tc.args...)
		if code != tc.code || !strings.Contains(out+errOut, tc.want) {
			t.Errorf("rollout %v: exit %d, want %d with %q\nstdout: %.400s\nstderr: %s", tc.args, code, tc.code, tc.want, out, errOut)
		}
	}
}
