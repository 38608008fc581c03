package tracking

import (
	"errors"
	"fmt"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bucketDesigns holds one DesignRecord per experiment, keyed by the
// experiment's name. It is created by the first PutDesigned.
const bucketDesigns = "designs"

// DesignRecord is an experiment's resolved design as recorded before its
// runs: the design's canonical text (every variant's resolved
// configuration, the seeds, the baseline, the declared checks; the caller
// encodes it, see package experiments/design), its hash and when it was
// first recorded. A check is confirmatory for the runs that started after
// Recorded. Its encoding is one JSON object.
type DesignRecord struct {
	Experiment string `json:"experiment"`
	// Hash is the caller's hash of Text.
	Hash string `json:"hash"`
	Text string `json:"text"`
	// Checks is the number of checks the design declares: a design with
	// none may grow (more seeds, new variants) under the rules of
	// PutExperiment; one with checks is fixed.
	Checks int `json:"checks"`
	// Recorded is when this design was first put in the store.
	Recorded time.Time `json:"recorded"`
	// Canonical, when set, rewrites a design text recorded earlier into
	// the form the caller writes today (e.g. a setting added since, at its
	// default, filled in), before PutDesigned compares it with Text: a
	// recorded design that then reads as Text is the same design. It is not
	// stored.
	Canonical func(text string) (string, error) `json:"-"`
}

// same reports whether the recorded design prev is d's: the same hash, or
// the same text once prev's is rewritten by d.Canonical.
func (d DesignRecord) same(prev DesignRecord) bool {
	if prev.Hash == d.Hash {
		return true
	}
	if d.Canonical == nil {
		return false
	}
	text, err := d.Canonical(prev.Text)
	return err == nil && text == d.Text
}

// DesignConflictError is the refusal to record, for an experiment whose
// design the store holds, another design: the design of an experiment
// that declares checks is fixed before its runs.
type DesignConflictError struct {
	Experiment       string
	Recorded, Given  string // the two hashes
	RecordedAt       time.Time
	Diffs            []ConfigDiff
	RecordedDeclares int
}

// Error names the keys whose values differ, with both values.
func (e *DesignConflictError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "experiment %q: its design is recorded (hash %.12s, %s) and this one differs (hash %.12s)",
		e.Experiment, e.Recorded, e.RecordedAt.Format(time.RFC3339), e.Given)
	for i, d := range e.Diffs {
		if i == 6 {
			fmt.Fprintf(&b, "; and %d more", len(e.Diffs)-i)
			break
		}
		fmt.Fprintf(&b, "; %s is %s in the store, %s now", d.Key, d.Recorded, d.Given)
	}
	return b.String()
}

// PutDesigned records an experiment (as PutExperiment does) and its
// design in one transaction, before any of its runs: nothing is written
// when either is refused. A design already recorded for the experiment
// stays as it is when it is the same (the same hash, or the same text
// once d.Canonical rewrites it); a different one is refused
// with a *DesignConflictError when either declares checks (a designed
// experiment is fixed: its changes make a new experiment), and replaces
// it otherwise, recorded now. A refusal of the experiment's variant
// configs is a *ConfigConflictError as from PutExperiment.
func (s *Store) PutDesigned(e Experiment, d DesignRecord) error {
	if e.Name == "" {
		return fmt.Errorf("put experiment: empty name")
	}
	if d.Hash == "" || d.Text == "" {
		return fmt.Errorf("put design of %q: empty hash or text", e.Name)
	}
	d.Experiment = e.Name
	return s.update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(bucketDesigns))
		if err != nil {
			return fmt.Errorf("put design of %q: %w", e.Name, err)
		}
		keep := false
		if raw := b.Get([]byte(e.Name)); raw != nil {
			var prev DesignRecord
			if err := decodeJSON([]byte(e.Name), raw, &prev); err != nil {
				return fmt.Errorf("design of %q: decoding: %w", e.Name, err)
			}
			switch {
			case d.same(prev):
				keep = true
			case prev.Checks > 0 || d.Checks > 0:
				diffs, _ := DiffConfigs(prev.Text, d.Text)
				return &DesignConflictError{Experiment: e.Name, Recorded: prev.Hash, Given: d.Hash, RecordedAt: prev.Recorded, Diffs: diffs, RecordedDeclares: prev.Checks}
			}
		}
		if err := putExperiment(tx, e); err != nil {
			return err
		}
		if keep {
			return nil
		}
		d.Recorded = time.Now().UTC()
		return putJSON(b, e.Name, d)
	})
}

// Design returns the design recorded for an experiment; ErrNotFound when
// none is (an experiment run by a build older than design records, or
// not put with PutDesigned).
func (s *Store) Design(experiment string) (DesignRecord, error) {
	var d DesignRecord
	err := s.view(func(tx *bolt.Tx) error {
		var raw []byte
		if b := tx.Bucket([]byte(bucketDesigns)); b != nil {
			raw = b.Get([]byte(experiment))
		}
		if raw == nil {
			return fmt.Errorf("design of experiment %q: %w", experiment, ErrNotFound)
		}
		if err := decodeJSON([]byte(experiment), raw, &d); err != nil {
			return fmt.Errorf("design of experiment %q: decoding: %w", experiment, err)
		}
		return nil
	})
	return d, err
}

// mergeDesign copies src's design of an experiment into s: when s has
// none it is copied; when both have the same hash s keeps the earlier
// recording time; different designs are a *DesignConflictError when
// either declares checks, and otherwise s keeps its own.
func (s *Store) mergeDesign(src *Store, experiment string) error {
	d, err := src.Design(experiment)
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	return s.update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists([]byte(bucketDesigns))
		if err != nil {
			return err
		}
		raw := b.Get([]byte(experiment))
		if raw == nil {
			return putJSON(b, experiment, d)
		}
		var prev DesignRecord
		if err := decodeJSON([]byte(experiment), raw, &prev); err != nil {
			return fmt.Errorf("design of %q: decoding: %w", experiment, err)
		}
		switch {
		case prev.Hash == d.Hash:
			if d.Recorded.Before(prev.Recorded) {
				return putJSON(b, experiment, d)
			}
		case prev.Checks > 0 || d.Checks > 0:
			diffs, _ := DiffConfigs(prev.Text, d.Text)
			return &DesignConflictError{Experiment: experiment, Recorded: prev.Hash, Given: d.Hash, RecordedAt: prev.Recorded, Diffs: diffs, RecordedDeclares: prev.Checks}
		}
		return nil
	})
}
