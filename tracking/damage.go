// This file: damage a read finds (truncation, bbolt's panics and faults, records failing their checksum or decoding) as a *DamagedError.

package tracking

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strings"

	berrors "go.etcd.io/bbolt/errors"

	"github.com/rollout-rl/rollout/search/record/codec"
	"github.com/rollout-rl/rollout/tracking/internal/boltfile"
)

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
	case errors.Is(err, ErrChecksum), errors.Is(err, errTruncated), errors.Is(err, errCorrupt), errors.Is(err, codec.ErrTruncated), errors.As(err, &syn), errors.As(err, &typ):
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
