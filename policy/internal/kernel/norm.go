package kernel

// normScale sets dst[i] = w[i]·(x[i]·inv), the last step of RMSNorm (two
// rounded products, also in the vector kernel), for equal lengths.
func normScale(dst, x, w []float32, inv float32) {
	if activeNormScale != nil {
		activeNormScale(dst, x, w, inv)
		return
	}
	normScaleGeneric(dst, x, w, inv)
}

// activeNormScale is the vector normScale of the active implementation, nil
// where there is none. Like active, it is set once at initialisation.
var activeNormScale = normScaleFor(active)

func normScaleGeneric(dst, x, w []float32, inv float32) {
	dst, w = dst[:len(x)], w[:len(x)]
	for i, v := range x {
		dst[i] = w[i] * (v * inv)
	}
}
