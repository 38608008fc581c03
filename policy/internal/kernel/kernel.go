package kernel

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/rollout-rl/rollout/policy/team"
)

// lanes is the number of partial sums of the 16-lane dot product that fixes
// the reduction order of MatMulNT and Dot (see the package documentation).
const lanes = 16

// matFunc computes a strided matrix product on the calling goroutine:
// rows 0..m-1 and columns 0..n-1 of c (row stride ldc) from a (row stride lda)
// and b (row stride ldb); which operand is transposed depends on the kernel.
type matFunc func(c []float32, ldc int, a []float32, lda int, b []float32, ldb int, m, n, k int, acc bool)

// impl is one complete set of kernels. The active one is chosen in init and
// never changes afterwards.
type impl struct {
	name string
	// mvTile is the number of columns nt computes at once for a single
	// row (see MVTile); 0 means 1.
	mvTile int
	nt     matFunc
	nn     matFunc
	tn     matFunc
	dot    func(x, y []float32) float32
	axpy   func(alpha float32, x, y []float32)
	scale  func(alpha float32, x []float32)
	// siluMul sets dst = silu(gate)·up, exp sets dst = e^x, sigmoid sets
	// dst = 1/(1+e^(−x)) (equal lengths).
	siluMul func(dst, gate, up []float32)
	exp     func(dst, x []float32)
	sigmoid func(dst, x []float32)
	// ntI8 is nt with int8 rows of b scaled per row (see MatMulNTInt8).
	ntI8 func(c []float32, ldc int, a []float32, lda int, q []int8, ldq int, scale []float32, m, n, k int, acc bool)
	// quant quantizes activation rows (see Int8Rows.Quantize); w8a8 is the
	// native MatMulNTW8A8, nil where there is none.
	quant func(q []uint8, ldq int, scale []float32, x []float32, ldx, m, k int)
	w8a8  func(c []float32, ldc int, aq []uint8, lda int, ascale []float32, w *Int8Weights, m int, acc bool)
	// toF16 converts a prefix of src to binary16 and returns its length;
	// scoresF16 and attvF16 are optional native ScoresF16 and
	// AttendValuesF16 for the shapes they report true for.
	toF16     func(dst []uint16, src []float32) int
	scoresF16 func(scores, q []float32, keys []uint16, ldk, n, k int) bool
	attvF16   func(out, probs []float32, ldp int, v []uint16, ldv int, n, d, hd int, acc bool) bool
	// attv is an optional fast AttendValues for the shapes it reports true
	// for; nil or false means the per-head nn products.
	attv func(out, probs []float32, ldp int, v []float32, ldv int, n, d, hd int, acc bool) bool
}

// active is the implementation used by the exported functions. It is set
// once by package initialisation and only read afterwards.
var active = chooseImpl(os.Getenv(envVar), os.Stderr)

// envVar names the environment variable that forces a slower implementation.
const envVar = "ROLLOUT_KERNEL"

// chooseImpl picks the fastest implementation the CPU supports, or the one
// named by override ("generic", "avx2", "avx512", "avx512vnni", "neon",
// "neondot"). An override naming an
// unknown or unsupported path is reported on warn and ignored.
func chooseImpl(override string, warn io.Writer) *impl {
	avail := available()
	if override == "" {
		return avail[0]
	}
	names := make([]string, len(avail))
	for i, im := range avail {
		if im.name == override {
			return im
		}
		names[i] = im.name
	}
	fmt.Fprintf(warn, "kernel: %s=%q is not available here (have %s); using %s\n",
		envVar, override, strings.Join(names, ", "), avail[0].name)
	return avail[0]
}

// Impl names the active implementation: "avx512vnni", "avx512", "avx2",
// "neondot", "neon" or "generic".
func Impl() string { return active.name }

// MVTile is the number of columns the active implementation computes at
// once in a single-row MatMulNT (a matrix-vector product): 16 on the
// AVX-512 paths, 1 elsewhere. A product of fewer columns costs about as
// much as one of MVTile columns, and a column's bits do not depend on the
// others, so a caller whose b holds MVTile rows may compute them all and
// keep the first n.
func MVTile() int { return max(active.mvTile, 1) }

// Available names the implementations this CPU can run, fastest first: the
// values ROLLOUT_KERNEL may select.
func Available() []string {
	var names []string
	for _, im := range available() {
		names = append(names, im.name)
	}
	return names
}

