package tracking

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/rollout-rl/rollout/search/record"
	"github.com/rollout-rl/rollout/tracking/internal/boltfile"
)

// damageStore writes a store of 2 runs × 6 steps × 12 groups (about half
// a megabyte, so that pages spread over the file) and returns its path.
func damageStore(t *testing.T) string {
	t.Helper()
	s, path := newStore(t, Options{NoSync: true})
	for ri, id := range []string{"r1", "r2"} {
		addRun(t, s, "exp", id, fmt.Sprintf("v%d", ri), 1)
		for step := range 6 {
			rec := StepRecord{Step: step, Tokens: int64(100 * (step + 1)), Elapsed: time.Duration(step+1) * time.Second,
				Metrics: map[string]float64{"reward/mean": float64(step) / 7, "eval/acc": float64(ri+step) / 9}}
			for g := range 12 {
				rec.Groups = append(rec.Groups, flatGroup(ri*100+step*12+g, 8, 40))
			}
			rec.Checkpoint = []Blob{{Name: "model", Data: make([]byte, 3000)}}
			if err := s.CommitStep(id, rec); err != nil {
				t.Fatal(err)
			}
		}
		if id == "r1" { // r2 stays stoppable: its checkpoint is kept
			if err := s.EndRun(id, StatusFinished, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// readEverything reads the whole store through its public read methods
// into text: what any reading command could see.
func readEverything(s *Store) (string, error) {
	var b strings.Builder
	exps, err := s.Experiments()
	if err != nil {
		return "", err
	}
	fmt.Fprintln(&b, len(exps), "experiments")
	runs, err := s.Runs("")
	if err != nil {
		return "", err
	}
	for _, r := range runs {
		fmt.Fprintf(&b, "run %s %s %d %d\n", r.ID, r.Status, r.LastStep, r.Tokens)
		ms, err := s.Metrics(r.ID)
		if err != nil {
			return "", err
		}
		fmt.Fprintln(&b, ms)
		err = s.EachGroup(r.ID, func(step, index int, g *record.Group) error {
			fmt.Fprintln(&b, step, index, g.Prompt, len(g.Nodes), g.Leaves[0].Reward)
			return nil
		})
		if err != nil {
			return "", err
		}
		switch _, blobs, err := s.LatestCheckpoint(r.ID); {
		case errors.Is(err, ErrNotFound):
			fmt.Fprintln(&b, "no checkpoint")
		case err != nil:
			return "", err
		default:
			fmt.Fprintln(&b, len(blobs), "blobs")
		}
	}
	return b.String(), nil
}

func copyPrefix(t *testing.T, src, dst string, n int64) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, b[:n], 0o644); err != nil {
		t.Fatal(err)
	}
}

// A truncated store never panics or faults: each read either answers as
// the intact store does or fails with a DamagedError naming the file.
// Opening for writing refuses it too, and Check lists the damage.
func TestTruncatedStore(t *testing.T) {
	path := damageStore(t)
	head, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := boltfile.ParseMeta(head)
	if m1, ok := boltfile.ParseMeta(head[m.PageSize:]); ok && m1.TxID > m.TxID {
		m = m1
	}
	need := int64(m.PGID) * int64(m.PageSize)
	st, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	want, err := readEverything(st)
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	if res, err := Check(path, Options{}); err != nil || !res.OK() || res.Runs != 2 || res.Steps != 12 || res.Groups != 144 {
		t.Fatalf("check of the intact store: %+v, %v", res, err)
	}
	dir := t.TempDir()
	damaged := 0
	for _, pct := range []int64{1, 5, 10, 50, 90, 99} {
		cut := filepath.Join(dir, fmt.Sprintf("cut%d.db", pct))
		// A share of the pages the last commit needs (a writer's file has
		// room to grow beyond them), at least past the meta pages.
		copyPrefix(t, path, cut, max(need*pct/100, 3*4096))
		got, err := func() (string, error) {
			st, err := Open(cut, Options{ReadOnly: true})
			if err != nil {
				return "", err
			}
			defer st.Close()
			return readEverything(st)
		}()
		res, cerr := Check(cut, Options{})
		if cerr != nil {
			t.Fatalf("%d%%: check: %v", pct, cerr)
		}
		if err == nil {
			if got != want {
				t.Errorf("%d%%: read without error but not as the intact store", pct)
			}
			if !res.OK() {
				t.Errorf("%d%%: read as intact, but check says %v", pct, res.Problems)
			}
			continue
		}
		damaged++
		var de *DamagedError
		if !errors.As(err, &de) || !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), cut) || !strings.Contains(err.Error(), "restore it from a copy") {
			t.Errorf("%d%%: error %v, want a DamagedError naming %s", pct, err, cut)
		}
		if len(res.Problems) < 2 || !strings.Contains(res.Problems[0], "truncated") {
			t.Errorf("%d%%: check found %v, want the truncation and what it lost", pct, res.Problems)
		}
		if w, err := Open(cut, Options{}); err == nil || !errors.Is(err, ErrDamaged) {
			if w != nil {
				w.Close()
			}
			t.Errorf("%d%%: opening for writing: %v, want a DamagedError", pct, err)
		}
		if _, _, err := Compact(cut, Options{}); !errors.Is(err, ErrDamaged) {
			t.Errorf("%d%%: compact: %v, want a DamagedError", pct, err)
		}
	}
	if damaged < 4 {
		t.Errorf("only %d of the truncated copies were found damaged", damaged)
	}
}

