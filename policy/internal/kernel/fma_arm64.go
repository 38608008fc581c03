//go:build arm64

package kernel

// fma32 is the correctly rounded float32 a·b+c. On arm64 the Go compiler
// fuses a float32 x*y + z into one FMADDS, which is exactly that (TestFMA32
// checks it against the exact reference).
func fma32(a, b, c float32) float32 { return a*b + c }

// fmaFast is fma32, always correctly rounded on arm64 (see fma_other.go).
func fmaFast(a, b, c float32) (float32, bool) { return a*b + c, true }
