//go:build !purego

package kernel

// Register-resident loops that measure this CPU's floating-point peak and
// clock (peak_amd64.s; BenchmarkFLOPBound runs them). Nothing else calls
// them.

// fmaLoopAVX512 runs n rounds of 16 independent 512-bit fused
// multiply-adds (512 FLOP a round). It needs AVX-512F.
func fmaLoopAVX512(n int)

// fmaLoopAVX2 runs n rounds of 12 independent 256-bit fused multiply-adds
// (192 FLOP a round). It needs AVX2 and FMA.
func fmaLoopAVX2(n int)

// fmaChainAVX512 runs n rounds of 16 dependent 512-bit fused
// multiply-adds (16·n FMA latencies). It needs AVX-512F.
func fmaChainAVX512(n int)

// addChain runs n rounds of 16 dependent integer additions (16·n cycles)
// and returns 16·n.
func addChain(n int) int

// addChainAVX512 is addChain with 16 independent 512-bit fused
// multiply-adds beside each round's additions: the clock while the FMA
// units are busy. It needs AVX-512F.
func addChainAVX512(n int) int
