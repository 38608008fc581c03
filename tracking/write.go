package tracking

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// appendFill is the fill percent of buckets written in key order: pages
// are filled completely since no key is ever inserted before another.
const appendFill = 1.0

// PutExperiment adds an experiment, or extends the one of that name: new
// variants and their configs are added, the config text is replaced and
// the creation time kept. A variant already recorded must come with the
// same resolved config (compared key by key, see DiffConfigs), else
// nothing is written and the error is a *ConfigConflictError: more seeds
// and new variants extend an experiment, other settings make a new one.
// An experiment recorded without variant configs takes those of its runs.
func (s *Store) PutExperiment(e Experiment) error {
	if e.Name == "" {
		return fmt.Errorf("put experiment: empty name")
	}
	return s.update(func(tx *bolt.Tx) error { return putExperiment(tx, e) })
}

// putExperiment is PutExperiment in the transaction tx.
func putExperiment(tx *bolt.Tx, e Experiment) error {
	b := tx.Bucket([]byte(bucketExperiments))
	if old := b.Get([]byte(e.Name)); old != nil {
		var prev Experiment
		if err := decodeJSON([]byte(e.Name), old, &prev); err != nil {
			return fmt.Errorf("experiment %q: decoding: %w", e.Name, err)
		}
		var err error
		if e, err = mergeExperiment(tx, prev, e); err != nil {
			return err
		}
	}
	if e.Created.IsZero() {
		e.Created = time.Now().UTC()
	}
	return putJSON(b, e.Name, e)
}

// BeginRun registers a run and marks it running, or reopens an existing
// one to resume it. It returns the stored run: a resumed run keeps its
// start time, LastStep, Tokens and Elapsed, so the caller continues at
// LastStep+1 (after loading LatestCheckpoint). A finished run is returned
// unchanged, for the caller to skip. The experiment must exist.
func (s *Store) BeginRun(r Run) (Run, error) {
	if r.ID == "" {
		return Run{}, fmt.Errorf("begin run: empty run id")
	}
	if r.Host == "" {
		r.Host, _ = os.Hostname()
	}
	var out Run
	err := s.update(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte(bucketExperiments)).Get([]byte(r.Experiment)) == nil {
			return fmt.Errorf("begin run %s: experiment %q: %w (put it first)", r.ID, r.Experiment, ErrNotFound)
		}
		runs := tx.Bucket([]byte(bucketRuns))
		if raw := runs.Get([]byte(r.ID)); raw != nil {
			var prev Run
			if err := decodeJSON([]byte(r.ID), raw, &prev); err != nil {
				return fmt.Errorf("run %s: decoding its record: %w", r.ID, err)
			}
			if prev.Experiment != r.Experiment {
				return fmt.Errorf("begin run %s in experiment %q: the store has it in experiment %q", r.ID, r.Experiment, prev.Experiment)
			}
			if prev.Status == StatusFinished {
				out = prev
				return nil
			}
			prev.Status, prev.Error, prev.End = StatusRunning, "", time.Time{}
			prev.Host, prev.Version = r.Host, r.Version
			if r.TotalSteps > 0 {
				prev.TotalSteps = r.TotalSteps
			}
			prev.Resumes++
			out = prev
			return putJSON(runs, r.ID, prev)
		}
		r.Status, r.Error, r.End = StatusRunning, "", time.Time{}
		r.LastStep, r.Tokens, r.Elapsed, r.Resumes = -1, 0, 0, 0
		if r.Start.IsZero() {
			r.Start = time.Now().UTC()
		}
		if err := createRunData(tx, r.ID); err != nil {
			return err
		}
		out = r
		return putJSON(runs, r.ID, r)
	})
	return out, err
}

func createRunData(tx *bolt.Tx, id string) error {
	d, err := tx.Bucket([]byte(bucketData)).CreateBucketIfNotExists([]byte(id))
	if err != nil {
		return fmt.Errorf("run %s: creating data bucket: %w", id, err)
	}
	for _, name := range []string{bucketMetrics, bucketGroups, bucketCheckpoints} {
		if _, err := d.CreateBucketIfNotExists([]byte(name)); err != nil {
			return fmt.Errorf("run %s: creating data bucket: %w", id, err)
		}
	}
	return nil
}

