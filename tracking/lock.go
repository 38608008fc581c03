// This file: the write lock's holder, recorded beside the store for the errors of processes that find it locked.

package tracking

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// ErrLocked is matched (errors.Is) by the error of an open that found the
// store locked by another process.
var ErrLocked = errors.New("store is locked by another process")

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

func describeHolder(h *LockInfo) string {
	if h == nil {
		return "writer unknown"
	}
	return "by " + h.String()
}

func lockInfoPath(path string) string { return path + ".lock-info" }

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
