package tracking

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/rollout-rl/rollout/search/record"
)

// sealedStore writes a store with one experiment and run "r" of three
// steps (metrics, groups; a checkpoint at step 2) and closes it.
func sealedStore(t *testing.T) string {
	t.Helper()
	s, path := newStore(t, Options{NoSync: true, KeepCheckpoints: 1})
	addRun(t, s, "e", "r", "flat", 1)
	for step := range 3 {
		rec := StepRecord{Step: step, Tokens: int64(100 * (step + 1)), Metrics: map[string]float64{"reward/mean": 0.25 * float64(step), "loss": 1.5},
			Groups: []record.Group{flatGroup(step, 4, 30), treeGroup()}}
		if step == 2 {
			rec.Checkpoint = []Blob{{Name: "state", Data: stateBlob(step, 0, 5000)}}
		}
		if err := s.CommitStep("r", rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.EndRun("r", StatusStopped, ""); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// storedValue returns the value of key k in the bucket at path of a
// closed store.
func storedValue(t *testing.T, file string, k []byte, path ...string) []byte {
	t.Helper()
	db, err := bolt.Open(file, 0o644, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var v []byte
	db.View(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(path[0]))
		for _, p := range path[1:] {
			b = b.Bucket([]byte(p))
		}
		v = bytes.Clone(b.Get(k))
		return nil
	})
	if v == nil {
		t.Fatalf("no value at %s %x", strings.Join(path, "/"), k)
	}
	return v
}

// flipInFile flips one byte (at offset at of the value) of every copy of
// value in the file, as damage on the disk would: bbolt's pages carry no
// checksum, so only the record's own tells.
func flipInFile(t *testing.T, file string, value []byte, at int) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for i := 0; ; {
		j := bytes.Index(b[i:], value)
		if j < 0 {
			break
		}
		b[i+j+at] ^= 0x10
		i += j + len(value)
		n++
	}
	if n == 0 {
		t.Fatalf("value of %d bytes not found in %s", len(value), file)
	}
	if err := os.WriteFile(file, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A byte flipped inside any record — a metric record, a group chunk, a
// run or experiment record, a resume state reference — or inside a resume
// state file is found by the ordinary read of that record: an error that
// names the record (run and step) and suggests rollout check, never data.
// Check lists it too.
func TestFlippedByteDetected(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value func(path string) []byte // the stored bytes to damage
		at    func(v []byte) int
		read  func(s *Store) error
		want  string // in the read's error
	}{
		{"metric record", func(p string) []byte { return storedValue(t, p, stepKey(1), bucketData, "r", bucketMetrics) },
			func(v []byte) int { return len(v) - 9 }, // a metric value's byte: decodes fine unsealed
			func(s *Store) error { _, err := s.Metrics("r"); return err }, "run r: step 1: metric record"},
		{"metric record, by Series", func(p string) []byte { return storedValue(t, p, stepKey(1), bucketData, "r", bucketMetrics) },
			func(v []byte) int { return len(v) - 9 },
			func(s *Store) error { _, err := s.Series("r", "loss"); return err }, "run r: step 1: metric record"},
		{"metric record, by LastMetrics", func(p string) []byte { return storedValue(t, p, stepKey(2), bucketData, "r", bucketMetrics) },
			func(v []byte) int { return 3 },
			func(s *Store) error { _, err := s.LastMetrics("r"); return err }, "run r: step 2: metric record"},
		{"group chunk", func(p string) []byte { return storedValue(t, p, groupKey(1, 0), bucketData, "r", bucketGroups) },
			func(v []byte) int { return len(v) / 2 },
			func(s *Store) error { _, err := s.Groups("r", 1); return err }, "run r step 1: group chunk from group 0"},
		{"group chunk, by Group", func(p string) []byte { return storedValue(t, p, groupKey(1, 0), bucketData, "r", bucketGroups) },
			func(v []byte) int { return len(v) / 2 },
			func(s *Store) error { _, err := s.Group("r", 1, 1); return err }, "run r step 1: group chunk from group 0"},
		{"group chunk, by EachGroup", func(p string) []byte { return storedValue(t, p, groupKey(0, 0), bucketData, "r", bucketGroups) },
			func(v []byte) int { return len(v) - 1 },
			func(s *Store) error {
				return s.EachGroup("r", func(int, int, *record.Group) error { return nil })
			}, "run r step 0: group chunk from group 0"},
		{"resume state reference", func(p string) []byte { return storedValue(t, p, refKey(2), bucketData, "r", bucketCheckpoints) },
			func(v []byte) int { return len(v) - 20 }, // a digit of the SHA-256
			func(s *Store) error { _, _, err := s.LatestCheckpoint("r"); return err }, "run r step 2: resume state reference"},
		{"run record", func(p string) []byte { return storedValue(t, p, []byte("r"), bucketRuns) },
			func(v []byte) int { return bytes.Index(v, []byte(`"seed":1`)) + 7 },
			func(s *Store) error { _, err := s.Run("r"); return err }, "run r: decoding its record"},
		{"experiment record", func(p string) []byte { return storedValue(t, p, []byte("e"), bucketExperiments) },
			func(v []byte) int { return bytes.Index(v, []byte(`"flat`)) + 2 },
			func(s *Store) error { _, err := s.Experiments(); return err }, `experiment "e": decoding`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := sealedStore(t)
			v := tc.value(path)
			flipInFile(t, path, v, tc.at(v))
			s, err := Open(path, Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			err = tc.read(s)
			if !errors.Is(err, ErrDamaged) || !errors.Is(err, ErrChecksum) {
				t.Fatalf("read after the flip: %v, want a DamagedError for a checksum", err)
			}
			for _, want := range []string{tc.want, "rollout check --store " + path} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			res, err := Check(path, Options{})
			if err != nil || res.OK() || !strings.Contains(strings.Join(res.Problems, "\n"), "checksum") {
				t.Errorf("check after the flip: %v, %+v; want a problem naming the checksum", err, res)
			}
		})
	}
}

// A byte flipped in a resume state file fails the ordinary read of the
// checkpoint (its reference records the file's SHA-256) and check.
func TestFlippedStateFileDetected(t *testing.T) {
	path := sealedStore(t)
	files, _ := filepath.Glob(filepath.Join(StateDir(path, "r"), "*.bin"))
	if len(files) != 1 {
		t.Fatalf("state files %v, want one", files)
	}
	b, _ := os.ReadFile(files[0])
	b[len(b)/2] ^= 1
	os.WriteFile(files[0], b, 0o644)
	s, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, _, err = s.LatestCheckpoint("r")
	if !errors.Is(err, errStateFile) || !strings.Contains(err.Error(), "run r") || !strings.Contains(err.Error(), "step 2") {
		t.Errorf("read of a flipped state file: %v", err)
	}
	if res, err := Check(path, Options{}); err != nil || res.OK() {
		t.Errorf("check of a flipped state file: %v %+v", err, res)
	}
}

// seal and unseal: a record reads back; any flipped bit, a truncation or
// the record under another key fails.
func TestSealRoundTrip(t *testing.T) {
	k, payload := []byte("key"), []byte("a payload of some bytes")
	v := seal(k, bytes.Clone(payload))
	if got, err := unseal(k, v); err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("unseal: %q %v", got, err)
	}
	for i := range len(v) * 8 {
		c := bytes.Clone(v)
		c[i/8] ^= 1 << (i % 8)
		if _, err := unseal(k, c); !errors.Is(err, ErrChecksum) {
			t.Fatalf("bit %d flipped: %v", i, err)
		}
	}
	if _, err := unseal([]byte("kez"), v); !errors.Is(err, ErrChecksum) {
		t.Errorf("under another key: %v", err)
	}
	if _, err := unseal(k, v[:3]); !errors.Is(err, ErrChecksum) {
		t.Errorf("truncated: %v", err)
	}
}

// A writer's open keeps the state files of a run whose reference is
// damaged (it cannot tell which are orphans), and a merge refuses to copy
// a damaged record.
func TestDamagedReferenceKeepsStateFiles(t *testing.T) {
	path := sealedStore(t)
	v := storedValue(t, path, refKey(2), bucketData, "r", bucketCheckpoints)
	flipInFile(t, path, v, len(v)-20)
	before := stateFiles(t, path, "r")
	w, err := Open(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if after := stateFiles(t, path, "r"); len(before) != 1 || !slices.Equal(before, after) {
		t.Errorf("state files %v before a writer's open, %v after", before, after)
	}
	_, err = Merge(filepath.Join(t.TempDir(), "m.db"), []string{path}, Options{NoSync: true})
	if !errors.Is(err, ErrChecksum) || !strings.Contains(err.Error(), "run r") {
		t.Errorf("merge of a damaged record: %v", err)
	}
}

// BenchmarkSeal seals and unseals a group chunk of 1 MB (the size chunks
// are packed to): the cost every commit and every read adds per byte.
func BenchmarkSeal(b *testing.B) {
	k, payload := groupKey(1, 0), bytes.Repeat([]byte("rollout "), chunkTarget/8)
	v := seal(k, bytes.Clone(payload))
	b.SetBytes(int64(len(payload)))
	for range b.N {
		seal(k, payload[:len(payload):len(payload)])
		if _, err := unseal(k, v); err != nil {
			b.Fatal(err)
		}
	}
}