// EndRun marks a run finished, failed (with a message) or stopped (it
// resumes after its last committed step) and sets its end time. A finished
// run's resume state (its checkpoints) is deleted: the references in the
// same transaction, then its state files (StateDir). A finished run is
// never resumed, so the store keeps resume state only for runs that may
// continue.
func (s *Store) EndRun(id string, status RunStatus, message string) error {
	if status != StatusFinished && status != StatusFailed && status != StatusStopped {
		return fmt.Errorf("end run %s: status %q: want %q, %q or %q", id, status, StatusFinished, StatusFailed, StatusStopped)
	}
	err := s.update(func(tx *bolt.Tx) error {
		runs := tx.Bucket([]byte(bucketRuns))
		r, err := getRun(runs, id)
		if err != nil {
			return err
		}
		if r.Status == StatusFinished && status != StatusFinished {
			return fmt.Errorf("end run %s as %s: it is finished", id, status)
		}
		r.Status, r.Error, r.End = status, message, time.Now().UTC()
		if status == StatusFinished {
			if err := clearCheckpoints(tx, id); err != nil {
				return fmt.Errorf("end run %s: %w", id, err)
			}
		}
		return putJSON(runs, id, r)
	})
	if err == nil && status == StatusFinished {
		// Left behind on failure, the directory is an orphan that the
		// next writer's open deletes.
		os.RemoveAll(StateDir(s.path, id))
	}
	return err
}

// clearCheckpoints deletes every checkpoint of a run (state file
// references); the space goes back to bbolt's
// free list for later steps to reuse.
func clearCheckpoints(tx *bolt.Tx, id string) error {
	d := tx.Bucket([]byte(bucketData)).Bucket([]byte(id))
	if d == nil || d.Bucket([]byte(bucketCheckpoints)) == nil {
		return nil
	}
	if err := d.DeleteBucket([]byte(bucketCheckpoints)); err != nil {
		return fmt.Errorf("deleting checkpoints: %w", err)
	}
	_, err := d.CreateBucket([]byte(bucketCheckpoints))
	return err
}

// orphanedRunError is the Error of a run that a writer found recorded as
// running when it opened the store, and recorded as stopped.
const orphanedRunError = "the process running it ended without stopping it (killed, or stopped at once)"

// stopOrphanedRuns records as stopped every run recorded as running: the
// caller holds the store for writing, so no other process runs them.
func stopOrphanedRuns(tx *bolt.Tx) error {
	runs := tx.Bucket([]byte(bucketRuns))
	var orphans []Run
	err := runs.ForEach(func(k, v []byte) error {
		var r Run
		if err := decodeJSON(k, v, &r); err != nil {
			return fmt.Errorf("run %s: decoding its record: %w", k, err)
		}
		if r.Status == StatusRunning {
			orphans = append(orphans, r)
		}
		return nil
	})
	if err != nil {
		return err
	}
	now := time.Now().UTC()
	for _, r := range orphans {
		r.Status, r.Error, r.End = StatusStopped, orphanedRunError, now
		if err := putJSON(runs, r.ID, r); err != nil {
			return fmt.Errorf("recording orphaned run %s as stopped: %w", r.ID, err)
		}
	}
	return nil
}

// CommitStep writes one step of a running run — its metrics, every group
// and an optional checkpoint — and advances the run's LastStep, all in one
// transaction: a process killed mid-step loses that step only. Steps must
// increase.
func (s *Store) CommitStep(runID string, rec StepRecord) error {
	if err := s.CommitSteps(runID, []StepRecord{rec}); err != nil {
		return err
	}
	return nil
}

// CommitSteps writes several steps of a running run, in increasing order,
// in one transaction (as CommitStep writes one): importing or generating
// many steps at once costs one commit. A step's checkpoint is written
// first, as a resume state file beside the store (see StateDir), which
// the transaction names.
func (s *Store) CommitSteps(runID string, recs []StepRecord) error {
	if len(recs) == 0 {
		return nil
	}
	if s.opts.ReadOnly {
		return fmt.Errorf("commit step %d of run %s: store %s is open read-only", recs[0].Step, runID, s.path)
	}
	enc := make([]encodedStep, len(recs))
	for i := range recs {
		var err error
		if enc[i], err = s.encodeStep(runID, &recs[i]); err != nil {
			return err
		}
	}
	var written []string // state files of this commit
	for i := range recs {
		if len(recs[i].Checkpoint) == 0 {
			continue
		}
		ref, path, err := s.writeStateFile(runID, recs[i].Step, recs[i].Checkpoint)
		if err != nil {
			removeFiles(written)
			return fmt.Errorf("commit step %d of run %s: %w", recs[i].Step, runID, err)
		}
		enc[i].state, written = &ref, append(written, path)
	}
	if s.stateHook != nil && len(written) > 0 {
		s.stateHook("written")
	}
	var pruned []string
	var refused error // the transaction's own error: it wrote nothing
	err := s.update(func(tx *bolt.Tx) error {
		pruned = nil
		refused = s.putSteps(tx, runID, recs, enc, &pruned)
		return refused
	})
	if err != nil {
		if refused != nil {
			// Else bbolt's commit failed: whether it reached the disk is
			// unknown, and the next writer's open deletes the files if not.
			removeFiles(written)
		}
		return fmt.Errorf("commit step %d of run %s: %w", recs[0].Step, runID, err)
	}
	if s.stateHook != nil && len(written) > 0 {
		s.stateHook("committed")
	}
	removeStateFiles(s.path, runID, pruned)
	return nil
}

