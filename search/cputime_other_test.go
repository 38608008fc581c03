//go:build !unix

package search_test

import "time"

// processCPU is not measured on this platform.
func processCPU() time.Duration { return 0 }
