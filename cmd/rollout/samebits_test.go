package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// sameBitsConfig is the experiment every CPU must reproduce bit for bit: 2
// strategies × 2 seeds of one RL step from a freshly initialised policy
// (no pretraining, so that it stays small under emulation).
const sameBitsConfig = `name: bits
task: {name: add, params: {digits: 1}}
checkpoint: base
train: {steps: 1, prompts_per_step: 2, max_resample_rounds: 0}
eval: {every: 1, prompts: 2, samples: 2, k: 2}
seeds: [1, 2]
ablate: {rollout.strategy: [flat, entropy_tree]}
`

// envRequireQEMU makes TestSameBitsEveryCPU fail instead of skip when
// qemu-aarch64-static is missing (.ci/run sets it after installing it).
const envRequireQEMU = "ROLLOUT_REQUIRE_QEMU"

// kernelPaths are the values of ROLLOUT_KERNEL; those this CPU lacks are
// skipped (the program says so on stderr).
var kernelPaths = []string{"avx512vnni", "avx512", "avx2", "generic"}

// sameBitsOneSeed is sameBitsConfig's first seed alone: the experiment of
// the slowest run, the pure-Go kernels under emulation.
var sameBitsOneSeed = strings.Replace(sameBitsConfig, "seeds: [1, 2]", "seeds: [1]", 1)

// arm64Runs are the arm64 runs under qemu-aarch64-static, whose default CPU
// has the dot-product instructions: the NEON kernels on sameBitsConfig, and
// the pure-Go ones (some 2–3 times slower) on sameBitsOneSeed. "neon"
// differs from "neondot" only in the W8A8 product, which the experiment
// does not use.
var arm64Runs = []struct{ path, config string }{{"neondot", sameBitsConfig}, {"generic", sameBitsOneSeed}}

// TestSameBitsEveryCPU runs sameBitsConfig under every kernel path of this
// CPU and, built for GOARCH=arm64, under qemu-aarch64-static on the NEON
// and the pure-Go kernels (arm64Runs), and requires the exported metrics
// (without the wall-clock timings) and groups of every run to equal those
// of the first path's run of the same config bit for bit: "same config
// and seed, same bits" on every CPU.
func TestSameBitsEveryCPU(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an experiment on every kernel path and under emulation")
	}
	dir := t.TempDir()
	bin := rolloutOnPath(t, dir)
	type result struct{ name, config, metrics, groups string }
	var results []result
	for _, path := range kernelPaths {
		start := time.Now()
		m, g, stderr := sameBitsRun(t, filepath.Join(dir, path), sameBitsConfig, []string{bin}, append(cleanEnv(), "ROLLOUT_KERNEL="+path))
		if strings.Contains(stderr, "not available") {
			t.Logf("kernel path %s: not on this CPU", path)
			continue
		}
		results = append(results, result{path, sameBitsConfig, m, g})
		t.Logf("kernel path %s: %.1fs", path, time.Since(start).Seconds())
	}
	qemu, err := exec.LookPath("qemu-aarch64-static")
	switch {
	case err != nil && os.Getenv(envRequireQEMU) != "":
		t.Fatalf("qemu-aarch64-static is not on PATH and %s is set: install Debian's qemu-user-static", envRequireQEMU)
	case err != nil:
		t.Logf("arm64 not compared: qemu-aarch64-static is not on PATH (Debian: apt-get install qemu-user-static)")
	default:
		// The reference of the one-seed config: the best native path.
		m, g, _ := sameBitsRun(t, filepath.Join(dir, "one-seed"), sameBitsOneSeed, []string{bin}, cleanEnv())
		results = append(results, result{"native, one seed", sameBitsOneSeed, m, g})
		start := time.Now()
		arm := filepath.Join(dir, "rollout-arm64")
		build := exec.Command("go", "build", "-o", arm, ".")
		build.Env = append(os.Environ(), "GOARCH=arm64", "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("GOARCH=arm64 go build: %v\n%s", err, out)
		}
		t.Logf("arm64: build %.1fs", time.Since(start).Seconds())
		for _, run := range arm64Runs {
			start := time.Now()
			name := "arm64 " + run.path + " (qemu)"
			m, g, stderr := sameBitsRun(t, filepath.Join(dir, "arm64-"+run.path), run.config, []string{qemu, arm}, append(cleanEnv(), "ROLLOUT_KERNEL="+run.path))
			if strings.Contains(stderr, "not available") {
				// The float kernels of neon and neondot are the same.
				t.Logf("%s: the emulated CPU lacks it; ran its best path:\n%s", name, stderr)
			}
			t.Logf("%s: %.1fs", name, time.Since(start).Seconds())
			results = append(results, result{name, run.config, m, g})
		}
	}
	compared := 0
	for i, r := range results {
		ref := results[0]
		for _, c := range results[:i] {
			if c.config == r.config {
				ref = c
				break
			}
		}
		if ref.config != r.config || i == 0 {
			continue
		}
		compared++
		if r.metrics != ref.metrics {
			t.Errorf("%s: metrics differ from %s:\n%s", r.name, ref.name, lineDiff(ref.metrics, r.metrics))
		}
		if r.groups != ref.groups {
			t.Errorf("%s: groups differ from %s:\n%s", r.name, ref.name, lineDiff(ref.groups, r.groups))
		}
	}
	if compared == 0 {
		t.Logf("only %d path: nothing compared", len(results))
	}
}

