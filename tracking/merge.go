package tracking

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"time"

	bolt "go.etcd.io/bbolt"
)

// MergeStats counts what a merge copied.
type MergeStats struct {
	// Experiments and Runs count the records copied into the destination.
	Experiments int
	Runs        int
	// Unchanged counts runs the destination already had at least as far.
	Unchanged int
}

// MergeFrom folds src into s. An experiment missing from s is copied (with
// its design record: see PutDesigned; a design s records otherwise for it
// is a *DesignConflictError when either declares checks); one
// s has gains src's variants, whose configs must match s's (else the merge
// fails with a *ConfigConflictError before copying that experiment's runs); a
// run is copied (with all its steps, groups and checkpoints, and the
// resume state files those name: when the source no longer has one, e.g.
// replaced by its writer meanwhile, the merge fails saying so) when s lacks
// it or src has it further along: more steps, or as many and a later
// state (finished > failed > stopped > running; a run still running
// in src is copied as stopped), with its final policy (FinalDir) when src
// keeps one. Otherwise s keeps its own. Merging
// the same store twice changes nothing the second time. Each run is
// copied in its own transaction.
func (s *Store) MergeFrom(src *Store) (MergeStats, error) {
	var st MergeStats
	if sameFile(s.path, src.path) {
		return st, fmt.Errorf("merge %s into itself", src.path)
	}
	exps, err := src.Experiments()
	if err != nil {
		return st, fmt.Errorf("merge from %s: %w", src.path, err)
	}
	for _, e := range exps {
		if e.Configs == nil { // a record from before configs were kept
			err := src.view(func(tx *bolt.Tx) error {
				configs, conflicts, err := recordedConfigs(tx, e)
				if len(conflicts) == 0 && len(configs) > 0 {
					e.Configs = configs
				}
				return err
			})
			if err != nil {
				return st, fmt.Errorf("merge experiment %q from %s: %w", e.Name, src.path, err)
			}
		}
		err := s.update(func(tx *bolt.Tx) error {
			b := tx.Bucket([]byte(bucketExperiments))
			old := b.Get([]byte(e.Name))
			if old == nil {
				st.Experiments++
				return putJSON(b, e.Name, e)
			}
			return mergeExperimentInto(tx, b, old, e)
		})
		if err != nil {
			return st, fmt.Errorf("merge experiment %q from %s: %w", e.Name, src.path, err)
		}
		if err := s.mergeDesign(src, e.Name); err != nil {
			return st, fmt.Errorf("merge the design of experiment %q from %s: %w", e.Name, src.path, err)
		}
	}
	runs, err := src.Runs("")
	if err != nil {
		return st, fmt.Errorf("merge from %s: %w", src.path, err)
	}
	for _, r := range runs {
		copied, err := s.mergeRun(src, r)
		if err != nil {
			return st, fmt.Errorf("merge run %s from %s: %w", r.ID, src.path, err)
		}
		if copied {
			if err := s.copyFinal(src.path, r.ID); err != nil {
				return st, fmt.Errorf("merge run %s from %s: %w", r.ID, src.path, err)
			}
			if err := s.copyLoads(src, r.ID); err != nil {
				return st, fmt.Errorf("merge run %s from %s: loads: %w", r.ID, src.path, err)
			}
			st.Runs++
		} else {
			st.Unchanged++
		}
	}
	return st, nil
}

// ahead reports whether run a is further along than run b.
func ahead(a, b Run) bool {
	if a.LastStep != b.LastStep {
		return a.LastStep > b.LastStep
	}
	if a.Status.rank() != b.Status.rank() {
		return a.Status.rank() > b.Status.rank()
	}
	return a.End.After(b.End)
}