// EnvVar is the environment variable that selects an implementation.
const EnvVar = envVar

// parallelFlops is the number of multiply-adds (m·n·k) from which a matrix
// product is split over several goroutines, and minRowsPerWorker the fewest
// output rows a goroutine gets. Measured on a 2-core AVX-512 machine when
// every split started its own goroutines: below these, starting and waiting
// for a goroutine cost more than it saved (a matrix-vector product reads its
// weights from the L2 cache of one core and gets slower when split). Splits
// now run on a team.Team's helpers, which are cheaper to hand work to; the
// thresholds were not measured again.
const (
	parallelFlops    = 1 << 24
	minRowsPerWorker = 64
)

// maxWorkers caps the goroutines one product is split over.
const maxWorkers = 8

// rowAlign is the preferred granularity of the row split (a multiple of every tile
// height, so that the split creates no extra ragged tiles).
const rowAlign = 48

// workers returns how many goroutines of t a product of size m·n·k
// deserves.
func workers(t *team.Team, m, n, k int) int {
	if m*n*k < parallelFlops || m < 2*minRowsPerWorker {
		return 1
	}
	return max(1, min(t.Size(), maxWorkers, m/minRowsPerWorker))
}

// b2i is 1 for true and 0 for false (the flags of the assembly kernels'
// argument blocks).
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkLen panics with a message naming the operand when s is shorter than
// need.
func checkLen(op, name string, s []float32, need int) {
	if len(s) < need {
		panic(fmt.Sprintf("kernel.%s: %s has length %d, need at least %d", op, name, len(s), need))
	}
}

func checkDims(op string, m, n, k int) {
	if m < 0 || n < 0 || k < 0 {
		panic(fmt.Sprintf("kernel.%s: negative dimension m=%d n=%d k=%d", op, m, n, k))
	}
}

// MatMulNT computes c[m×n] = a[m×k] · b[n×k]ᵀ, or c += a·bᵀ when acc is
// true. b is a weight matrix stored [out, in] like a PyTorch Linear. The
// slices are dense row-major; each must hold at least its matrix (longer
// slices are allowed, the extra elements are neither read nor written).
//
// Every output is computed with the fixed 16-lane reduction described in the
// package documentation, so c[i][j] depends only on row i of a, row j of b,
// k, acc and the old c[i][j]. A large product is split by output rows over
// the goroutines of t (a nil t runs it on the caller alone); the split never
// changes a bit. So are the other matrix products of this package that take
// a team.
func MatMulNT(t *team.Team, c, a, b []float32, m, n, k int, acc bool) {
	checkDims("MatMulNT", m, n, k)
	checkLen("MatMulNT", "c", c, m*n)
	checkLen("MatMulNT", "a", a, m*k)
	checkLen("MatMulNT", "b", b, n*k)
	if m == 0 || n == 0 {
		return
	}
	run(t, active.nt, c, a, k, k, b, k, m, n, k, acc, workers(t, m, n, k))
}

// MatMulNN computes c[m×n] = a[m×k] · b[k×n], or c += a·b when acc is true.
// Each output is a sequential fused multiply-add over k, so the result is
// deterministic whatever the split over goroutines.
func MatMulNN(t *team.Team, c, a, b []float32, m, n, k int, acc bool) {
	checkDims("MatMulNN", m, n, k)
	checkLen("MatMulNN", "c", c, m*n)
	checkLen("MatMulNN", "a", a, m*k)
	checkLen("MatMulNN", "b", b, k*n)
	if m == 0 || n == 0 {
		return
	}
	run(t, active.nn, c, a, k, k, b, n, m, n, k, acc, workers(t, m, n, k))
}

// MatMulTN computes c[m×n] = a[k×m]ᵀ · b[k×n], or c += aᵀ·b when acc is
// true (the weight gradient dW = dYᵀ·X of a Linear). Each output is a
// sequential fused multiply-add over k, so the result is deterministic
// whatever the split over goroutines.
func MatMulTN(t *team.Team, c, a, b []float32, m, n, k int, acc bool) {
	checkDims("MatMulTN", m, n, k)
	checkLen("MatMulTN", "c", c, m*n)
	checkLen("MatMulTN", "a", a, k*m)
	checkLen("MatMulTN", "b", b, k*n)
	if m == 0 || n == 0 {
		return
	}
	run(t, active.tn, c, a, 1, m, b, n, m, n, k, acc, workers(t, m, n, k))
}

