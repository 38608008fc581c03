package team

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// checkRun runs chunks chunks on workers workers and checks that every
// chunk ran exactly once, that worker indices are in range, and that no
// two chunks ran on the same worker index at the same time.
func checkRun(t *testing.T, workers, chunks int, work time.Duration) {
	t.Helper()
	ran := make([]atomic.Int32, chunks)
	busy := make([]atomic.Int32, max(workers, 1))
	var bad atomic.Int32
	Run(workers, chunks, func(w, c int) {
		if w < 0 || w >= max(workers, 1) {
			bad.Store(1)
			return
		}
		if busy[w].Add(1) != 1 {
			bad.Store(2)
		}
		ran[c].Add(1)
		for start := time.Now(); time.Since(start) < work; {
		}
		busy[w].Add(-1)
	})
	switch bad.Load() {
	case 1:
		t.Errorf("Run(%d, %d): a worker index out of range", workers, chunks)
	case 2:
		t.Errorf("Run(%d, %d): two chunks ran on one worker index at once", workers, chunks)
	}
	for c := range ran {
		if n := ran[c].Load(); n != 1 {
			t.Errorf("Run(%d, %d): chunk %d ran %d times", workers, chunks, c, n)
		}
	}
}

func TestRunEveryChunkOnce(t *testing.T) {
	for _, tc := range []struct {
		workers, chunks int
		work            time.Duration
	}{
		{1, 5, 0},
		{0, 3, 0},
		{2, 0, 0},
		{2, 1, 0},
		{2, 2, 0},
		{2, 64, 0},
		{4, 100, 10 * time.Microsecond},
		{8, 7, 50 * time.Microsecond},
	} {
		checkRun(t, tc.workers, tc.chunks, tc.work)
	}
}

// TestRunConcurrentAndNested runs passes from many goroutines at once, more
// than there are slots, some of them from inside another pass's chunks.
func TestRunConcurrentAndNested(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 3 * slots {
		wg.Go(func() {
			for range 20 {
				if g%3 == 0 {
					var inner atomic.Int64
					Run(2, 4, func(_, c int) {
						Run(2, 3, func(_, d int) { inner.Add(int64(10*c + d)) })
					})
					if got := inner.Load(); got != 192 { // Σ 10c+d over c < 4, d < 3
						t.Errorf("nested passes summed %d", got)
					}
					continue
				}
				checkRun(t, 2+g%3, 1+g%17, time.Duration(g%4)*time.Microsecond)
			}
		})
	}
	wg.Wait()
}

// TestHelpersPark checks that an idle process's helpers stop spinning:
// once a pass is long over, every helper sleeps.
func TestHelpersPark(t *testing.T) {
	Run(2, 8, func(int, int) {})
	h := shared()
	// A helper parks 200 µs after its last pass; the minute is only a
	// guard against a hang, far beyond what a loaded machine delays it.
	deadline := time.Now().Add(time.Minute)
	for int(h.sleepers.Load()) < cap(h.wake) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d helpers asleep a minute after the last pass", h.sleepers.Load(), cap(h.wake))
		}
		time.Sleep(time.Millisecond)
	}
}
