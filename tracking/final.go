package tracking

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// finalSuffix names the directory beside a store that holds the final
// policies of its finished runs (train.save_final), one checkpoint
// directory per run id.
const finalSuffix = ".final"

// FinalDir is where the final policy of run runID of the store at
// storePath is kept when its config asks for it (train.save_final): the
// checkpoint directory PATH.final/<run id>, which rollout model and
// --checkpoint take as they take any other.
func FinalDir(storePath, runID string) string {
	return filepath.Join(storePath+finalSuffix, runID)
}

// FinalDir is FinalDir of this store.
func (s *Store) FinalDir(runID string) string { return FinalDir(s.path, runID) }

// HasFinal reports whether the store keeps a final policy of the run.
func (s *Store) HasFinal(runID string) bool {
	fi, err := os.Stat(s.FinalDir(runID))
	return err == nil && fi.IsDir()
}

// SaveFinal writes the final policy of a run: write fills a new directory
// (a checkpoint: its files written and closed), which is fsynced and
// renamed to FinalDir, replacing any earlier one, so that FinalDir holds
// either no checkpoint or a whole one. Call it before EndRun marks the run
// finished: a process killed in between resumes the run, which ends at
// once and saves the same weights again.
func (s *Store) SaveFinal(runID string, write func(dir string) error) error {
	if s.opts.ReadOnly {
		return fmt.Errorf("save final policy of run %s: store %s is open read-only", runID, s.path)
	}
	if runID == "" || runID != filepath.Base(runID) || runID[0] == '.' {
		return fmt.Errorf("save final policy: run id %q is not a file name", runID)
	}
	final := s.FinalDir(runID)
	parent := filepath.Dir(final)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return fmt.Errorf("save final policy of run %s: %w", runID, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+runID+".tmp-")
	if err != nil {
		return fmt.Errorf("save final policy of run %s: %w", runID, err)
	}
	defer os.RemoveAll(tmp) // a no-op after the rename
	if err := write(tmp); err != nil {
		return fmt.Errorf("save final policy of run %s into %s: %w", runID, tmp, err)
	}
	if err := syncDir(tmp, true); err != nil {
		return fmt.Errorf("save final policy of run %s: %w", runID, err)
	}
	old := ""
	if _, err := os.Stat(final); err == nil {
		old = final + ".old-" + strconv.Itoa(os.Getpid())
		if err := os.Rename(final, old); err != nil {
			return fmt.Errorf("save final policy of run %s: moving the earlier one aside: %w", runID, err)
		}
	}
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("save final policy of run %s: %w", runID, err)
	}
	if old != "" {
		os.RemoveAll(old)
	}
	if err := syncDir(parent, false); err != nil {
		return fmt.Errorf("save final policy of run %s: %w", runID, err)
	}
	return nil
}

// cleanFinalOrphans deletes what a SaveFinal killed midway left in
// PATH.final: its temporary directories and earlier policies moved aside.
// Only a writer calls it, holding the lock: no SaveFinal is under way.
func cleanFinalOrphans(storePath string) {
	dir := storePath + finalSuffix
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if n := e.Name(); strings.HasPrefix(n, ".") && strings.Contains(n, ".tmp-") || strings.Contains(n, ".old-") {
			os.RemoveAll(filepath.Join(dir, n))
		}
	}
}

// syncDir fsyncs a directory and, when files, every regular file in it.
func syncDir(dir string, files bool) error {
	if files {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if e.Type().IsRegular() {
				if err := syncFile(filepath.Join(dir, e.Name())); err != nil {
					return err
				}
			}
		}
	}
	return syncFile(dir)
}

func syncFile(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsync %s: %w", path, err)
	}
	return nil
}

// copyFinal copies the final policy of a run from the store at srcPath
// into this store's FinalDir, when the source has one (merge).
func (s *Store) copyFinal(srcPath, runID string) error {
	src := FinalDir(srcPath, runID)
	entries, err := os.ReadDir(src)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("final policy of run %s: %w", runID, err)
	}
	return s.SaveFinal(runID, func(dir string) error {
		for _, e := range entries {
			if !e.Type().IsRegular() {
				continue
			}
			if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(dir, e.Name())); err != nil {
				return err
			}
		}
		return nil
	})
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copying %s: %w", from, err)
	}
	return out.Close()
}
