package tracking

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	bolt "go.etcd.io/bbolt"

	"github.com/rollout-rl/rollout/search/record"
	"github.com/rollout-rl/rollout/tracking/internal/boltfile"
)

// maxProblems bounds the problems a check lists; the rest are counted.
const maxProblems = 100

// CheckResult is what Check found in a store.
type CheckResult struct {
	// Path is the store checked.
	Path string
	// Experiments, Runs, Steps (metric records) and Groups count the
	// records that were read and decoded.
	Experiments, Runs, Steps, Groups int
	// GroupBytes is the size of the stored group chunks (as written, so
	// compressed), SampledTokens the tokens their groups generated
	// (record.Usage.GeneratedTokens): GroupBytes/SampledTokens is what the
	// store spends on trajectories per sampled token.
	GroupBytes, SampledTokens int64
	// Problems lists what is damaged, one line each naming the run, step,
	// group or page; empty when the store is intact.
	Problems []string
	// More counts problems found beyond the listed ones.
	More int
}

// OK reports whether the check found nothing damaged.
func (c *CheckResult) OK() bool { return len(c.Problems) == 0 }

func (c *CheckResult) addf(format string, args ...any) {
	if len(c.Problems) >= maxProblems {
		c.More++
		return
	}
	c.Problems = append(c.Problems, fmt.Sprintf(format, args...))
}

// Check verifies the store at path, opened read-only (a snapshot while a
// writer holds it): the file's size against its meta pages, every record
// (each experiment and run decodes, each run has its data buckets, every
// metric record and every group of every chunk decodes, a run's LastStep,
// Tokens and Elapsed agree with its last metric record, no groups or
// checkpoints lie beyond LastStep), then bbolt's own consistency check of
// the page structure (tx.Check). Damage is reported in the result, a file
// too damaged to open included; the error is for stores it cannot check
// at all (missing, locked, not a store).
func Check(path string, opts Options) (*CheckResult, error) {
	res := &CheckResult{Path: path}
	opts.ReadOnly = true
	st, err := Open(path, opts)
	var (
		de *DamagedError
		tr *boltfile.Truncated
	)
	if errors.As(err, &de) {
		res.addf("%s", de.Problem)
		if errors.As(err, &tr) {
			checkTruncated(path, tr.Need, res)
		}
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	defer st.Close()
	walked := st.checkRecords(res)
	if !walked {
		// A page that panicked may hold references outside the file, which
		// bbolt's check (run in a goroutine of its own, unguarded) would
		// follow into a fatal fault.
		res.addf("bbolt's page check skipped: the records above could not be read")
		return res, nil
	}
	err = st.view(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			res.addf("bbolt: %v", err)
		}
		return nil
	})
	if err != nil {
		res.addf("bbolt's page check: %s", damageOf(err))
	}
	return res, nil
}

