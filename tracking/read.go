package tracking

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/rollout-rl/rollout/search/record"
)

// view runs fn in a read transaction, guarded (see guard). Readers check
// for missing buckets: a store opened read-only before its first write
// has none.
func (s *Store) view(fn func(tx *bolt.Tx) error) error {
	return s.guard(func() error { return s.db.View(fn) })
}

// Experiments lists the experiments by name.
func (s *Store) Experiments() ([]Experiment, error) {
	var out []Experiment
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucketExperiments))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			var e Experiment
			if err := decodeJSON(k, v, &e); err != nil {
				return fmt.Errorf("experiment %q: decoding: %w", k, err)
			}
			out = append(out, e)
			return nil
		})
	})
	return out, err
}

// Experiment returns the named experiment.
func (s *Store) Experiment(name string) (Experiment, error) {
	var e Experiment
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucketExperiments))
		var v []byte
		if b != nil {
			v = b.Get([]byte(name))
		}
		if v == nil {
			return fmt.Errorf("experiment %q: %w", name, ErrNotFound)
		}
		if err := decodeJSON([]byte(name), v, &e); err != nil {
			return fmt.Errorf("experiment %q: decoding: %w", name, err)
		}
		return nil
	})
	return e, err
}

// Run returns the run with the given id.
func (s *Store) Run(id string) (Run, error) {
	var r Run
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucketRuns))
		if b == nil {
			return fmt.Errorf("run %s: %w", id, ErrNotFound)
		}
		var err error
		r, err = getRun(b, id)
		return err
	})
	return s.shown(r), err
}

// shown returns a run as reads show it: recorded as running while no
// process writes the store (see Store.writerGone), it is interrupted.
func (s *Store) shown(r Run) Run {
	if s.writerGone && r.Status == StatusRunning {
		r.Status = StatusInterrupted
	}
	return r
}

// Runs lists the runs of an experiment ("" for all), ordered by
// experiment, variant, seed and id.
func (s *Store) Runs(experiment string) ([]Run, error) {
	var out []Run
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucketRuns))
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			var r Run
			if err := decodeJSON(k, v, &r); err != nil {
				return fmt.Errorf("run %s: decoding its record: %w", k, err)
			}
			if experiment == "" || r.Experiment == experiment {
				out = append(out, s.shown(r))
			}
			return nil
		})
	})
	slices.SortFunc(out, func(a, b Run) int {
		return cmp.Or(cmp.Compare(a.Experiment, b.Experiment), cmp.Compare(a.Variant, b.Variant),
			cmp.Compare(a.Seed, b.Seed), cmp.Compare(a.ID, b.ID))
	})
	return out, err
}

// FindRuns resolves a reference as a command line gives it: a run id, a
// unique prefix of one, or an experiment name (all its runs).
func (s *Store) FindRuns(ref string) ([]Run, error) {
	if ref == "" {
		return nil, fmt.Errorf("empty run or experiment reference")
	}
	if r, err := s.Run(ref); err == nil {
		return []Run{r}, nil
	}
	all, err := s.Runs("")
	if err != nil {
		return nil, err
	}
	var byExp, byPrefix []Run
	for _, r := range all {
		if r.Experiment == ref {
			byExp = append(byExp, r)
		}
		if strings.HasPrefix(r.ID, ref) {
			byPrefix = append(byPrefix, r)
		}
	}
	switch {
	case len(byExp) > 0:
		return byExp, nil
	case len(byPrefix) == 1:
		return byPrefix, nil
	case len(byPrefix) > 1:
		return nil, fmt.Errorf("%q is a prefix of %d run ids (%s, %s, …): give more of the id", ref, len(byPrefix), byPrefix[0].ID, byPrefix[1].ID)
	}
	if _, err := s.Experiment(ref); err == nil {
		return nil, nil // an experiment without runs yet
	}
	return nil, fmt.Errorf("%q is neither a run id nor an experiment: %w", ref, ErrNotFound)
}

