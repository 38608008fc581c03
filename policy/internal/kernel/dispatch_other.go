//go:build (!amd64 && !arm64) || purego

package kernel

// available lists the implementations this CPU can run, fastest first.
func available() []*impl { return []*impl{genericImpl} }
