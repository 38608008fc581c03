package main

import (
	"strings"
	"testing"
)

// rollout rm-quality refuses bad input with exit status 2 before it
// samples or trains anything.
func TestRMQualityBadInput(t *testing.T) {
	quickstart := "../../experiments/configs/quickstart.yaml"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"rm-quality", quickstart}, "--checkpoints"},
		{[]string{"rm-quality", quickstart, "--checkpoints", t.TempDir(), "--samples", "1"}, "samples"},
		{[]string{"rm-quality", quickstart, "--checkpoints", t.TempDir(), "--every", "0"}, "checkpoints every 0"},
		{[]string{"rm-quality", quickstart, "--checkpoints", t.TempDir(), "--bce", "-1"}, "bce"},
		{[]string{"rm-quality", quickstart, "--checkpoints", t.TempDir(), "--near-misses", "-2"}, "-2 near misses"},
		{[]string{"rm-quality", quickstart, "--checkpoints", t.TempDir(), "--validation", "--held-out-first", "10"}, "overlap the 1024 trained on"},
	} {
		code, out, errOut := rollout(t, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("rollout %v: exit %d, want 2 with %q\nstdout: %.300s\nstderr: %s", tc.args, code, tc.want, out, errOut)
		}
	}
}
