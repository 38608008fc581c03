package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestNormScale checks every path's vector normScale bit for bit against
// the scalar loop, on lengths around the 16-lane tiles and in place.
func TestNormScale(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for _, im := range available() {
		f := normScaleFor(im)
		if f == nil {
			f = normScaleGeneric
		}
		for _, n := range []int{1, 5, 15, 16, 17, 32, 100, 128, 256} {
			t.Run(fmt.Sprintf("%s/%d", im.name, n), func(t *testing.T) {
				x, w := randSlice(r, n), randSlice(r, n)
				inv := float32(1 / math.Sqrt(0.37))
				want, got := make([]float32, n), append([]float32(nil), x...)
				normScaleGeneric(want, x, w, inv)
				f(got, got, w, inv) // in place
				for i := range want {
					if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
						t.Fatalf("element %d: got %v, want %v", i, got[i], want[i])
					}
				}
			})
		}
	}
}
