package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rollout-rl/rollout/search/record"
	"github.com/rollout-rl/rollout/search/record/recordtest"
	"github.com/rollout-rl/rollout/tracking"
)

// reportBenchStore writes an experiment of 3 variants × 4 seeds, 1,000
// steps each with 20 metrics (no trajectories).
func reportBenchStore(b *testing.B) (*tracking.Store, string) {
	path := filepath.Join(b.TempDir(), "rollout.db")
	s, err := tracking.Open(path, tracking.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	s.PutExperiment(tracking.Experiment{Name: "big", Variants: []string{"flat", "entropy_tree", "random_tree"}})
	names := []string{"reward/mean", "reward/std", "response_length/mean", "response_length/clip_ratio", "groups/zero_std_frac", "groups/filtered",
		"actor/entropy", "actor/pg_clipfrac", "actor/ppo_kl", "actor/kl_ref", "is/ratio_mean", "budget/tokens", "budget/tokens_cum",
		"tree/leaves", "tree/forks", "tree/unique_responses", "timing_s/gen", "timing_s/update", "eval/acc", "eval/pass@k"}
	for vi, v := range []string{"flat", "entropy_tree", "random_tree"} {
		for seed := range int64(4) {
			id := fmt.Sprintf("%s-%d", v, seed)
			addRun(b, s, "big", id, v, seed, "strategy: "+v+"\n")
			x := uint64(seed*7919 + int64(vi))
			for step := range 1000 {
				m := make(map[string]float64, len(names))
				for i, n := range names {
					x = x*6364136223846793005 + 1442695040888963407
					noise := float64(x>>11)/float64(1<<53) - 0.5
					m[n] = float64(step)/1000*(0.5+0.1*float64(vi)) + 0.1*noise + float64(i)
				}
				if err := s.CommitStep(id, tracking.StepRecord{Step: step, Tokens: int64(step+1) * 4096, Metrics: m}); err != nil {
					b.Fatal(err)
				}
			}
			s.EndRun(id, tracking.StatusFinished, "")
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
		r, err := tracking.Open(path, tracking.Options{ReadOnly: true})
		if err != nil {
			b.Fatal(err)
		}
		for _, at := range []At{{Kind: AtFinal}, {Kind: AtBest}} {
			rep, err := Build(r, "big", Options{Metrics: []string{"eval/acc", "reward/mean", "actor/entropy"}, At: at})
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
		if err := SavePlot(s, "big", filepath.Join(dir, "big.png"), PlotOptions{Metric: "reward/mean", X: XTokens}); err != nil {
			b.Fatal(err)
		}
	}
}

// benchStore fills a store with steps×64×16 trajectories for export.
func benchStore(b *testing.B, steps int) *tracking.Store {
	s := newStore(b)
	addRun(b, s, "bench", "run", "flat", 1, "seed: 1\n")
	groups := make([]record.Group, 64)
	for i := range groups {
		groups[i] = recordtest.Flat(i, 16, 40)
	}
	for i := range steps {
		if err := s.CommitStep("run", tracking.StepRecord{Step: i, Metrics: map[string]float64{"reward/mean": 0.5}, Groups: groups}); err != nil {
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
	for _, f := range []ExportFormat{JSONL, CSV} {
		b.Run(string(f), func(b *testing.B) {
			var bytes int64
			start := time.Now()
			for range b.N {
				cw := &countWriter{}
				if err := Export(cw, s, []string{"run"}, ExportTrajectories, f); err != nil {
					b.Fatal(err)
				}
				bytes = cw.n
			}
			b.ReportMetric(float64(b.N*steps*64*16)/time.Since(start).Seconds(), "trajectories/s")
			b.SetBytes(bytes)
		})
	}
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) { c.n += int64(len(p)); return len(p), nil }

var _ io.Writer = (*countWriter)(nil)
