package tracking

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/rollout-rl/rollout/search/record"
	"github.com/rollout-rl/rollout/search/record/recordtest"
)

// flatGroup and treeGroup are recordtest's groups.
func flatGroup(seed, leaves, n int) record.Group { return recordtest.Flat(seed, leaves, n) }
func treeGroup() record.Group                    { return recordtest.Tree() }

// newStore opens a fresh store in a test directory.
func newStore(t testing.TB, opts Options) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "rollout.db")
	s, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

// addRun puts experiment exp (if needed) and begins a run.
func addRun(t testing.TB, s *Store, exp, id, variant string, seed int64) Run {
	t.Helper()
	if _, err := s.Experiment(exp); err != nil {
		if err := s.PutExperiment(Experiment{Name: exp, Config: "strategy: flat\n"}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := s.BeginRun(Run{ID: id, Experiment: exp, Variant: variant, Seed: seed, Config: "seed: 1\n", Version: "test", Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// dump is used by tests: every key/value of the store in order.
func (s *Store) dump() (map[string]string, error) {
	out := map[string]string{}
	var walk func(prefix string, b *bolt.Bucket) error
	walk = func(prefix string, b *bolt.Bucket) error {
		return b.ForEach(func(k, v []byte) error {
			if v == nil {
				return walk(prefix+string(k)+"/", b.Bucket(k))
			}
			out[prefix+string(k)] = string(v)
			return nil
		})
	}
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error { return walk(string(name)+"/", b) })
	})
	return out, err
}

// storeWithRun makes a store in a test directory holding run r of
// experiment exp (variant flat, seed 1), closed, and returns its path.
func storeWithRun(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	s, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	addRun(t, s, "exp", "r", "flat", 1)
	s.Close()
	return path
}

// startChild re-executes this test binary running only the test named
// child, with env added to its environment, and returns it with the lines
// of its standard output.
func startChild(t *testing.T, child string, env ...string) (*exec.Cmd, *bufio.Scanner) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+child+"$")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, bufio.NewScanner(out)
}
