// This file: opening and closing a store, its options and schema version.

package tracking

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

// SchemaVersion is the layout version of stores this package writes and
// reads. A store with a higher version is refused; one with a lower
// version is refused too, with an error that says to migrate it (Migrate,
// rollout migrate). Version 2 seals every record with a checksum (see
// seal); version 1 stores, written before, have none and may hold
// uncompressed group chunks and checkpoints stored as blobs.
const SchemaVersion = 2

// DefaultTimeout is how long Open waits for the file lock by default.
const DefaultTimeout = 2 * time.Second

// Bucket and key names. Per-run data lives in data/<run id>/{m,g,c}.
const (
	bucketMeta        = "meta"
	bucketExperiments = "experiments"
	bucketRuns        = "runs"
	bucketData        = "data"
	bucketMetrics     = "m"
	bucketGroups      = "g"
	bucketCheckpoints = "c"
	keySchema         = "schema"
)

// ErrNotFound is matched by errors for missing experiments, runs, steps
// and checkpoints.
var ErrNotFound = errors.New("not found")

// Options configure Open.
type Options struct {
	// ReadOnly opens for reading under a shared lock. When a writer holds
	// the store, a read-only open reads a consistent snapshot copy instead
	// (see Store.Snapshot), unless NoSnapshot is set.
	ReadOnly bool
	// NoSnapshot makes a read-only open wait for the lock (up to Timeout)
	// and fail with a LockedError rather than read a snapshot.
	NoSnapshot bool
	// Scope limits what a read-only open of a store being written asks
	// the writer to copy into its snapshot (see ReadScope); nil copies
	// everything. It has no effect when no process writes the store.
	Scope *ReadScope
	// Timeout bounds the wait for the file lock; 0 means DefaultTimeout.
	Timeout time.Duration
	// KeepCheckpoints, when positive, keeps only the newest that many
	// checkpoints of a run: older ones are deleted by the commit that adds
	// a new one (their state files right after it).
	KeepCheckpoints int
	// NoSync skips fsync at commit and of resume state files (faster, not
	// crash-safe: for tests and throw-away stores only).
	NoSync bool
}

// SchemaError reports a store written by a newer version of rollout, or
// by an older one (Found < Supported: Migrate upgrades it).
type SchemaError struct {
	Path             string
	Found, Supported int
}

// Error says which version the store has, which this build reads and
// what to do.
func (e *SchemaError) Error() string {
	if e.Found < e.Supported {
		return fmt.Sprintf("store %s has schema version %d, older than the %d this rollout reads: run rollout migrate --store %s once to upgrade it in place (it adds a checksum to every record)", e.Path, e.Found, e.Supported, e.Path)
	}
	return fmt.Sprintf("store %s has schema version %d, newer than the %d this rollout reads: upgrade rollout to open it", e.Path, e.Found, e.Supported)
}

// Store is an open tracking store. Its methods are safe for concurrent use.
type Store struct {
	db       *bolt.DB
	path     string
	opts     Options
	lockInfo *LockInfo // written by this process, removed on Close
	snapshot string    // temporary copy being read, removed on Close
	holder   *LockInfo // the writer when reading a snapshot
	// writerGone is set on read-only opens that got the file lock: no
	// process writes the store, so reads show runs recorded as running as
	// interrupted.
	writerGone bool
	// scope is what a snapshot copied by the writer holds (nil: a copy of
	// the whole file, or no snapshot).
	scope *ReadScope
	// stopServe stops a writer's serveReaders goroutine; served is closed
	// when it has returned.
	stopServe chan struct{}
	served    chan struct{}
	// codec compresses and decompresses group chunks.
	codec chunkCodec
	// copyHook, when set (by tests), runs inside the read transaction of
	// each snapshot the writer copies.
	copyHook func()
	// stateHook, when set (by tests), runs in CommitSteps of a step with
	// a checkpoint at two points: "written" once its state files are
	// written, before the transaction that names them; "committed" after
	// the transaction, before the state files it pruned are deleted.
	stateHook func(point string)
}

// Open opens the store at path, creating and initialising it unless
// opts.ReadOnly. It never waits for the lock longer than opts.Timeout.
func Open(path string, opts Options) (*Store, error) {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.ReadOnly {
		return openReadOnly(path, opts)
	}
	return openWriter(path, opts)
}