// Pages overwritten with zeros make bbolt assert ("Page expected to be …")
// or leave records that do not decode; the reads return a DamagedError instead of panicking, and Check lists it.
func TestZeroedPages(t *testing.T) {
	path := damageStore(t)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, ok := boltfile.ParseMeta(b)
	if !ok {
		t.Fatal("meta page 0 does not parse")
	}
	for _, tc := range []struct {
		name     string
		from, to int // pages zeroed
	}{
		{"all data pages", 2, int(m.PGID)},
		// The zeros fall inside overflow pages of group chunks: records
		// that do not decode.
		{"second half", int(m.PGID) / 2, int(m.PGID)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := append([]byte(nil), b...)
			clear(c[tc.from*m.PageSize : tc.to*m.PageSize])
			bad := filepath.Join(t.TempDir(), "zeroed.db")
			os.WriteFile(bad, c, 0o644)
			st, err := Open(bad, Options{ReadOnly: true})
			if err == nil {
				_, err = readEverything(st)
				st.Close()
			}
			if !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), bad) {
				t.Fatalf("read: %v, want a DamagedError naming the file", err)
			}
			res, err := Check(bad, Options{})
			if err != nil || res.OK() {
				t.Fatalf("check: %+v, %v", res, err)
			}
		})
	}
}

// A store whose file shrinks while it is open (mapped) faults on the next
// read of a page past the end: the fault is a DamagedError, not a crash.
func TestFaultBecomesError(t *testing.T) {
	path := damageStore(t)
	st, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := os.Truncate(path, 8192); err != nil {
		t.Fatal(err)
	}
	_, err = readEverything(st)
	if !errors.Is(err, ErrDamaged) {
		t.Fatalf("read after truncation: %v, want a DamagedError", err)
	}
}

// A panic in a transaction's own code is an error, not called damage.
func TestPanicInTransaction(t *testing.T) {
	s, _ := newStore(t, Options{})
	err := s.view(func(*bolttx) error { panic("boom") })
	if err == nil || errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), "panic: boom") {
		t.Fatalf("got %v", err)
	}
}

// Check finds records that disagree: a run whose LastStep is past its last
// metric record.
func TestCheckCounters(t *testing.T) {
	s, path := newStore(t, Options{NoSync: true})
	addRun(t, s, "exp", "r1", "v", 1)
	if err := s.CommitStep("r1", StepRecord{Step: 0, Tokens: 5, Metrics: map[string]float64{"a": 1}}); err != nil {
		t.Fatal(err)
	}
	err := s.update(func(tx *bolttx) error {
		runs := tx.Bucket([]byte(bucketRuns))
		r, err := getRun(runs, "r1")
		if err != nil {
			return err
		}
		r.LastStep = 3
		return putJSON(runs, "r1", r)
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	res, err := Check(path, Options{})
	if err != nil || len(res.Problems) != 1 || !strings.Contains(res.Problems[0], "run r1: last step 3, but the last metric record is of step 0") {
		t.Fatalf("check: %+v, %v", res, err)
	}
}

type bolttx = bolt.Tx

// checkFileSize accepts intact and empty files, refuses truncated ones as
// damaged and leaves files that are not bbolt's to bbolt.
func TestCheckFileSize(t *testing.T) {
	path := damageStore(t)
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := boltfile.ParseMeta(whole)
	need := int(m.PGID) * m.PageSize
	// meta0Bad has a broken meta page 0: meta page 1 decides.
	meta0Bad := bytes.Clone(whole)
	meta0Bad[72] ^= 0xff
	for _, tc := range []struct {
		name      string
		data      []byte
		damaged   bool
		notBolt   bool
		truncated bool
	}{
		{"intact", whole, false, false, false},
		{"empty", nil, false, false, false},
		{"exactly the pages", whole[:need], false, false, false},
		{"one byte short", whole[:need-1], true, false, true},
		{"half", whole[:need/2], true, false, true},
		{"inside the meta pages", whole[:6000], true, false, false},
		{"meta page 0 broken", meta0Bad, false, false, false},
		{"meta page 0 broken, truncated", meta0Bad[:need/2], true, false, true},
		{"text", []byte("hello"), false, true, false},
		{"zeros", make([]byte, 3*4096), false, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := os.Create(filepath.Join(t.TempDir(), "f.db"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			f.Write(tc.data)
			err = checkFileSize(f, "s.db")
			var tr *boltfile.Truncated
			switch {
			case errors.Is(err, ErrDamaged) != tc.damaged:
				t.Fatalf("damaged: %v, want %v", err, tc.damaged)
			case errors.As(err, &tr) != tc.truncated:
				t.Fatalf("truncation: %v, want %v", err, tc.truncated)
			case errors.Is(err, berrors.ErrInvalid) != tc.notBolt:
				t.Fatalf("not bbolt: %v, want %v", err, tc.notBolt)
			case !tc.damaged && !tc.notBolt && err != nil:
				t.Fatalf("got %v", err)
			}
		})
	}
}
