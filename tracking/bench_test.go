package tracking

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

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
	cpu := processCPU()
	for i := range b.N {
		if err := s.CommitStep("run", StepRecord{Step: i, Tokens: int64(i) * 40960, Metrics: map[string]float64{"reward/mean": 0.5, "budget/tokens": 40960}, Groups: groups}); err != nil {
			b.Fatal(err)
		}
	}
	reportRates(b, b.N*64*16, processCPU()-cpu)
}

// benchStore fills a store with steps×64×16 trajectories for export.
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

// BenchmarkExportTrajectories exports 20 steps (20,480 trajectories) per
// iteration as JSON lines or CSV; it reports trajectories/s.
func BenchmarkExportTrajectories(b *testing.B) {
	const steps = 20
	s := benchStore(b, steps)
	for _, f := range []Format{JSONL, CSV} {
		b.Run(string(f), func(b *testing.B) {
			var bytes int64
			cpu := processCPU()
			for range b.N {
				cw := &countWriter{}
				if err := s.Export(cw, []string{"run"}, Trajectories, f); err != nil {
					b.Fatal(err)
				}
				bytes = cw.n
			}
			reportRates(b, b.N*steps*64*16, processCPU()-cpu)
			b.SetBytes(bytes)
		})
	}
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

var _ io.Writer = (*countWriter)(nil)

// reportBenchStore writes an experiment of 3 variants × 4 seeds, 1,000
// steps each with 20 metrics (no trajectories).
func reportBenchStore(b *testing.B) (*Store, string) {
	s, path := newStore(b, Options{NoSync: true})
	s.PutExperiment(Experiment{Name: "big", Variants: []string{"flat", "entropy_tree", "random_tree"}})
	names := []string{"reward/mean", "reward/std", "response_length/mean", "response_length/clip_ratio", "groups/zero_std_frac", "groups/filtered",
		"actor/entropy", "actor/pg_clipfrac", "actor/ppo_kl", "actor/kl_ref", "is/ratio_mean", "budget/tokens", "budget/tokens_cum",
		"tree/leaves", "tree/forks", "tree/unique_responses", "timing_s/gen", "timing_s/update", "eval/acc", "eval/pass@k"}
	for vi, v := range []string{"flat", "entropy_tree", "random_tree"} {
		for seed := range int64(4) {
			id := fmt.Sprintf("%s-%d", v, seed)
			addRun(b, s, "big", id, v, seed)
			x := uint64(seed*7919 + int64(vi))
			for step := range 1000 {
				m := make(map[string]float64, len(names))
				for i, n := range names {
					x = x*6364136223846793005 + 1442695040888963407
					noise := float64(x>>11)/float64(1<<53) - 0.5
					m[n] = float64(step)/1000*(0.5+0.1*float64(vi)) + 0.1*noise + float64(i)
				}
				if err := s.CommitStep(id, StepRecord{Step: step, Tokens: int64(step+1) * 4096, Metrics: m}); err != nil {
					b.Fatal(err)
				}
			}
			s.EndRun(id, StatusFinished, "")
		}
	}
	return s, path
}

// BenchmarkReport opens the store read-only and computes and renders the
// report of 12 runs × 1,000 steps for three metrics at final and at best.
func BenchmarkReport(b *testing.B) {
	s, path := reportBenchStore(b)
	s.Close()
	b.ResetTimer()
	for range b.N {
		r, err := Open(path, Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		for _, at := range []At{{Kind: AtFinal}, {Kind: AtBest}} {
			rep, err := r.Report("big", ReportOptions{Metrics: []string{"eval/acc", "reward/mean", "actor/entropy"}, At: at})
			if err != nil {
				b.Fatal(err)
			}
			if err := rep.Write(io.Discard, FormatTable); err != nil {
				b.Fatal(err)
			}
		}
		r.Close()
	}
}

// BenchmarkPlot draws the tokens-axis plot of 12 runs × 1,000 steps as PNG.
func BenchmarkPlot(b *testing.B) {
	s, _ := reportBenchStore(b)
	dir := b.TempDir()
	if d := os.Getenv("TRACKING_PLOT_DIR"); d != "" {
		dir = d
	}
	b.ResetTimer()
	for range b.N {
		if err := s.SavePlot("big", filepath.Join(dir, "big.png"), PlotOptions{Metric: "reward/mean", X: XTokens}); err != nil {
			b.Fatal(err)
		}
	}
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