// boltOpen opens the bbolt file and checks that the locked file is still
// the one at path (a compaction may have replaced it while we waited).
// Before bbolt maps the file it checks the file's size against its meta
// pages (see checkFileSize); errors name display, the store's own path
// when path is a snapshot copy.
//
// mmapSize, when positive, is bbolt's InitialMmapSize.
func boltOpen(path, display string, readOnly bool, timeout time.Duration, noSync bool, mmapSize int) (*bolt.DB, error) {
	for attempt := 0; ; attempt++ {
		var f *os.File
		start := time.Now()
		db, err := bolt.Open(path, 0o644, &bolt.Options{
			Timeout:         timeout,
			ReadOnly:        readOnly,
			NoSync:          noSync,
			InitialMmapSize: mmapSize,
			OpenFile: func(name string, flag int, perm os.FileMode) (*os.File, error) {
				var err error
				f, err = os.OpenFile(name, flag, perm)
				if err != nil {
					return nil, err
				}
				if err := checkFileSize(f, display); err != nil {
					f.Close()
					return nil, err
				}
				return f, nil
			},
		})
		if err != nil {
			return nil, err
		}
		fi, err1 := f.Stat()
		pi, err2 := os.Stat(path)
		if err1 == nil && err2 == nil && os.SameFile(fi, pi) || attempt >= 3 {
			return db, nil
		}
		db.Close()
		timeout -= time.Since(start)
		if timeout <= 0 {
			return nil, berrors.ErrTimeout
		}
	}
}

func openWriter(path string, opts Options) (*Store, error) {
	if dir := filepath.Dir(path); dir != "" {
		if _, err := os.Stat(dir); err != nil {
			return nil, fmt.Errorf("opening store %s: directory: %w", path, err)
		}
	}
	// A commit that grows the file past bbolt's memory map remaps it, and
	// remapping waits for every read transaction, such as a reader's
	// snapshot copy (serveReaders): mapping writerMmapSlack beyond the
	// file makes that rare.
	mmapSize := writerMmapSlack
	if fi, err := os.Stat(path); err == nil {
		mmapSize += int(fi.Size())
	}
	start := time.Now()
	db, err := boltOpen(path, path, false, opts.Timeout, opts.NoSync, mmapSize)
	if err != nil {
		return nil, openError(path, err, time.Since(start))
	}
	// With the map beyond the file, bbolt grows the file by AllocSize past
	// what a commit needs: keep that slack small.
	db.AllocSize = writerGrowStep
	s := &Store{db: db, path: path, opts: opts}
	err = s.update(func(tx *bolt.Tx) error {
		if err := s.initSchema(tx); err != nil {
			return err
		}
		return stopOrphanedRuns(tx)
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	info := currentProcess()
	if err := writeLockInfo(path, info); err == nil {
		s.lockInfo = &info
	}
	cleanFinalOrphans(path)
	s.cleanStateOrphans()
	s.stopServe, s.served = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.served)
		s.serveReaders(s.stopServe)
	}()
	return s, nil
}

// writerMmapSlack is how far beyond the file a writer maps it;
// writerGrowStep is the file's growth beyond what a commit needs.
const (
	writerMmapSlack = 1 << 30
	writerGrowStep  = 1 << 20
)

func openReadOnly(path string, opts Options) (*Store, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("opening store %s: %w", path, err)
	}
	if fi.Size() == 0 {
		return nil, fmt.Errorf("opening store %s: empty file (never written)", path)
	}
	wait := min(snapshotProbe, opts.Timeout)
	if opts.NoSnapshot {
		wait = opts.Timeout
	}
	start := time.Now()
	db, err := boltOpen(path, path, true, wait, false, 0)
	s := &Store{path: path, opts: opts}
	if errors.Is(err, berrors.ErrTimeout) && !opts.NoSnapshot {
		s.holder = readLockInfo(path)
		if err := s.takeSnapshot(); err != nil {
			return nil, fmt.Errorf("store %s is being written (%v) and a snapshot failed: %w", path, describeHolder(s.holder), err)
		}
		db, err = boltOpen(s.snapshot, path, true, opts.Timeout, false, 0)
		if err != nil {
			os.Remove(s.snapshot)
		}
	}
	if err != nil {
		return nil, openError(path, err, time.Since(start))
	}
	s.db = db
	// A read-only open gets the shared file lock only while no process
	// holds the exclusive one for writing: the runs it finds recorded as
	// running have no process running them.
	s.writerGone = s.snapshot == ""
	if err := s.view(s.checkSchema); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// openError turns bbolt's open errors into ones a user can act on.
