package tracking

import (
	"bytes"
	"encoding/binary"

	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/rollout-rl/rollout/search/record"
)

func TestRoundTrip(t *testing.T) {
	s, _ := newStore(t, Options{})
	addRun(t, s, "exp", "r1", "flat", 7)
	steps := []StepRecord{
		{Step: 0, Tokens: 100, Elapsed: time.Second, Metrics: map[string]float64{"reward/mean": 0.25, "eval/acc": 0.5}, Groups: []record.Group{flatGroup(1, 4, 5), treeGroup()}},
		{Step: 1, Tokens: 250, Elapsed: 2 * time.Second, Metrics: map[string]float64{"reward/mean": 0.5}, Groups: []record.Group{flatGroup(2, 2, 3)},
			Checkpoint: []Blob{{Name: "model", Data: []byte("weights-1")}, {Name: "optimizer", Data: []byte("adam-1")}}},
		{Step: 3, Tokens: 400, Elapsed: 3 * time.Second, Metrics: map[string]float64{"reward/mean": 0.75, "eval/acc": 0.625}},
	}
	for _, st := range steps {
		if err := s.CommitStep("r1", st); err != nil {
			t.Fatal(err)
		}
	}
	for _, st := range steps {
		got, err := s.Groups("r1", st.Step)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(st.Groups) || len(got) > 0 && !reflect.DeepEqual(got, st.Groups) {
			t.Errorf("step %d groups differ:\n got %+v\nwant %+v", st.Step, got, st.Groups)
		}
	}
	ms, err := s.Metrics("r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 3 || ms[2].Step != 3 || ms[2].Tokens != 400 || ms[2].Elapsed != 3*time.Second || ms[0].Values["eval/acc"] != 0.5 {
		t.Errorf("metrics %+v", ms)
	}
	ser, err := s.Series("r1", "eval/acc")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ser.Steps, []int{0, 3}) || !reflect.DeepEqual(ser.Values, []float64{0.5, 0.625}) || !reflect.DeepEqual(ser.Tokens, []int64{100, 400}) {
		t.Errorf("series %+v", ser)
	}
	names, _ := s.MetricNames("r1")
	if !reflect.DeepEqual(names, []string{"eval/acc", "reward/mean"}) {
		t.Errorf("names %v", names)
	}
	step, blobs, err := s.LatestCheckpoint("r1")
	if err != nil || step != 1 || len(blobs) != 2 || string(blobs[0].Data) != "weights-1" || blobs[1].Name != "optimizer" {
		t.Errorf("checkpoint %d %+v %v", step, blobs, err)
	}
	if last, _ := s.LastStep("r1"); last != 3 {
		t.Errorf("last step %d, want 3", last)
	}
	r, _ := s.Run("r1")
	if r.Tokens != 400 || r.Status != StatusRunning || r.Seed != 7 || r.Version != "test" {
		t.Errorf("run %+v", r)
	}
}