// LastStep returns the last committed step of a run, −1 if none.
func (s *Store) LastStep(runID string) (int, error) {
	r, err := s.Run(runID)
	if err != nil {
		return 0, err
	}
	return r.LastStep, nil
}

// runData returns the named sub-bucket of a run's data. In a snapshot the
// writer copied, a run whose data the scope left out is an error saying
// so, not ErrNotFound.
func (s *Store) runData(tx *bolt.Tx, runID string, name string) (*bolt.Bucket, error) {
	if d := tx.Bucket([]byte(bucketData)); d != nil {
		if rb := d.Bucket([]byte(runID)); rb != nil {
			if b := rb.Bucket([]byte(name)); b != nil {
				return b, nil
			}
		}
	}
	if s.scope != nil {
		if runs := tx.Bucket([]byte(bucketRuns)); runs != nil && runs.Get([]byte(runID)) != nil {
			what := map[string]string{bucketMetrics: "metric records", bucketGroups: "rollout groups", bucketCheckpoints: "checkpoints"}[name]
			return nil, fmt.Errorf("run %s: its %s are not in the snapshot this read-only open of %s took while the store was being written (its Options.Scope left them out)", runID, what, s.path)
		}
	}
	return nil, fmt.Errorf("run %s: %w", runID, ErrNotFound)
}

// Metrics returns every step's metric record of a run, in step order.
func (s *Store) Metrics(runID string) ([]StepMetrics, error) {
	var out []StepMetrics
	err := s.view(func(tx *bolt.Tx) error {
		b, err := s.runData(tx, runID, bucketMetrics)
		if err != nil {
			return err
		}
		return b.ForEach(func(k, v []byte) error {
			m, err := decodeMetrics(k, v)
			if err != nil {
				return fmt.Errorf("run %s: %w", runID, err)
			}
			out = append(out, m)
			return nil
		})
	})
	return out, err
}

// MetricNames returns the sorted names of the metrics a run recorded.
func (s *Store) MetricNames(runID string) ([]string, error) {
	seen := map[string]bool{}
	err := s.view(func(tx *bolt.Tx) error {
		b, err := s.runData(tx, runID, bucketMetrics)
		if err != nil {
			return err
		}
		return b.ForEach(func(k, v []byte) error {
			step, payload, err := metricsPayload(k, v)
			if err != nil {
				return fmt.Errorf("run %s: %w", runID, err)
			}
			_, _, d, n, err := metricsHeader(payload)
			if err != nil {
				return fmt.Errorf("run %s step %d: %w", runID, step, err)
			}
			for range n {
				name := d.Bytes("metric name")
				d.Float64("metric value")
				if !seen[string(name)] { // no allocation when present
					seen[string(name)] = true
				}
			}
			if d.Err() != nil {
				return fmt.Errorf("run %s step %d: decoding metrics: %w", runID, step, d.Err())
			}
			return nil
		})
	})
	names := make([]string, 0, len(seen))
	for k := range seen {
		names = append(names, k)
	}
	slices.Sort(names)
	return names, err
}

// Series is one metric of one run over the steps that recorded it.
type Series struct {
	Steps   []int
	Tokens  []int64
	Elapsed []time.Duration
	Values  []float64
}

// Len returns the number of points.
func (s *Series) Len() int { return len(s.Steps) }

// Series returns one metric of a run over the steps that recorded it.
func (s *Store) Series(runID, metric string) (Series, error) {
	out, err := s.seriesMany(runID, []string{metric})
	if err != nil {
		return Series{}, err
	}
	return out[0], nil
}

// MetricSeries reads several metrics of a run in one scan: one Series per
// name, in the order given (empty for a metric the run did not record).
func (s *Store) MetricSeries(runID string, metrics []string) ([]Series, error) {
	return s.seriesMany(runID, metrics)
}

