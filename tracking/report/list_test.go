package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/tracking"
)

func TestWriteRunsAndDetail(t *testing.T) {
	s := newStore(t)
	addRun(t, s, "exp", "0123456789abcdef", "flat", 4, "seed: 1\n")
	commit(t, s, "0123456789abcdef", 0, 640, map[string]float64{"reward/mean": 0.5, "eval/acc": 0.25})
	s.EndRun("0123456789abcdef", tracking.StatusFailed, "out of memory")
	runs, _ := s.Runs("")
	var buf bytes.Buffer
	if err := WriteRuns(&buf, runs); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"0123456789ab ", "exp", "flat", "failed", "640"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("ls output lacks %q:\n%s", want, buf.String())
		}
	}
	buf.Reset()
	last, _ := s.LastMetrics("0123456789abcdef")
	if err := WriteRunDetail(&buf, runs[0], &last); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"status     failed: out of memory", "metrics at step 0:", "  eval/acc    0.25", "config:\nseed: 1\n"} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("show output lacks %q:\n%s", want, buf.String())
		}
	}
}
