package cputime

import (
	"runtime"
	"testing"
)

// Busy work shows in the process's CPU time, which never goes backwards.
func TestProcessCountsWork(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("no CPU time on", runtime.GOOS)
	}
	before := Process()
	x := uint64(1)
	for round := 0; Process() <= before; round++ {
		if round == 1000 {
			t.Fatalf("CPU time stayed at %v over 10⁹ multiply-adds", before)
		}
		for i := 0; i < 1_000_000; i++ {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	if x == 0 {
		t.Log(x) // keeps the loop
	}
}