// checkTruncated lists what a truncated store lost: it reads a copy of
// the file padded with zeros to the size its last commit needs, where
// every page past the old end is zero and fails bbolt's page check (a
// guarded panic) wherever it is reached.
func checkTruncated(path string, need int64, res *CheckResult) {
	tmp, err := os.CreateTemp("", "rollout-check-*.db")
	if err != nil {
		res.addf("cannot list the records lost: %v", err)
		return
	}
	defer os.Remove(tmp.Name())
	src, err := os.Open(path)
	if err == nil {
		_, err = io.Copy(tmp, src)
		src.Close()
	}
	if err == nil {
		err = tmp.Truncate(need)
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	var st *Store
	if err == nil {
		st, err = Open(tmp.Name(), Options{ReadOnly: true, NoSnapshot: true})
	}
	if err != nil {
		res.addf("cannot list the records lost: %v", err)
		return
	}
	defer st.Close()
	st.path = path
	before := len(res.Problems)
	st.checkRecords(res)
	if len(res.Problems) == before {
		res.addf("no experiment, run, metric or group record lies in the part lost (checkpoint contents are not checked)")
	}
}

// damageOf is the problem an error of a guarded read reports.
func damageOf(err error) string {
	var de *DamagedError
	if errors.As(err, &de) {
		return de.Problem
	}
	return err.Error()
}

// checkRecords reads every record of the store into res. It reports false
// when a read transaction panicked (see guard).
func (s *Store) checkRecords(res *CheckResult) bool {
	var runs []Run
	clean := true
	err := s.view(func(tx *bolt.Tx) error {
		for _, name := range []string{bucketExperiments, bucketRuns, bucketData} {
			if tx.Bucket([]byte(name)) == nil && tx.Bucket([]byte(bucketMeta)) != nil {
				res.addf("bucket %q is missing", name)
			}
		}
		exps := map[string]bool{}
		if b := tx.Bucket([]byte(bucketExperiments)); b != nil {
			b.ForEach(func(k, v []byte) error {
				var e Experiment
				if err := decodeJSON(k, v, &e); err != nil {
					res.addf("experiment %q: decoding: %v", k, err)
					return nil
				}
				exps[string(k)] = true
				res.Experiments++
				return nil
			})
		}
		if b := tx.Bucket([]byte(bucketRuns)); b != nil {
			b.ForEach(func(k, v []byte) error {
				var r Run
				if err := decodeJSON(k, v, &r); err != nil {
					res.addf("run %s: decoding its record: %v", k, err)
					return nil
				}
				if !exps[r.Experiment] {
					res.addf("run %s: its experiment %q has no record", k, r.Experiment)
				}
				runs = append(runs, r)
				return nil
			})
		}
		for _, kind := range []struct {
			bucket, what string
			into         func() any
		}{
			{bucketDesigns, "design of experiment", func() any { return new(DesignRecord) }},
			{bucketLoads, "load samples of run", func() any { return new([]LoadSample) }},
		} {
			if b := tx.Bucket([]byte(kind.bucket)); b != nil {
				b.ForEach(func(k, v []byte) error {
					if err := decodeJSON(k, v, kind.into()); err != nil {
						res.addf("%s %q: decoding: %v", kind.what, k, err)
					}
					return nil
				})
			}
		}
		if b := tx.Bucket([]byte(bucketNotes)); b != nil {
			b.ForEach(func(k, v []byte) error {
				if _, err := decodeNote(k, v); err != nil {
					res.addf("%v", err)
				}
				return nil
			})
		}
		if d := tx.Bucket([]byte(bucketData)); d != nil {
			d.ForEachBucket(func(k []byte) error {
				if rb := tx.Bucket([]byte(bucketRuns)); rb == nil || rb.Get(k) == nil {
					res.addf("data of run %s: no run record", k)
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		res.addf("the store's experiment and run records: %s", damageOf(err))
		return false
	}
	for _, r := range runs {
		res.Runs++
		if err := s.view(func(tx *bolt.Tx) error { s.checkRun(tx, r, res); return nil }); err != nil {
			res.addf("run %s (%s, %s, seed %d): %s", r.ID, r.Experiment, r.Variant, r.Seed, damageOf(err))
			clean = false
		}
	}
	return clean
}

// checkRun checks one run's data: metrics, groups, checkpoints.
func (s *Store) checkRun(tx *bolt.Tx, r Run, res *CheckResult) {
	var data [3]*bolt.Bucket
	for i, name := range []string{bucketMetrics, bucketGroups, bucketCheckpoints} {
		b, err := s.runData(tx, r.ID, name)
		if err != nil {
			res.addf("run %s: data bucket %q is missing", r.ID, name)
			return
		}
		data[i] = b
	}
	steps := checkMetrics(data[0], r, res)
	checkGroups(&s.codec, data[1], r, steps, res)
	data[2].ForEach(func(k, v []byte) error {
		if len(k) <= 8 {
			res.addf("run %s: checkpoint key %x: want a step and a name", r.ID, k)
			return nil
		}
		step := int(binary.BigEndian.Uint64(k))
		if step > r.LastStep {
			res.addf("run %s: checkpoint at step %d, after its last step %d", r.ID, step, r.LastStep)
		}
		s.checkStateFile(r, step, k, v, res)
		return nil
	})
}

// checkStateFile checks the resume state file a committed step of run r
// names: present, of the size and SHA-256 its reference records. A
// snapshot of a store being written is not checked against the files,
// which its writer replaces as it goes.
func (s *Store) checkStateFile(r Run, step int, k, v []byte, res *CheckResult) {
	ref, err := decodeRef(r.ID, step, k, v)
	if err != nil {
		res.addf("%v", err)
		return
	}
	if s.snapshot != "" {
		return
	}
	path := filepath.Join(StateDir(s.path, r.ID), ref.File)
	b, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		res.addf("run %s step %d: its resume state file %s is missing", r.ID, step, path)
	case err != nil:
		res.addf("run %s step %d: its resume state file: %v", r.ID, step, err)
	default:
		if problem := verifyState(b, ref); problem != "" {
			res.addf("run %s step %d: its resume state file %s %s", r.ID, step, path, problem)
		} else if _, err := decodeState(b); err != nil {
			res.addf("run %s step %d: its resume state file %s: %v", r.ID, step, path, err)
		}
	}
}

// checkMetrics decodes every metric record of a run and compares the last
// with the run's counters. It returns the steps that have a record.
func checkMetrics(b *bolt.Bucket, r Run, res *CheckResult) map[int]bool {
	steps := map[int]bool{}
	var last *StepMetrics
	b.ForEach(func(k, v []byte) error {
		m, err := decodeMetrics(k, v)
		if err != nil {
			res.addf("run %s: %v", r.ID, err)
			return nil
		}
		steps[m.Step] = true
		res.Steps++
		last = &m
		return nil
	})
	switch {
	case last == nil && r.LastStep >= 0:
		res.addf("run %s: last step %d, but no metric record", r.ID, r.LastStep)
	case last == nil:
	case last.Step != r.LastStep:
		res.addf("run %s: last step %d, but the last metric record is of step %d", r.ID, r.LastStep, last.Step)
	case last.Tokens != r.Tokens || last.Elapsed != r.Elapsed:
		res.addf("run %s: %d tokens in %s at its last step, but its metric record says %d in %s", r.ID, r.Tokens, r.Elapsed, last.Tokens, last.Elapsed)
	}
	return steps
}

// checkGroups decodes every group of every chunk of a run.
func checkGroups(codec *chunkCodec, b *bolt.Bucket, r Run, steps map[int]bool, res *CheckResult) {
	var g record.Group
	b.ForEach(func(k, v []byte) error {
		step, first, err := parseGroupKey(k)
		if err != nil {
			res.addf("run %s: %v", r.ID, err)
			return nil
		}
		if !steps[step] {
			res.addf("run %s step %d: groups from %d, but the step has no metric record", r.ID, step, first)
		}
		res.GroupBytes += int64(len(v))
		err = codec.eachInChunk(k, first, v, func(index int, enc []byte) error {
			err := record.Decode(enc, &g)
			if err == nil {
				err = g.Validate()
			}
			if err != nil {
				res.addf("run %s step %d group %d: %v", r.ID, step, index, err)
				return nil
			}
			res.Groups++
			res.SampledTokens += g.Usage.GeneratedTokens
			return nil
		})
		if err != nil {
			res.addf("run %s step %d: %v", r.ID, step, err)
		}
		return nil
	})
}
