package kernel

import "fmt"

// SiLUMulBackward is the backward pass of SiLUMul (dst = silu(gate)·up)
// for the output gradient g: with s = Sigmoid(gate),
//
//	gup   = g·gate·s
//	ggate = g·up·s·(1 + gate·(1 − s))
//
// each product rounded in this order (left to right), without fused
// multiply-adds, so that every path gives the bits of swigluBackwardGo.
// It panics when the lengths differ.
func SiLUMulBackward(ggate, gup, gate, up, g []float32) {
	n := len(gate)
	if len(ggate) != n || len(gup) != n || len(up) != n || len(g) != n {
		panic(fmt.Sprintf("kernel.SiLUMulBackward: lengths differ: ggate %d, gup %d, gate %d, up %d, g %d", len(ggate), len(gup), n, len(up), len(g)))
	}
	if n == 0 {
		return
	}
	swigluBackward(ggate, gup, gate, up, g)
}

// swigluBackwardGo is SiLUMulBackward with the active Sigmoid and a Go
// loop.
func swigluBackwardGo(ggate, gup, gate, up, g []float32) {
	active.sigmoid(ggate, gate)
	gup, up, g = gup[:len(ggate)], up[:len(ggate)], g[:len(ggate)]
	for i, s := range ggate {
		z := gate[i]
		gup[i] = float32(g[i]*z) * s
		ggate[i] = float32(float32(g[i]*up[i])*s) * float32(1+float32(z*float32(1-s)))
	}
}