// putSteps writes encoded steps of a running run in a transaction and
// adds to pruned the state files of the checkpoints it pruned.
func (s *Store) putSteps(tx *bolt.Tx, runID string, recs []StepRecord, enc []encodedStep, pruned *[]string) error {
	runs := tx.Bucket([]byte(bucketRuns))
	r, err := getRun(runs, runID)
	if err != nil {
		return err
	}
	if r.Status != StatusRunning {
		return fmt.Errorf("run %s is %s: BeginRun it before committing steps", runID, r.Status)
	}
	data := tx.Bucket([]byte(bucketData)).Bucket([]byte(runID))
	if data == nil {
		return fmt.Errorf("run %s: data bucket missing: damaged store", runID)
	}
	for i := range recs {
		rec := &recs[i]
		if rec.Step <= r.LastStep {
			return fmt.Errorf("step %d is already committed (the run's last step is %d)", rec.Step, r.LastStep)
		}
		files, err := s.putStep(data, runID, rec, enc[i])
		if err != nil {
			return err
		}
		*pruned = append(*pruned, files...)
		r.LastStep, r.Tokens, r.Elapsed = rec.Step, rec.Tokens, rec.Elapsed
	}
	return putJSON(runs, runID, r)
}

// removeFiles deletes files (state files no commit names).
func removeFiles(paths []string) {
	for _, p := range paths {
		os.Remove(p)
	}
}

// encodedStep is a step's records encoded and sealed outside the
// transaction (bbolt needs values to stay valid until commit).
type encodedStep struct {
	metrics []byte
	chunks  []groupChunk
	// state references the step's resume state file, nil without one.
	state *stateRef
}

// encodeStep validates and encodes a step record.
func (s *Store) encodeStep(runID string, rec *StepRecord) (encodedStep, error) {
	if rec.Step < 0 {
		return encodedStep{}, fmt.Errorf("commit step %d of run %s: negative step", rec.Step, runID)
	}
	for i := range rec.Groups {
		if err := rec.Groups[i].Validate(); err != nil {
			return encodedStep{}, fmt.Errorf("commit step %d of run %s: group %d: %w", rec.Step, runID, i, err)
		}
	}
	for _, b := range rec.Checkpoint {
		if b.Name == "" || strings.IndexByte(b.Name, 0) >= 0 {
			return encodedStep{}, fmt.Errorf("commit step %d of run %s: checkpoint blob name %q: want a non-empty name without zero bytes", rec.Step, runID, b.Name)
		}
	}
	// Sealed here, outside the transaction: a commit only puts.
	enc := encodedStep{metrics: seal(stepKey(rec.Step), encodeMetrics(rec)), chunks: s.codec.encodeChunks(rec.Groups)}
	for i := range enc.chunks {
		c := &enc.chunks[i]
		c.data = seal(groupKey(rec.Step, c.first), c.data)
	}
	return enc, nil
}

