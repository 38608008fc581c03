package tracking

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	bolt "go.etcd.io/bbolt"
)

// Notes on runs: free text a person attaches to a run ("diverged after a
// learning-rate bump", "rerun with the fixed verifier"), shown by the
// dashboard. They live in a bucket of their own, apart from the runs'
// records, so that writing one never rewrites a run:
//
//	notes / <run id> 0x00 <unix nanoseconds, 8 bytes big-endian> → text (UTF-8), sealed
//
// Like every record, a note carries its checksum (putSealed), verified by
// every read and by Check.
// A note is never edited; a run's notes read back in the order written.
// A snapshot read while a run writes the store with a ReadScope holds no
// notes (only whole-file copies do).
const bucketNotes = "notes"

// MaxNoteLen bounds a note's text, in bytes.
const MaxNoteLen = 4096

// Note is one note on a run.
type Note struct {
	Run  string    `json:"run"`
	Time time.Time `json:"time"`
	Text string    `json:"text"`
}

// noteKey is the key of a run's note written at t.
func noteKey(runID string, t time.Time) []byte {
	k := append([]byte(runID), 0)
	return binary.BigEndian.AppendUint64(k, uint64(t.UnixNano()))
}

// AddNote attaches a note to a run that exists and returns it. The text is
// trimmed; an empty one, one longer than MaxNoteLen or not UTF-8 is an
// error and writes nothing.
func (s *Store) AddNote(runID, text string) (Note, error) {
	text = strings.TrimSpace(text)
	switch {
	case text == "":
		return Note{}, fmt.Errorf("note on run %s: empty text", runID)
	case len(text) > MaxNoteLen:
		return Note{}, fmt.Errorf("note on run %s: %d bytes: at most %d", runID, len(text), MaxNoteLen)
	case !utf8.ValidString(text):
		return Note{}, fmt.Errorf("note on run %s: the text is not UTF-8", runID)
	case strings.IndexByte(runID, 0) >= 0:
		return Note{}, fmt.Errorf("note on run %q: a run ID has no NUL byte", runID)
	}
	if s.opts.ReadOnly {
		return Note{}, fmt.Errorf("note on run %s: store %s is open read-only", runID, s.path)
	}
	n := Note{Run: runID, Time: time.Now().UTC(), Text: text}
	err := s.update(func(tx *bolt.Tx) error {
		if runs := tx.Bucket([]byte(bucketRuns)); runs == nil || runs.Get([]byte(runID)) == nil {
			return fmt.Errorf("run %s: %w", runID, ErrNotFound)
		}
		b, err := tx.CreateBucketIfNotExists([]byte(bucketNotes))
		if err != nil {
			return err
		}
		k := noteKey(runID, n.Time)
		for b.Get(k) != nil { // two notes within a nanosecond's tick
			n.Time = n.Time.Add(time.Nanosecond)
			k = noteKey(runID, n.Time)
		}
		return putSealed(b, k, []byte(text))
	})
	if err != nil {
		return Note{}, fmt.Errorf("note on run %s: %w", runID, err)
	}
	return n, nil
}

// Notes returns the notes on the given runs (every run when none is
// given), by run in the order given (else by run ID), each run's in the
// order written. A store without notes has none, and no error.
func (s *Store) Notes(runIDs ...string) ([]Note, error) {
	var out []Note
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte(bucketNotes))
		if b == nil {
			return nil
		}
		read := func(prefix []byte) error {
			c := b.Cursor()
			for k, v := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
				n, err := decodeNote(k, v)
				if err != nil {
					return err
				}
				out = append(out, n)
			}
			return nil
		}
		if len(runIDs) == 0 {
			return read(nil)
		}
		for _, id := range runIDs {
			if err := read(append([]byte(id), 0)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("notes: %w", err)
	}
	return out, nil
}

// decodeNote reads a note's key and value.
func decodeNote(k, v []byte) (Note, error) {
	v, err := unseal(k, v)
	if err != nil {
		return Note{}, fmt.Errorf("note record %q: %w", k, err)
	}
	i := bytes.IndexByte(k, 0)
	if i < 0 || len(k)-i-1 != 8 || !utf8.Valid(v) {
		return Note{}, fmt.Errorf("note record %q: %w", k, ErrDamaged)
	}
	ns := int64(binary.BigEndian.Uint64(k[i+1:]))
	return Note{Run: string(k[:i]), Time: time.Unix(0, ns).UTC(), Text: string(v)}, nil
}
