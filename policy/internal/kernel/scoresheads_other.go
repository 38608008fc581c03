//go:build !amd64 || purego

package kernel

// scoresHeadsFor returns the native ScoresF16Heads of im: none off amd64.
func scoresHeadsFor(*impl) func(scores, q []float32, keys []uint16, ldk, n, heads, hd int) bool {
	return nil
}
