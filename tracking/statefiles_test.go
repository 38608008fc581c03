package tracking

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// stateFiles lists the files of a run's StateDir, sorted.
func stateFiles(t *testing.T, path, runID string) []string {
	t.Helper()
	entries, err := os.ReadDir(StateDir(path, runID))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// stateBlob is a deterministic resume state of a step of a run.
func stateBlob(step, run, size int) []byte {
	b := make([]byte, size+step*3000+run*1000)
	for i := range b {
		b[i] = byte(i*7 + step + run)
	}
	return b
}

// Resume states live in files beside the store, one per unfinished run
// (KeepCheckpoints 1), read back whole; the store file does not hold them;
// a finished run leaves no file, a stopped one keeps its newest.
func TestStateFilesOnePerRun(t *testing.T) {
	const state = 10_500_000
	s, path := newStore(t, Options{NoSync: true, KeepCheckpoints: 1})
	addRun(t, s, "e", "a", "flat", 1)
	addRun(t, s, "e", "b", "flat", 2)
	if err := s.CommitStep("a", StepRecord{Step: 0, Checkpoint: []Blob{{Name: "st\x00ate", Data: []byte{1}}}}); err == nil {
		t.Error("a blob name with a zero byte was accepted")
	}
	for step := range 6 {
		for i, id := range []string{"a", "b"} {
			ckpt := []Blob{{Name: "state", Data: stateBlob(step, i, state)}, {Name: "small", Data: []byte{byte(step)}}}
			if err := s.CommitStep(id, StepRecord{Step: step, Metrics: map[string]float64{"m": 1}, Checkpoint: ckpt}); err != nil {
				t.Fatal(err)
			}
			if n := len(stateFiles(t, path, id)); n != 1 {
				t.Fatalf("run %s step %d: %d state files, want 1", id, step, n)
			}
		}
	}
	for i, id := range []string{"a", "b"} {
		step, blobs, err := s.LatestCheckpoint(id)
		if err != nil || step != 5 || len(blobs) != 2 {
			t.Fatalf("run %s: latest checkpoint at %d: %d blobs, %v", id, step, len(blobs), err)
		}
		for _, b := range blobs {
			want := map[string][]byte{"state": stateBlob(5, i, state), "small": {5}}[b.Name]
			if !bytes.Equal(b.Data, want) {
				t.Errorf("run %s blob %s: %d bytes read back, %d written, or not the same", id, b.Name, len(b.Data), len(want))
			}
		}
		if _, err := s.Checkpoint(id, 4); !errors.Is(err, ErrNotFound) {
			t.Errorf("run %s: pruned checkpoint of step 4: %v, want not found", id, err)
		}
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() > 2<<20 {
		t.Errorf("store file of %d bytes (%v) holding two runs' 10 MB states, want under 2 MB (bbolt grows it by 1 MB steps)", fi.Size(), err)
	}
	if err := s.EndRun("a", StatusFinished, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.EndRun("b", StatusStopped, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(StateDir(path, "a")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the finished run's state directory remains (%v)", err)
	}
	if _, _, err := s.LatestCheckpoint("a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("latest checkpoint of a finished run: %v", err)
	}
	if n := len(stateFiles(t, path, "b")); n != 1 {
		t.Errorf("the stopped run keeps %d state files, want 1", n)
	}
	if err := s.EndRun("b", StatusFinished, ""); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(path + stateSuffix); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s remains once every run finished and the writer closed (%v)", path+stateSuffix, err)
	}
}

// A commit that fails leaves no state file behind, and never touches the
// files of committed steps.
func TestFailedCommitRemovesItsStateFile(t *testing.T) {
	s, path := newStore(t, Options{NoSync: true, KeepCheckpoints: 1})
	addRun(t, s, "e", "r", "flat", 1)
	if err := s.CommitStep("r", StepRecord{Step: 3, Checkpoint: []Blob{{Name: "s", Data: []byte("three")}}}); err != nil {
		t.Fatal(err)
	}
	before := stateFiles(t, path, "r")
	for _, step := range []int{3, 2} { // already committed: refused in the transaction
		if err := s.CommitStep("r", StepRecord{Step: step, Checkpoint: []Blob{{Name: "s", Data: []byte("again")}}}); err == nil {
			t.Fatalf("step %d committed twice", step)
		}
	}
	if after := stateFiles(t, path, "r"); !slices.Equal(before, after) {
		t.Errorf("state files %v after failed commits, want %v", after, before)
	}
	if _, blobs, err := s.LatestCheckpoint("r"); err != nil || string(blobs[0].Data) != "three" {
		t.Errorf("latest checkpoint %v, %v", blobs, err)
	}
}

// A writer's open deletes what no committed step names: files of commits
// killed before they committed, temporary files, and the directories of
// finished or unknown runs; the files committed steps name stay.
func TestStateOrphansDeletedOnOpen(t *testing.T) {
	s, path := newStore(t, Options{NoSync: true, KeepCheckpoints: 1})
	addRun(t, s, "e", "live", "flat", 1)
	addRun(t, s, "e", "done", "flat", 2)
	for _, id := range []string{"live", "done"} {
		if err := s.CommitStep(id, StepRecord{Step: 1, Checkpoint: []Blob{{Name: "s", Data: []byte(id)}}}); err != nil {
			t.Fatal(err)
		}
	}
	kept := stateFiles(t, path, "live")
	doneFiles := stateFiles(t, path, "done")
	if err := s.EndRun("done", StatusFinished, ""); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// What kills at different points leave behind.
	orphans := []struct{ run, file string }{
		{"live", "2-00000000deadbeef.bin"}, // written, not committed
		{"live", ".tmp-123"},               // being written
		{"done", doneFiles[0]},             // finished, not yet deleted
		{"gone", "1-0000000000000001.bin"}, // a run the store does not have
		{"a/b", "1-0000000000000002.bin"},  // an escaped run id
	}
	for _, o := range orphans {
		if err := os.MkdirAll(StateDir(path, o.run), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(StateDir(path, o.run), o.file), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := stateFiles(t, path, "live"); !slices.Equal(got, kept) {
		t.Errorf("live run's state files %v after open, want %v", got, kept)
	}
	for _, id := range []string{"done", "gone", "a/b"} {
		if _, err := os.Stat(StateDir(path, id)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("state directory of run %q remains after open (%v)", id, err)
		}
	}
	if _, blobs, err := s.LatestCheckpoint("live"); err != nil || string(blobs[0].Data) != "live" {
		t.Errorf("live run's checkpoint after the cleanup: %v %v", blobs, err)
	}
}

// RewindRun deletes the state files of the steps it deletes.
func TestRewindDeletesStateFiles(t *testing.T) {
	s, path := newStore(t, Options{NoSync: true})
	addRun(t, s, "e", "r", "flat", 1)
	for step := range 5 {
		if err := s.CommitStep("r", StepRecord{Step: step, Checkpoint: []Blob{{Name: "s", Data: []byte{byte(step)}}}}); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(stateFiles(t, path, "r")); n != 5 {
		t.Fatalf("%d state files with KeepCheckpoints 0, want 5", n)
	}
	if err := s.RewindRun("r", 2); err != nil {
		t.Fatal(err)
	}
	files := stateFiles(t, path, "r")
	if len(files) != 3 || slices.ContainsFunc(files, func(f string) bool { return strings.HasPrefix(f, "3-") || strings.HasPrefix(f, "4-") }) {
		t.Errorf("state files %v after rewinding to step 2, want those of steps 0–2", files)
	}
	if step, blobs, err := s.LatestCheckpoint("r"); err != nil || step != 2 || blobs[0].Data[0] != 2 {
		t.Errorf("latest checkpoint after the rewind: %d %v %v", step, blobs, err)
	}
}

// A missing or damaged state file is an error naming it when read, and a
// problem Check reports.
func TestDamagedStateFile(t *testing.T) {
	cases := []struct {
		name   string
		damage func(file string) error
		want   string
	}{
		{"missing", os.Remove, "is missing"},
		{"truncated", func(f string) error { return os.Truncate(f, 10) }, "is 10 bytes"},
		{"flipped byte", func(f string) error {
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			b[len(b)-1] ^= 1
			return os.WriteFile(f, b, 0o644)
		}, "SHA-256"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, path := newStore(t, Options{NoSync: true, KeepCheckpoints: 1})
			addRun(t, s, "e", "r", "flat", 1)
			if err := s.CommitStep("r", StepRecord{Step: 0, Checkpoint: []Blob{{Name: "s", Data: []byte("state of step 0")}}}); err != nil {
				t.Fatal(err)
			}
			if err := s.EndRun("r", StatusStopped, ""); err != nil {
				t.Fatal(err)
			}
			s.Close()
			file := filepath.Join(StateDir(path, "r"), stateFiles(t, path, "r")[0])
			if err := tc.damage(file); err != nil {
				t.Fatal(err)
			}
			res, err := Check(path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if res.OK() || !strings.Contains(strings.Join(res.Problems, "\n"), tc.want) {
				t.Errorf("check found %q, want a problem saying %q", res.Problems, tc.want)
			}
			ro, err := Open(path, Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer ro.Close()
			_, _, err = ro.LatestCheckpoint("r")
			if err == nil || errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), file) {
				t.Errorf("reading the damaged checkpoint: %v, want an error naming %s", err, file)
			}
		})
	}
}

// Merge copies the state files of the unfinished runs it copies, replaces
// those of the runs it replaces, and refuses a source whose file is gone.
func TestMergeCopiesStateFiles(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src.db"), filepath.Join(dir, "dst.db")
	write := func(step int) {
		t.Helper()
		s, err := Open(src, Options{NoSync: true, KeepCheckpoints: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		addRun(t, s, "e", "r", "flat", 1)
		if err := s.CommitStep("r", StepRecord{Step: step, Checkpoint: []Blob{{Name: "s", Data: stateBlob(step, 0, 1000)}}}); err != nil {
			t.Fatal(err)
		}
		if err := s.EndRun("r", StatusStopped, ""); err != nil {
			t.Fatal(err)
		}
	}
	for step := range 2 {
		write(step)
		if _, err := Merge(dst, []string{src}, Options{NoSync: true}); err != nil {
			t.Fatalf("merge after step %d: %v", step, err)
		}
		if got, want := stateFiles(t, dst, "r"), stateFiles(t, src, "r"); !slices.Equal(got, want) {
			t.Errorf("after step %d the destination has state files %v, the source %v", step, got, want)
		}
		d, err := Open(dst, Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		got, blobs, err := d.LatestCheckpoint("r")
		d.Close()
		if err != nil || got != step || !bytes.Equal(blobs[0].Data, stateBlob(step, 0, 1000)) {
			t.Errorf("destination's checkpoint after merging step %d: step %d, %v", step, got, err)
		}
	}
	write(2)
	os.RemoveAll(StateDir(src, "r"))
	_, err := Merge(dst, []string{src}, Options{NoSync: true})
	if err == nil || !strings.Contains(err.Error(), "is gone") {
		t.Errorf("merging a run whose state file is gone: %v", err)
	}
	if got := stateFiles(t, dst, "r"); len(got) != 1 || !strings.HasPrefix(got[0], "1-") {
		t.Errorf("the destination's state files after the refused merge: %v, want step 1's", got)
	}
}
