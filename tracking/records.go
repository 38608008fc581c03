package tracking

import (
	"time"

	"github.com/rollout-rl/rollout/search/record"
)

// Experiment is a named set of runs made from one configuration file: its
// variants, each with one resolved configuration, run under any seeds.
type Experiment struct {
	// Name identifies the experiment in the store.
	Name string `json:"name"`
	// Config is the configuration text the experiment was made from.
	Config string `json:"config"`
	// Variants lists the variant names in configuration order; the first is
	// the default baseline of reports. It may be empty (then names sort).
	Variants []string `json:"variants,omitempty"`
	// Configs maps each variant's name to its resolved configuration text
	// (as Run.Config holds it): an experiment name in a store stands for
	// one set of variant configs. Records written before configs were kept
	// have none; PutExperiment fills them from the experiment's runs.
	Configs map[string]string `json:"variant_configs,omitempty"`
	// Baseline is the variant reports compare against by default (the
	// config's baseline:); empty means the first of Variants.
	Baseline string `json:"baseline,omitempty"`
	// Created is when the experiment was first put in the store.
	Created time.Time `json:"created"`
	// Canonical, when set, rewrites a variant config recorded earlier into
	// the form the caller writes today (e.g. a key added since, at its
	// default, left out as the caller leaves it out) before PutExperiment
	// compares it with Configs; a text it fails on is compared as it is.
	// It is not stored.
	Canonical func(text string) (string, error) `json:"-"`
}

// RunStatus is the life-cycle state of a run.
type RunStatus string

// The states of a run. A run is running from BeginRun until EndRun marks
// it finished, failed or stopped (its writer was asked to stop: it resumes
// after its last committed step). A run whose writer died without ending it
// (killed, or stopped at once by a second interrupt) is still recorded as
// running: reads show it as interrupted whenever no process holds the
// store for writing, and the next writer to open the store records it as
// stopped.
const (
	StatusRunning  RunStatus = "running"
	StatusFinished RunStatus = "finished"
	StatusFailed   RunStatus = "failed"
	StatusStopped  RunStatus = "stopped"
	// StatusInterrupted is never recorded: reads show it for a run recorded
	// as running when no process holds the store for writing.
	StatusInterrupted RunStatus = "interrupted"
)

// Valid reports whether s is one of the defined states.
func (s RunStatus) Valid() bool {
	switch s {
	case StatusRunning, StatusFinished, StatusFailed, StatusStopped, StatusInterrupted:
		return true
	}
	return false
}

// rank orders states for merging: a finished run beats a failed one, which
// beats a stopped (or interrupted) one, which beats one still running.
func (s RunStatus) rank() int {
	switch s {
	case StatusFinished:
		return 3
	case StatusFailed:
		return 2
	case StatusStopped, StatusInterrupted:
		return 1
	}
	return 0
}

// Run is one training run: a variant of an experiment under one seed.
type Run struct {
	// ID is the caller's hash of the resolved config and seed.
	ID         string `json:"id"`
	Experiment string `json:"experiment"`
	Variant    string `json:"variant"`
	Seed       int64  `json:"seed"`
	// Config is the fully resolved configuration text of the run.
	Config string `json:"config"`
	// Version is the module version of the program that made the run.
	Version string    `json:"version"`
	Host    string    `json:"host"`
	Start   time.Time `json:"start"`
	// End is zero while the run is running.
	End    time.Time `json:"end,omitzero"`
	Status RunStatus `json:"status"`
	// Error says why a failed run failed.
	Error string `json:"error,omitempty"`
	// LastStep is the last committed step, −1 when none is.
	LastStep int `json:"last_step"`
	// TotalSteps is the planned number of steps, 0 when unknown; it lets a
	// listing show progress.
	TotalSteps int `json:"total_steps,omitempty"`
	// Tokens is the cumulative sampled-token count at LastStep.
	Tokens int64 `json:"tokens"`
	// Elapsed is the cumulative wall time at LastStep.
	Elapsed time.Duration `json:"elapsed_ns"`
	// Resumes counts how many times the run was reopened after a stop.
	Resumes int `json:"resumes,omitempty"`
}

// StepRecord is everything one training step commits, in one transaction.
type StepRecord struct {
	// Step is the step index (≥ 0); steps of a run must increase.
	Step int
	// Tokens is the cumulative number of sampled tokens at the end of the step.
	Tokens int64
	// Elapsed is the cumulative wall time of the run at the end of the step.
	Elapsed time.Duration
	// Metrics maps metric names (e.g. "reward/mean") to values.
	Metrics map[string]float64
	// Groups are the rollout groups of the step, filtered ones included.
	Groups []record.Group
	// Checkpoint, when not empty, is saved as the run's checkpoint at Step:
	// a resume state file beside the store (see StateDir) that the step's
	// commit names.
	Checkpoint []Blob
}

// StepMetrics is the metric record of one step as read back.
type StepMetrics struct {
	Step    int
	Tokens  int64
	Elapsed time.Duration
	Values  map[string]float64
}

// Blob is a named opaque byte payload of a checkpoint (e.g. "model",
// "optimizer", "rng").
type Blob struct {
	Name string
	Data []byte
}
