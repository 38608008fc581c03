package policy

import "github.com/rollout-rl/rollout/policy/internal/kernel"

// KernelEnvVar is the environment variable that selects the kernel path
// (the SIMD implementation of the matrix products and row operations) for
// a process: one of KernelPaths, read once at start; unset, the fastest.
const KernelEnvVar = kernel.EnvVar

// KernelPath names the kernel path this process runs: "avx512vnni",
// "avx512", "avx2" or "generic".
func KernelPath() string { return kernel.Impl() }

// KernelPaths names the kernel paths this CPU can run, fastest first: the
// values KernelEnvVar may take. Tests of properties that must hold on
// every path rerun themselves under each.
func KernelPaths() []string { return kernel.Available() }
