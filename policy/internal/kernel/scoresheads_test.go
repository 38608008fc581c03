package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestScoresF16Heads checks every path's ScoresF16Heads bit for bit
// against ScoresF16 per head: key counts around the groups of four and
// the tiles of sixteen, 4 and 8 heads of 32 (the kernel's shapes) and
// shapes it leaves to ScoresF16, in a cache of strided rows whose rows
// past n hold infinities (never to be read into a stored score).
func TestScoresF16Heads(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	type tc struct{ heads, hd, pad int }
	for _, im := range available() {
		native := scoresHeadsFor(im)
		for _, c := range []tc{{4, 32, 0}, {8, 32, 16}, {4, 16, 0}, {2, 32, 0}, {6, 32, 8}} {
			for _, n := range []int{1, 3, 4, 5, 7, 8, 15, 16, 17, 31, 33, 63, 64} {
				t.Run(fmt.Sprintf("%s/%dx%d+%d/n%d", im.name, c.heads, c.hd, c.pad, n), func(t *testing.T) {
					d := c.heads * c.hd
					ldk := d + c.pad
					const rows = 68 // a cache longer than any n
					keys := make([]uint16, rows*ldk)
					for i := range keys {
						keys[i] = f32ToF16(float32(r.NormFloat64()))
						if i >= n*ldk {
							keys[i] = 0x7c00 // +Inf
						}
					}
					q := randSlice(r, d)
					want, got := make([]float32, c.heads*n), make([]float32, c.heads*n)
					withImpl(im, func() {
						for h := range c.heads {
							ScoresF16(want[h*n:(h+1)*n], q[h*c.hd:(h+1)*c.hd], keys[h*c.hd:], ldk, n, c.hd)
						}
						if native == nil || !native(got, q, keys, ldk, n, c.heads, c.hd) {
							saved := activeScoresHeads
							activeScoresHeads = nil
							defer func() { activeScoresHeads = saved }()
							ScoresF16Heads(got, q, keys[:(n-1)*ldk+d], ldk, n, c.heads, c.hd)
						}
					})
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("head %d key %d: got %v, want %v", i/n, i%n, got[i], want[i])
						}
					}
				})
			}
		}
	}
}

// TestScoresF16HeadsPanics checks that short slices are reported.
func TestScoresF16HeadsPanics(t *testing.T) {
	q, scores, keys := make([]float32, 128), make([]float32, 4*10), make([]uint16, 10*128)
	for name, f := range map[string]func(){
		"keys":   func() { ScoresF16Heads(scores, q, keys[:9*128], 128, 10, 4, 32) },
		"stride": func() { ScoresF16Heads(scores, q, keys, 64, 10, 4, 32) },
		"scores": func() { ScoresF16Heads(scores[:39], q, keys, 128, 10, 4, 32) },
		"q":      func() { ScoresF16Heads(scores, q[:127], keys, 128, 10, 4, 32) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			f()
		}()
	}
}
