package tracking

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// A run's recorded status, as a reader with no writer alive shows it, and
// as the next writer records it.
func TestRunStatuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		end  RunStatus // "" leaves the run running (its writer died)
		msg  string
		// read is what a read-only open shows; reopened what a writer open
		// records.
		read, reopened RunStatus
		reopenedErr    string
	}{
		{"finished", StatusFinished, "", StatusFinished, StatusFinished, ""},
		{"failed", StatusFailed, "nan loss", StatusFailed, StatusFailed, "nan loss"},
		{"stopped", StatusStopped, "", StatusStopped, StatusStopped, ""},
		{"writer died", "", "", StatusInterrupted, StatusStopped, orphanedRunError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, path := newStore(t, Options{NoSync: true})
			addRun(t, s, "exp", "r", "flat", 1)
			for step := range 3 {
				if err := s.CommitStep("r", StepRecord{Step: step, Tokens: int64(10 * step)}); err != nil {
					t.Fatal(err)
				}
			}
			if tc.end != "" {
				if err := s.EndRun("r", tc.end, tc.msg); err != nil {
					t.Fatal(err)
				}
			}
			if r, _ := s.Run("r"); tc.end == "" && r.Status != StatusRunning {
				t.Fatalf("the writer reads its own run as %s, want running", r.Status)
			}
			s.Close()

			before, _ := os.ReadFile(path)
			ro, err := Open(path, Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			r, err1 := ro.Run("r")
			runs, err2 := ro.Runs("exp")
			found, err3 := ro.FindRuns("exp")
			ro.Close()
			if err1 != nil || err2 != nil || err3 != nil {
				t.Fatal(err1, err2, err3)
			}
			for _, got := range []Run{r, runs[0], found[0]} {
				if got.Status != tc.read || got.LastStep != 2 {
					t.Errorf("read-only: %s at step %d, want %s at step 2", got.Status, got.LastStep, tc.read)
				}
			}
			if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
				t.Error("a read-only open wrote the store")
			}

			w, err := Open(path, Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			r, _ = w.Run("r")
			if r.Status != tc.reopened || r.Error != tc.reopenedErr || r.LastStep != 2 || r.Tokens != 20 {
				t.Errorf("after a writer open: %s (%q) at step %d, %d tokens; want %s (%q) at step 2, 20 tokens",
					r.Status, r.Error, r.LastStep, r.Tokens, tc.reopened, tc.reopenedErr)
			}
			if tc.reopened == StatusStopped && r.End.IsZero() {
				t.Error("a stopped run has no end time")
			}
			if tc.end == StatusFinished {
				return
			}
			// Stopped, failed and interrupted runs resume after their last step.
			r, err = w.BeginRun(Run{ID: "r", Experiment: "exp"})
			if err != nil || r.Status != StatusRunning || r.Error != "" || r.LastStep != 2 || r.Resumes != 1 || !r.End.IsZero() {
				t.Fatalf("resumed: %+v, %v", r, err)
			}
			if err := w.CommitStep("r", StepRecord{Step: 3}); err != nil {
				t.Fatalf("continuing the resumed run: %v", err)
			}
		})
	}
}

// EndRun takes the statuses a writer ends a run with, and never unfinishes
// a finished run.
func TestEndRunStatuses(t *testing.T) {
	s, _ := newStore(t, Options{NoSync: true})
	addRun(t, s, "exp", "r", "flat", 1)
	for _, tc := range []struct {
		status RunStatus
		want   string // error text, "" for none
	}{
		{StatusRunning, `status "running": want "finished", "failed" or "stopped"`},
		{StatusInterrupted, `status "interrupted"`},
		{"paused", `status "paused"`},
		{StatusStopped, ""},
		{StatusFinished, ""},
		{StatusStopped, "end run r as stopped: it is finished"},
		{StatusFailed, "end run r as failed: it is finished"},
	} {
		err := s.EndRun("r", tc.status, "")
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("EndRun(%s): %v, want %q", tc.status, err, tc.want)
		}
	}
	if r, _ := s.Run("r"); r.Status != StatusFinished {
		t.Errorf("status %s, want finished", r.Status)
	}
}

// A merge records a run still running in its source as stopped: nothing
// runs it in the destination.
func TestMergeStopsRunningRuns(t *testing.T) {
	s, path := newStore(t, Options{NoSync: true})
	addRun(t, s, "exp", "r", "flat", 1)
	if err := s.CommitStep("r", StepRecord{Step: 0}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	src, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, _ := newStore(t, Options{NoSync: true})
	if st, err := dst.MergeFrom(src); err != nil || st.Runs != 1 {
		t.Fatalf("merge: %+v, %v", st, err)
	}
	if r, _ := dst.Run("r"); r.Status != StatusStopped || r.LastStep != 0 {
		t.Errorf("merged run %s at step %d, want stopped at step 0", r.Status, r.LastStep)
	}
}
