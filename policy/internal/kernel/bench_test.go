package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/rollout-rl/rollout/policy/cputime"

	"github.com/rollout-rl/rollout/policy/team"
)

// benchProduct times f on one shape and reports GFLOP/s (2·m·n·k per call)
// over wall time and, where the platform tells, over the CPU time of the
// process ("GFLOP/s-cpu": the throughput per busy core, less disturbed when
// other processes share the machine).
func benchProduct(b *testing.B, f func(t *team.Team, c, a, bb []float32, m, n, k int, acc bool), sh shape, aLen, bLen int) {
	r := rand.New(rand.NewPCG(1, 1))
	a, bb, c := randSlice(r, aLen), randSlice(r, bLen), make([]float32, sh.m*sh.n)
	b.ResetTimer()
	cpu0 := cputime.Process()
	for b.Loop() {
		f(testTeam, c, a, bb, sh.m, sh.n, sh.k, false)
	}
	flops := 2 * float64(sh.m*sh.n*sh.k) * float64(b.N)
	b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	if cpu := cputime.Process() - cpu0; cpu > 0 {
		b.ReportMetric(flops/cpu.Seconds()/1e9, "GFLOP/s-cpu")
	}
}

func shapeName(sh shape) string { return fmt.Sprintf("%dx%dx%d", sh.m, sh.n, sh.k) }

// BenchmarkMatMulNT: (m×k)·(n×k)ᵀ at the model's inference and training shapes.
func BenchmarkMatMulNT(b *testing.B) {
	for _, sh := range []shape{
		{1, 384, 128}, {1, 128, 384}, {1, 768, 256}, {1, 64, 128}, {2, 384, 128}, {3, 384, 128}, {8, 384, 128},
		{64, 384, 128}, {64, 128, 384}, {64, 768, 256}, {64, 256, 768}, {32, 768, 256}, {32, 256, 768}, {32, 256, 256},
		{4096, 384, 128}, {4096, 128, 384}, {8192, 768, 256},
	} {
		b.Run(shapeName(sh), func(b *testing.B) {
			benchProduct(b, MatMulNT, sh, sh.m*sh.k, sh.n*sh.k)
		})
	}
}

// trainingShapes are the backward products of a Linear [out, in] over T
// tokens: dX[T×in] = dY[T×out]·W[out×in] (NN) and dW[out×in] = dYᵀ·X (TN).
var trainingShapes = []shape{
	{4096, 128, 384}, {4096, 384, 128}, {4096, 128, 128}, {8192, 256, 768}, {8192, 768, 256},
}

func BenchmarkMatMulNN(b *testing.B) {
	for _, sh := range trainingShapes {
		b.Run(shapeName(sh), func(b *testing.B) {
			benchProduct(b, MatMulNN, sh, sh.m*sh.k, sh.k*sh.n)
		})
	}
}

func BenchmarkMatMulTN(b *testing.B) {
	// dW[out×in] = dY[T×out]ᵀ·X[T×in]: m = out, n = in, k = T.
	for _, sh := range []shape{{384, 128, 4096}, {128, 384, 4096}, {128, 128, 4096}, {768, 256, 8192}, {256, 768, 8192}} {
		b.Run(shapeName(sh), func(b *testing.B) {
			benchProduct(b, MatMulTN, sh, sh.k*sh.m, sh.k*sh.n)
		})
	}
}

func BenchmarkDot(b *testing.B) {
	for _, n := range []int{128, 384} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			x, y := randSlice(r, n), randSlice(r, n)
			var s float32
			for b.Loop() {
				s += Dot(x, y)
			}
			b.ReportMetric(2*float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

func BenchmarkAxpy(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	x, y := randSlice(r, 4096), randSlice(r, 4096)
	for b.Loop() {
		Axpy(0.5, x, y)
	}
	b.ReportMetric(2*4096*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
}

// BenchmarkMatMulNTWorkers times the active MatMulNT at a fixed goroutine
// count, to choose the size from which splitting pays (parallelFlops).
func BenchmarkMatMulNTWorkers(b *testing.B) {
	for _, sh := range []shape{{1, 768, 256}, {1, 2048, 256}, {16, 384, 128}, {64, 384, 128}, {64, 768, 256}, {256, 384, 128}, {4096, 384, 128}} {
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/w%d", shapeName(sh), w), func(b *testing.B) {
				benchProduct(b, func(t *team.Team, c, a, bb []float32, m, n, k int, acc bool) {
					run(t, active.nt, c, a, k, k, bb, k, m, n, k, acc, w)
				}, sh, sh.m*sh.k, sh.n*sh.k)
			})
		}
	}
}

