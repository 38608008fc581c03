package tracking

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"

	"github.com/rollout-rl/rollout/search/record"
	"github.com/rollout-rl/rollout/tracking/internal/boltfile"
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

// snapshotProbe is how long a read-only open waits for the lock before it
// reads a snapshot instead: not at all (bbolt tries once when the timeout
// is below its 50 ms retry interval), since only a writer excludes readers
// and writers hold the lock for a whole run.
const snapshotProbe = time.Nanosecond

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

// ErrLocked is matched (errors.Is) by the error of an open that found the
// store locked by another process.
var ErrLocked = errors.New("store is locked by another process")

// ErrNotFound is matched by errors for missing experiments, runs, steps
// and checkpoints.
var ErrNotFound = errors.New("not found")

// ErrDamaged is matched (errors.Is) by the errors of operations that found
// the store's file damaged (a *DamagedError).
var ErrDamaged = errors.New("store file is damaged")

// DamagedError reports a store file that cannot be read safely: shorter
// than its last commit needs (truncated), or with pages bbolt refuses.
type DamagedError struct {
	Path string
	// Problem says what is wrong, e.g. "the file is 4096 bytes, its last
	// commit needs 1048576 (256 pages of 4096 bytes): truncated".
	Problem string
	// Err is the error that revealed the damage, if any.
	Err error
}

// Error names the file, says what is damaged and what to do.
func (e *DamagedError) Error() string {
	return fmt.Sprintf("store %s is damaged: %s: restore it from a copy (rollout check --store %s lists what is damaged)", e.Path, e.Problem, e.Path)
}

// Is makes errors.Is(err, ErrDamaged) true.
func (e *DamagedError) Is(target error) bool { return target == ErrDamaged }

// Unwrap returns the error that revealed the damage.
func (e *DamagedError) Unwrap() error { return e.Err }

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

// LockInfo says which process holds a store open for writing. The writer
// leaves it in PATH.lock-info while it holds the lock.
type LockInfo struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Command string    `json:"command"`
	Since   time.Time `json:"since"`
}

// String describes the holder, e.g. "pid 42 on host a (rollout run q.yaml) since 12:00:01 UTC".
func (l LockInfo) String() string {
	return fmt.Sprintf("pid %d on host %s (%s) since %s", l.PID, l.Host, l.Command, l.Since.UTC().Format(time.DateTime+" MST"))
}

// LockedError is returned when another process holds the store's lock.
type LockedError struct {
	Path string
	// Holder describes the process holding the lock, nil if unknown.
	Holder *LockInfo
	Waited time.Duration
}

// Error names the store, the holder when known, and the time waited.
func (e *LockedError) Error() string {
	who := "another process (no writer recorded in " + filepath.Base(lockInfoPath(e.Path)) + ": likely a reading command such as report or export)"
	if e.Holder != nil {
		who = e.Holder.String()
	}
	return fmt.Sprintf("store %s is locked by %s; gave up after %s: wait for that process to finish or stop it", e.Path, who, e.Waited.Round(time.Millisecond))
}

// Is makes errors.Is(err, ErrLocked) true.
func (e *LockedError) Is(target error) bool { return target == ErrLocked }

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

