package report

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

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
