//go:build !purego

package kernel

import (
	"fmt"
	"sync"
	"testing"

	"golang.org/x/sys/cpu"

	"github.com/rollout-rl/rollout/policy/cputime"
)

// peakRounds is the rounds of one call of a peak loop (a fraction of a
// millisecond): the runtime does not preempt an assembly loop, so each
// call must be short enough not to hold up a stop of the world.
const peakRounds = 1 << 16

// BenchmarkFLOPBound measures this machine's float32 FLOP bound and clock
// with register-resident loops (peak_amd64.s), on 1 and on 2 goroutines:
//
//   - avx512, avx2: independent fused multiply-adds on 512-bit (16
//     chains) and 256-bit (12 chains) registers. GFLOP/s is the FLOPs of
//     all goroutines over wall time, the machine's peak when they have
//     the cores to themselves; GFLOP/s-cpu is over the process's CPU time,
//     the peak of one busy vCPU. If two goroutines give twice one's
//     GFLOP/s (the same GFLOP/s-cpu), the vCPUs are two cores; if they
//     give about one's (half the GFLOP/s-cpu), they are two hyperthreads
//     of one core sharing its FMA units.
//   - clock: a chain of dependent integer additions, one a cycle; GHz is
//     cycles per CPU-second. clock_avx512 is the same chain beside 512-bit
//     FMAs, the clock while the FMA units are busy. FLOP per cycle of a
//     core is GFLOP/s-cpu over that GHz (64 for two 512-bit FMA units).
//   - fma_latency: a chain of dependent 512-bit FMAs; ns/fma over the
//     clock's cycle time is the FMA latency in cycles.
//
// The loops touch no memory, so only other processes on the same cores
// disturb them: note the load (uptime) beside the figures.
func BenchmarkFLOPBound(b *testing.B) {
	avx512 := cpu.X86.HasAVX512F
	avx2 := cpu.X86.HasAVX2 && cpu.X86.HasFMA
	for _, l := range []struct {
		name string
		ok   bool
		run  func(n int)
		// Per round: FLOPs of a throughput loop, cycles of a clock loop,
		// dependent FMAs of a latency loop (one of the three).
		flops, cycles, chain float64
	}{
		{name: "avx512", ok: avx512, run: fmaLoopAVX512, flops: 16 * 16 * 2},
		{name: "avx2", ok: avx2, run: fmaLoopAVX2, flops: 12 * 8 * 2},
		{name: "clock", ok: true, run: func(n int) { addChain(n) }, cycles: 16},
		{name: "clock_avx512", ok: avx512, run: func(n int) { addChainAVX512(n) }, cycles: 16},
		{name: "fma_latency", ok: avx512, run: fmaChainAVX512, chain: 16},
	} {
		for _, goroutines := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/%d", l.name, goroutines), func(b *testing.B) {
				if !l.ok {
					b.Skip("the CPU lacks the instructions")
				}
				b.ResetTimer()
				cpu0 := cputime.Process()
				var wg sync.WaitGroup
				for range goroutines {
					wg.Go(func() {
						for range b.N {
							l.run(peakRounds)
						}
					})
				}
				wg.Wait()
				wall := b.Elapsed().Seconds()
				cpuSec := (cputime.Process() - cpu0).Seconds()
				rounds := float64(goroutines) * float64(b.N) * peakRounds
				switch {
				case l.flops > 0:
					b.ReportMetric(l.flops*rounds/wall/1e9, "GFLOP/s")
					if cpuSec > 0 {
						b.ReportMetric(l.flops*rounds/cpuSec/1e9, "GFLOP/s-cpu")
					}
				case l.cycles > 0 && cpuSec > 0:
					b.ReportMetric(l.cycles*rounds/cpuSec/1e9, "GHz")
				case l.chain > 0 && cpuSec > 0:
					b.ReportMetric(cpuSec*1e9/(l.chain*rounds), "ns/fma")
				}
			})
		}
	}
}

// The peak loops must run and return what they count: a check that the
// assembly runs on this CPU at all, so that the benchmark's figures mean
// something.
func TestPeakLoops(t *testing.T) {
	for _, n := range []int{0, 1, 3} {
		if got := addChain(n); got != 16*n {
			t.Errorf("addChain(%d) = %d, want %d", n, got, 16*n)
		}
		if !cpu.X86.HasAVX512F {
			continue
		}
		if got := addChainAVX512(n); got != 16*n {
			t.Errorf("addChainAVX512(%d) = %d, want %d", n, got, 16*n)
		}
		fmaLoopAVX512(n)
		fmaChainAVX512(n)
	}
	if cpu.X86.HasAVX2 && cpu.X86.HasFMA {
		fmaLoopAVX2(3)
	}
}
