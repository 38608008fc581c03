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

// ls and show say where a stopped or interrupted run stopped.
func TestStatusText(t *testing.T) {
	for _, tc := range []struct {
		status tracking.RunStatus
		last   int
		want   string
	}{
		{tracking.StatusRunning, 3, "running"},
		{tracking.StatusFinished, 3, "finished"},
		{tracking.StatusFailed, 3, "failed"},
		{tracking.StatusStopped, 3, "stopped at step 3"},
		{tracking.StatusStopped, -1, "stopped before step 0"},
		{tracking.StatusInterrupted, 0, "interrupted at step 0"},
	} {
		r := tracking.Run{ID: "r", Status: tc.status, LastStep: tc.last, Resumes: 2}
		if got := StatusText(r); got != tc.want {
			t.Errorf("%s at %d: %q, want %q", tc.status, tc.last, got, tc.want)
		}
		var ls, show bytes.Buffer
		WriteRuns(&ls, []tracking.Run{r})
		WriteRunDetail(&show, r, nil)
		if !strings.Contains(ls.String(), tc.want+" (resumed 2×)") || !strings.Contains(show.String(), "status     "+tc.want+"\n") {
			t.Errorf("%s at %d: ls\n%s\nshow\n%s", tc.status, tc.last, ls.String(), show.String())
		}
	}
}

// The steps column is the last committed step of the planned steps (step
// 0 is the base policy's evaluation).
func TestProgressColumn(t *testing.T) {
	for _, tc := range []struct {
		last, total int
		want        string
	}{
		{-1, 6, "–/6"},
		{0, 6, "0/6"},
		{6, 6, "6/6"},
		{4, 0, "4"},
		{-1, 0, "–"},
	} {
		if got := progress(tracking.Run{LastStep: tc.last, TotalSteps: tc.total}); got != tc.want {
			t.Errorf("step %d of %d: %q, want %q", tc.last, tc.total, got, tc.want)
		}
	}
}
