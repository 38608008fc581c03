package kernel

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// f16Ref rounds f to binary16 by exact arithmetic: the nearest of the
// representable values, ties to the even significand, after clamping to
// ±65504.
func f16Ref(f float32) float32 {
	x := min(max(float64(f), -maxF16), maxF16)
	if x == 0 {
		return float32(x)
	}
	e := math.Floor(math.Log2(math.Abs(x)))
	e = max(e, -14) // subnormals share the exponent of the smallest normal
	ulp := math.Ldexp(1, int(e)-10)
	q := new(big.Float).Quo(big.NewFloat(x), big.NewFloat(ulp))
	t, _ := q.Float64() // exact: x/ulp has at most 24 significant bits
	r := math.RoundToEven(t) * ulp
	return float32(r)
}

func TestF16Conversion(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	vals := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 65504, 65519, 65520, 1e9, -1e9, 0x1p-24, 0x1p-25, 0x1.8p-25, 0x1p-26, 0x1p-14, 0x1.ffcp-15, 1 + 0x1p-11, 1 + 0x3p-11, 1e-30, -3.14159}
	for range 3000 {
		vals = append(vals, float32(r.NormFloat64()*math.Pow(2, float64(r.IntN(50)-30))))
	}
	for _, im := range available() {
		dst := make([]uint16, len(vals))
		for i := range dst {
			dst[i] = 0xFFFF
		}
		withImpl(im, func() { ToF16(dst, vals) })
		for i, v := range vals {
			got, want := F16ToF32(dst[i]), f16Ref(v)
			if math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("%s: %g (%#x) → %#04x = %g, want %g", im.name, v, math.Float32bits(v), dst[i], got, want)
			}
			if f32ToF16(v) != dst[i] {
				t.Fatalf("%s: %g → %#04x, pure Go %#04x", im.name, v, dst[i], f32ToF16(v))
			}
		}
	}
	for h := range 1 << 16 {
		f := F16ToF32(uint16(h))
		if h&0x7c00 == 0x7c00 {
			continue // infinities and NaNs never come out of ToF16
		}
		if back := f32ToF16(f); back != uint16(h) {
			t.Fatalf("%#04x → %g → %#04x", h, f, back)
		}
	}
}

// The float16 attention kernels have the bits of the float32 ones on the
// widened rows, on every path, for the engine's head shapes and ragged
// ones.
func TestAttentionF16(t *testing.T) {
	r := rand.New(rand.NewPCG(63, 64))
	for _, im := range available() {
		withImpl(im, func() { checkAttentionF16(t, r, im.name) })
	}
}

// checkAttentionF16 is TestAttentionF16 on the active implementation.
func checkAttentionF16(t *testing.T, r *rand.Rand, name string) {
	t.Helper()
	{
		// rows ≥ n is the rows the key and value slices hold, as in a KV
		// cache early in a sequence; the rows past n hold infinities and
		// NaNs, which must not reach any result.
		for _, tc := range []struct{ n, rows, d, hd int }{{1, 1, 128, 32}, {15, 15, 128, 32}, {16, 16, 128, 32}, {17, 17, 256, 32}, {64, 64, 128, 32}, {40, 40, 96, 24}, {33, 33, 128, 16}, {5, 5, 10, 5},
			{1, 64, 128, 32}, {7, 16, 128, 32}, {15, 16, 128, 32}, {3, 20, 256, 32}, {9, 16, 96, 24}} {
			ld := tc.d + 8
			kv := make([]uint16, tc.rows*ld)
			ToF16(kv[:tc.n*ld], randSlice(r, tc.n*ld))
			for i := tc.n * ld; i < len(kv); i++ {
				kv[i] = []uint16{0x7C00, 0xFC00, 0x7E00}[i%3] // +Inf, −Inf, NaN
			}
			wide := make([]float32, len(kv))
			for i, h := range kv {
				wide[i] = F16ToF32(h)
			}
			heads := tc.d / tc.hd
			q := randSlice(r, tc.d)
			for h := range heads {
				got, want := make([]float32, tc.n), make([]float32, tc.n)
				ScoresF16(got, q[h*tc.hd:], kv[h*tc.hd:], ld, tc.n, tc.hd)
				MatMulNTStrided(want, tc.n, q[h*tc.hd:], tc.hd, wide[h*tc.hd:], ld, 1, tc.n, tc.hd, false)
				for j := range got {
					if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
						t.Fatalf("%s scores %+v head %d: [%d] = %g, float32 %g", name, tc, h, j, got[j], want[j])
					}
				}
			}
			probs := randSlice(r, heads*tc.n)
			for _, acc := range []bool{false, true} {
				got, want := randSlice(r, tc.d), make([]float32, tc.d)
				copy(want, got)
				AttendValuesF16(got, probs, tc.n, kv, ld, tc.n, tc.d, tc.hd, acc)
				AttendValues(want, probs, tc.n, wide, ld, tc.n, tc.d, tc.hd, acc)
				for j := range got {
					if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
						t.Fatalf("%s values %+v acc=%v: [%d] = %g, float32 %g", name, tc, acc, j, got[j], want[j])
					}
				}
			}
		}
	}
}

// withImpl runs f with im as the active implementation (tests only: they
// do not run in parallel), restoring the previous one even when f fails
// the test.
func withImpl(im *impl, f func()) {
	saved := active
	defer func() { active = saved }()
	active = im
	f()
}