// sameBitsRun runs the experiment config (named bits) in dir with the
// command cmd (the program and any emulator before it) and returns its
// metrics export without timings, its groups export and the stderr of the
// run.
func sameBitsRun(t *testing.T, dir, config string, cmd []string, env []string) (metrics, groups, stderr string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "exp.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (string, string) {
		c := exec.Command(cmd[0], append(cmd[1:], args...)...)
		c.Dir, c.Env = dir, env
		var out, errOut bytes.Buffer
		c.Stdout, c.Stderr = &out, &errOut
		if err := c.Run(); err != nil {
			t.Fatalf("%s %s: %v\n%s", strings.Join(cmd, " "), strings.Join(args, " "), err, errOut.String())
		}
		return out.String(), errOut.String()
	}
	_, e1 := run("model", "init", "--size", "tiny", "--out", "base")
	_, e2 := run("run", "exp.yaml", "--store", "s.db", "--cache", ".", "--workers", "1")
	m, _ := run("export", "bits", "--what", "metrics", "--store", "s.db")
	g, _ := run("export", "bits", "--what", "groups", "--store", "s.db")
	return withoutTimings(t, m), g, e1 + e2
}

// withoutTimings drops the wall-clock fields (time_s and the timing_s/
// metrics) from a metrics export, one JSON object a line, and writes the
// rest back with sorted keys.
func withoutTimings(t *testing.T, export string) string {
	t.Helper()
	var b strings.Builder
	sc := bufio.NewScanner(strings.NewReader(export))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var row map[string]any
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("metrics export line %q: %v", sc.Text(), err)
		}
		delete(row, "time_s")
		if ms, ok := row["metrics"].(map[string]any); ok {
			for k := range ms {
				if strings.HasPrefix(k, "timing_s/") {
					delete(ms, k)
				}
			}
		}
		line, err := json.Marshal(row) // maps marshal with sorted keys
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

// lineDiff lists the lines of got that are not in want, and the reverse
// (at most 10 each).
func lineDiff(want, got string) string {
	only := func(a, b string) []string {
		in := map[string]bool{}
		for _, l := range strings.Split(b, "\n") {
			in[l] = true
		}
		var out []string
		for _, l := range strings.Split(a, "\n") {
			if !in[l] {
				out = append(out, l)
			}
		}
		sort.Strings(out)
		return out[:min(len(out), 10)]
	}
	return fmt.Sprintf("only in reference: %q\nonly here: %q", only(want, got), only(got, want))
}