// seriesMany reads several metrics of a run in one scan.
func (s *Store) seriesMany(runID string, metrics []string) ([]Series, error) {
	out := make([]Series, len(metrics))
	vals := make([]float64, len(metrics))
	found := make([]bool, len(metrics))
	err := s.view(func(tx *bolt.Tx) error {
		b, err := s.runData(tx, runID, bucketMetrics)
		if err != nil {
			return err
		}
		return b.ForEach(func(k, v []byte) error {
			step, tokens, elapsed, err := lookupMetrics(k, v, metrics, vals, found)
			if err != nil {
				return fmt.Errorf("run %s: %w", runID, err)
			}
			for i := range metrics {
				if found[i] {
					s := &out[i]
					s.Steps = append(s.Steps, step)
					s.Tokens = append(s.Tokens, tokens)
					s.Elapsed = append(s.Elapsed, elapsed)
					s.Values = append(s.Values, vals[i])
				}
			}
			return nil
		})
	})
	return out, err
}

// Groups returns the rollout groups of one step of a run, in order.
func (s *Store) Groups(runID string, step int) ([]record.Group, error) {
	var out []record.Group
	err := s.view(func(tx *bolt.Tx) error {
		b, err := s.runData(tx, runID, bucketGroups)
		if err != nil {
			return err
		}
		prefix := stepKey(step)
		c := b.Cursor()
		for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			_, first, err := parseGroupKey(k)
			if err != nil {
				return fmt.Errorf("run %s: %w", runID, err)
			}
			err = s.codec.eachInChunk(k, first, v, func(index int, enc []byte) error {
				var g record.Group
				if err := record.Decode(enc, &g); err != nil {
					return fmt.Errorf("group %d: %w", index, err)
				}
				out = append(out, g)
				return nil
			})
			if err != nil {
				return fmt.Errorf("run %s step %d: %w", runID, step, err)
			}
		}
		return nil
	})
	return out, err
}

