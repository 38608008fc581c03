package tracking

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	bolt "go.etcd.io/bbolt"

	"github.com/rollout-rl/rollout/search/record"
)

// GroupFormatter turns groups into bytes (package report's exports); each
// worker of FormatGroups has its own.
type GroupFormatter interface {
	// Begin starts a batch of consecutive groups written to buf.
	Begin(buf *bytes.Buffer)
	// Group formats one group of run r.
	Group(r *Run, step, index int, g *record.Group) error
	// End finishes the batch.
	End() error
}

// exportBatch is a run of consecutive groups formatted by one worker.
type exportBatch struct {
	run   *Run
	arena []byte
	keys  [][]byte
	raws  [][]byte
	out   bytes.Buffer
	err   error
	done  chan struct{}
	bytes int
}

// FormatGroups streams every group of the runs through formatters running
// on GOMAXPROCS workers and writes their output to w in store order,
// reading one transaction per batch of chunks: memory stays bounded
// whatever the store's size. It is one function of ~115 lines on purpose:
// the pipeline's channels, workers, ordering and error paths are easiest to
// check for leaks and deadlocks when read in one place.
func (s *Store) FormatGroups(w io.Writer, runs []Run, newFormatter func() GroupFormatter) error {
	workers := runtime.GOMAXPROCS(0)
	jobs := make(chan *exportBatch, 2*workers)
	order := make(chan *exportBatch, 4*workers)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f := newFormatter()
			var g record.Group
			for job := range jobs {
				job.out.Grow(3 * job.bytes)
				f.Begin(&job.out)
				for i, raw := range job.raws {
					step, first, err := parseGroupKey(job.keys[i])
					if err == nil {
						var fmtErr error
						err = s.codec.eachInChunk(job.keys[i], first, raw, func(index int, enc []byte) error {
							if err := record.Decode(enc, &g); err != nil {
								return fmt.Errorf("group %d: %w", index, err)
							}
							fmtErr = f.Group(job.run, step, index, &g)
							return fmtErr
						})
						if err != nil && err != fmtErr {
							err = fmt.Errorf("step %d: %w", step, err)
						}
					}
					if err != nil {
						job.err = fmt.Errorf("run %s: %w", job.run.ID, err)
						break
					}
				}
				if err := f.End(); job.err == nil && err != nil {
					job.err = err
				}
				close(job.done)
			}
		}()
	}
	// The writer drains batches in order.
	writeErr := make(chan error, 1)
	go func() {
		var err error
		for job := range order {
			<-job.done
			if err == nil {
				err = job.err
				if err == nil {
					_, err = w.Write(job.out.Bytes())
				}
				if err != nil {
					close(quit)
				}
			}
		}
		writeErr <- err
	}()

	const maxChunks, maxBytes = 64, 1 << 20
	send := func(job *exportBatch) bool {
		select {
		case order <- job:
		case <-quit:
			return false
		}
		select {
		case jobs <- job:
			return true
		case <-quit:
			close(job.done)
			return false
		}
	}
	var readErr error
	for i := range runs {
		r := &runs[i]
		job := &exportBatch{run: r, done: make(chan struct{})}
		readErr = s.view(func(tx *bolt.Tx) error {
			b, err := s.runData(tx, r.ID, bucketGroups)
			if err != nil {
				return err
			}
			return b.ForEach(func(k, v []byte) error {
				// Copy out of the transaction into the batch's arena.
				if job.arena == nil {
					job.arena = make([]byte, 0, maxBytes+len(v)+12*maxChunks)
				}
				start := len(job.arena)
				job.arena = append(job.arena, k...)
				job.arena = append(job.arena, v...)
				job.keys = append(job.keys, job.arena[start:start+len(k)])
				job.raws = append(job.raws, job.arena[start+len(k):len(job.arena)])
				job.bytes += len(v)
				if len(job.raws) >= maxChunks || job.bytes >= maxBytes {
					if !send(job) {
						return errStopped
					}
					job = &exportBatch{run: r, done: make(chan struct{})}
				}
				return nil
			})
		})
		if readErr == nil && len(job.raws) > 0 && !send(job) {
			readErr = errStopped
		}
		if readErr != nil {
			break
		}
	}
	close(jobs)
	close(order)
	wg.Wait()
	err := <-writeErr
	if err == nil && !errors.Is(readErr, errStopped) {
		err = readErr
	}
	return err
}

var errStopped = errors.New("export stopped")
