package kernel

import "fmt"

// ScoresF16Heads computes the attention scores of one query over n
// binary16 key rows for all heads at once: for every head h < heads,
//
//	ScoresF16(scores[h*n:(h+1)*n], q[h*hd:(h+1)*hd], keys[h*hd:], ldk, n, hd)
//
// with its bits (keys holds n rows of heads·hd values, row stride ldk ≥
// heads·hd, the heads side by side as in a KV cache). Where the active
// implementation has a kernel for the shape (AVX-512, hd 32, heads a
// multiple of 4, n ≥ 4), one pass over the key rows serves four heads and
// four keys at a time; elsewhere it calls ScoresF16 per head. It runs on
// the calling goroutine.
func ScoresF16Heads(scores, q []float32, keys []uint16, ldk, n, heads, hd int) {
	if n < 0 || heads < 0 || hd < 0 {
		panic(fmt.Sprintf("kernel.ScoresF16Heads: negative dimension n=%d heads=%d hd=%d", n, heads, hd))
	}
	d := heads * hd
	checkLen("ScoresF16Heads", "scores", scores, heads*n)
	checkLen("ScoresF16Heads", "q", q, d)
	if ldk < d || n > 0 && d > 0 && len(keys) < (n-1)*ldk+d {
		panic(fmt.Sprintf("kernel.ScoresF16Heads: keys of length %d and stride %d do not hold %d rows of %d", len(keys), ldk, n, d))
	}
	if n == 0 || d == 0 {
		return
	}
	if activeScoresHeads != nil && activeScoresHeads(scores, q, keys, ldk, n, heads, hd) {
		return
	}
	for h := range heads {
		ScoresF16(scores[h*n:(h+1)*n], q[h*hd:(h+1)*hd], keys[h*hd:], ldk, n, hd)
	}
}

// activeScoresHeads is the native ScoresF16Heads of the active
// implementation for the shapes it reports true for, nil where there is
// none. Like active, it is set once at initialisation.
var activeScoresHeads = scoresHeadsFor(active)
