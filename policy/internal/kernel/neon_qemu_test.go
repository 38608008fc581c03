//go:build amd64

package kernel

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// neonTests are the tests TestNEONUnderQEMU runs on arm64: every NEON
// kernel against the generic one bit for bit on random shapes with ragged
// tails, both W8A8 kernels against the exact product, and the argument
// layout the assembly reads.
var neonTests = []string{"TestGenericBitsEqualSIMD", "TestMatMulNTW8A8", "TestNEONArgLayout", "TestAttendValues", "TestDotMatchesMatMulNT"}

// TestNEONUnderQEMU builds this package's tests for GOARCH=arm64 and runs
// neonTests under qemu-aarch64-static (whose default CPU has the
// dot-product instructions, so both neondot and neon are compared), which
// fails instead of skipping when ROLLOUT_REQUIRE_QEMU is set and qemu is
// missing.
func TestNEONUnderQEMU(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the package for arm64 and runs it under emulation")
	}
	qemu, err := exec.LookPath("qemu-aarch64-static")
	if err != nil {
		if os.Getenv("ROLLOUT_REQUIRE_QEMU") != "" {
			t.Fatal("qemu-aarch64-static is not on PATH and ROLLOUT_REQUIRE_QEMU is set: install Debian's qemu-user-static")
		}
		t.Skip("qemu-aarch64-static is not on PATH (Debian: apt-get install qemu-user-static)")
	}
	bin := filepath.Join(t.TempDir(), "kernel-arm64.test")
	build := exec.Command("go", "test", "-c", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("GOARCH=arm64 go test -c: %v\n%s", err, out)
	}
	run := exec.Command(qemu, bin, "-test.run", "^("+strings.Join(neonTests, "|")+")$", "-test.v", "-test.count", "1")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, EnvVar+"=") {
			env = append(env, kv)
		}
	}
	run.Env = env
	out, err := run.CombinedOutput()
	if err != nil {
		t.Fatalf("%s under qemu: %v\n%s", strings.Join(neonTests, ", "), err, out)
	}
	for _, name := range neonTests {
		if !strings.Contains(string(out), "--- PASS: "+name+" ") {
			t.Errorf("%s did not pass under qemu:\n%s", name, out)
		}
	}
	for _, path := range []string{"neondot", "neon"} {
		if !strings.Contains(string(out), "W8A8 path "+path) {
			t.Errorf("the arm64 run did not test the %s path:\n%s", path, out)
		}
	}
}