func describeHolder(h *LockInfo) string {
	if h == nil {
		return "writer unknown"
	}
	return "by " + h.String()
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

// Snapshot reports whether the store is a snapshot copy read while another
// process was writing, and who that writer is (nil if unknown). A snapshot
// holds every step committed when it was taken.
func (s *Store) Snapshot() (isSnapshot bool, writer *LockInfo) {
	return s.snapshot != "", s.holder
}

// takeSnapshot asks the writer for a snapshot of Options.Scope (see
// serveReaders). When the writer does not answer (an older build, which
// holds its next commit meanwhile), cannot be asked (a directory this user
// cannot write) or fails (a writer of another user cannot write this
// user's file), the whole file is copied instead.
func (s *Store) takeSnapshot() error {
	sc := everything()
	if s.opts.Scope != nil {
		sc = *s.opts.Scope
	}
	var err error
	s.snapshot, err = requestSnapshot(s.path, sc, s.opts.Timeout, s.holder)
	if err == nil {
		s.scope = &sc
		return nil
	}
	req := snapshotRequestPath(s.path)
	if werr := os.WriteFile(req, []byte(strconv.Itoa(os.Getpid())), 0o644); werr == nil {
		defer os.Remove(req)
	}
	var ferr error
	s.snapshot, ferr = snapshotCopy(s.path, s.opts.Timeout)
	switch {
	case ferr == nil:
		return nil
	case errors.Is(err, errNotServed):
		return ferr
	}
	return fmt.Errorf("%w; then copying the whole file: %v", err, ferr)
}

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

func lockInfoPath(path string) string { return path + ".lock-info" }

// snapshotRequestPath is the file a reader creates while it copies the
// whole file of a store whose writer did not answer its snapshot request:
// writers of older builds hold their next commit until the file is gone.
func snapshotRequestPath(path string) string { return path + ".snapshot-request" }

func currentProcess() LockInfo {
	host, _ := os.Hostname()
	args := make([]string, len(os.Args))
	for i, a := range os.Args {
		if i == 0 {
			a = filepath.Base(a)
		}
		if strings.ContainsAny(a, " \t\"'") {
			a = fmt.Sprintf("%q", a)
		}
		args[i] = a
	}
	return LockInfo{PID: os.Getpid(), Host: host, Command: strings.Join(args, " "), Since: time.Now().UTC().Truncate(time.Second)}
}

// writeLockInfo writes the sidecar atomically (temp file + rename).
func writeLockInfo(path string, info LockInfo) error {
	b, err := json.Marshal(info)
	if err != nil {
		return err
	}
	tmp := fmt.Sprintf("%s.%d.tmp", lockInfoPath(path), info.PID)
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, lockInfoPath(path))
}

func readLockInfo(path string) *LockInfo {
	b, err := os.ReadFile(lockInfoPath(path))
	if err != nil {
		return nil
	}
	var info LockInfo
	if json.Unmarshal(b, &info) != nil || info.PID == 0 {
		return nil
	}
	if host, _ := os.Hostname(); info.Host == host && !processAlive(info.PID) {
		return nil // left by a writer that was killed
	}
	return &info
}

// processAlive reports whether a process with that id exists on this host
// (true when it cannot tell).
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	return !errors.Is(p.Signal(syscall.Signal(0)), os.ErrProcessDone)
}

// removeLockInfo removes the sidecar if it is still ours.
func removeLockInfo(path string, info LockInfo) {
	if cur := readLockInfo(path); cur != nil && cur.PID == info.PID && cur.Since.Equal(info.Since) && cur.Host == info.Host {
		os.Remove(lockInfoPath(path))
	}
}

// snapshotCopy copies a store that a writer may be committing to. bbolt
// never overwrites a page reachable from the newest committed meta page
// and each commit rewrites a meta page with a higher transaction id, so a
// copy during which both meta pages stayed byte-identical holds a
// consistent store as of that commit. It retries until that holds or the
// time budget is spent (at least three attempts). The caller's snapshot
// request makes the writer hold its commits meanwhile, so the second
// attempt succeeds unless the writer is an older build or stuck mid-commit.
func snapshotCopy(path string, budget time.Duration) (string, error) {
	src, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer src.Close()
	dst, err := os.CreateTemp("", "rollout-snapshot-*.db")
	if err != nil {
		return "", fmt.Errorf("creating snapshot file: %w", err)
	}
	defer dst.Close()
	deadline := time.Now().Add(budget)
	attempts := 0
	for ; attempts < 3 || time.Now().Before(deadline); attempts++ {
		before, err := boltfile.ReadMetaPages(src)
		if err != nil {
			os.Remove(dst.Name())
			return "", err
		}
		if _, err := dst.Seek(0, io.SeekStart); err == nil {
			err = dst.Truncate(0)
		}
		if err == nil {
			_, err = src.Seek(0, io.SeekStart)
		}
		if err == nil {
			// File to file: Linux copies in the kernel (copy_file_range),
			// as a reflink on file systems that have them.
			_, err = io.Copy(dst, src)
		}
		if err != nil {
			os.Remove(dst.Name())
			return "", fmt.Errorf("copying snapshot: %w", err)
		}
		after, err := boltfile.ReadMetaPages(src)
		if err == nil && bytes.Equal(before, after) {
			return dst.Name(), nil
		}
	}
	os.Remove(dst.Name())
	return "", fmt.Errorf("the writer committed during each of %d copies in %s", attempts, budget)
}

