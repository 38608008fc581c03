// This file: resume state files, the checkpoints of unfinished runs beside the store.

package tracking

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/rollout-rl/rollout/search/record/codec"
	bolt "go.etcd.io/bbolt"
)

// A run's resume state (the blobs of StepRecord.Checkpoint) is kept in a
// file beside the store, PATH.ckpt/<run id>/<step>-<random>.bin, not in
// the bbolt file: the step's commit records only a reference to it (its
// file name, size and SHA-256) under the key step+0x00 of the run's
// checkpoint bucket (a sealed record, see seal). The file is written to a temporary name,
// fsynced, renamed and its directory fsynced before the transaction that
// names it commits; a file that no committed reference names is an orphan,
// deleted when a writer opens the store. Files of references deleted by a
// commit (KeepCheckpoints, RewindRun, EndRun of a finished run) are deleted
// after it. (Stores of schema version 1 may hold blobs in the bucket
// itself: Migrate moves them into state files.)

// stateSuffix names the directory beside a store that holds its runs'
// resume state files.
const stateSuffix = ".ckpt"

// stateMagic starts every resume state file.
const stateMagic = "rollout-state-1\n"

// stateRef is the record of a committed step naming its state file.
type stateRef struct {
	File   string `json:"file"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// refKey is the checkpoint bucket key of the state file reference of a step.
func refKey(step int) []byte { return append(stepKey(step), 0) }

// isRefKey reports whether a checkpoint bucket key is a state file
// reference (refKey): in a store of schema version 1 it may be a blob.
func isRefKey(k []byte) bool { return len(k) == 9 && k[8] == 0 }

// StateDir is the directory that holds the resume state files of run runID
// of the store at storePath: PATH.ckpt/<run id>, the id escaped as a path
// segment (and a leading dot escaped).
func StateDir(storePath, runID string) string {
	return filepath.Join(storePath+stateSuffix, escapeRunID(runID))
}

func escapeRunID(id string) string {
	e := url.PathEscape(id)
	if strings.HasPrefix(e, ".") {
		e = "%2E" + e[1:]
	}
	return e
}

// writeStateFile writes the blobs of a step of a run into a new state file
// of the run's StateDir, durably (see writeDurably), and returns its
// reference and path.
func (s *Store) writeStateFile(runID string, step int, blobs []Blob) (stateRef, string, error) {
	var rnd [8]byte
	if _, err := rand.Read(rnd[:]); err != nil {
		return stateRef{}, "", fmt.Errorf("run %s step %d: naming the resume state file: %w", runID, step, err)
	}
	ref := stateRef{File: fmt.Sprintf("%d-%s.bin", step, hex.EncodeToString(rnd[:]))}
	h := sha256.New()
	path, err := s.writeDurably(runID, ref.File, func(w io.Writer) error {
		var err error
		ref.Size, err = encodeState(io.MultiWriter(w, h), blobs)
		return err
	})
	if err != nil {
		return stateRef{}, "", fmt.Errorf("run %s step %d: %w", runID, step, err)
	}
	ref.SHA256 = hex.EncodeToString(h.Sum(nil))
	return ref, path, nil
}

// writeDurably writes a file of a run's StateDir: to a temporary name,
// fsynced, renamed to name, and the directory fsynced (without NoSync), so
// that a commit naming it afterwards never names a file a crash loses.
func (s *Store) writeDurably(runID, name string, write func(io.Writer) error) (string, error) {
	dir := StateDir(s.path, runID)
	if err := s.makeStateDir(dir); err != nil {
		return "", fmt.Errorf("resume state directory %s: %w", dir, err)
	}
	final := filepath.Join(dir, name)
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return "", fmt.Errorf("resume state file: %w", err)
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	w := bufio.NewWriterSize(tmp, 1<<20)
	err = write(w)
	if err == nil {
		err = w.Flush()
	}
	if err == nil && !s.opts.NoSync {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), final)
	}
	if err == nil && !s.opts.NoSync {
		err = syncFile(dir)
	}
	if err != nil {
		return "", fmt.Errorf("writing resume state file %s: %w", final, err)
	}
	return final, nil
}

// copyStateFile copies the state file a step of a run names in the store
// at srcPath into this store's StateDir of the run, under the same name,
// after verifying it (merge).
func (s *Store) copyStateFile(srcPath, runID string, step int, ref stateRef) error {
	path := filepath.Join(StateDir(srcPath, runID), ref.File)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("the resume state file %s of step %d is gone (a source being written replaces it at each step: merge once the run has stopped): %w", path, step, errStateFile)
	}
	if err != nil {
		return fmt.Errorf("resume state of step %d: %w", step, err)
	}
	if problem := verifyState(b, ref); problem != "" {
		return fmt.Errorf("the resume state file %s of step %d %s: %w", path, step, problem, errStateFile)
	}
	_, err = s.writeDurably(runID, ref.File, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
	return err
}

// makeStateDir creates dir and PATH.ckpt when missing, fsyncing the
// directories that name them.
func (s *Store) makeStateDir(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if s.opts.NoSync {
		return nil
	}
	parent := filepath.Dir(dir)
	if err := syncFile(parent); err != nil {
		return err
	}
	return syncFile(filepath.Dir(parent))
}

// encodeState writes the state file format: stateMagic, then per blob the
// uvarint length of its name, the name, the uvarint length of its data
// and the data. It returns the bytes written.
func encodeState(w io.Writer, blobs []Blob) (int64, error) {
	n, err := io.WriteString(w, stateMagic)
	total := int64(n)
	var hdr []byte
	for _, b := range blobs {
		if err != nil {
			break
		}
		hdr = codec.AppendString(hdr[:0], b.Name)
		hdr = binary.AppendUvarint(hdr, uint64(len(b.Data)))
		if n, err = w.Write(hdr); err == nil {
			total += int64(n)
			n, err = w.Write(b.Data)
		}
		total += int64(n)
	}
	return total, err
}

// decodeState decodes a state file's content (see encodeState).
func decodeState(b []byte) ([]Blob, error) {
	rest, ok := bytes.CutPrefix(b, []byte(stateMagic))
	if !ok {
		return nil, fmt.Errorf("not a resume state file (no %q header)", strings.TrimSpace(stateMagic))
	}
	var out []Blob
	d := codec.NewReader(rest)
	for d.Len() > 0 {
		name := d.String("blob name")
		data := d.Bytes("blob data")
		if d.Err() != nil {
			return nil, fmt.Errorf("blob %d: %w", len(out), d.Err())
		}
		out = append(out, Blob{Name: name, Data: data})
	}
	return out, nil
}

// readStateFile reads and verifies (size, SHA-256) the state file a
// committed step of a run names.
func readStateFile(storePath, runID string, step int, ref stateRef) ([]Blob, error) {
	path := filepath.Join(StateDir(storePath, runID), ref.File)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("run %s: the resume state file %s named by step %d is missing: %w", runID, path, step, errStateFile)
	}
	if err != nil {
		return nil, fmt.Errorf("run %s: resume state of step %d: %w", runID, step, err)
	}
	if problem := verifyState(b, ref); problem != "" {
		return nil, fmt.Errorf("run %s: the resume state file %s named by step %d %s: %w", runID, path, step, problem, errStateFile)
	}
	blobs, err := decodeState(b)
	if err != nil {
		return nil, fmt.Errorf("run %s: resume state file %s of step %d: %v: %w", runID, path, step, err, errStateFile)
	}
	return blobs, nil
}

// errStateFile is wrapped by the errors of a missing or damaged state file.
var errStateFile = errors.New("resume state file missing or damaged: the run cannot resume from that step")

// verifyState says what is wrong with a state file's content b against
// its reference ("" when it matches).
func verifyState(b []byte, ref stateRef) string {
	if int64(len(b)) != ref.Size {
		return fmt.Sprintf("is %d bytes, its commit says %d", len(b), ref.Size)
	}
	if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != ref.SHA256 {
		return fmt.Sprintf("has SHA-256 %x, its commit says %s", sum, ref.SHA256)
	}
	return ""
}

// decodeRef decodes a state file reference (the sealed value v of key k,
// a refKey).
func decodeRef(runID string, step int, k, v []byte) (stateRef, error) {
	var ref stateRef
	if !isRefKey(k) {
		return ref, fmt.Errorf("run %s: checkpoint key %x of step %d: not a resume state reference: %w", runID, k, step, errCorrupt)
	}
	if err := decodeJSON(k, v, &ref); err != nil {
		return ref, fmt.Errorf("run %s step %d: resume state reference: %w", runID, step, err)
	}
	if ref.File == "" || ref.File != filepath.Base(ref.File) || ref.File[0] == '.' {
		return ref, fmt.Errorf("run %s: resume state reference of step %d names %q: not a file name: %w", runID, step, ref.File, errCorrupt)
	}
	return ref, nil
}

// putStateRef records a step's state file reference, sealed.
func putStateRef(cb *bolt.Bucket, step int, ref stateRef) error {
	raw, err := json.Marshal(ref)
	if err != nil {
		return err
	}
	return putSealed(cb, refKey(step), raw)
}

// refFile is the state file a checkpoint bucket's key k and value v name,
// "" when they are not an intact reference (those name no file to delete).
func refFile(k, v []byte) string {
	var ref stateRef
	if !isRefKey(k) || decodeJSON(k, v, &ref) != nil {
		return ""
	}
	return ref.File
}

// removeStateFiles deletes state files of a run whose references a
// committed transaction deleted. A file left behind (an error, or a kill
// before this runs) is an orphan: the next writer's open deletes it.
func removeStateFiles(storePath, runID string, files []string) {
	dir := StateDir(storePath, runID)
	for _, f := range files {
		os.Remove(filepath.Join(dir, f))
	}
}

// stateFilesOf returns the state files named by a run's checkpoint bucket;
// intact is false when a record of the bucket is damaged (it may name a
// file too).
func stateFilesOf(cb *bolt.Bucket) (files []string, intact bool) {
	if cb == nil {
		return nil, true
	}
	intact = true
	cb.ForEach(func(k, v []byte) error {
		if f := refFile(k, v); f != "" {
			files = append(files, f)
		} else {
			intact = false
		}
		return nil
	})
	return files, intact
}

// cleanStateOrphans deletes from PATH.ckpt every file that no committed
// step names (a file written by a process killed before its commit, or
// whose deletion after a commit did not happen) and the directories of
// runs left without state (finished, rewound or absent). Only a writer
// calls it, holding the lock: no state file is being written.
func (s *Store) cleanStateOrphans() {
	root := s.path + stateSuffix
	dirs, err := os.ReadDir(root)
	if err != nil {
		return
	}
	named := map[string]map[string]bool{}
	keep := map[string]bool{} // directories of runs with a damaged reference
	err = s.view(func(tx *bolt.Tx) error {
		data := tx.Bucket([]byte(bucketData))
		for _, d := range dirs {
			id, err := url.PathUnescape(d.Name())
			if err != nil || data == nil || escapeRunID(id) != d.Name() {
				continue
			}
			if rb := data.Bucket([]byte(id)); rb != nil {
				set := map[string]bool{}
				files, intact := stateFilesOf(rb.Bucket([]byte(bucketCheckpoints)))
				if !intact {
					// A damaged reference: no file of the run is known
					// to be an orphan. Check reports the damage.
					keep[d.Name()] = true
					continue
				}
				for _, f := range files {
					set[f] = true
				}
				named[d.Name()] = set
			}
		}
		return nil
	})
	if err != nil {
		return // a damaged store: delete nothing
	}
	for _, d := range dirs {
		if keep[d.Name()] {
			continue
		}
		dir := filepath.Join(root, d.Name())
		set := named[d.Name()]
		if len(set) == 0 {
			os.RemoveAll(dir)
			continue
		}
		files, _ := os.ReadDir(dir)
		for _, f := range files {
			if !set[f.Name()] {
				os.RemoveAll(filepath.Join(dir, f.Name()))
			}
		}
	}
	removeEmptyStateRoot(s.path)
}

// removeEmptyStateRoot removes PATH.ckpt when no run has state left in
// it (a writer's open and close: no state file is being written then).
func removeEmptyStateRoot(storePath string) {
	os.Remove(storePath + stateSuffix) // fails, as it should, unless empty
}
