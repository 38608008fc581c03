// This file: Migrate, the one reader of older schema versions.

package tracking

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/rollout-rl/rollout/search/record"
)

// MigrateStats says what Migrate did.
type MigrateStats struct {
	// From and To are the schema versions before and after; equal when
	// the store was already current (then nothing was written).
	From, To int
	// Records counts the records sealed with a checksum.
	Records int
	// Chunks counts the group chunks compressed (format 1 to 2).
	Chunks int
	// Checkpoints counts the checkpoints moved from blobs in the store
	// into resume state files.
	Checkpoints int
	// Configs counts the experiments given the variant configs of their
	// runs (records from before configs were kept).
	Configs int
}

// Migrate upgrades the store at path to SchemaVersion in place: it
// verifies every record of the old store (each decodes), writes them into
// a new file in the current layout — every record sealed with its
// checksum, every group chunk compressed, checkpoints that schema 1
// stored as blobs moved into resume state files (StateDir), experiments
// without variant configs given those of their runs — and renames it over
// the original. It holds the write lock throughout, so it fails with a
// LockedError while a run is writing; on any error the original is left
// as it was. A store already at SchemaVersion is left untouched.
func Migrate(path string, opts Options) (MigrateStats, error) {
	var st MigrateStats
	fi, err := os.Stat(path)
	if err != nil {
		return st, fmt.Errorf("migrate %s: %w", path, err) // never create a store to migrate it
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	start := time.Now()
	db, err := boltOpen(path, path, false, opts.Timeout, opts.NoSync, 0)
	if err != nil {
		return st, openError(path, err, time.Since(start))
	}
	src := &Store{db: db, path: path, opts: opts}
	defer db.Close()
	err = src.view(func(tx *bolt.Tx) error {
		st.From, err = schemaOf(tx, path)
		return err
	})
	st.To = st.From
	switch {
	case err != nil:
		return st, err
	case st.From > SchemaVersion:
		return st, &SchemaError{Path: path, Found: st.From, Supported: SchemaVersion}
	case st.From == SchemaVersion || st.From == 0:
		return st, nil
	}

	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".migrate-*")
	if err != nil {
		return st, fmt.Errorf("migrate %s: %w", path, err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	defer os.Remove(tmpPath) // a no-op after the rename
	dst, err := bolt.Open(tmpPath, 0o644, &bolt.Options{Timeout: time.Second, NoSync: true})
	if err != nil {
		return st, fmt.Errorf("migrate %s: %w", path, err)
	}
	c := &copier{db: dst}
	m := &migration{src: src, c: c, st: &st}
	err = src.guard(func() error {
		if err := db.View(m.copy); err != nil {
			// Not a DamagedError of the current schema, which would
			// suggest rollout check: that reads only the current one.
			return errors.New(err.Error())
		}
		return nil
	})
	if err == nil {
		err = c.commit()
	} else {
		c.rollback()
	}
	if err == nil && !opts.NoSync {
		err = dst.Sync()
	}
	if cerr := dst.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmpPath, fi.Mode().Perm())
	}
	if err == nil {
		err = os.Rename(tmpPath, path)
	}
	if err == nil && !opts.NoSync {
		err = syncFile(filepath.Dir(path))
	}
	if err != nil {
		return st, fmt.Errorf("migrate %s from schema version %d (the store is left as it was): %w", path, st.From, err)
	}
	st.To = SchemaVersion
	return st, nil
}

// migration copies a schema-1 store into the current layout.
type migration struct {
	src *Store
	c   *copier
	st  *MigrateStats
}

// put seals v under key k of the bucket at path and writes it.
func (m *migration) put(path []string, k, v []byte) error {
	m.st.Records++
	return m.c.put(path, k, seal(k, bytes.Clone(v)))
}