// checkFileSize refuses a bbolt file shorter than its newest valid meta
// page says it is (see boltfile.CheckSize): bbolt would fault reading past
// its end. Errors name display.
func checkFileSize(f *os.File, display string) error {
	err := boltfile.CheckSize(f)
	var (
		tr *boltfile.Truncated
		dm *boltfile.Damaged
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &tr):
		return &DamagedError{Path: display, Problem: fmt.Sprintf("the file is %d bytes, its last commit needs %d (%d pages of %d bytes): truncated", tr.Size, tr.Need, tr.Meta.PGID, tr.Meta.PageSize), Err: tr}
	case errors.As(err, &dm):
		return &DamagedError{Path: display, Problem: dm.Problem}
	case errors.Is(err, boltfile.ErrNotBolt):
		return berrors.ErrInvalid // openError says: not a rollout store
	}
	return fmt.Errorf("opening store %s: %w", display, err)
}

// update runs fn in a write transaction, guarded (see guard).
func (s *Store) update(fn func(tx *bolt.Tx) error) error {
	return s.guard(func() error { return s.db.Update(fn) })
}

// guard runs a bbolt transaction and turns the panics of a damaged file
// into errors: bbolt's page assertions (e.g. "Page expected to be: 6654,
// but self identifies as 0") and, with debug.SetPanicOnFault on for this
// goroutine meanwhile, memory faults reading the mapped file. bbolt rolls
// the transaction back as the panic unwinds. Panics raised outside bbolt
// (in fn's own code) become errors too, saying that the cause is either
// damage or a bug.
func (s *Store) guard(tx func() error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = s.panicError(p, panicInBolt(p))
		}
	}()
	return s.recordError(tx())
}

// recordError makes a record that does not decode a DamagedError: rollout
// wrote it, so only damage makes it unreadable.
func (s *Store) recordError(err error) error {
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
		de  *DamagedError
	)
	switch {
	case err == nil, errors.As(err, &de):
		return err
	case errors.Is(err, ErrChecksum), errors.Is(err, errTruncated), errors.Is(err, errCorrupt), errors.Is(err, record.ErrTruncated), errors.As(err, &syn), errors.As(err, &typ):
		return &DamagedError{Path: s.path, Problem: err.Error(), Err: err}
	}
	return err
}

// panicError describes a recovered panic of a transaction on s.
func (s *Store) panicError(p any, inBolt bool) error {
	if inBolt {
		return &DamagedError{Path: s.path, Problem: fmt.Sprintf("bbolt: %v", p), Err: fmt.Errorf("panic: %v", p)}
	}
	return fmt.Errorf("store %s: reading failed (panic: %v): the file may be damaged (rollout check --store %s tells) or this is a bug", s.path, p, s.path)
}

// panicInBolt reports whether the panic being recovered is a memory fault
// or was raised by bbolt's code: it is called by the deferred function
// while the panicking frames are still on the stack.
func panicInBolt(p any) bool {
	if f, ok := p.(interface{ Addr() uintptr }); ok && f != nil {
		return true // a fault (SetPanicOnFault): reading the mapped file
	}
	pcs := make([]uintptr, 64)
	frames := runtime.CallersFrames(pcs[:runtime.Callers(2, pcs)])
	afterPanic := false
	for {
		fr, more := frames.Next()
		switch {
		case fr.Function == "runtime.gopanic":
			afterPanic = true
		case afterPanic && !strings.HasPrefix(fr.Function, "runtime."):
			return strings.HasPrefix(fr.Function, "go.etcd.io/bbolt")
		}
		if !more {
			return false
		}
	}
}
