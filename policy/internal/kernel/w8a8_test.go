package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// w8Impls returns the W8A8 product of each implementation: the native one,
// or the pure-Go one that MatMulNTW8A8 falls back to.
func w8Impls() map[string]func(c []float32, ldc int, aq []uint8, lda int, ascale []float32, w *Int8Weights, m int, acc bool) {
	out := map[string]func(c []float32, ldc int, aq []uint8, lda int, ascale []float32, w *Int8Weights, m int, acc bool){"generic": w8a8Generic}
	for _, im := range available() {
		if im.w8a8 != nil {
			out[im.name] = im.w8a8
		}
	}
	return out
}

// quantRef is the quantization of Int8Rows.Quantize written out for one
// row, independently of the kernels: signed values and the scale.
func quantRef(x []float32) ([]int32, float32) {
	var amax float32
	for _, v := range x {
		amax = max(amax, float32(math.Abs(float64(v))))
	}
	q := make([]int32, len(x))
	if amax < 0x1p-100 {
		return q, 0
	}
	inv := 127 / amax
	for p, v := range x {
		q[p] = int32(max(-127, min(127, math.RoundToEven(float64(v*inv)))))
	}
	return q, amax / 127
}

// w8Rows makes activation rows with a few special rows: all zeros, one
// below the 2⁻¹⁰⁰ cut, one large, one with exact ties at .5.
func w8Rows(r *rand.Rand, m, k int) []float32 {
	x := randSlice(r, m*k)
	for i := range m {
		row := x[i*k : (i+1)*k]
		switch i % 7 {
		case 3:
			clear(row)
		case 4:
			for p := range row {
				row[p] *= 0x1p-110
			}
		case 5:
			for p := range row {
				row[p] *= 1e30
			}
		case 6:
			for p := range row {
				row[p] = float32(r.IntN(255)-127) / 4 // odd ones tie after scaling by 127/63.5 = 2
			}
			if k > 0 {
				row[0] = 63.5
			}
		}
	}
	return x
}

func TestQuantizeRows(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	for _, im := range available() {
		for _, sh := range append(raggedShapes(r, 20), shape{64, 1, 384}, shape{9, 1, 130}) {
			m, k := sh.m, sh.k
			x := w8Rows(r, m, k)
			kp := roundUp(k, w8Group)
			q := make([]uint8, m*kp)
			scale := make([]float32, m)
			if m > 0 && k > 0 {
				im.quant(q, kp, scale, x, k, m, k)
			}
			for i := range m {
				want, ws := quantRef(x[i*k : (i+1)*k])
				if math.Float32bits(scale[i]) != math.Float32bits(ws) {
					t.Fatalf("%s m=%d k=%d row %d: scale %g, want %g", im.name, m, k, i, scale[i], ws)
				}
				for p := range k {
					if got := int32(q[i*kp+p]) - 128; got != want[p] {
						t.Fatalf("%s m=%d k=%d (%d,%d): x=%g quantized to %d, want %d", im.name, m, k, i, p, x[i*k+p], got, want[p])
					}
				}
			}
		}
	}
}

// TestMatMulNTW8A8 checks every implementation bit for bit against the
// product written out from the unpacked int8 values, for ragged and model
// shapes, with and without acc.
func TestMatMulNTW8A8(t *testing.T) {
	r := rand.New(rand.NewPCG(53, 54))
	shapes := append(raggedShapes(r, 25), shape{1, 384, 128}, shape{64, 384, 128}, shape{5, 130, 131}, shape{37, 9, 2100}, shape{2, 64, 768}, shape{3, 200, 7})
	for name, f := range w8Impls() {
		t.Logf("W8A8 path %s", name)
		for _, sh := range shapes {
			m, n, k := sh.m, sh.n, sh.k
			x := w8Rows(r, m, k)
			q, scale := randInt8(r, n*k), randSlice(r, n)
			w, err := PackInt8(q, scale, n, k)
			if err != nil {
				t.Fatal(err)
			}
			var a Int8Rows
			a.Quantize(x, m, k)
			acc := r.IntN(2) == 1
			c := randSlice(r, m*n)
			cOld := append([]float32(nil), c...)
			if m > 0 && n > 0 {
				f(c, n, a.q, a.kp, a.scale, w, m, acc)
			}
			for i := range m {
				qa, sa := quantRef(x[i*k : (i+1)*k])
				for j := range n {
					var d int32
					for p := range k {
						d += qa[p] * int32(q[j*k+p])
					}
					want := float32(float32(d) * scale[j] * sa)
					if acc {
						want += cOld[i*n+j]
					}
					if math.Float32bits(want) != math.Float32bits(c[i*n+j]) {
						t.Fatalf("%s %v acc=%v: (%d,%d) = %g, want %g", name, sh, acc, i, j, c[i*n+j], want)
					}
				}
			}
		}
	}
}

