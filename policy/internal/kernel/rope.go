package kernel

import "fmt"

// RoPE applies rotary position embeddings (the rotate-half convention) to
// heads consecutive head vectors at the start of x, each of 2·len(cos)
// values whose first half pairs with its second: with c = cos[i] and
// s = dir·sin[i],
//
//	x[i]   ← x[i]·c − x[i+h]·s
//	x[i+h] ← x[i+h]·c + x[i]·s
//
// for i < h = len(cos). dir 1 rotates by the angles, −1 by their
// negatives (the transposed rotation, as back-propagation needs). Each
// product is rounded on its own, in this order, without fused
// multiply-adds, so that every path gives the bits of ropeGo. It panics
// when sin's length differs from cos's or x is too short.
func RoPE(x []float32, heads int, cos, sin []float32, dir float32) {
	h := len(cos)
	if len(sin) != h || heads < 0 || len(x) < 2*h*heads {
		panic(fmt.Sprintf("kernel.RoPE: %d heads of 2×%d values in x of length %d, sin of length %d", heads, h, len(x), len(sin)))
	}
	if h == 0 || heads == 0 {
		return
	}
	rope(x, heads, cos, sin, dir)
}

// ropeGo is RoPE in Go.
func ropeGo(x []float32, heads int, cos, sin []float32, dir float32) {
	h := len(cos)
	sin = sin[:h]
	for hd := 0; hd < heads; hd++ {
		lo, hi := x[2*hd*h:(2*hd+1)*h], x[(2*hd+1)*h:(2*hd+2)*h]
		for i, c := range cos {
			a, b := lo[i], hi[i]
			s := dir * sin[i]
			lo[i] = float32(a*c) - float32(b*s)
			hi[i] = float32(b*c) + float32(a*s)
		}
	}
}
