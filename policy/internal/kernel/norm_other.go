//go:build !amd64 || purego

package kernel

// normScaleFor returns the vector normScale of im: none off amd64.
func normScaleFor(*impl) func(dst, x, w []float32, inv float32) { return nil }