func openError(path string, err error, waited time.Duration) error {
	var de *DamagedError
	switch {
	case errors.As(err, &de):
		return de
	case errors.Is(err, berrors.ErrTimeout):
		return &LockedError{Path: path, Holder: readLockInfo(path), Waited: waited}
	case errors.Is(err, berrors.ErrInvalid), errors.Is(err, berrors.ErrVersionMismatch), errors.Is(err, berrors.ErrChecksum):
		return fmt.Errorf("opening store %s: not a rollout store (bbolt file): %w", path, err)
	}
	return fmt.Errorf("opening store %s: %w", path, err)
}

// initSchema creates the buckets of an empty store, or checks the version.
func (s *Store) initSchema(tx *bolt.Tx) error {
	if tx.Bucket([]byte(bucketMeta)) == nil {
		empty := true
		tx.ForEach(func([]byte, *bolt.Bucket) error { empty = false; return nil })
		if !empty {
			return fmt.Errorf("opening store %s: a bbolt file without rollout's meta bucket: not a rollout store", s.path)
		}
		meta, err := tx.CreateBucket([]byte(bucketMeta))
		if err != nil {
			return fmt.Errorf("initialising store %s: %w", s.path, err)
		}
		if err := meta.Put([]byte(keySchema), binary.BigEndian.AppendUint32(nil, SchemaVersion)); err != nil {
			return fmt.Errorf("initialising store %s: %w", s.path, err)
		}
	}
	if err := s.checkSchema(tx); err != nil {
		return err
	}
	for _, b := range []string{bucketExperiments, bucketRuns, bucketData} {
		if _, err := tx.CreateBucketIfNotExists([]byte(b)); err != nil {
			return fmt.Errorf("initialising store %s: %w", s.path, err)
		}
	}
	return nil
}

// checkSchema refuses stores of another schema than SchemaVersion. A
// store without a meta bucket is empty (read-only opens of a fresh file).
func (s *Store) checkSchema(tx *bolt.Tx) error {
	found, err := schemaOf(tx, s.path)
	if err != nil || found == 0 {
		return err
	}
	if found != SchemaVersion {
		return &SchemaError{Path: s.path, Found: found, Supported: SchemaVersion}
	}
	return nil
}

// schemaOf returns the schema version of the store (at path, for errors)
// that tx reads; 0 for an empty file.
func schemaOf(tx *bolt.Tx, path string) (int, error) {
	meta := tx.Bucket([]byte(bucketMeta))
	if meta == nil {
		empty := true
		tx.ForEach(func([]byte, *bolt.Bucket) error { empty = false; return nil })
		if !empty {
			return 0, fmt.Errorf("opening store %s: a bbolt file without rollout's meta bucket: not a rollout store", path)
		}
		return 0, nil
	}
	v := meta.Get([]byte(keySchema))
	if len(v) != 4 {
		return 0, fmt.Errorf("opening store %s: schema version key is %d bytes, want 4: damaged store", path, len(v))
	}
	return int(binary.BigEndian.Uint32(v)), nil
}

// Path returns the path the store was opened at.
func (s *Store) Path() string { return s.path }

// ReadOnly reports whether the store was opened read-only.
func (s *Store) ReadOnly() bool { return s.opts.ReadOnly }

// Close closes the store, releasing its lock.
func (s *Store) Close() error {
	var err error
	if s.stopServe != nil {
		close(s.stopServe)
		<-s.served
		s.stopServe = nil
	}
	if s.db != nil {
		if !s.opts.ReadOnly {
			removeEmptyStateRoot(s.path) // holding the lock still
		}
		err = s.db.Close()
	}
	if s.lockInfo != nil {
		removeLockInfo(s.path, *s.lockInfo)
	}
	if s.snapshot != "" {
		os.Remove(s.snapshot)
	}
	if err != nil {
		return fmt.Errorf("closing store %s: %w", s.path, err)
	}
	return nil
}

// update runs fn in a write transaction, guarded (see guard).
func (s *Store) update(fn func(tx *bolt.Tx) error) error {
	return s.guard(func() error { return s.db.Update(fn) })
}
