// Package dircache keeps artifacts that are expensive to make (pretrained
// base policies, reward models) in directories named by the hash of
// everything they depend on, each with a summary.json beside the files. An
// entry is built in a temporary directory and renamed into place, so a
// crash never leaves a half-written entry under its final name.
package dircache

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Key hashes the JSON encoding of v into a short hex string.
func Key(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("cache key: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8]), nil
}

// Get returns the entry root/kind/name-key. If it exists, its summary.json
// is decoded into the returned summary and cached is true. Otherwise build
// writes the entry's files into the directory it is given and returns the
// summary, which Get saves beside them before moving the entry into place.
//
// Processes may share a cache (the shards of a run on a cluster): each
// builds in a temporary directory of its own, and when another process
// moved the same entry into place first, Get returns that one (its builds
// are deterministic, so the entries are the same) and discards its own.
func Get[S any](root, kind, name, key string, build func(dir string) (S, error)) (dir string, summary S, cached bool, err error) {
	dir = filepath.Join(root, kind, name+"-"+key)
	if summary, ok, err := read[S](dir, kind); err != nil {
		return "", summary, false, err
	} else if ok {
		return dir, summary, true, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", summary, false, fmt.Errorf("%s cache: %w", kind, err)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".tmp-")
	if err != nil {
		return "", summary, false, fmt.Errorf("%s cache: %w", kind, err)
	}
	defer os.RemoveAll(tmp) // nothing left once it is renamed
	if summary, err = build(tmp); err != nil {
		return "", summary, false, err
	}
	b, err := json.MarshalIndent(summary, "", "  ")
	if err != nil {
		return "", summary, false, fmt.Errorf("%s cache: %w", kind, err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "summary.json"), append(b, '\n'), 0o644); err != nil {
		return "", summary, false, fmt.Errorf("%s cache: %w", kind, err)
	}
	for attempt := 0; ; attempt++ {
		err := os.Rename(tmp, dir)
		if err == nil {
			break
		}
		// Another process finished the entry first: use it.
		if theirs, ok, rerr := read[S](dir, kind); rerr != nil {
			return "", summary, false, rerr
		} else if ok {
			return dir, theirs, false, nil
		}
		if attempt == 10 {
			return "", summary, false, fmt.Errorf("%s cache: %w", kind, err)
		}
		// A directory without a summary is no entry (left by an older
		// version), or a finished entry another builder has moved aside for
		// a moment (below): wait, look again, then move it aside, atomically,
		// so that no other builder's finished entry is ever removed, and try
		// again. The waits grow, so builders racing here stop chasing each
		// other.
		time.Sleep(time.Duration(1+attempt*attempt) * time.Millisecond)
		if theirs, ok, rerr := read[S](dir, kind); rerr != nil {
			return "", summary, false, rerr
		} else if ok {
			return dir, theirs, false, nil
		}
		clearStale[S](dir, kind)
	}
	return dir, summary, false, nil
}

// clearStale moves the summary-less directory dir aside and removes it.
// If dir became a finished entry in the meantime (another builder renamed
// its entry there), it is put back.
func clearStale[S any](dir, kind string) {
	trash, err := os.MkdirTemp(filepath.Dir(dir), filepath.Base(dir)+".old-")
	if err != nil {
		return
	}
	defer os.RemoveAll(trash)
	// os.Rename refuses an existing directory as its target: free the
	// unique name first.
	os.Remove(trash)
	if os.Rename(dir, trash) != nil {
		return
	}
	if _, ok, _ := read[S](trash, kind); ok {
		os.Rename(trash, dir) // fails only if yet another entry is there: keep that one
	}
}

// read decodes the summary of the entry dir; ok is false when the entry
// does not exist.
func read[S any](dir, kind string) (summary S, ok bool, err error) {
	raw, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if errors.Is(err, os.ErrNotExist) {
		return summary, false, nil
	}
	if err != nil {
		return summary, false, fmt.Errorf("%s cache: %w", kind, err)
	}
	if err := json.Unmarshal(raw, &summary); err != nil {
		return summary, false, fmt.Errorf("%s cache %s: %w", kind, dir, err)
	}
	return summary, true, nil
}
