package tracking

import (
	"os"
	"testing"
	"time"

	"github.com/rollout-rl/rollout/policy/cputime"
	"github.com/rollout-rl/rollout/search/record"
)

// BenchmarkCommitTrajectories writes steps of 64 flat groups × 16 leaves
// of 40 tokens (1,024 trajectories a step), one fsync'ed transaction per
// step; it reports trajectories/s.
func BenchmarkCommitTrajectories(b *testing.B) {
	s, _ := newStore(b, Options{})
	addRun(b, s, "bench", "run", "flat", 1)
	groups := make([]record.Group, 64)
	for i := range groups {
		groups[i] = flatGroup(i, 16, 40)
	}
	b.ResetTimer()
	cpu := cputime.Process()
	for i := range b.N {
		if err := s.CommitStep("run", StepRecord{Step: i, Tokens: int64(i) * 40960, Metrics: map[string]float64{"reward/mean": 0.5, "budget/tokens": 40960}, Groups: groups}); err != nil {
			b.Fatal(err)
		}
	}
	reportRates(b, b.N*64*16, cputime.Process()-cpu)
}

// benchStore fills a store with steps×64×16 trajectories.
func benchStore(b *testing.B, steps int) *Store {
	s, _ := newStore(b, Options{NoSync: true})
	addRun(b, s, "bench", "run", "flat", 1)
	groups := make([]record.Group, 64)
	for i := range groups {
		groups[i] = flatGroup(i, 16, 40)
	}
	for i := range steps {
		if err := s.CommitStep("run", StepRecord{Step: i, Metrics: map[string]float64{"reward/mean": 0.5}, Groups: groups}); err != nil {
			b.Fatal(err)
		}
	}
	return s
}

// BenchmarkSnapshotOpen opens a store of 100 steps × 1,024 trajectories
// (~55 MB) read-only while a writer holds it: each open copies a snapshot.
func BenchmarkSnapshotOpen(b *testing.B) {
	s := benchStore(b, 100)
	fi, err := os.Stat(s.Path())
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(fi.Size())
	b.ResetTimer()
	for range b.N {
		r, err := Open(s.Path(), Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		if snap, _ := r.Snapshot(); !snap {
			b.Fatal("not a snapshot")
		}
		r.Close()
	}
}

// reportRates reports trajectories per second of wall time and per second
// of process CPU time (all threads): on a shared machine the second says
// what the code costs, the first what this run got.
func reportRates(b *testing.B, n int, cpu time.Duration) {
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "traj/s")
	if cpu > 0 {
		b.ReportMetric(float64(n)/cpu.Seconds(), "traj/cpu-s")
	}
}