// BenchmarkSiLUMul compares the kernel with a plain loop over math.Exp at
// the tiny model's batch-64 hidden activation (64×384).
func BenchmarkSiLUMul(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	const n = 64 * 384
	gate, up, dst := randSlice(r, n), randSlice(r, n), make([]float32, n)
	b.Run("kernel", func(b *testing.B) {
		for b.Loop() {
			SiLUMul(dst, gate, up)
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
	})
	b.Run("math.Exp", func(b *testing.B) {
		for b.Loop() {
			for i, g := range gate {
				dst[i] = g / (1 + float32(math.Exp(float64(-g)))) * up[i]
			}
		}
		b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "Gelem/s")
	})
}

func BenchmarkSoftmaxEntropy(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	logits, p := randSlice(r, 64), make([]float32, 64)
	for b.Loop() {
		SoftmaxEntropy(p, logits)
	}
}

// BenchmarkAttentionScores compares one strided product with a loop of Dot
// calls for the scores of one query head (hd 32) against 64 cached keys in
// a cache of row width 128 (the tiny model).
func BenchmarkAttentionScores(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	const n, hd, dim = 64, 32, 128
	q, keys, scores := randSlice(r, hd), randSlice(r, n*dim), make([]float32, n)
	b.Run("strided", func(b *testing.B) {
		for b.Loop() {
			MatMulNTStrided(scores, n, q, hd, keys, dim, 1, n, hd, false)
		}
	})
	b.Run("dot-loop", func(b *testing.B) {
		for b.Loop() {
			for j := range n {
				scores[j] = Dot(q, keys[j*dim:j*dim+hd])
			}
		}
	})
}

// BenchmarkAttentionValues compares one strided vector-matrix product with a
// loop of Axpy calls for the output of one head (hd 32) over 64 cached
// values in a cache of row width 128, and all heads' outputs by per-head
// products with one AttendValues call.
func BenchmarkAttentionValues(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	const n, hd, dim = 64, 32, 128
	probs, values, out := randSlice(r, n), randSlice(r, n*dim), make([]float32, hd)
	b.Run("strided", func(b *testing.B) {
		for b.Loop() {
			MatMulNNStrided(out, hd, probs, n, values, dim, 1, hd, n, false)
		}
	})
	b.Run("axpy-loop", func(b *testing.B) {
		for b.Loop() {
			clear(out)
			for j := range n {
				Axpy(probs[j], values[j*dim:j*dim+hd], out)
			}
		}
	})
	// All heads of the row: per head the strided product above, against
	// one AttendValues pass over the value rows.
	all, allProbs := make([]float32, dim), randSlice(r, n*dim/hd)
	b.Run("per-head-all", func(b *testing.B) {
		for b.Loop() {
			for h := range dim / hd {
				MatMulNNStrided(all[h*hd:], hd, allProbs[h*n:], n, values[h*hd:], dim, 1, hd, n, false)
			}
		}
	})
	b.Run("attend-values-all", func(b *testing.B) {
		for b.Loop() {
			AttendValues(all, allProbs, n, values, dim, n, dim, hd, false)
		}
	})
}

