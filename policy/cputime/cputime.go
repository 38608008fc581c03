// Package cputime measures the CPU time of the process, for benchmarks that
// report work per CPU-second beside work per second of wall time: on a
// shared machine the CPU figure is the steadier one.
package cputime

import "time"

// Process returns the user and system CPU time of the process so far, or 0
// where the platform does not say (then CPU figures are not reported).
func Process() time.Duration { return process() }
