// This file: reader snapshots, copied by the writer (or of the whole file) for read-only opens of a store being written.

package tracking

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/rollout-rl/rollout/tracking/internal/boltfile"
)

// ReadScope says what a read-only open of a store being written asks the
// writer to copy into its snapshot (Options.Scope): the experiment and run
// records always, and of the runs Runs selects, their metric records,
// groups and checkpoints as asked. Reading something the scope left out
// of a snapshot is an error saying so (never an empty answer).
type ReadScope struct {
	// Runs selects the runs whose data is copied: "" all, else a run id,
	// a prefix of run ids or an experiment name (as FindRuns resolves a
	// reference; every run it could name is copied).
	Runs string `json:"runs,omitempty"`
	// Metrics, Groups and Checkpoints copy the selected runs' metric
	// records, rollout groups and checkpoints.
	Metrics     bool `json:"metrics,omitempty"`
	Groups      bool `json:"groups,omitempty"`
	Checkpoints bool `json:"checkpoints,omitempty"`
}

// everything is the scope of a nil Options.Scope.
func everything() ReadScope { return ReadScope{Metrics: true, Groups: true, Checkpoints: true} }

// selects reports whether the scope copies the data of run r.
func (sc ReadScope) selects(r Run) bool {
	return sc.Runs == "" || r.Experiment == sc.Runs || strings.HasPrefix(r.ID, sc.Runs)
}

// buckets returns the names of the per-run buckets the scope copies.
func (sc ReadScope) buckets() []string {
	var out []string
	for _, b := range []struct {
		on   bool
		name string
	}{{sc.Metrics, bucketMetrics}, {sc.Groups, bucketGroups}, {sc.Checkpoints, bucketCheckpoints}} {
		if b.on {
			out = append(out, b.name)
		}
	}
	return out
}

// readRequest is a reader's request file: where to write the snapshot and
// what to copy.
type readRequest struct {
	PID   int       `json:"pid"`
	Out   string    `json:"out"`
	Scope ReadScope `json:"scope"`
}

// The reader–writer protocol's files in PATH.readers/: a reader writes
// NAME.req; the writer renames it to NAME.taken when it starts copying and
// writes NAME.done (empty, or the error) when the copy is complete.
const (
	readersSuffix = ".readers"
	reqExt        = ".req"
	takenExt      = ".taken"
	doneExt       = ".done"
	// servePoll is how often the writer looks for requests.
	servePoll = 5 * time.Millisecond
	// serveStale is the age of request files a writer deletes on open.
	serveStale = time.Hour
	// serveMax bounds a reader's wait for a copy the writer has begun.
	serveMax = 30 * time.Minute
	// copyBatch is the bytes of puts per transaction of the snapshot file.
	copyBatch = 64 << 20
)

func readersDir(path string) string { return path + readersSuffix }

// serveReaders answers the snapshot requests of readers until stop is
// closed: the writer's goroutine of a read-write open.
func (s *Store) serveReaders(stop <-chan struct{}) {
	dir := readersDir(s.path)
	cleanStaleRequests(dir)
	t := time.NewTicker(servePoll)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if name, ok := strings.CutSuffix(e.Name(), reqExt); ok {
				s.answer(filepath.Join(dir, name))
			}
		}
	}
}

