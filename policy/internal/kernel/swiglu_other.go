//go:build !amd64 || purego

package kernel

// swigluBackward is swigluBackwardGo.
func swigluBackward(ggate, gup, gate, up, g []float32) { swigluBackwardGo(ggate, gup, gate, up, g) }
