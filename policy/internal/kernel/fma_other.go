//go:build !arm64

package kernel

// fma32 is the correctly rounded float32 a·b+c (see fma32Portable).
func fma32(a, b, c float32) float32 { return fma32Portable(a, b, c) }
