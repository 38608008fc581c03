// Package tracking is rollout's experiment store: experiments, runs, metric
// series per step and every rollout group (trees, filtered groups, tokens,
// log-probs, entropies, rewards, advantages) in one bbolt file, and the
// resume states (checkpoints) of unfinished runs in files beside it; with
// queries, streaming of every group through formatters
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
// PutDesigned records an experiment together with its resolved design (a
// DesignRecord: the caller's canonical text of every variant's config, the
// seeds, the baseline and the declared checks, its hash and the time it
// was first recorded) before any run: a check is confirmatory for runs
// that started after that time. The design of an experiment that declares
// checks is fixed: another one is refused with a *DesignConflictError.
// PutLoad records the machine's load beside a run (LoadSample), so that
// its wall times can be read against it.
//
// # Writing
//
// One process writes a store at a time. Open takes the file lock with a
// timeout (DefaultTimeout) and, when another process holds it, returns a
// LockedError naming that process (from the PATH.lock-info file the writer
// leaves beside the store). A training run is written with PutExperiment,
// BeginRun (which also resumes an unfinished run), one CommitStep per step
// — a single transaction holding the step's metrics, groups, the
// reference to its optional checkpoint and the run's new LastStep — and
// EndRun.
//
// # Resume state
//
// A step's checkpoint (StepRecord.Checkpoint: weights, optimizer, stale
// buffer, counters) is a file beside the store, PATH.ckpt/<run id>/
// <step>-<random>.bin (StateDir): written to a temporary name, fsynced,
// renamed, and the directory fsynced before the step's transaction, which
// records the file's name, size and SHA-256 (key step+0x00 of the run's
// checkpoint bucket). A process killed at any point resumes from the last
// committed step's file, which reads verified; a file no committed step
// names (written by a process killed before its commit, or kept by one
// killed before deleting what its commit replaced) is an orphan that the
// next writer's open deletes. With KeepCheckpoints (1 in rollout run and
// suite) a commit deletes the references of older states, and their files
// after it; EndRun of a finished run deletes the run's references and then
// its directory, and the writer's close removes PATH.ckpt once empty: the
// store grows by at most one state per unfinished run and keeps none once
// every run has finished. Merge copies the
// state files of the runs it copies (and fails, saying so, when the source
// no longer has one); snapshots for readers copy the references only;
// Check reports a committed step whose file is missing or does not match.
//
// # Reading
//
// Reading commands open with Options{ReadOnly: true}. While a run is
// writing, the writer holds the file lock and a read-only open reads a
// snapshot (Store.Snapshot tells) that the writing process copies for it:
// the reader leaves a request in PATH.readers/ naming a temporary file and
// what it reads (Options.Scope, a ReadScope: the experiment and run records
// always, and the metric records, groups or checkpoints of the runs of one
// experiment, one run or all); the writer's goroutine serving readers
// copies exactly that, in one bbolt read transaction, into a new bbolt
// file and answers. A read transaction never holds the writer's commits
// (the writer maps the file 1 GiB beyond its size, so that a commit
// rarely needs to remap it while a copy reads), and the copy holds the
// state of one commit: consistent. So ls copies the run records only,
// report and plot the metric records of one experiment, trees and export
// what they show: what a reading command costs grows with what it reads,
// not with the trajectory data of the store. Reading what the scope left
// out is an error saying so. A writer of an older build, which does not
// answer within Options.Timeout, is read as before: a copy of the whole
// file, during which it holds its next commit (PATH.snapshot-request).
//
// # Damage
//
// A damaged file is never read past its damage. Open compares the file's
// size with its bbolt meta page and refuses a truncated file; bbolt's page
// assertions and memory faults inside a transaction, records that fail
// their checksum (every record carries one, see Layout) and records that
// do not decode become a *DamagedError (errors.Is(err, ErrDamaged);
// errors.Is(err, ErrChecksum) for a checksum) naming the file, the run and
// the step, and saying to run rollout check, which lists what is damaged.
//
// # Schema versions
//
// A store records its layout's version (SchemaVersion). Open refuses a
// store of another version with a *SchemaError: a newer one needs a newer
// rollout; an older one (version 1, without checksums, whose checkpoints
// may be blobs in the store and group chunks uncompressed) is upgraded in
// place, once, by Migrate (rollout migrate), which is the only code that
// reads the older layout.
//
// # Layout
//
// Buckets: meta (schema version), experiments (JSON by name), runs (JSON by
// id), data/<run id>/{m,g,c}: metrics by big-endian step; groups in chunks
// of about 1 MB keyed by step and first group index; checkpoints by step:
// the reference to the step's state file (see Resume state). Metric and
// group records use a compact binary encoding (varints and raw
// little-endian float32 arrays); group chunks are stored
// DEFLATE-compressed. Every value but the schema version is sealed: its
// payload followed by the CRC-32C of its key and payload, which every read
// verifies before decoding. A finished run's final policy, when its config asks
// for it (train.save_final), is a checkpoint directory beside the store:
// PATH.final/<run id> (FinalDir). Check of a store being written checks the
// records of the writer's copy; bbolt's page check needs the writer gone.
package tracking