// copy copies every record that tx reads.
func (m *migration) copy(tx *bolt.Tx) error {
	if err := m.c.put([]string{bucketMeta}, []byte(keySchema), binary.BigEndian.AppendUint32(nil, SchemaVersion)); err != nil {
		return err
	}
	for _, name := range []string{bucketExperiments, bucketRuns, bucketData} {
		if _, err := m.c.dst([]string{name}); err != nil {
			return err
		}
	}
	if b := tx.Bucket([]byte(bucketExperiments)); b != nil {
		err := b.ForEach(func(k, v []byte) error {
			var e Experiment
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("experiment %q: decoding: %w", k, err)
			}
			if e.Configs == nil {
				configs, conflicts, err := runConfigs(tx, e, func(_, v []byte, r any) error { return json.Unmarshal(v, r) })
				if err != nil {
					return fmt.Errorf("experiment %q: %w", k, err)
				}
				if len(conflicts) == 0 && len(configs) > 0 {
					e.Configs = configs
					m.st.Configs++
					if v, err = json.Marshal(e); err != nil {
						return fmt.Errorf("experiment %q: %w", k, err)
					}
				}
			}
			return m.put([]string{bucketExperiments}, k, v)
		})
		if err != nil {
			return err
		}
	}
	if b := tx.Bucket([]byte(bucketRuns)); b != nil {
		err := b.ForEach(func(k, v []byte) error {
			var r Run
			if err := json.Unmarshal(v, &r); err != nil {
				return fmt.Errorf("run %s: decoding its record: %w", k, err)
			}
			return m.put([]string{bucketRuns}, k, v)
		})
		if err != nil {
			return err
		}
	}
	data := tx.Bucket([]byte(bucketData))
	if data == nil {
		return nil
	}
	return data.ForEachBucket(func(id []byte) error {
		rb := data.Bucket(id)
		runID := string(id)
		for _, name := range []string{bucketMetrics, bucketGroups, bucketCheckpoints} {
			if _, err := m.c.dst([]string{bucketData, runID, name}); err != nil {
				return err
			}
		}
		if b := rb.Bucket([]byte(bucketMetrics)); b != nil {
			if err := m.metrics(runID, b); err != nil {
				return err
			}
		}
		if b := rb.Bucket([]byte(bucketGroups)); b != nil {
			if err := m.groups(runID, b); err != nil {
				return err
			}
		}
		if b := rb.Bucket([]byte(bucketCheckpoints)); b != nil {
			if err := m.checkpoints(runID, b); err != nil {
				return err
			}
		}
		return nil
	})
}

// metrics copies a run's metric records after decoding each.
func (m *migration) metrics(runID string, b *bolt.Bucket) error {
	path := []string{bucketData, runID, bucketMetrics}
	return b.ForEach(func(k, v []byte) error {
		if len(k) != 8 {
			return fmt.Errorf("run %s: metric key %x: want 8 bytes", runID, k)
		}
		step := int(binary.BigEndian.Uint64(k))
		_, _, d, n, err := metricsHeader(v)
		for i := 0; err == nil && i < n; i++ {
			d.Bytes("metric name")
			d.Float64("metric value")
			err = d.Err()
		}
		if err != nil {
			return fmt.Errorf("run %s step %d: metric record: %w", runID, step, err)
		}
		return m.put(path, k, v)
	})
}

// groups copies a run's group chunks, compressing those of format 1,
// after decoding every group.
func (m *migration) groups(runID string, b *bolt.Bucket) error {
	path := []string{bucketData, runID, bucketGroups}
	codec := &m.src.codec
	var g record.Group
	return b.ForEach(func(k, v []byte) error {
		step, first, err := parseGroupKey(k)
		if err != nil {
			return fmt.Errorf("run %s: %w", runID, err)
		}
		if len(v) > 0 && v[0] == chunkFormat {
			v = codec.compressChunk(v)
			m.st.Chunks++
		}
		err = codec.eachInPayload(first, v, func(index int, enc []byte) error {
			if err := record.Decode(enc, &g); err != nil {
				return fmt.Errorf("group %d: %w", index, err)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("run %s step %d: %w", runID, step, err)
		}
		return m.put(path, k, v)
	})
}

// checkpoints copies a run's state file references and moves the
// checkpoints schema 1 stored as blobs into state files: a blob's key is
// the step and its name, and a blob over 1 MB was stored in pieces (key:
// step, name, a zero byte and the big-endian piece index) that follow
// each other in key order.
func (m *migration) checkpoints(runID string, b *bolt.Bucket) error {
	path := []string{bucketData, runID, bucketCheckpoints}
	var (
		blobs []Blob
		step  = -1
	)
	flush := func() error {
		if len(blobs) == 0 {
			return nil
		}
		ref, _, err := m.src.writeStateFile(runID, step, blobs)
		if err != nil {
			return err
		}
		raw, err := json.Marshal(ref)
		if err != nil {
			return err
		}
		m.st.Checkpoints++
		blobs = nil
		return m.put(path, refKey(step), raw)
	}
	err := b.ForEach(func(k, v []byte) error {
		if len(k) < 9 {
			return fmt.Errorf("run %s: checkpoint key %x: want a step and a name", runID, k)
		}
		s := int(binary.BigEndian.Uint64(k))
		if s != step {
			if err := flush(); err != nil {
				return err
			}
			step = s
		}
		if isRefKey(k) {
			var ref stateRef
			if err := json.Unmarshal(v, &ref); err != nil || ref.File == "" || ref.File != filepath.Base(ref.File) {
				return fmt.Errorf("run %s step %d: resume state reference %q does not decode", runID, s, v)
			}
			return m.put(path, k, v)
		}
		name, piece := k[8:], false
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name, piece = name[:i], true
		}
		if piece && len(blobs) > 0 && blobs[len(blobs)-1].Name == string(name) {
			last := &blobs[len(blobs)-1]
			last.Data = append(last.Data, v...)
			return nil
		}
		blobs = append(blobs, Blob{Name: string(name), Data: bytes.Clone(v)})
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}
