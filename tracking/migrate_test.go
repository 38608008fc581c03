package tracking

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/rollout-rl/rollout/search/record"
)

// checkpointPiece is the size of the pieces in which schema 1 stored a
// large checkpoint blob in the bucket (see pieceKey).
const checkpointPiece = 1 << 20

// pieceKey is the key of piece i of a blob stored in pieces: the step, the
// name, a zero byte (names have none) and the big-endian piece index.
func pieceKey(step int, name string, i int) []byte {
	k := append(stepKey(step), name...)
	k = append(k, 0)
	return binary.BigEndian.AppendUint32(k, uint32(i))
}

// downgrade rewrites a closed store of the current schema as schema 1
// wrote it: no record sealed, the group chunks of step 0 uncompressed
// (format 1), the checkpoint of each run as blobs in its bucket (large
// ones in pieces of checkpointPiece bytes) instead of a state file, and
// experiments without their variant configs.
func downgrade(t *testing.T, path string) {
	t.Helper()
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var codec chunkCodec
	err = db.Update(func(tx *bolt.Tx) error {
		tx.Bucket([]byte(bucketMeta)).Put([]byte(keySchema), binary.BigEndian.AppendUint32(nil, 1))
		unsealAll := func(b *bolt.Bucket, fix func(k, payload []byte) ([]byte, error)) error {
			kvs := map[string][]byte{}
			b.ForEach(func(k, v []byte) error {
				if v != nil {
					kvs[string(k)] = v
				}
				return nil
			})
			for k, v := range kvs {
				p, err := unseal([]byte(k), v)
				if err != nil {
					return err
				}
				if fix != nil {
					if p, err = fix([]byte(k), p); err != nil {
						return err
					}
				}
				if err := b.Put([]byte(k), bytes.Clone(p)); err != nil {
					return err
				}
			}
			return nil
		}
		err := unsealAll(tx.Bucket([]byte(bucketExperiments)), func(_, p []byte) ([]byte, error) {
			var e Experiment
			json.Unmarshal(p, &e)
			e.Configs = nil
			return json.Marshal(e)
		})
		if err != nil {
			return err
		}
		if err := unsealAll(tx.Bucket([]byte(bucketRuns)), nil); err != nil {
			return err
		}
		data := tx.Bucket([]byte(bucketData))
		return data.ForEachBucket(func(id []byte) error {
			rb := data.Bucket(id)
			if err := unsealAll(rb.Bucket([]byte(bucketMetrics)), nil); err != nil {
				return err
			}
			err := unsealAll(rb.Bucket([]byte(bucketGroups)), func(k, p []byte) ([]byte, error) {
				if step, _, _ := parseGroupKey(k); step != 0 {
					return p, nil
				}
				raw, err := codec.chunkPayload(p)
				return append([]byte{chunkFormat}, raw...), err
			})
			if err != nil {
				return err
			}
			cb := rb.Bucket([]byte(bucketCheckpoints))
			k, v := cb.Cursor().Last()
			if k == nil {
				return nil
			}
			step := int(binary.BigEndian.Uint64(k))
			ref, err := decodeRef(string(id), step, k, v)
			if err != nil {
				return err
			}
			blobs, err := readStateFile(path, string(id), step, ref)
			if err != nil {
				return err
			}
			cb.Delete(k)
			os.RemoveAll(StateDir(path, string(id)))
			for _, b := range blobs {
				if len(b.Data) <= checkpointPiece {
					if err := cb.Put(append(stepKey(step), b.Name...), b.Data); err != nil {
						return err
					}
					continue
				}
				for i := 0; i*checkpointPiece < len(b.Data); i++ {
					piece := b.Data[i*checkpointPiece : min((i+1)*checkpointPiece, len(b.Data))]
					if err := cb.Put(pieceKey(step, b.Name, i), piece); err != nil {
						return err
					}
				}
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
}

// storeContent is everything the reads of a store return.
type storeContent struct {
	Experiments []Experiment
	Runs        []Run
	Metrics     map[string][]StepMetrics
	Groups      map[string][]any
	Checkpoints map[string][]Blob
}

func readContent(t *testing.T, path string) storeContent {
	t.Helper()
	s, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := storeContent{Metrics: map[string][]StepMetrics{}, Groups: map[string][]any{}, Checkpoints: map[string][]Blob{}}
	if c.Experiments, err = s.Experiments(); err != nil {
		t.Fatal(err)
	}
	for i := range c.Experiments {
		c.Experiments[i].Configs = nil // filled by the migration
	}
	if c.Runs, err = s.Runs(""); err != nil {
		t.Fatal(err)
	}
	for _, r := range c.Runs {
		if c.Metrics[r.ID], err = s.Metrics(r.ID); err != nil {
			t.Fatal(err)
		}
		for step := 0; step <= r.LastStep; step++ {
			g, err := s.Groups(r.ID, step)
			if err != nil {
				t.Fatal(err)
			}
			c.Groups[r.ID] = append(c.Groups[r.ID], g)
		}
		if _, c.Checkpoints[r.ID], err = s.LatestCheckpoint(r.ID); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

// A store of schema 1 is refused by every open with an error that says to
// migrate it; Migrate upgrades it in place: every read then returns what
// the store held (checkpoints stored as blobs now in state files, group
// chunks of format 1 compressed, experiments given their runs' configs),
// check finds it intact, a writer resumes its run, and a second Migrate
// changes nothing.
func TestMigrateSchema1(t *testing.T) {
	s, path := newStore(t, Options{NoSync: true, KeepCheckpoints: 1})
	addRun(t, s, "e", "r", "flat", 1)
	addRun(t, s, "e", "q", "tree", 2)
	for _, id := range []string{"r", "q"} {
		for step := range 3 {
			rec := StepRecord{Step: step, Tokens: int64(10 * step), Metrics: map[string]float64{"loss": float64(step) / 3},
				Groups: []record.Group{flatGroup(step, 3, 20), treeGroup()}}
			if step == 1 {
				rec.Checkpoint = []Blob{{Name: "model", Data: stateBlob(step, len(id), 2*checkpointPiece+100)}, {Name: "rng", Data: []byte{byte(step)}}}
			}
			if err := s.CommitStep(id, rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	s.EndRun("r", StatusStopped, "")
	s.Close()
	want := readContent(t, path)
	downgrade(t, path)
	if files, _ := filepath.Glob(path + stateSuffix + "/*/*"); len(files) != 0 {
		t.Fatalf("state files %v left by the downgrade", files)
	}

	for _, ro := range []bool{false, true} {
		_, err := Open(path, Options{ReadOnly: ro})
		var se *SchemaError
		if !errors.As(err, &se) || se.Found != 1 || !strings.Contains(err.Error(), "rollout migrate --store "+path) {
			t.Errorf("open (read-only %v) of a schema-1 store: %v, want a SchemaError saying to migrate", ro, err)
		}
	}
	before, _ := os.ReadFile(path)
	st, err := Migrate(path, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if st.From != 1 || st.To != SchemaVersion || st.Chunks != 2 || st.Checkpoints != 2 || st.Configs != 1 || st.Records < 2+1+2*3*2 {
		t.Errorf("migration stats %+v", st)
	}
	if after, _ := os.ReadFile(path); bytes.Equal(before, after) {
		t.Fatal("the store file is unchanged")
	}
	if got := readContent(t, path); !reflect.DeepEqual(got, want) {
		t.Errorf("after the migration the store reads\n%+v\nwant\n%+v", got, want)
	}
	if res, err := Check(path, Options{}); err != nil || !res.OK() || res.Steps != 6 {
		t.Errorf("check after the migration: %v %+v", err, res)
	}
	s2, err := Open(path, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if e, err := s2.Experiment("e"); err != nil || e.Configs["flat"] != "seed: 1\n" || e.Configs["tree"] != "seed: 1\n" {
		t.Errorf("experiment after the migration: %+v %v, want the configs of its runs", e, err)
	}
	s2.Close()

	// Migrated again: already current, nothing written.
	before, _ = os.ReadFile(path)
	if st, err := Migrate(path, Options{}); err != nil || st.From != SchemaVersion || st.To != SchemaVersion {
		t.Errorf("second migration: %+v %v", st, err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("a second migration changed the file")
	}

	// A writer resumes run r from the migrated checkpoint.
	w, err := Open(path, Options{NoSync: true, KeepCheckpoints: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if r, err := w.BeginRun(Run{ID: "r", Experiment: "e"}); err != nil || r.LastStep != 2 {
		t.Fatalf("resume after the migration: %+v %v", r, err)
	}
	if err := w.CommitStep("r", StepRecord{Step: 3, Checkpoint: []Blob{{Name: "model", Data: []byte("new")}}}); err != nil {
		t.Fatal(err)
	}
	if n := len(stateFiles(t, path, "r")); n != 1 {
		t.Errorf("%d state files of run r after a new checkpoint, want 1 (the migrated one pruned)", n)
	}
}

// Migrate refuses what it cannot upgrade, leaving it as it was: a missing
// file (never created), a store of a newer schema, a schema-1 store with a
// record that does not decode.
func TestMigrateRefuses(t *testing.T) {
	if _, err := Migrate(filepath.Join(t.TempDir(), "missing.db"), Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing store: %v", err)
	}
	path := sealedStore(t)
	downgrade(t, path)
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte(bucketData)).Bucket([]byte("r")).Bucket([]byte(bucketMetrics)).Put(stepKey(1), []byte{1, 2})
	})
	db.Close()
	before, _ := os.ReadFile(path)
	_, err = Migrate(path, Options{NoSync: true})
	if err == nil || !strings.Contains(err.Error(), "run r step 1: metric record") || !strings.Contains(err.Error(), "left as it was") {
		t.Errorf("migrating a damaged record: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("a failed migration changed the store")
	}
	if m, _ := filepath.Glob(path + ".migrate-*"); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
}
