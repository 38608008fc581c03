package tracking

import (
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bucketLoads holds, per run id, the machine's load sampled beside the
// run (a JSON list of LoadSample). It is created by the first PutLoad.
const bucketLoads = "loads"

// LoadSample is the machine's load when a run started or ended: a wall
// time measured beside it can be read against it.
type LoadSample struct {
	At time.Time `json:"at"`
	// Event says when it was taken: start (or resume) or end.
	Event string `json:"event"`
	// Load1 is the 1-minute load average, CPUs the number of CPUs.
	Load1 float64 `json:"load1"`
	CPUs  int     `json:"cpus"`
}

// PutLoad appends a load sample to a run's list. The run must exist.
func (s *Store) PutLoad(runID string, l LoadSample) error {
	return s.update(func(tx *bolt.Tx) error {
		if _, err := getRun(tx.Bucket([]byte(bucketRuns)), runID); err != nil {
			return fmt.Errorf("put load: %w", err)
		}
		b, err := tx.CreateBucketIfNotExists([]byte(bucketLoads))
		if err != nil {
			return fmt.Errorf("put load of run %s: %w", runID, err)
		}
		var list []LoadSample
		if raw := b.Get([]byte(runID)); raw != nil {
			if err := decodeJSON([]byte(runID), raw, &list); err != nil {
				return fmt.Errorf("loads of run %s: decoding: %w", runID, err)
			}
		}
		return putJSON(b, runID, append(list, l))
	})
}

// Loads returns the load samples recorded beside a run, oldest first;
// none for a run made by a build that did not record them.
func (s *Store) Loads(runID string) ([]LoadSample, error) {
	var list []LoadSample
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucketLoads))
		if b == nil {
			return nil
		}
		raw := b.Get([]byte(runID))
		if raw == nil {
			return nil
		}
		if err := decodeJSON([]byte(runID), raw, &list); err != nil {
			return fmt.Errorf("loads of run %s: decoding: %w", runID, err)
		}
		return nil
	})
	return list, err
}

// copyLoads replaces s's load samples of a run with src's (a merge copies
// them with the run).
func (s *Store) copyLoads(src *Store, runID string) error {
	list, err := src.Loads(runID)
	if err != nil || len(list) == 0 {
		return err
	}
	return s.update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(bucketLoads))
		if err != nil {
			return err
		}
		return putJSON(b, runID, list)
	})
}