// Group returns one rollout group of a step of a run.
func (s *Store) Group(runID string, step, index int) (record.Group, error) {
	var g record.Group
	found := false
	err := s.view(func(tx *bolt.Tx) error {
		b, err := s.runData(tx, runID, bucketGroups)
		if err != nil {
			return err
		}
		// The chunk holding the group is the last one starting at or before it.
		c := b.Cursor()
		k, v := c.Seek(groupKey(step, index+1))
		if k == nil {
			k, v = c.Last()
		} else {
			k, v = c.Prev()
		}
		if k == nil || !bytes.HasPrefix(k, stepKey(step)) {
			return nil
		}
		_, first, err := parseGroupKey(k)
		if err != nil {
			return fmt.Errorf("run %s: %w", runID, err)
		}
		err = s.codec.eachInChunk(k, first, v, func(i int, enc []byte) error {
			if i != index {
				return nil
			}
			found = true
			if err := record.Decode(enc, &g); err != nil {
				return fmt.Errorf("group %d: %w", index, err)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("run %s step %d: %w", runID, step, err)
		}
		return nil
	})
	if err == nil && !found {
		err = fmt.Errorf("run %s: step %d has no group %d: %w", runID, step, index, ErrNotFound)
	}
	return g, err
}

// EachGroup calls fn for every group of a run in (step, index) order.
// The *record.Group passed to fn is reused between calls: copy what you keep.
func (s *Store) EachGroup(runID string, fn func(step, index int, g *record.Group) error) error {
	return s.view(func(tx *bolt.Tx) error {
		b, err := s.runData(tx, runID, bucketGroups)
		if err != nil {
			return err
		}
		var g record.Group
		return b.ForEach(func(k, v []byte) error {
			step, first, err := parseGroupKey(k)
			if err != nil {
				return fmt.Errorf("run %s: %w", runID, err)
			}
			var fnErr error
			err = s.codec.eachInChunk(k, first, v, func(index int, enc []byte) error {
				if err := record.Decode(enc, &g); err != nil {
					return fmt.Errorf("group %d: %w", index, err)
				}
				fnErr = fn(step, index, &g)
				return fnErr
			})
			if err != nil && err != fnErr {
				return fmt.Errorf("run %s step %d: %w", runID, step, err)
			}
			return err
		})
	})
}

// Checkpoint returns the blobs saved at one step of a run, read from the
// step's resume state file (verified against its size and SHA-256).
func (s *Store) Checkpoint(runID string, step int) ([]Blob, error) {
	var ref *stateRef
	err := s.view(func(tx *bolt.Tx) error {
		b, err := s.runData(tx, runID, bucketCheckpoints)
		if err != nil {
			return err
		}
		k := refKey(step)
		v := b.Get(k)
		if v == nil {
			return fmt.Errorf("run %s: checkpoint at step %d: %w", runID, step, ErrNotFound)
		}
		r, err := decodeRef(runID, step, k, v)
		ref = &r
		return err
	})
	if err != nil {
		return nil, err
	}
	return readStateFile(s.path, runID, step, *ref)
}

// LatestCheckpoint returns the newest checkpoint of a run and its step
// (read as Checkpoint reads one).
func (s *Store) LatestCheckpoint(runID string) (step int, blobs []Blob, err error) {
	var ref stateRef
	err = s.view(func(tx *bolt.Tx) error {
		b, err := s.runData(tx, runID, bucketCheckpoints)
		if err != nil {
			return err
		}
		k, v := b.Cursor().Last()
		if k == nil {
			return fmt.Errorf("run %s: no checkpoint: %w", runID, ErrNotFound)
		}
		if len(k) >= 8 {
			step = int(binary.BigEndian.Uint64(k))
		}
		ref, err = decodeRef(runID, step, k, v)
		return err
	})
	if err != nil {
		return step, nil, err
	}
	blobs, err = readStateFile(s.path, runID, step, ref)
	return step, blobs, err
}

// LastMetrics returns the metric record of a run's last committed step.
func (s *Store) LastMetrics(runID string) (StepMetrics, error) {
	var m StepMetrics
	err := s.view(func(tx *bolt.Tx) error {
		b, err := s.runData(tx, runID, bucketMetrics)
		if err != nil {
			return err
		}
		k, v := b.Cursor().Last()
		if k == nil {
			return fmt.Errorf("run %s: no step committed: %w", runID, ErrNotFound)
		}
		m, err = decodeMetrics(k, v)
		if err != nil {
			return fmt.Errorf("run %s: %w", runID, err)
		}
		return nil
	})
	return m, err
}

// BuildVersion describes the running program for Run.Version (see
// Version); "unknown" when it carries no build information.
func BuildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	return Version(bi)
}

// Version describes a build for Run.Version, which every report's
// provenance quotes: the commit it was built from (the first 12 digits of
// vcs.revision, "+dirty" when vcs.modified says its tree had changes)
// whenever the build information records one, after the main module's
// version only when that is a release the commit does not already name
// (Go 1.24's pseudo-versions of a source tree do). Without a commit it is
// the module's version, "(devel)" for a source tree: go build records no
// commit with -buildvcs=false, nor in a linked git worktree (whose .git is
// a file, which it does not take for a repository).
func Version(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	rev, modified := Revision(bi)
	if rev == "" {
		return v
	}
	short := rev[:min(12, len(rev))]
	stamp := short
	if modified {
		stamp += "+dirty"
	}
	if v == "(devel)" || strings.Contains(v, short) {
		return stamp
	}
	return v + " " + stamp
}

// VCSRevision is the first 12 digits of the commit the running program was
// built from and whether its tree had changes, as its build information
// records them; rev is empty when it records none (e.g. built with
// -buildvcs=false).
func VCSRevision() (rev string, modified bool) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "", false
	}
	rev, modified = Revision(bi)
	return rev[:min(12, len(rev))], modified
}

// Revision is the commit a build records (vcs.revision, in full) and
// whether its tree had changes (vcs.modified); rev is empty when it
// records none.
func Revision(bi *debug.BuildInfo) (rev string, modified bool) {
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return rev, modified
}
