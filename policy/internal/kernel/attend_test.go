package kernel

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAttendValues checks AttendValues on every available implementation
// against a float64 reference, and bit for bit against the per-head
// strided products it replaces, on shapes the fast slabs take (d a
// multiple of 128) and shapes they decline, with and without acc.
func TestAttendValues(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	tests := []struct{ n, d, hd int }{
		{1, 128, 32}, {37, 256, 32}, {5, 128, 16}, {70, 256, 64}, {3, 384, 128},
		{9, 96, 32}, {4, 48, 16}, {0, 128, 32}, {0, 96, 32},
	}
	for _, tc := range tests {
		for _, acc := range []bool{false, true} {
			n, d, hd := tc.n, tc.d, tc.hd
			heads := d / hd
			ldp, ldv := n+3, d+16
			probs, v := randSlice(r, heads*ldp), randSlice(r, max(n, 1)*ldv)
			start := randSlice(r, d+8)
			for _, im := range available() {
				got := append([]float32(nil), start...)
				if im.attv == nil || !im.attv(got, probs, ldp, v, ldv, n, d, hd, acc) {
					for h := range heads {
						im.nn(got[h*hd:], hd, probs[h*ldp:], n, v[h*hd:], ldv, 1, hd, n, acc)
					}
				}
				want := append([]float32(nil), start...)
				for h := range heads {
					im.nn(want[h*hd:], hd, probs[h*ldp:], n, v[h*hd:], ldv, 1, hd, n, acc)
				}
				for j := range d + 8 {
					if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
						t.Fatalf("%s n=%d d=%d hd=%d acc=%v: out[%d] = %g, per-head products %g", im.name, n, d, hd, acc, j, got[j], want[j])
					}
				}
				// Output j is a one-element product with its head's weights.
				ref, mag := make([]float64, d), make([]float64, d)
				for j := range d {
					h := j / hd
					rj, mj := refProduct(start[j:j+1], 1, 1, n, acc,
						func(_, p int) float32 { return probs[h*ldp+p] },
						func(p, _ int) float32 { return v[p*ldv+j] })
					ref[j], mag[j] = rj[0], mj[0]
				}
				checkClose(t, im.name+" AttendValues", got[:d], ref, mag, 2*u*float64(n+4))
			}
			// The exported function on the active implementation.
			got := append([]float32(nil), start...)
			AttendValues(got, probs, ldp, v, ldv, n, d, hd, acc)
			want := append([]float32(nil), start...)
			for h := range heads {
				MatMulNNStrided(want[h*hd:], hd, probs[h*ldp:], n, v[h*hd:], ldv, 1, hd, n, acc)
			}
			for j := range d + 8 {
				if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
					t.Fatalf("AttendValues n=%d d=%d hd=%d acc=%v: out[%d] = %g, MatMulNNStrided %g", n, d, hd, acc, j, got[j], want[j])
				}
			}
		}
	}
}

// TestAttendValuesPanics checks the shape errors.
func TestAttendValuesPanics(t *testing.T) {
	tests := []struct {
		name string
		f    func()
	}{
		{"head width not dividing", func() {
			AttendValues(make([]float32, 100), make([]float32, 100), 4, make([]float32, 400), 100, 4, 100, 32, false)
		}},
		{"short values", func() {
			AttendValues(make([]float32, 128), make([]float32, 16), 4, make([]float32, 300), 128, 4, 128, 32, false)
		}},
		{"short probs", func() {
			AttendValues(make([]float32, 128), make([]float32, 15), 4, make([]float32, 512), 128, 4, 128, 32, false)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			tc.f()
		})
	}
}