func TestCommitErrors(t *testing.T) {
	s, _ := newStore(t, Options{})
	addRun(t, s, "exp", "r1", "flat", 1)
	if err := s.CommitStep("r1", StepRecord{Step: 2}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		run  string
		rec  StepRecord
		want string
	}{
		{"repeated step", "r1", StepRecord{Step: 2}, "already committed"},
		{"earlier step", "r1", StepRecord{Step: 1}, "already committed"},
		{"negative step", "r1", StepRecord{Step: -1}, "negative step"},
		{"unknown run", "nope", StepRecord{Step: 0}, "run nope: not found"},
		{"unnamed blob", "r1", StepRecord{Step: 3, Checkpoint: []Blob{{Data: []byte{1}}}}, "empty name"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := s.CommitStep(tc.run, tc.rec)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want it to contain %q", err, tc.want)
			}
		})
	}
	if err := s.EndRun("r1", StatusFinished, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitStep("r1", StepRecord{Step: 9}); err == nil || !strings.Contains(err.Error(), "is finished") {
		t.Errorf("commit to a finished run: %v", err)
	}
	if _, err := s.BeginRun(Run{ID: "x", Experiment: "missing"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("run of a missing experiment: %v", err)
	}
}

func TestResume(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	addRun(t, s, "exp", "r", "flat", 1)
	for i := range 3 {
		if err := s.CommitStep("r", StepRecord{Step: i, Tokens: int64(10 * (i + 1)), Checkpoint: []Blob{{Name: "model", Data: []byte{byte(i)}}}}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close() // as if killed: status stays running

	s, err = Open(path, Options{KeepCheckpoints: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.BeginRun(Run{ID: "r", Experiment: "exp", Variant: "flat", Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if r.LastStep != 2 || r.Tokens != 30 || r.Resumes != 1 || r.Status != StatusRunning {
		t.Fatalf("resumed run %+v", r)
	}
	step, blobs, err := s.LatestCheckpoint("r")
	if err != nil || step != 2 || blobs[0].Data[0] != 2 {
		t.Fatalf("checkpoint %d %v %v", step, blobs, err)
	}
	if err := s.CommitStep("r", StepRecord{Step: r.LastStep + 1, Tokens: 40, Checkpoint: []Blob{{Name: "model", Data: []byte{3}}}}); err != nil {
		t.Fatal(err)
	}
	// KeepCheckpoints 2: steps 0 and 1 are pruned.
	for step, want := range map[int]bool{0: false, 1: false, 2: true, 3: true} {
		_, err := s.Checkpoint("r", step)
		if (err == nil) != want {
			t.Errorf("checkpoint at step %d: err %v, want present=%v", step, err, want)
		}
	}
	if err := s.EndRun("r", StatusFinished, ""); err != nil {
		t.Fatal(err)
	}
	r, _ = s.BeginRun(Run{ID: "r", Experiment: "exp"})
	if r.Status != StatusFinished || r.LastStep != 3 {
		t.Errorf("finished run reopened: %+v", r)
	}
}

func TestSchemaVersion(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.db")
	// An empty file is initialised.
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatalf("empty file: %v", err)
	}
	err = s.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(bucketMeta)).Put([]byte(keySchema), binary.BigEndian.AppendUint32(nil, SchemaVersion+1))
	})
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, ro := range []bool{false, true} {
		_, err = Open(path, Options{ReadOnly: ro})
		var se *SchemaError
		if !errors.As(err, &se) || se.Found != SchemaVersion+1 || !strings.Contains(err.Error(), "upgrade rollout") {
			t.Errorf("read-only=%v: err %v, want a SchemaError", ro, err)
		}
	}
	// Not a store at all.
	junk := filepath.Join(t.TempDir(), "junk.db")
	os.WriteFile(junk, bytes.Repeat([]byte("x"), 8192), 0o644)
	if _, err := Open(junk, Options{}); err == nil || !strings.Contains(err.Error(), "not a rollout store") {
		t.Errorf("junk file: %v", err)
	}
	if _, err := Open(filepath.Join(t.TempDir(), "missing.db"), Options{ReadOnly: true}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("read-only open of a missing file: %v", err)
	}
}

// TestLockContention opens the store for writing in a child process (this
// test binary re-executed) and checks that a second writer gets a clear
// LockedError naming the child within the timeout, and that a reader gets
// a snapshot holding what the child committed.
func TestLockContention(t *testing.T) {
	if os.Getenv("TRACKING_LOCK_CHILD") != "" {
		return
	}
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	addRun(t, s, "exp", "r", "flat", 1)
	if err := s.CommitStep("r", StepRecord{Step: 0, Metrics: map[string]float64{"m": 1}, Groups: []record.Group{treeGroup()}}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestLockHolderChild$")
	cmd.Env = append(os.Environ(), "TRACKING_LOCK_CHILD="+path)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdin, _ := cmd.StdinPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { stdin.Close(); cmd.Wait() }()
	buf := make([]byte, 6)
	if _, err := stdout.Read(buf); err != nil || string(buf) != "locked" {
		t.Fatalf("child did not lock: %q %v", buf, err)
	}

	tests := []struct {
		name    string
		timeout time.Duration
	}{
		{"short timeout", 300 * time.Millisecond},
		{"default timeout", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			_, err := Open(path, Options{Timeout: tc.timeout})
			took := time.Since(start)
			limit := tc.timeout
			if limit == 0 {
				limit = DefaultTimeout
			}
			var le *LockedError
			if !errors.As(err, &le) || !errors.Is(err, ErrLocked) {
				t.Fatalf("err %v, want a LockedError", err)
			}
			// It waited for the holder, about the timeout (bbolt polls the
			// lock every 50 ms, and may give up that much early); how much
			// longer depends on the machine's load, so no upper bound.
			if took < limit/2 {
				t.Errorf("gave up after %v, long before the timeout %v", took, limit)
			}
			want := fmt.Sprintf("pid %d", cmd.Process.Pid)
			if le.Holder == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "TestLockHolderChild") {
				t.Errorf("message %q does not name the holder (%s)", err, want)
			}
		})
	}
	t.Run("reader gets a snapshot", func(t *testing.T) {
		r, err := Open(path, Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		snap, holder := r.Snapshot()
		if !snap || holder == nil || holder.PID != cmd.Process.Pid {
			t.Errorf("snapshot %v holder %+v", snap, holder)
		}
		if last, err := r.LastStep("r"); err != nil || last != 1 {
			t.Errorf("snapshot last step %d %v, want 1 (committed by the child)", last, err)
		}
	})
	t.Run("reader without snapshot", func(t *testing.T) {
		_, err := Open(path, Options{ReadOnly: true, NoSnapshot: true, Timeout: 200 * time.Millisecond})
		if !errors.Is(err, ErrLocked) {
			t.Errorf("err %v, want ErrLocked", err)
		}
	})
}

// TestLockHolderChild is the child of TestLockContention: it opens the
// store, commits a step, prints "locked" and holds the lock until stdin closes.
func TestLockHolderChild(t *testing.T) {
	path := os.Getenv("TRACKING_LOCK_CHILD")
	if path == "" {
		t.Skip("run by TestLockContention")
	}
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.BeginRun(Run{ID: "r", Experiment: "exp"}); err != nil { // the open recorded it as stopped
		t.Fatal(err)
	}
	if err := s.CommitStep("r", StepRecord{Step: 1, Metrics: map[string]float64{"m": 2}}); err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("locked")
	var b [1]byte
	os.Stdin.Read(b[:])
}

func TestLockSameProcess(t *testing.T) {
	// flock locks belong to open file descriptions, so a second handle in
	// the same process contends like another process would.
	s, path := newStore(t, Options{})
	_ = s
	_, err := Open(path, Options{Timeout: 200 * time.Millisecond})
	if !errors.Is(err, ErrLocked) {
		t.Errorf("err %v, want ErrLocked", err)
	}
	if !strings.Contains(err.Error(), fmt.Sprintf("pid %d", os.Getpid())) {
		t.Errorf("message %q does not name this process", err)
	}
}

func TestMergeIdempotent(t *testing.T) {
	dir := t.TempDir()
	a, b, into := filepath.Join(dir, "a.db"), filepath.Join(dir, "b.db"), filepath.Join(dir, "c.db")
	write := func(path string, runs map[string]int, finish bool) {
		s, err := Open(path, Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		for id, steps := range runs {
			addRun(t, s, "exp", id, "v-"+id, 1)
			for i := range steps {
				if err := s.CommitStep(id, StepRecord{Step: i, Tokens: int64(i), Metrics: map[string]float64{"m": float64(i)}, Groups: []record.Group{flatGroup(i, 2, 3)}, Checkpoint: []Blob{{Name: "w", Data: []byte(id)}}}); err != nil {
					t.Fatal(err)
				}
			}
			if finish {
				s.EndRun(id, StatusFinished, "")
			}
		}
	}
	write(a, map[string]int{"r1": 3, "r2": 2}, false)
	write(b, map[string]int{"r2": 4, "r3": 1}, true)

	st, err := Merge(into, []string{a, b}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Experiments != 1 || st.Runs != 4 || st.Unchanged != 0 {
		t.Errorf("first merge %+v: want 1 experiment, 4 run copies (r2 twice)", st)
	}
	snapshot := func() map[string]string {
		s, err := Open(into, Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		d, err := s.dump()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	first := snapshot()
	st, err = Merge(into, []string{b, a}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if st.Runs != 0 || st.Experiments != 0 || st.Unchanged != 4 {
		t.Errorf("second merge copied %+v", st)
	}
	if second := snapshot(); !reflect.DeepEqual(first, second) {
		t.Error("merging twice changed the store")
	}
	s, err := Open(into, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	runs, _ := s.Runs("exp")
	if len(runs) != 3 {
		t.Fatalf("runs %+v", runs)
	}
	if r2, _ := s.Run("r2"); r2.LastStep != 3 || r2.Status != StatusFinished {
		t.Errorf("r2 %+v: want b's finished 4-step copy", r2)
	}
	if ms, _ := s.Metrics("r2"); len(ms) != 4 {
		t.Errorf("r2 has %d metric records, want 4", len(ms))
	}
	if _, err := Merge(a, []string{a}, Options{}); err == nil {
		t.Error("merging a store into itself succeeded")
	}
}

func TestCompact(t *testing.T) {
	s, path := newStore(t, Options{NoSync: true})
	addRun(t, s, "exp", "r", "flat", 1)
	for i := range 20 {
		if err := s.CommitStep("r", StepRecord{Step: i, Groups: []record.Group{flatGroup(i, 16, 40)}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.EndRun("r", StatusFinished, ""); err != nil { // else the compacting writer records it as stopped
		t.Fatal(err)
	}
	want, _ := s.dump()
	s.Close()
	before, after, err := Compact(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if after <= 0 || after > before {
		t.Errorf("sizes %d → %d", before, after)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("compacted file mode %v, %v: want the original 0644", fi.Mode(), err)
	}
	c, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got, _ := c.dump(); !reflect.DeepEqual(got, want) {
		t.Error("compaction changed the contents")
	}
}

func TestLastMetricsAndFindRuns(t *testing.T) {
	s, _ := newStore(t, Options{NoSync: true})
	addRun(t, s, "exp", "abc123", "flat", 1)
	addRun(t, s, "exp", "abd456", "tree", 1)
	addRun(t, s, "other", "zzz", "flat", 1)
	if _, err := s.LastMetrics("abc123"); !errors.Is(err, ErrNotFound) {
		t.Errorf("no steps: %v", err)
	}
	s.CommitStep("abc123", StepRecord{Step: 4, Metrics: map[string]float64{"m": 3}})
	if m, err := s.LastMetrics("abc123"); err != nil || m.Step != 4 || m.Values["m"] != 3 {
		t.Errorf("last metrics %+v %v", m, err)
	}
	tests := []struct {
		ref  string
		want []string
		err  string
	}{
		{"abc123", []string{"abc123"}, ""},
		{"abd", []string{"abd456"}, ""},
		{"exp", []string{"abc123", "abd456"}, ""},
		{"ab", nil, "prefix of 2 run ids"},
		{"nope", nil, "not found"},
	}
	for _, tc := range tests {
		runs, err := s.FindRuns(tc.ref)
		var ids []string
		for _, r := range runs {
			ids = append(ids, r.ID)
		}
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("FindRuns(%q): err %v, want %q", tc.ref, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(ids, tc.want) {
			t.Errorf("FindRuns(%q) = %v, %v; want %v", tc.ref, ids, err, tc.want)
		}
	}
}

func TestRewindRun(t *testing.T) {
	s, _ := newStore(t, Options{NoSync: true})
	addRun(t, s, "exp", "r", "flat", 1)
	for i := range 6 {
		rec := StepRecord{Step: i, Tokens: int64(100 * i), Metrics: map[string]float64{"m": float64(i)}, Groups: []record.Group{flatGroup(i, 2, 2)}}
		if i%2 == 0 {
			rec.Checkpoint = []Blob{{Name: "model", Data: []byte{byte(i)}}}
		}
		if err := s.CommitStep("r", rec); err != nil {
			t.Fatal(err)
		}
	}
	// Resume from the checkpoint at step 2: steps 3–5 go.
	step, _, _ := s.LatestCheckpoint("r")
	if step != 4 {
		t.Fatalf("latest checkpoint %d", step)
	}
	if err := s.RewindRun("r", 2); err != nil {
		t.Fatal(err)
	}
	r, _ := s.Run("r")
	ms, _ := s.Metrics("r")
	gs, _ := s.Groups("r", 3)
	step, _, _ = s.LatestCheckpoint("r")
	if r.LastStep != 2 || r.Tokens != 200 || len(ms) != 3 || len(gs) != 0 || step != 2 {
		t.Errorf("after rewind: run %+v, %d metric records, %d groups at 3, checkpoint %d", r, len(ms), len(gs), step)
	}
	if err := s.CommitStep("r", StepRecord{Step: 3}); err != nil {
		t.Errorf("recommitting step 3: %v", err)
	}
	if err := s.RewindRun("r", -1); err != nil {
		t.Fatal(err)
	}
	if r, _ := s.Run("r"); r.LastStep != -1 || r.Tokens != 0 {
		t.Errorf("rewound to nothing: %+v", r)
	}
	s.EndRun("r", StatusFinished, "")
	if err := s.RewindRun("r", 0); err == nil {
		t.Error("rewound a finished run")
	}
}

// TestCommitValidates checks that a step with an invalid group is refused.
func TestCommitValidates(t *testing.T) {
	s, _ := newStore(t, Options{NoSync: true})
	addRun(t, s, "e", "r", "flat", 1)
	bad := treeGroup()
	bad.Leaves[1].Node = 9
	if err := s.CommitStep("r", StepRecord{Step: 0, Groups: []record.Group{treeGroup(), bad}}); err == nil || !strings.Contains(err.Error(), "group 1: leaf 1") {
		t.Errorf("commit of an invalid group: %v", err)
	}
}

func TestGroupChunks(t *testing.T) {
	s, _ := newStore(t, Options{NoSync: true})
	addRun(t, s, "e", "r", "flat", 1)
	groups := make([]record.Group, 400)
	size := 0
	for i := range groups {
		groups[i] = flatGroup(i, 16, 40)
		enc, _ := groups[i].AppendBinary(nil)
		size += len(enc)
	}
	if size < 2*chunkTarget {
		t.Fatalf("groups encode to %d bytes: too few for three chunks a step", size)
	}
	for step := range 2 {
		if err := s.CommitStep("r", StepRecord{Step: step, Groups: groups[:len(groups)-step]}); err != nil {
			t.Fatal(err)
		}
	}
	chunks := 0
	s.db.View(func(tx *bolt.Tx) error {
		b, _ := s.runData(tx, "r", bucketGroups)
		chunks = b.Stats().KeyN
		return nil
	})
	if want := 2 * (size / chunkTarget); chunks < want {
		t.Errorf("%d chunks for two steps of %d bytes, want ≥ %d", chunks, size, want)
	}
	got, err := s.Groups("r", 1)
	if err != nil || len(got) != 399 || !reflect.DeepEqual(got[398], groups[398]) {
		t.Fatalf("step 1: %d groups, %v", len(got), err)
	}
	for _, idx := range []int{0, 1, 119, 120, 121, 250, 399} {
		g, err := s.Group("r", 0, idx)
		if err != nil || !reflect.DeepEqual(g, groups[idx]) {
			t.Errorf("group %d of step 0: %v", idx, err)
		}
	}
	if _, err := s.Group("r", 1, 399); !errors.Is(err, ErrNotFound) {
		t.Errorf("group 399 of step 1 (which has 399): %v", err)
	}
	if _, err := s.Group("r", 2, 0); !errors.Is(err, ErrNotFound) {
		t.Errorf("group of a missing step: %v", err)
	}
	n := 0
	prev := [2]int{-1, -1}
	err = s.EachGroup("r", func(step, index int, g *record.Group) error {
		if step < prev[0] || step == prev[0] && index != prev[1]+1 || step > prev[0] && index != 0 {
			return fmt.Errorf("out of order: %d/%d after %v", step, index, prev)
		}
		prev = [2]int{step, index}
		n++
		return nil
	})
	if err != nil || n != 799 {
		t.Errorf("EachGroup: %d groups, %v", n, err)
	}
}

func TestStaleLockInfo(t *testing.T) {
	dead := exec.Command(os.Args[0], "-test.run=^$")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "s.db")
	host, _ := os.Hostname()
	tests := []struct {
		name  string
		pid   int
		alive bool
	}{
		{"this process", os.Getpid(), true},
		{"a process that exited", dead.Process.Pid, false},
	}
	for _, tc := range tests {
		if err := writeLockInfo(path, LockInfo{PID: tc.pid, Host: host, Command: "x", Since: time.Now()}); err != nil {
			t.Fatal(err)
		}
		if got := readLockInfo(path); (got != nil) != tc.alive {
			t.Errorf("%s: lock info %+v, want present=%v", tc.name, got, tc.alive)
		}
	}
	// A reader holding the lock leaves no info: the message says so.
	msg := (&LockedError{Path: path, Waited: time.Second}).Error()
	if !strings.Contains(msg, "likely a reading command") {
		t.Errorf("message %q", msg)
	}
}

// A run keeps one checkpoint while it may resume (KeepCheckpoints 1, as
// rollout run opens the store) and none once it finished.
func TestFinishedRunKeepsNoResumeState(t *testing.T) {
	s, _ := newStore(t, Options{NoSync: true, KeepCheckpoints: 1})
	addRun(t, s, "e", "r", "flat", 1)
	for step := range 4 {
		rec := StepRecord{Step: step, Metrics: map[string]float64{"m": 1}, Checkpoint: []Blob{{Name: "state", Data: []byte{byte(step)}}}}
		if err := s.CommitStep("r", rec); err != nil {
			t.Fatal(err)
		}
	}
	count := func() int {
		n := 0
		s.db.View(func(tx *bolt.Tx) error {
			b, err := s.runData(tx, "r", bucketCheckpoints)
			if err == nil {
				n = b.Stats().KeyN
			}
			return err
		})
		return n
	}
	if n := count(); n != 1 {
		t.Errorf("%d checkpoint blobs while running, want 1 (the newest)", n)
	}
	if step, blobs, err := s.LatestCheckpoint("r"); err != nil || step != 3 || blobs[0].Data[0] != 3 {
		t.Errorf("latest checkpoint: step %d %v %v", step, blobs, err)
	}
	if err := s.EndRun("r", StatusFinished, ""); err != nil {
		t.Fatal(err)
	}
	if n := count(); n != 0 {
		t.Errorf("%d checkpoint blobs after the run finished, want none", n)
	}
	if _, _, err := s.LatestCheckpoint("r"); !errors.Is(err, ErrNotFound) {
		t.Errorf("latest checkpoint of a finished run: %v", err)
	}
}
