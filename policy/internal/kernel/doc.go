// Package kernel holds the numeric kernels of the policy: matrix products and vector operations over float32 slices, in SIMD assembly where the CPU has it and in pure Go elsewhere.
//
// # Matrices
//
// Every matrix is a dense row-major []float32 without strides. The three
// products differ in which operand is transposed:
//
//	MatMulNT: c[m×n] (+)= a[m×k] · b[n×k]ᵀ   (b is a weight stored [out, in])
//	MatMulNN: c[m×n] (+)= a[m×k] · b[k×n]
//	MatMulTN: c[m×n] (+)= a[k×m]ᵀ · b[k×n]
//
// MatMulNTStrided, MatMulNNStrided and MatMulTNStrided take row strides, to
// read sub-matrices in place (the per-head blocks of a KV cache), and
// MatMulNTInt8 takes a weight quantized to int8 with one scale per output
// row (the weight-only int8 behaviour policy). MatMulNTW8A8 multiplies
// int8 activations (Int8Rows: quantized per row with a dynamic scale) with
// int8 weights (Int8Weights, from PackInt8) exactly in int32: with AVX-512
// VNNI's VPDPBUSD it is some four times faster than the float32 product at
// batch sizes of 32 and more, and its integer sums give the same bits on
// every path. ToF16, ScoresF16 and AttendValuesF16 serve a KV cache stored
// in binary16: the attention kernels widen the rows exactly and give the
// bits of MatMulNTStrided and AttendValues on the widened rows;
// ScoresF16Heads is ScoresF16 for all heads of a query in one pass. AttendValues is the attention output of
// one query over a KV cache's value rows for all heads in one pass, with the
// bits of the per-head MatMulNNStrided products.
//
// # Determinism
//
// MatMulNT computes every output c[i][j] with one fixed reduction structure,
// the "16-lane dot product": the k products a[i][p]·b[j][p] are padded with
// zeros to a multiple of 16, lane l (0..15) accumulates the products with
// p ≡ l (mod 16) in increasing p by fused multiply-add starting from +0, the
// 16 lanes are summed by a fixed tree (l+8 onto l, then l+4, l+2, l+1), and
// with acc the old c[i][j] is added last. The result bits therefore depend
// only on row i of a, row j of b, k, acc and the old c[i][j]: never on m, n,
// the position of the output in a tile, the number of goroutines or how the
// work was split. A decoding state samples the same logits whichever other
// states share its batch. [Dot] uses the same structure, so Dot(a_i, b_j)
// equals MatMulNT of that single row and column bit for bit, and
// MatMulNTStrided and MatMulNTInt8 (which multiplies the sum by the row's
// scale before adding the old value) keep the same property.
//
// The AVX-512 products of at least 48 rows and k ≤ 256 compute the same
// sums lane by lane: pass l accumulates lane l of a 6×64 tile's outputs,
// 16 outputs per register, from a copy of 64 rows of b transposed by lane
// (packed per call on the stack), and the 16 passes are added by the same
// tree with vertical additions instead of the 4×4 tiles' shuffles.
//
// The AVX-512, AVX2 and NEON implementations follow this structure exactly
// (NEON holds the 16 lanes in four 4-lane registers; the tests check every
// path bit for bit against an exact emulation of it), and so does the
// pure-Go fallback, whose fused multiply-adds are correctly rounded in
// portable Go (float64 arithmetic with the double-rounding case corrected;
// the native FMADDS on arm64), so every path and every architecture gives
// the same bits.
// MatMulNTInt8 keeps the same structure, fused, on every path.
//
// MatMulNN and MatMulTN accumulate each output sequentially over k, one
// fused multiply-add per step, starting from +0 or from the old value when
// acc is set, on every path. They are not promised to equal MatMulNT on
// transposed inputs.
//
// The pure-Go code rounds every product it does not fuse with an explicit
// float32 conversion, so that no architecture's compiler fuses it (Go fuses
// x*y+z on arm64, not on amd64), and Exp, Sigmoid, SiLUMul and Axpy fuse
// where the SIMD code does: the generic, AVX2, AVX-512 and NEON paths agree
// bit for bit on every kernel.
//
// The output c must not overlap a or b.
//
// # Activations
//
// SiLUMul, Sigmoid, Exp, RMSNorm, SoftmaxEntropy and SoftmaxScaled (with
// SoftmaxScaledRows, the attention weights of several heads) are the
// element-wise and row operations of the transformer. Exp, Sigmoid and SiLUMul use a
// float32 polynomial exp (within 1 ulp of the true value), in SIMD some
// 20–60 times faster than a loop over math.Exp. Every element's bits depend
// only on that element's inputs (not on its position or the slice length),
// and every path agrees bit for bit.
//
// # Dispatch
//
// The implementation is chosen once at package initialisation from the CPU
// features (golang.org/x/sys/cpu). On amd64: "avx512vnni" (AVX-512F/VL/DQ
// and VNNI: avx512 with the native W8A8 kernel), "avx512" (AVX-512F/VL/DQ)
// or "avx2" (AVX2 and FMA). On arm64: "neondot" (NEON with the dot-product
// instructions, FEAT_DotProd: W8A8 by SDOT) or "neon" (every arm64 CPU:
// W8A8 by int16 products); both have the NEON float32 products, Dot, Axpy,
// Scale, Exp, Sigmoid, SiLUMul and int8-weight product. Elsewhere, and with
// the purego build tag, "generic" (pure Go). Without a native W8A8 kernel
// (avx512vnni, neondot, neon) MatMulNTW8A8 runs in pure Go ([W8A8] reports
// false), and the policy uses MatMulNTInt8 instead. The AVX-512 paths also
// have kernels of their own for the fused softmax, RMSNorm's last step and
// backward, RoPE, the SwiGLU backward and the binary16 attention; the
// other paths compute these in Go, with the same bits. The environment
// variable ROLLOUT_KERNEL set to another path of the CPU ("generic",
// "avx2", "avx512", "neon") forces it (for tests and comparisons); [Impl]
// names the active one and [Available] lists those of the CPU.
//
// # Concurrency
//
// The kernels hold no mutable state and may be called concurrently. Large
// products (from 2²⁴ multiply-adds and 128 rows) are split by output rows
// over up to GOMAXPROCS goroutines (at most 8); smaller ones, and the
// strided products, run on the calling goroutine: on the 2-core machine
// this was measured on, waking a second goroutine costs more than it saves
// below that size.
package kernel
