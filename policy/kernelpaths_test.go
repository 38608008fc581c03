package policy

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/policy/internal/kernel"
)

// pathTests are the engine properties that must hold on every kernel path:
// forks and batches sample exactly what a state alone samples, splitting a
// pass over goroutines changes nothing, and the int8 engine stays within
// its divergence bounds; and a packed batch computes the padded layout's
// logits and gradients.
var pathTests = []string{"TestForkAndBatchIndependence", "TestEngineSplitDoesNotChangeResults", "TestInt8Divergence", "TestPackedLogitsMatchPadded", "TestPackedGradientMatchesPadded"}

// TestEveryKernelPath runs pathTests again in a child process under each
// other kernel path this CPU has (the in-process run covers the active
// one): the path is chosen once per process, by ROLLOUT_KERNEL.
func TestEveryKernelPath(t *testing.T) {
	if os.Getenv(kernel.EnvVar) != "" {
		t.Skipf("%s is set: only that path is tested", kernel.EnvVar)
	}
	pattern := "^(" + strings.Join(pathTests, "|") + ")$"
	for _, name := range kernel.Available() {
		if name == kernel.Impl() {
			continue
		}
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(os.Args[0], "-test.run", pattern, "-test.count", "1", "-test.v")
			cmd.Env = append(os.Environ(), kernel.EnvVar+"="+name)
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s=%s go test -run %q: %v\n%s", kernel.EnvVar, name, pattern, err, out)
			}
			for _, test := range pathTests {
				if !strings.Contains(string(out), "--- PASS: "+test) {
					t.Errorf("%s=%s: %s did not pass:\n%s", kernel.EnvVar, name, test, out)
				}
			}
			if strings.Contains(string(out), "not available") {
				t.Errorf("%s=%s was not applied:\n%s", kernel.EnvVar, name, out)
			}
		})
	}
}
