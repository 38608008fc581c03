package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSoftmaxScaled checks every path's SoftmaxScaled, fused or not, bit
// for bit against its steps (Scale, maximum, subtraction, Exp, sequential
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
		fused := softmaxFor(im)
		for name, gen := range inputs {
			for _, n := range []int{1, 2, 7, 15, 16, 17, 31, 33, 40, 64, 100, 128, 129} {
				t.Run(fmt.Sprintf("%s/%s/%d", im.name, name, n), func(t *testing.T) {
					x := gen(n)
					want := append([]float32(nil), x...)
					softmaxSteps(im, want, 0.17677669)
					got := append([]float32(nil), x...)
					if fused != nil {
						fused(got, 0.17677669)
					} else {
						softmaxSteps(im, got, 0.17677669)
					}
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("element %d of %d: got %v (%#x), want %v (%#x)", i, n, got[i], math.Float32bits(got[i]), want[i], math.Float32bits(want[i]))
						}
					}
				})
			}
		}
	}
}

// TestSoftmaxScaledActive checks the exported function on the active path,
// and that an empty slice is left alone.
func TestSoftmaxScaledActive(t *testing.T) {
	SoftmaxScaled(nil, 1)
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
	if math.Abs(float64(sum)-1) > 1e-6 || !(s[3] > s[2] && s[2] > s[1] && s[1] > s[0]) {
		t.Fatalf("not a softmax: %v (sum %v)", s, sum)
	}
}