// run executes f over the whole product, split by output rows over w
// goroutines of t (see splitRows). Output row i of the product reads a from
// a[i·aRow:] with row stride lda, and b whole with row stride ldb.
func run(t *team.Team, f matFunc, c, a []float32, aRow, lda int, b []float32, ldb, m, n, k int, acc bool, w int) {
	if w <= 1 {
		f(c, n, a, lda, b, ldb, m, n, k, acc) // no closure: no allocation
		return
	}
	splitRows(t, m, w, func(lo, hi int) {
		f(c[lo*n:], n, a[lo*aRow:], lda, b, ldb, hi-lo, n, k, acc)
	})
}

// splitRows runs job over the rows [0, m) in w chunks (multiples of
// rowAlign) on up to w goroutines of t, the calling one included. A split by output
// rows never divides k, so it cannot change any output bit.
func splitRows(t *team.Team, m, w int, job func(lo, hi int)) {
	chunk := splitChunk(m, w)
	if w <= 1 || chunk >= m {
		job(0, m)
		return
	}
	t.Run(w, (m+chunk-1)/chunk, func(_, c int) { job(c*chunk, min((c+1)*chunk, m)) })
}

// splitChunk returns the rows per goroutine of a split of m rows over w
// goroutines: a multiple of rowAlign when that keeps the last chunk at
// least 3/4 of the others, else of a smaller alignment (12, a multiple of
// the 4- and 6-row tiles, then 4) that does. (128 rows over 2 goroutines
// at 48 would be 96 + 32: the second goroutine would idle half the time.)
func splitChunk(m, w int) int {
	base := (m + max(w, 1) - 1) / max(w, 1)
	for _, align := range []int{rowAlign, 12, 4} {
		chunk := (base + align - 1) / align * align
		if last := m - (m-1)/chunk*chunk; 4*last >= 3*chunk || chunk >= m {
			return chunk
		}
	}
	return base
}

// MatMulNTInt8 computes c[m×n] = a[m×k] · Wᵀ (or c += when acc) for a weight
// W[n×k] quantized weight-only to int8 with one scale per output row,
// W[j][p] ≈ scale[j]·q[j][p]:
//
//	c[i][j] = scale[j] · Σ_p a[i][p]·q[j][p]  (+ old c[i][j])
//
// The sum is the 16-lane dot product of MatMulNT (with the int8 values
// converted exactly to float32), multiplied by the scale before the old
// value is added, so the output bits again depend only on row i of a, row j
// of q, scale[j], k, acc and the old c[i][j] (batch independence). It panics
// when a slice is too short.
func MatMulNTInt8(t *team.Team, c, a []float32, q []int8, scale []float32, m, n, k int, acc bool) {
	const op = "MatMulNTInt8"
	checkDims(op, m, n, k)
	checkLen(op, "c", c, m*n)
	checkLen(op, "a", a, m*k)
	if len(q) < n*k {
		panic(fmt.Sprintf("kernel.%s: q has length %d, need at least %d", op, len(q), n*k))
	}
	checkLen(op, "scale", scale, n)
	if m == 0 || n == 0 {
		return
	}
	if w := workers(t, m, n, k); w > 1 {
		splitRows(t, m, w, func(lo, hi int) {
			active.ntI8(c[lo*n:], n, a[lo*k:], k, q, k, scale, hi-lo, n, k, acc)
		})
		return
	}
	active.ntI8(c, n, a, k, q, k, scale, m, n, k, acc)
}

// Dot returns Σ x[i]·y[i] computed with the 16-lane reduction of MatMulNT, so
// Dot(a_i, b_j) equals the MatMulNT output (i, j) bit for bit. It panics when
// the lengths differ.
func Dot(x, y []float32) float32 {
	if len(x) != len(y) {
		panic(fmt.Sprintf("kernel.Dot: lengths differ: %d and %d", len(x), len(y)))
	}
	return active.dot(x, y)
}

// Axpy computes y += alpha·x element-wise (one fused multiply-add per element
// on the SIMD paths). It panics when the lengths differ.
func Axpy(alpha float32, x, y []float32) {
	if len(x) != len(y) {
		panic(fmt.Sprintf("kernel.Axpy: lengths differ: %d and %d", len(x), len(y)))
	}
	active.axpy(alpha, x, y)
}

// Scale computes x *= alpha element-wise.
func Scale(alpha float32, x []float32) {
	active.scale(alpha, x)
}
