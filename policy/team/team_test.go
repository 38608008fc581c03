package team

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// checkRun runs chunks chunks on workers workers and checks that every
// chunk ran exactly once, that worker indices are in range, and that no
// two chunks ran on the same worker index at the same time.
func checkRun(t *testing.T, tm *Team, workers, chunks int, work time.Duration) {
	t.Helper()
	ran := make([]atomic.Int32, chunks)
	busy := make([]atomic.Int32, max(workers, 1))
	var bad atomic.Int32
	tm.Run(workers, chunks, func(w, c int) {
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
	tm := New(4)
	defer tm.Close()
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
		checkRun(t, tm, tc.workers, tc.chunks, tc.work)
		checkRun(t, nil, tc.workers, tc.chunks, tc.work)
	}
}

// TestRunConcurrentAndNested runs passes from many goroutines at once, more
// than there are slots, some of them from inside another pass's chunks.
func TestRunConcurrentAndNested(t *testing.T) {
	tm := New(3)
	defer tm.Close()
	var wg sync.WaitGroup
	for g := range 3 * slots {
		wg.Go(func() {
			for range 20 {
				if g%3 == 0 {
					var inner atomic.Int64
					tm.Run(2, 4, func(_, c int) {
						tm.Run(2, 3, func(_, d int) { inner.Add(int64(10*c + d)) })
					})
					if got := inner.Load(); got != 192 { // Σ 10c+d over c < 4, d < 3
						t.Errorf("nested passes summed %d", got)
					}
					continue
				}
				checkRun(t, tm, 2+g%3, 1+g%17, time.Duration(g%4)*time.Microsecond)
			}
		})
	}
	wg.Wait()
}

// waitUntil polls cond until it holds; the minute is only a guard
// against a hang, far beyond what a loaded machine delays a helper.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the last pass: %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestHelpersPark checks that an idle team's helpers stop spinning: once
// a pass is long over, every helper sleeps.
func TestHelpersPark(t *testing.T) {
	tm := New(3)
	defer tm.Close()
	tm.Run(3, 8, func(int, int) {})
	waitUntil(t, "not every helper asleep", func() bool { return int(tm.c.sleepers.Load()) == tm.c.helpers })
}

// TestClose checks that Close stops the helpers and that a closed team
// still runs passes, on its caller.
func TestClose(t *testing.T) {
	tm := New(3)
	if tm.c.running.Load() != 0 {
		t.Fatalf("helpers started before the first pass")
	}
	tm.Run(3, 8, func(int, int) {})
	tm.Close()
	tm.Close()
	waitUntil(t, "helpers still running after Close", func() bool { return tm.c.running.Load() == 0 })
	if tm.Size() != 1 {
		t.Errorf("closed team: Size() = %d, want 1", tm.Size())
	}
	checkRun(t, tm, 3, 10, 0)
}

func TestSizeAndSplit(t *testing.T) {
	if got := New(0).Size(); got != runtime.GOMAXPROCS(0) {
		t.Errorf("New(0).Size() = %d, want GOMAXPROCS %d", got, runtime.GOMAXPROCS(0))
	}
	if got := (*Team)(nil).Size(); got != 1 {
		t.Errorf("nil team: Size() = %d, want 1", got)
	}
	for _, tc := range []struct {
		size, n int
		want    []int
	}{
		{2, 2, []int{1, 1}},
		{2, 1, []int{2}},
		{5, 2, []int{3, 2}},
		{2, 3, []int{1, 1, 1}},
		{8, 3, []int{3, 3, 2}},
	} {
		var got []int
		for _, s := range New(tc.size).Split(tc.n) {
			got = append(got, s.Size())
			s.Close()
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("New(%d).Split(%d) sizes %v, want %v", tc.size, tc.n, got, tc.want)
		}
	}
}

func ExampleTeam_Run() {
	tm := New(2)
	defer tm.Close()
	squares := make([]int, 10)
	// Each chunk writes only its own element: the result is the same
	// whichever goroutine computes which chunk.
	tm.Run(tm.Size(), len(squares), func(_, c int) { squares[c] = c * c })
	fmt.Println(squares)
	// Output: [0 1 4 9 16 25 36 49 64 81]
}

func ExampleTeam_Split() {
	// Two workers that run passes at the same time on a process allowed
	// three threads: their teams keep at most three goroutines busy.
	teams := New(3).Split(2)
	for _, tm := range teams {
		fmt.Println(tm.Size())
		tm.Close()
	}
	// Output:
	// 2
	// 1
}