// putStep writes one encoded step into a run's data buckets. It returns
// the state files of the checkpoints it pruned, to delete after the commit.
func (s *Store) putStep(data *bolt.Bucket, runID string, rec *StepRecord, enc encodedStep) ([]string, error) {
	mb := data.Bucket([]byte(bucketMetrics))
	mb.FillPercent = appendFill
	if err := mb.Put(stepKey(rec.Step), enc.metrics); err != nil { // sealed by encodeStep
		return nil, fmt.Errorf("run %s step %d: metrics: %w", runID, rec.Step, err)
	}
	gb := data.Bucket([]byte(bucketGroups))
	gb.FillPercent = appendFill
	for _, c := range enc.chunks {
		if err := gb.Put(groupKey(rec.Step, c.first), c.data); err != nil {
			return nil, fmt.Errorf("run %s step %d: groups from %d: %w", runID, rec.Step, c.first, err)
		}
	}
	if enc.state == nil {
		return nil, nil
	}
	cb := data.Bucket([]byte(bucketCheckpoints))
	cb.FillPercent = appendFill
	if err := putStateRef(cb, rec.Step, *enc.state); err != nil {
		return nil, fmt.Errorf("run %s step %d: checkpoint: %w", runID, rec.Step, err)
	}
	pruned, err := s.pruneCheckpoints(cb)
	if err != nil {
		return nil, fmt.Errorf("run %s step %d: pruning checkpoints: %w", runID, rec.Step, err)
	}
	return pruned, nil
}

// pruneCheckpoints keeps the newest KeepCheckpoints of a run's checkpoint
// references and returns the state files of those it deleted.
func (s *Store) pruneCheckpoints(cb *bolt.Bucket) ([]string, error) {
	if s.opts.KeepCheckpoints <= 0 {
		return nil, nil
	}
	var files []string
	var old [][]byte
	kept := 0
	c := cb.Cursor()
	for k, v := c.Last(); k != nil; k, v = c.Prev() {
		if kept < s.opts.KeepCheckpoints {
			kept++
			continue
		}
		if f := refFile(k, v); f != "" {
			files = append(files, f)
		}
		old = append(old, bytes.Clone(k))
	}
	for _, k := range old {
		if err := cb.Delete(k); err != nil {
			return nil, err
		}
	}
	return files, nil
}

func getRun(runs *bolt.Bucket, id string) (Run, error) {
	raw := runs.Get([]byte(id))
	if raw == nil {
		return Run{}, fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	var r Run
	if err := decodeJSON([]byte(id), raw, &r); err != nil {
		return Run{}, fmt.Errorf("run %s: decoding its record: %w", id, err)
	}
	return r, nil
}

// RewindRun deletes every step after toStep of a run that is not finished
// (metrics, groups and checkpoints, with their state files) and sets its LastStep to toStep (−1
// deletes all steps), so a resumed run can restart from a checkpoint older
// than its last committed step and commit the later steps again. The run's
// Tokens and Elapsed are taken from the metric record at toStep.
func (s *Store) RewindRun(runID string, toStep int) error {
	if toStep < -1 {
		return fmt.Errorf("rewind run %s to step %d: want a step ≥ −1", runID, toStep)
	}
	var pruned []string
	err := s.update(func(tx *bolt.Tx) error {
		pruned = nil
		runs := tx.Bucket([]byte(bucketRuns))
		r, err := getRun(runs, runID)
		if err != nil {
			return err
		}
		if r.Status == StatusFinished {
			return fmt.Errorf("run %s is finished", runID)
		}
		if toStep >= r.LastStep {
			return nil
		}
		data := tx.Bucket([]byte(bucketData)).Bucket([]byte(runID))
		if data == nil {
			return fmt.Errorf("run %s: data bucket missing: damaged store", runID)
		}
		from := stepKey(toStep + 1)
		if toStep < 0 {
			from = stepKey(0)
		}
		for _, name := range []string{bucketMetrics, bucketGroups, bucketCheckpoints} {
			c := data.Bucket([]byte(name)).Cursor()
			for k, v := c.Seek(from); k != nil; k, v = c.Seek(from) {
				if name == bucketCheckpoints {
					if f := refFile(k, v); f != "" {
						pruned = append(pruned, f)
					}
				}
				if err := c.Delete(); err != nil {
					return err
				}
			}
		}
		r.LastStep, r.Tokens, r.Elapsed = toStep, 0, 0
		if toStep >= 0 {
			c := data.Bucket([]byte(bucketMetrics)).Cursor()
			if k, v := c.Last(); k != nil {
				m, err := decodeMetrics(k, v)
				if err != nil {
					return fmt.Errorf("run %s: %w", runID, err)
				}
				r.LastStep, r.Tokens, r.Elapsed = m.Step, m.Tokens, m.Elapsed
			} else {
				r.LastStep = -1
			}
		}
		return putJSON(runs, runID, r)
	})
	if err != nil {
		return fmt.Errorf("rewind run %s to step %d: %w", runID, toStep, err)
	}
	removeStateFiles(s.path, runID, pruned)
	return nil
}
