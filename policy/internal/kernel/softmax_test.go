package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSoftmaxScaled checks every path's SoftmaxScaledRows, fused or not,
// bit for bit against SoftmaxScaled's steps on each row (Scale, maximum, subtraction, Exp, sequential
// sum, Scale by 1/sum) on lengths around the 16-lane tiles and on inputs
// with ties, −Inf, signed zeros and large spreads.
func TestSoftmaxScaled(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 5))
	inf := float32(math.Inf(-1))
	inputs := map[string]func(n int) []float32{
		"random": func(n int) []float32 { return randSlice(r, n) },
		"wide": func(n int) []float32 {
			s := randSlice(r, n)
			for i := range s {
				s[i] *= 300
			}
			return s
		},
		"ties": func(n int) []float32 {
			s := make([]float32, n)
			for i := range s {
				s[i] = float32(i%3) - 1
			}
			return s
		},
		"zeros": func(n int) []float32 {
			s := make([]float32, n)
			for i := range s {
				if i%2 == 1 {
					s[i] = float32(math.Copysign(0, -1))
				}
			}
			return s
		},
		"masked": func(n int) []float32 {
			s := randSlice(r, n)
			for i := 1; i < n; i += 3 {
				s[i] = inf
			}
			return s
		},
	}
	for _, im := range available() {
		fused := softmaxExpFor(im)
		for name, gen := range inputs {
			for _, n := range []int{1, 2, 7, 15, 16, 17, 31, 33, 40, 64, 100, 128, 129} {
				for _, rows := range []int{1, 3, 4, 9} {
					t.Run(fmt.Sprintf("%s/%s/%dx%d", im.name, name, rows, n), func(t *testing.T) {
						x := gen(rows * n)
						want := append([]float32(nil), x...)
						for r := range rows {
							softmaxSteps(im, want[r*n:(r+1)*n], 0.17677669)
						}
						got := append([]float32(nil), x...)
						softmaxRows(im, fused, got, rows, n, 0.17677669)
						for i := range want {
							if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
								t.Fatalf("element %d of %dx%d: got %v (%#x), want %v (%#x)", i, rows, n, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
							}
						}
					})
				}
			}
		}
	}
}

// TestSoftmaxScaledActive checks the exported functions on the active
// path, and that empty slices are left alone.
func TestSoftmaxScaledActive(t *testing.T) {
	SoftmaxScaled(nil, 1)
	SoftmaxScaledRows(nil, 3, 0, 1)
	SoftmaxScaledRows(nil, 0, 5, 1)
	s := []float32{1, 2, 3, 4}
	want := append([]float32(nil), s...)
	softmaxSteps(active, want, 0.5)
	SoftmaxScaled(s, 0.5)
	var sum float32
	for i := range s {
		if s[i] != want[i] {
			t.Fatalf("element %d: got %v, want %v", i, s[i], want[i])
		}
		sum += s[i]
	}
	rows := []float32{1, 2, 3, 4, 4, 3, 2, 1}
	SoftmaxScaledRows(rows, 2, 4, 0.5)
	for i := range 4 {
		if rows[i] != want[i] || rows[7-i] != want[i] {
			t.Fatalf("SoftmaxScaledRows: got %v, want %v and its reverse", rows, want)
		}
	}
	if math.Abs(float64(sum)-1) > 1e-6 || !(s[3] > s[2] && s[2] > s[1] && s[1] > s[0]) {
		t.Fatalf("not a softmax: %v (sum %v)", s, sum)
	}
}
