package main

import (
	"fmt"
	"io"
	"os"
	"runtime/metrics"
	"runtime/pprof"
	"time"
)

// heapWatch backs the --memprofile flag: it samples the live heap (as of
// the last garbage collection) every interval and, each time it reaches a
// new high, writes a heap profile to path, so that the file ends up holding
// the profile at the run's peak (go tool pprof -sample_index=inuse_space).
// When the command ends it prints the peak to stderr.
type heapWatch struct {
	path     string
	interval time.Duration
	stop     chan struct{}
	done     chan error
	peak     uint64
}

// liveHeapMetric is the runtime's count of live heap bytes after the last
// garbage collection.
const liveHeapMetric = "/gc/heap/live:bytes"

// startHeapWatch starts watching the heap; stop it with finish.
func startHeapWatch(path string) (*heapWatch, error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--memprofile: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("--memprofile: %w", err)
	}
	w := &heapWatch{path: path, interval: 100 * time.Millisecond, stop: make(chan struct{}), done: make(chan error, 1)}
	go w.loop()
	return w, nil
}

func (w *heapWatch) loop() {
	sample := []metrics.Sample{{Name: liveHeapMetric}}
	t := time.NewTicker(w.interval)
	defer t.Stop()
	var err error
	for {
		metrics.Read(sample)
		if live := sample[0].Value.Uint64(); live > w.peak+w.peak/50 && err == nil {
			// A new high (by more than 2%, so that a slowly rising heap
			// does not rewrite the profile at every tick).
			w.peak = live
			err = w.write()
		}
		select {
		case <-w.stop:
			w.done <- err
			return
		case <-t.C:
		}
	}
}

// write replaces the profile file with the heap profile as of now.
func (w *heapWatch) write() error {
	tmp := w.path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("--memprofile: %w", err)
	}
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("--memprofile %s: %w", w.path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("--memprofile %s: %w", w.path, err)
	}
	if err := os.Rename(tmp, w.path); err != nil {
		return fmt.Errorf("--memprofile: %w", err)
	}
	return nil
}

// finish stops the watch and reports the peak live heap on stderr.
func (w *heapWatch) finish(stderr io.Writer) error {
	close(w.stop)
	err := <-w.done
	fmt.Fprintf(stderr, "memprofile: peak live heap %.1f MB, its profile in %s\n", float64(w.peak)/1e6, w.path)
	return err
}
