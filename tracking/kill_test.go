package tracking

import (
	"bufio"
	"fmt"
	bolt "go.etcd.io/bbolt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/rollout-rl/rollout/search/record"
)

// TestKilledWriter kills (SIGKILL) a child process in the middle of
// committing steps and checks that the store holds every step up to the
// run's LastStep completely and nothing after it, and that the run resumes.
func TestKilledWriter(t *testing.T) {
	if os.Getenv("TRACKING_KILL_CHILD") != "" {
		return
	}
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	addRun(t, s, "exp", "r", "flat", 1)
	s.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWriterChild$")
	cmd.Env = append(os.Environ(), "TRACKING_KILL_CHILD="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	reported := -1
	for sc.Scan() {
		if n, err := strconv.Atoi(sc.Text()); err == nil {
			reported = n
		}
		if reported >= 8 {
			break
		}
	}
	// Readers get consistent snapshots while the child writes.
	for i := range 3 {
		snapshotConsistent(t, path, i)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if reported < 8 {
		t.Fatalf("child reported step %d only", reported)
	}
	// With its writer dead, reads show the run interrupted, not running.
	ro, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if r, err := ro.Run("r"); err != nil || r.Status != StatusInterrupted {
		t.Errorf("after the kill, a read shows the run %s (%v), want interrupted", r.Status, err)
	}
	ro.Close()

	s, err = Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.BeginRun(Run{ID: "r", Experiment: "exp"})
	if err != nil {
		t.Fatal(err)
	}
	if r.LastStep < reported || r.Resumes != 2 || r.Status != StatusRunning { // reopened by the child, then here
		t.Fatalf("run %+v: the child had reported step %d committed", r, reported)
	}
	ms, err := s.Metrics("r")
	if err != nil || len(ms) != r.LastStep+1 {
		t.Fatalf("%d metric records for last step %d: %v", len(ms), r.LastStep, err)
	}
	for step := 0; step <= r.LastStep+1; step++ {
		gs, err := s.Groups("r", step)
		want := 8
		if step > r.LastStep {
			want = 0
		}
		if err != nil || len(gs) != want {
			t.Errorf("step %d: %d groups, want %d (%v)", step, len(gs), want, err)
		}
	}
	if err := s.CommitStep("r", StepRecord{Step: r.LastStep + 1}); err != nil {
		t.Errorf("continuing the resumed run: %v", err)
	}
}

// TestKilledWriterChild commits steps until killed, printing each step
// number once its transaction has committed.
func TestKilledWriterChild(t *testing.T) {
	path := os.Getenv("TRACKING_KILL_CHILD")
	if path == "" {
		t.Skip("run by TestKilledWriter")
	}
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := s.BeginRun(Run{ID: "r", Experiment: "exp"})
	if err != nil {
		t.Fatal(err)
	}
	groups := make([]record.Group, 8)
	for i := range groups {
		groups[i] = flatGroup(i, 16, 40)
	}
	for step := r.LastStep + 1; step < 100000; step++ {
		if err := s.CommitStep("r", StepRecord{Step: step, Metrics: map[string]float64{"m": float64(step)}, Groups: groups}); err != nil {
			t.Fatal(err)
		}
		fmt.Println(step)
	}
}

// snapshotConsistent opens a read-only snapshot of a store being written
// and checks bbolt's invariants and that every step up to LastStep is whole.
func snapshotConsistent(t *testing.T, path string, attempt int) {
	t.Helper()
	s, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatalf("snapshot %d: %v", attempt, err)
	}
	defer s.Close()
	if snap, _ := s.Snapshot(); !snap {
		t.Errorf("snapshot %d: read-only open of a store being written is not a snapshot", attempt)
	}
	err = s.db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return nil
	})
	if err != nil {
		t.Fatalf("snapshot %d: bbolt check: %v", attempt, err)
	}
	r, err := s.Run("r")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != StatusRunning {
		t.Errorf("snapshot %d: the run being written shows as %s, want running", attempt, r.Status)
	}
	ms, _ := s.Metrics("r")
	gs, _ := s.Groups("r", r.LastStep)
	if len(ms) != r.LastStep+1 || len(gs) != 8 {
		t.Errorf("snapshot %d: last step %d, %d metric records, %d groups at the last step", attempt, r.LastStep, len(ms), len(gs))
	}
}