// BenchmarkMatMulNTInt8: int8 weight-only products at the inference shapes.
func BenchmarkMatMulNTInt8(b *testing.B) {
	for _, sh := range []shape{{1, 384, 128}, {1, 768, 256}, {64, 384, 128}, {64, 768, 256}} {
		b.Run(shapeName(sh), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 1))
			a, c := randSlice(r, sh.m*sh.k), make([]float32, sh.m*sh.n)
			q, scale := make([]int8, sh.n*sh.k), randSlice(r, sh.n)
			for i := range q {
				q[i] = int8(r.IntN(255) - 127)
			}
			cpu0 := cputime.Process()
			for b.Loop() {
				MatMulNTInt8(testTeam, c, a, q, scale, sh.m, sh.n, sh.k, false)
			}
			flops := 2 * float64(sh.m*sh.n*sh.k) * float64(b.N)
			b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			if cpu := cputime.Process() - cpu0; cpu > 0 {
				b.ReportMetric(flops/cpu.Seconds()/1e9, "GFLOP/s-cpu")
			}
		})
	}
}

// kernelPaths are the implementations of this CPU by name, for the
// benchmarks that compare them.
func kernelPaths() []*impl { return available() }

// BenchmarkKernelPaths times the matrix product of each implementation on
// one goroutine at the model's decode shapes (batch rows m = 1 and 32, the
// share of one core at batch 64), reporting GFLOP/s (2·m·n·k per call): the
// float32 MatMulNT ("f32"), the weight-only int8 MatMulNTInt8 ("int8w") and,
// on the paths with a native one (avx512vnni; neondot and neon on arm64),
// the W8A8 product including the quantization of the
// activation rows ("w8a8", GOP/s of integer multiply-adds counted the same
// way). GFLOP/s-cpu divides by the process's CPU time instead of wall time.
func BenchmarkKernelPaths(b *testing.B) {
	for _, im := range kernelPaths() {
		for _, sh := range []shape{{1, 384, 128}, {1, 768, 256}, {32, 384, 128}, {32, 768, 256}, {32, 256, 768}} {
			r := rand.New(rand.NewPCG(1, 1))
			x, wf, c := randSlice(r, sh.m*sh.k), randSlice(r, sh.n*sh.k), make([]float32, sh.m*sh.n)
			q, scale := randInt8(r, sh.n*sh.k), randSlice(r, sh.n)
			b.Run(fmt.Sprintf("%s/f32/%s", im.name, shapeName(sh)), func(b *testing.B) {
				timeProduct(b, sh, func() { im.nt(c, sh.n, x, sh.k, wf, sh.k, sh.m, sh.n, sh.k, false) })
			})
			b.Run(fmt.Sprintf("%s/int8w/%s", im.name, shapeName(sh)), func(b *testing.B) {
				timeProduct(b, sh, func() { im.ntI8(c, sh.n, x, sh.k, q, sh.k, scale, sh.m, sh.n, sh.k, false) })
			})
			if im.w8a8 == nil {
				continue
			}
			w, err := PackInt8(q, scale, sh.n, sh.k)
			if err != nil {
				b.Fatal(err)
			}
			var a Int8Rows
			b.Run(fmt.Sprintf("%s/w8a8/%s", im.name, shapeName(sh)), func(b *testing.B) {
				timeProduct(b, sh, func() {
					a.m, a.k, a.kp = sh.m, sh.k, roundUp(sh.k, w8Group)
					a.q, a.scale = grow8(a.q, sh.m*a.kp), growF(a.scale, sh.m)
					im.quant(a.q, a.kp, a.scale, x, sh.k, sh.m, sh.k)
					im.w8a8(c, sh.n, a.q, a.kp, a.scale, w, sh.m, false)
				})
			})
		}
	}
}

func grow8(s []uint8, n int) []uint8 {
	if cap(s) < n {
		return make([]uint8, n)
	}
	return s[:n]
}

func growF(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// timeProduct times f, one product of shape sh per call, and reports
// GFLOP/s over wall and CPU time.
func timeProduct(b *testing.B, sh shape, f func()) {
	cpu0 := cputime.Process()
	for b.Loop() {
		f()
	}
	flops := 2 * float64(sh.m*sh.n*sh.k) * float64(b.N)
	b.ReportMetric(flops/b.Elapsed().Seconds()/1e9, "GFLOP/s")
	if cpu := cputime.Process() - cpu0; cpu > 0 {
		b.ReportMetric(flops/cpu.Seconds()/1e9, "GFLOP/s-cpu")
	}
}
