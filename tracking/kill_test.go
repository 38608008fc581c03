package tracking

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/rollout-rl/rollout/search/record"
)

// TestKilledWriter kills (SIGKILL) a child process in the middle of
// committing steps and checks that the store holds every step up to the
// run's LastStep completely and nothing after it, and that the run resumes.
func TestKilledWriter(t *testing.T) {
	if os.Getenv("TRACKING_KILL_CHILD") != "" {
		return
	}
	path := storeWithRun(t)
	cmd, sc := startChild(t, "TestKilledWriterChild", "TRACKING_KILL_CHILD="+path)
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

	s, err := Open(path, Options{})
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
	// The resume state is the child's last committed one, bit for bit,
	// and the only file left (a state written but not committed when the
	// kill came is an orphan the open deleted).
	step, blobs, err := s.LatestCheckpoint("r")
	if err != nil || step != r.LastStep || len(blobs) != 1 || !bytes.Equal(blobs[0].Data, stateBlob(step, 0, killState)) {
		t.Errorf("latest checkpoint at step %d (last step %d): %d blobs, %v; want the child's state of its last step", step, r.LastStep, len(blobs), err)
	}
	if files := stateFiles(t, path, "r"); len(files) != 1 {
		t.Errorf("state files %v after the resume, want one", files)
	}
	if err := s.CommitStep("r", StepRecord{Step: r.LastStep + 1}); err != nil {
		t.Errorf("continuing the resumed run: %v", err)
	}
}

// killState is the size of the resume states the killed children commit.
const killState = 300_000

// TestKilledWriterChild commits steps until killed, printing each step
// number once its transaction has committed.
func TestKilledWriterChild(t *testing.T) {
	path := os.Getenv("TRACKING_KILL_CHILD")
	if path == "" {
		t.Skip("run by TestKilledWriter")
	}
	s, err := Open(path, Options{KeepCheckpoints: 1})
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
		ckpt := []Blob{{Name: "state", Data: stateBlob(step, 0, killState)}}
		if err := s.CommitStep("r", StepRecord{Step: step, Metrics: map[string]float64{"m": float64(step)}, Groups: groups, Checkpoint: ckpt}); err != nil {
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

// TestKilledAtStateFile kills (SIGKILL) a writer at each point of a step's
// commit around its resume state file: after the file is written and
// before the transaction names it, and after the commit before the state
// it replaced is deleted. The run resumes from the last committed state,
// bit for bit, and the open deletes the file no commit names.
func TestKilledAtStateFile(t *testing.T) {
	if os.Getenv("TRACKING_KILL_STATE") != "" {
		return
	}
	cases := []struct {
		point string
		// lastStep is the run's last committed step when killed.
		lastStep int
	}{
		{"written", 0},
		{"committed", 1},
	}
	for _, tc := range cases {
		t.Run(tc.point, func(t *testing.T) {
			path := storeWithRun(t)
			cmd, sc := startChild(t, "TestKilledAtStateFileChild", "TRACKING_KILL_STATE="+path, "TRACKING_KILL_POINT="+tc.point)
			reached := false
			for !reached && sc.Scan() {
				reached = sc.Text() == "at "+tc.point
			}
			cmd.Process.Kill()
			cmd.Wait()
			if !reached {
				t.Fatalf("the child never reached %q", tc.point)
			}
			if files := stateFiles(t, path, "r"); len(files) != 2 {
				t.Fatalf("state files %v when killed, want two (the committed state and the other)", files)
			}
			s, err := Open(path, Options{KeepCheckpoints: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			r, err := s.BeginRun(Run{ID: "r", Experiment: "exp"})
			if err != nil {
				t.Fatal(err)
			}
			step, blobs, err := s.LatestCheckpoint("r")
			if err != nil || r.LastStep != tc.lastStep || step != tc.lastStep || len(blobs) != 1 || !bytes.Equal(blobs[0].Data, stateBlob(step, 0, killState)) {
				t.Errorf("resumed at last step %d from the checkpoint of step %d (%d blobs, %v); want step %d's state", r.LastStep, step, len(blobs), err, tc.lastStep)
			}
			if files := stateFiles(t, path, "r"); len(files) != 1 || !strings.HasPrefix(files[0], strconv.Itoa(tc.lastStep)+"-") {
				t.Errorf("state files %v after the open, want step %d's only", files, tc.lastStep)
			}
			next := StepRecord{Step: r.LastStep + 1, Checkpoint: []Blob{{Name: "state", Data: []byte("next")}}}
			if err := s.CommitStep("r", next); err != nil {
				t.Errorf("continuing the resumed run: %v", err)
			}
		})
	}
}

// TestKilledAtStateFileChild commits step 0 with a resume state, then
// step 1, stopping for good at the point TRACKING_KILL_POINT names (see
// Store.stateHook) of step 1's commit after printing "at POINT".
func TestKilledAtStateFileChild(t *testing.T) {
	path := os.Getenv("TRACKING_KILL_STATE")
	if path == "" {
		t.Skip("run by TestKilledAtStateFile")
	}
	s, err := Open(path, Options{KeepCheckpoints: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.BeginRun(Run{ID: "r", Experiment: "exp"}); err != nil {
		t.Fatal(err)
	}
	for step := range 2 {
		if step == 1 {
			s.stateHook = func(point string) {
				if point == os.Getenv("TRACKING_KILL_POINT") {
					fmt.Println("at " + point)
					select {} // until killed
				}
			}
		}
		ckpt := []Blob{{Name: "state", Data: stateBlob(step, 0, killState)}}
		if err := s.CommitStep("r", StepRecord{Step: step, Checkpoint: ckpt}); err != nil {
			t.Fatal(err)
		}
	}
}
