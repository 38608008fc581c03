//go:build !amd64 || purego

package kernel

// rope is ropeGo off amd64.
func rope(x []float32, heads int, cos, sin []float32, dir float32) {
	ropeGo(x, heads, cos, sin, dir)
}