// cleanStaleRequests deletes protocol files left by readers that died.
func cleanStaleRequests(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && time.Since(fi.ModTime()) > serveStale {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// answer takes one request (base: its path without extension), copies
// the snapshot it asks for and reports the outcome in base.done.
func (s *Store) answer(base string) {
	if err := os.Rename(base+reqExt, base+takenExt); err != nil {
		return // cancelled by its reader, or taken already
	}
	defer os.Remove(base + takenExt)
	var req readRequest
	b, err := os.ReadFile(base + takenExt)
	if err == nil {
		err = json.Unmarshal(b, &req)
	}
	if err == nil && (req.Out == "" || !filepath.IsAbs(req.Out)) {
		err = fmt.Errorf("request names no absolute output file (%q)", req.Out)
	}
	if err == nil {
		// Only the empty file a reader made: never another store.
		if fi, serr := os.Lstat(req.Out); serr != nil || !fi.Mode().IsRegular() || fi.Size() != 0 {
			err = fmt.Errorf("output file %s is not the empty file a reader creates", req.Out)
		}
	}
	if err == nil {
		err = s.copySnapshot(req.Out, req.Scope)
	}
	msg := ""
	if err != nil {
		msg = err.Error()
	}
	tmp := base + doneExt + ".tmp"
	if os.WriteFile(tmp, []byte(msg), 0o644) == nil {
		os.Rename(tmp, base+doneExt)
	}
}

// copySnapshot writes what the scope asks for, as of one commit, into a
// new bbolt file at out: it reads in one read transaction, which writers'
// commits do not wait for (see Options and openWriter's InitialMmapSize).
func (s *Store) copySnapshot(out string, sc ReadScope) error {
	// Mapped large from the start: a commit that remaps the file first
	// copies every value of the transaction out of the old map.
	dst, err := bolt.Open(out, 0o600, &bolt.Options{Timeout: time.Second, NoSync: true, NoFreelistSync: true, InitialMmapSize: writerMmapSlack})
	if err != nil {
		return fmt.Errorf("snapshot file %s: %w", out, err)
	}
	c := &copier{db: dst}
	err = s.view(func(tx *bolt.Tx) error {
		if s.copyHook != nil {
			s.copyHook()
		}
		for _, name := range []string{bucketMeta, bucketExperiments, bucketRuns, bucketDesigns, bucketLoads} {
			if b := tx.Bucket([]byte(name)); b != nil {
				if err := c.bucket(b, name); err != nil {
					return err
				}
			}
		}
		if err := s.copyRunData(tx, c, sc); err != nil {
			return err
		}
		// Inside the read transaction: the values put point into pages of
		// the store's map that later commits may reuse once it ends.
		return c.commit()
	})
	if err != nil {
		c.rollback()
	}
	if cerr := dst.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("snapshot of %s into %s: %w", s.path, out, err)
	}
	return nil
}

// copyRunData copies the per-run buckets the scope selects.
func (s *Store) copyRunData(tx *bolt.Tx, c *copier, sc ReadScope) error {
	runs, data := tx.Bucket([]byte(bucketRuns)), tx.Bucket([]byte(bucketData))
	if runs == nil || data == nil {
		return nil
	}
	names := sc.buckets()
	return runs.ForEach(func(k, v []byte) error {
		var r Run
		if err := decodeJSON(k, v, &r); err != nil {
			return fmt.Errorf("run %s: decoding its record: %w", k, err)
		}
		rb := data.Bucket(k)
		if !sc.selects(r) || rb == nil {
			return nil
		}
		for _, name := range names {
			if b := rb.Bucket([]byte(name)); b != nil {
				if err := c.bucket(b, bucketData, string(k), name); err != nil {
					return fmt.Errorf("run %s: %w", k, err)
				}
			}
		}
		return nil
	})
}

// copier writes buckets into a snapshot file in transactions of about
// copyBatch bytes, so that copying a large scope needs bounded memory.
type copier struct {
	db   *bolt.DB
	tx   *bolt.Tx
	size int
}

// bucket copies the key/values of src (no nested buckets) into the bucket
// at path, created as needed.
// An empty bucket is created too.
func (c *copier) bucket(src *bolt.Bucket, path ...string) error {
	dst, err := c.dst(path)
	if err != nil {
		return err
	}
	return src.ForEach(func(k, v []byte) error {
		if v == nil {
			return nil // a nested bucket: copied by its own call
		}
		if c.size >= copyBatch {
			if dst, err = c.dst(path); err != nil {
				return err
			}
		}
		c.size += len(k) + len(v)
		return dst.Put(k, v)
	})
}

// put writes one key/value into the bucket at path, created as needed.
func (c *copier) put(path []string, k, v []byte) error {
	dst, err := c.dst(path)
	if err != nil {
		return err
	}
	c.size += len(k) + len(v)
	return dst.Put(k, v)
}

// dst returns the bucket at path in the current transaction, after
// committing the current one and beginning another when it holds
// copyBatch bytes.
func (c *copier) dst(path []string) (*bolt.Bucket, error) {
	if c.tx == nil || c.size >= copyBatch {
		if err := c.commit(); err != nil {
			return nil, err
		}
		tx, err := c.db.Begin(true)
		if err != nil {
			return nil, err
		}
		c.tx, c.size = tx, 0
	}
	b, err := createPath(c.tx, path)
	if err != nil {
		return nil, err
	}
	b.FillPercent = appendFill
	return b, nil
}

// createPath returns the bucket at path, creating the buckets on the way.
func createPath(tx *bolt.Tx, path []string) (*bolt.Bucket, error) {
	b, err := tx.CreateBucketIfNotExists([]byte(path[0]))
	for _, name := range path[1:] {
		if err != nil {
			break
		}
		b, err = b.CreateBucketIfNotExists([]byte(name))
	}
	if err != nil {
		return nil, fmt.Errorf("creating bucket %s: %w", strings.Join(path, "/"), err)
	}
	return b, nil
}

func (c *copier) commit() error {
	if c.tx == nil {
		return nil
	}
	err := c.tx.Commit()
	c.tx = nil
	return err
}

func (c *copier) rollback() {
	if c.tx != nil {
		c.tx.Rollback()
		c.tx = nil
	}
}

// requestSnapshot asks the writer holding the store for a snapshot of the
// scope and waits for it: it returns the snapshot file, or errNotServed
// when no writer took the request within wait (a writer of an older
// build, which only the whole-file copy reads).
func requestSnapshot(path string, sc ReadScope, wait time.Duration, holder *LockInfo) (string, error) {
	dir := readersDir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("asking the writer for a snapshot: %w", err)
	}
	out, err := os.CreateTemp("", "rollout-snapshot-*.db")
	if err != nil {
		return "", fmt.Errorf("creating snapshot file: %w", err)
	}
	out.Close()
	ok := false
	defer func() {
		if !ok {
			os.Remove(out.Name())
		}
	}()
	b, _ := json.Marshal(readRequest{PID: os.Getpid(), Out: out.Name(), Scope: sc})
	base := filepath.Join(dir, strconv.Itoa(os.Getpid())+"-"+strings.TrimPrefix(filepath.Base(out.Name()), "rollout-snapshot-"))
	if err := os.WriteFile(base+reqExt+".tmp", b, 0o644); err != nil {
		return "", fmt.Errorf("asking the writer for a snapshot: %w", err)
	}
	if err := os.Rename(base+reqExt+".tmp", base+reqExt); err != nil {
		return "", fmt.Errorf("asking the writer for a snapshot: %w", err)
	}
	defer os.Remove(base + doneExt)
	start := time.Now()
	for {
		msg, err := os.ReadFile(base + doneExt)
		if err == nil {
			if len(msg) > 0 {
				return "", fmt.Errorf("the writer's snapshot failed: %s", msg)
			}
			ok = true
			return out.Name(), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("reading the writer's answer: %w", err)
		}
		waited := time.Since(start)
		if _, err := os.Stat(base + reqExt); err == nil && waited > wait {
			// Not taken: cancel, unless the writer takes it meanwhile.
			if os.Rename(base+reqExt, base+".cancelled") == nil {
				os.Remove(base + ".cancelled")
				return "", errNotServed
			}
		}
		if waited > serveMax || holder != nil && !processAlive(holder.PID) {
			return "", fmt.Errorf("the writer (%s) began a snapshot and did not finish it in %s", describeHolder(holder), waited.Round(time.Second))
		}
		time.Sleep(servePoll)
	}
}

// errNotServed is requestSnapshot's error when no writer took the request.
var errNotServed = errors.New("no writer answered the snapshot request")

// snapshotProbe is how long a read-only open waits for the lock before it
// reads a snapshot instead: not at all (bbolt tries once when the timeout
// is below its 50 ms retry interval), since only a writer excludes readers
// and writers hold the lock for a whole run.
const snapshotProbe = time.Nanosecond

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

// snapshotRequestPath is the file a reader creates while it copies the
// whole file of a store whose writer did not answer its snapshot request:
// writers of older builds hold their next commit until the file is gone.
func snapshotRequestPath(path string) string { return path + ".snapshot-request" }

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
