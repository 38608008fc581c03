// Package tracking is rollout's experiment store: experiments, runs, metric
// series per step, every rollout group (trees, filtered groups, tokens,
// log-probs, entropies, rewards, advantages) and checkpoints, in one bbolt
// file; with queries, streaming of every group through formatters
// (FormatGroups), merge, compaction and checks. Comparison reports, plots
// and exports (JSON lines, CSV) read it from package tracking/report.
//
// # Experiments
//
// An experiment name in a store stands for one set of variants, each with
// one resolved configuration (Experiment.Configs): PutExperiment accepts
// more seeds and new variants under the name, and refuses another config
// for a recorded variant with a *ConfigConflictError naming each differing
// key (DiffConfigs), so that no experiment mixes two settings. Merge
// applies the same rule.
//
// # Writing
//
// One process writes a store at a time. Open takes the file lock with a
// timeout (DefaultTimeout) and, when another process holds it, returns a
// LockedError naming that process (from the PATH.lock-info file the writer
// leaves beside the store). A training run is written with PutExperiment,
// BeginRun (which also resumes an unfinished run), one CommitStep per step
// — a single transaction holding the step's metrics, groups, optional
// checkpoint and the run's new LastStep — and EndRun.
//
// # Reading
//
// Reading commands open with Options{ReadOnly: true}. While a run is
// writing, a read-only open reads a consistent snapshot copy of the file
// (Store.Snapshot tells), so ls, report, plot and export work during a run:
// the reader leaves PATH.snapshot-request while it copies, and the writer
// holds its next commit until the copy is done (at most 10 s).
//
// # Damage
//
// A damaged file is never read past its damage. Open compares the file's
// size with its bbolt meta page and refuses a truncated file; bbolt's page
// assertions and memory faults inside a transaction, and records that do
// not decode, become a *DamagedError (errors.Is(err, ErrDamaged)) naming the
// file. Check lists what is damaged.
//
// # Layout
//
// Buckets: meta (schema version), experiments (JSON by name), runs (JSON by
// id), data/<run id>/{m,g,c}: metrics by big-endian step; groups in chunks
// of about 1 MB keyed by step and first group index; checkpoint blobs by
// step and name. Metric and group records use a compact binary encoding
// (varints and raw little-endian float32 arrays).
package tracking