// mergeRun copies run r from src when it is ahead of s's (see MergeFrom),
// with the resume state files its checkpoints name, which are written
// before the transaction that names them commits; the state files of the
// run it replaces are deleted after.
func (s *Store) mergeRun(src *Store, r Run) (bool, error) {
	copied := false
	var replaced []string
	kept := map[string]bool{}
	err := s.update(func(dtx *bolt.Tx) error {
		copied, replaced = false, nil
		clear(kept)
		runs := dtx.Bucket([]byte(bucketRuns))
		if prev, err := getRun(runs, r.ID); err == nil {
			if prev.Experiment != r.Experiment {
				return fmt.Errorf("the destination has run %s in experiment %q, the source in %q", r.ID, prev.Experiment, r.Experiment)
			}
			if !ahead(r, prev) {
				return nil
			}
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
		copied = true
		data := dtx.Bucket([]byte(bucketData))
		if old := data.Bucket([]byte(r.ID)); old != nil {
			replaced, _ = stateFilesOf(old.Bucket([]byte(bucketCheckpoints)))
			if err := data.DeleteBucket([]byte(r.ID)); err != nil {
				return err
			}
		}
		if err := createRunData(dtx, r.ID); err != nil {
			return err
		}
		dst := data.Bucket([]byte(r.ID))
		err := src.view(func(stx *bolt.Tx) error {
			// Re-read the run inside the source transaction so the record
			// matches the data copied with it.
			sr, err := getRun(stx.Bucket([]byte(bucketRuns)), r.ID)
			if err != nil {
				return err
			}
			for _, name := range []string{bucketMetrics, bucketGroups, bucketCheckpoints} {
				sb, err := src.runData(stx, r.ID, name)
				if err != nil {
					return err
				}
				db := dst.Bucket([]byte(name))
				db.FillPercent = appendFill
				err = sb.ForEach(func(k, v []byte) error {
					// Verified, not decoded: a damaged source record
					// is not copied.
					if _, err := unseal(k, v); err != nil {
						return fmt.Errorf("%s record %x: %w", name, k, err)
					}
					if name == bucketCheckpoints {
						file, err := s.copyRef(src, r.ID, k, v)
						if err != nil {
							return err
						}
						kept[file] = true
					}
					return db.Put(k, v)
				})
				if err != nil {
					return err
				}
			}
			if sr.Status == StatusRunning {
				// Nothing runs it in the destination.
				sr.Status = StatusStopped
			}
			return putJSON(runs, r.ID, sr)
		})
		return err
	})
	if err == nil {
		var gone []string
		for _, f := range replaced {
			if !kept[f] {
				gone = append(gone, f)
			}
		}
		removeStateFiles(s.path, r.ID, gone)
	}
	return copied, err
}

// copyRef copies the state file a source checkpoint reference (key k,
// value v) names into s (see copyStateFile) and returns its name.
func (s *Store) copyRef(src *Store, runID string, k, v []byte) (string, error) {
	step := 0
	if len(k) >= 8 {
		step = int(binary.BigEndian.Uint64(k))
	}
	ref, err := decodeRef(runID, step, k, v)
	if err != nil {
		return "", err
	}
	return ref.File, s.copyStateFile(src.path, runID, step, ref)
}

// Merge folds the stores at paths into the store at into (created if
// needed). Sources are opened read-only (a snapshot if being written).
func Merge(into string, paths []string, opts Options) (MergeStats, error) {
	var total MergeStats
	for _, p := range paths {
		// Refuse missing and damaged sources before creating the destination.
		if _, err := os.Stat(p); err != nil {
			return total, fmt.Errorf("merge %s: %w", p, err)
		}
		if f, err := os.Open(p); err == nil {
			err = checkFileSize(f, p)
			f.Close()
			if err != nil {
				return total, err
			}
		}
	}
	wopts := opts
	wopts.ReadOnly = false
	dst, err := Open(into, wopts)
	if err != nil {
		return total, err
	}
	defer dst.Close()
	for _, p := range paths {
		if sameFile(into, p) {
			return total, fmt.Errorf("merge %s into itself", p)
		}
		ropts := opts
		ropts.ReadOnly = true
		src, err := Open(p, ropts)
		if err != nil {
			return total, err
		}
		st, err := dst.MergeFrom(src)
		src.Close()
		total.Experiments += st.Experiments
		total.Runs += st.Runs
		total.Unchanged += st.Unchanged
		if err != nil {
			return total, err
		}
	}
	return total, dst.Close()
}

func sameFile(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// Compact rewrites the store at path into a fresh file without free pages
// and renames it over the original. It holds the write lock throughout, so
// it fails with a LockedError while a run is writing. It returns the file
// sizes before and after.
func Compact(path string, opts Options) (before, after int64, err error) {
	opts.ReadOnly = false
	if _, err := os.Stat(path); err != nil {
		return 0, 0, fmt.Errorf("compact %s: %w", path, err) // never create a store to compact it
	}
	src, err := Open(path, opts)
	if err != nil {
		return 0, 0, err
	}
	defer src.Close()
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		before, mode = fi.Size(), fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".compact-*")
	if err != nil {
		return 0, 0, fmt.Errorf("compact %s: %w", path, err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpPath) // no-op after the rename
	dst, err := bolt.Open(tmpPath, 0o644, &bolt.Options{Timeout: time.Second})
	if err != nil {
		return 0, 0, fmt.Errorf("compact %s: %w", path, err)
	}
	if err := src.guard(func() error { return bolt.Compact(dst, src.db, 64<<20) }); err != nil {
		dst.Close()
		return 0, 0, fmt.Errorf("compact %s: %w", path, err)
	}
	if err := dst.Close(); err != nil {
		return 0, 0, fmt.Errorf("compact %s: %w", path, err)
	}
	if fi, err := os.Stat(tmpPath); err == nil {
		after = fi.Size()
	}
	if err := os.Chmod(tmpPath, mode); err != nil {
		return 0, 0, fmt.Errorf("compact %s: %w", path, err)
	}
	if err := os.Rename(tmpPath, path); err != nil {
		return 0, 0, fmt.Errorf("compact %s: replacing the store: %w", path, err)
	}
	return before, after, nil
}

// mergeExperimentInto adds src's experiment record e to the one s holds
// (old): its new variants and their configs, after s's own. s's config
// text and creation time are kept; an unchanged record is not rewritten.
func mergeExperimentInto(tx *bolt.Tx, b *bolt.Bucket, old []byte, e Experiment) error {
	var prev Experiment
	if err := decodeJSON([]byte(e.Name), old, &prev); err != nil {
		return fmt.Errorf("decoding: %w", err)
	}
	merged, err := mergeExperiment(tx, prev, e)
	if err != nil {
		return err
	}
	merged.Config = prev.Config
	if reflect.DeepEqual(merged, prev) {
		return nil
	}
	return putJSON(b, prev.Name, merged)
}