// The native kernel equals the pure-Go one bit for bit on the model's
// shapes, through MatMulNTW8A8 with its goroutine split, and a row's outputs
// do not depend on the other rows of the batch.
func TestMatMulNTW8A8BatchIndependence(t *testing.T) {
	r := rand.New(rand.NewPCG(55, 56))
	const n, k, maxM = 200, 260, 300
	x := randSlice(r, maxM*k)
	w, err := PackInt8(randInt8(r, n*k), randSlice(r, n), n, k)
	if err != nil {
		t.Fatal(err)
	}
	var all Int8Rows
	all.Quantize(x, maxM, k)
	single := make([]float32, maxM*n)
	for i := range maxM {
		var one Int8Rows
		one.Quantize(x[i*k:(i+1)*k], 1, k)
		w8a8Generic(single[i*n:], n, one.q, one.kp, one.scale, w, 1, false)
	}
	for name, f := range w8Impls() {
		for _, m := range []int{1, 2, 3, 4, 5, 8, 33, maxM} {
			for _, wk := range []int{1, 2, 3} {
				c := make([]float32, m*n)
				splitRows(testTeam, m, wk, func(lo, hi int) {
					f(c[lo*n:], n, all.q[lo*all.kp:], all.kp, all.scale[lo:], w, hi-lo, false)
				})
				for e := range c {
					if math.Float32bits(c[e]) != math.Float32bits(single[e]) {
						t.Fatalf("%s m=%d %d goroutines: (%d,%d) = %g, single row %g", name, m, wk, e/n, e%n, c[e], single[e])
					}
				}
			}
		}
	}
	c := make([]float32, maxM*n)
	MatMulNTW8A8(testTeam, c, &all, w, false)
	for e := range c {
		if math.Float32bits(c[e]) != math.Float32bits(single[e]) {
			t.Fatalf("MatMulNTW8A8 (%s): element %d = %g, single row %g", Impl(), e, c[e], single[e])
		}
	}
}

func TestPackInt8Errors(t *testing.T) {
	q, s := make([]int8, 12), make([]float32, 3)
	tests := []struct {
		name    string
		q       []int8
		s       []float32
		n, k    int
		message string
	}{
		{"short q", q[:11], s, 3, 4, "q has length 11"},
		{"short scale", q, s[:2], 3, 4, "scale has length 2"},
		{"negative", q, s, -1, 4, "negative dimension"},
		{"long rows", make([]int8, MaxW8A8K+1), s, 1, MaxW8A8K + 1, "exceeds"},
	}
	for _, tc := range tests {
		if _, err := PackInt8(tc.q, tc.s, tc.n, tc.k); err == nil || !strings.Contains(err.Error(), tc.message) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.message)
		}
	}
	w, err := PackInt8(q, s, 3, 4)
	if err != nil {
		t.Fatal(err)
	}
	var a Int8Rows
	a.Quantize(make([]float32, 10), 2, 5)
	defer func() {
		if msg := fmt.Sprint(recover()); !strings.Contains(msg, "row length 5") {
			t.Errorf("panic %q, want one naming the row lengths", msg)
		}
	}()
	MatMulNTW8A8(testTeam, make([]float32, 6), &a, w, false)
}
