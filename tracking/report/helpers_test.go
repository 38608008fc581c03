package report

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rollout-rl/rollout/tracking"
)

// newStore opens a fresh store in a test directory.
func newStore(t testing.TB) *tracking.Store {
	t.Helper()
	s, err := tracking.Open(filepath.Join(t.TempDir(), "rollout.db"), tracking.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// addRun puts experiment exp (if needed) and begins a run of the given
// resolved config.
func addRun(t testing.TB, s *tracking.Store, exp, id, variant string, seed int64, config string) tracking.Run {
	t.Helper()
	if _, err := s.Experiment(exp); err != nil {
		if err := s.PutExperiment(tracking.Experiment{Name: exp, Config: "strategy: flat\n"}); err != nil {
			t.Fatal(err)
		}
	}
	r, err := s.BeginRun(tracking.Run{ID: id, Experiment: exp, Variant: variant, Seed: seed, Config: config, Version: "test", Start: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// commit commits a step of metrics, failing the test on error.
func commit(t testing.TB, s *tracking.Store, id string, step int, tokens int64, m map[string]float64) {
	t.Helper()
	if err := s.CommitStep(id, tracking.StepRecord{Step: step, Tokens: tokens, Metrics: m}); err != nil {
		t.Fatal(err)
	}
}

// finish ends a run as finished.
func finish(t testing.TB, s *tracking.Store, id string) {
	t.Helper()
	if err := s.EndRun(id, tracking.StatusFinished, ""); err != nil {
		t.Fatal(err)
	}
}

// lowerIsBetter is the minimisation rule the command line uses.
func lowerIsBetter(m string) bool {
	return strings.Contains(m, "loss") || strings.Contains(m, "kl") || strings.Contains(m, "timing")
}
