package policy

import (
	"math"
	"testing"
)

// TestRopeTablesPortable checks that the rotary tables of the reference
// sizes' head widths (32 and 64, theta 10000, positions up to 2048) do not
// depend on the last bits of math.Pow, math.Cos and math.Sin, which differ
// between CPUs (arm64 fuses multiply-adds inside them; amd64 runs Exp and
// Log in assembly): every float64 value newRope rounds to float32 rounds to
// the same float32 when moved by 8 of its ulps either way, and the standard
// library's results are within 1 ulp of the true values on every CPU. So
// the tables, and everything computed from them, are the same on every CPU.
func TestRopeTablesPortable(t *testing.T) {
	stable := func(v float64) bool {
		lo, hi := v, v
		for range 8 {
			lo, hi = math.Nextafter(lo, math.Inf(-1)), math.Nextafter(hi, math.Inf(1))
		}
		return float32(lo) == float32(v) && float32(hi) == float32(v)
	}
	for _, hd := range []int{32, 64} {
		cfg := Config{Dim: hd, Heads: 1, MaxSeq: 2048, RopeTheta: 10000}
		r := newRope(cfg)
		for i := 0; i < hd/2; i++ {
			p := 1 / math.Pow(cfg.RopeTheta, float64(2*i)/float64(hd))
			if !stable(p) {
				t.Fatalf("head width %d: inverse frequency %d = %.17g is within 8 ulp of a float32 rounding boundary", hd, i, p)
			}
			invFreq := float32(p)
			for pos := range cfg.MaxSeq {
				angle := float64(float32(pos) * invFreq)
				c, s := math.Cos(angle), math.Sin(angle)
				if k := pos*r.half + i; r.cos[k] != float32(c) || r.sin[k] != float32(s) {
					t.Fatalf("head width %d, position %d, frequency %d: newRope has (%g, %g), not the rounded (%g, %g) checked here", hd, pos, i, r.cos[k], r.sin[k], c, s)
				}
				if !stable(c) || !stable(s) {
					t.Errorf("head width %d, position %d, frequency %d: cos %.17g or sin %.17g is within 8 ulp of a float32 rounding boundary", hd, pos, i, c, s)
				}
			}
		}
	}
}
