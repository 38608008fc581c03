//go:build !amd64 || purego

package kernel

// rmsNormBackwardRest is rmsNormBackwardGo.
func rmsNormBackwardRest(gx, tr, res, x, w, g []float32, inv, c float32) {
	rmsNormBackwardGo(gx, tr, res, x, w, g, inv, c)
}

// mulScaled is mulScaledGo.
func mulScaled(dst, x, w []float32, s float32) { mulScaledGo(dst, x, w, s) }
