//go:build !amd64 || purego

package kernel

// rmsNormBackwardRest is rmsNormBackwardGo.
func rmsNormBackwardRest(gx, tr, res, x, w, g []float32, inv, c float32) {
	rmsNormBackwardGo(gx, tr, res, x, w, g, inv, c)
}
