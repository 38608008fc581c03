package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/rollout-rl/rollout/tracking"
)

// TestCLIChild is the rollout process of the interrupt tests: it runs the
// command line in $ROLLOUT_CLI_CHILD (a JSON list of arguments) and exits
// with its status.
func TestCLIChild(t *testing.T) {
	spec := os.Getenv("ROLLOUT_CLI_CHILD")
	if spec == "" {
		t.Skip("the rollout process of the interrupt tests")
	}
	var args []string
	if err := json.Unmarshal([]byte(spec), &args); err != nil {
		fmt.Fprintln(os.Stderr, "ROLLOUT_CLI_CHILD:", err)
		os.Exit(3)
	}
	os.Exit(run(args, os.Stdout, os.Stderr))
}

// interruptSetup writes a tiny checkpoint and an experiment of 4 runs of
// 8 steps; it returns the config's path.
func interruptSetup(t *testing.T, dir string) string {
	t.Helper()
	if code, _, e := rollout(t, "model", "init", "--size", "tiny", "--out", filepath.Join(dir, "base")); code != 0 {
		t.Fatal(e)
	}
	cfg := filepath.Join(dir, "exp.yaml")
	err := os.WriteFile(cfg, []byte(`name: intr
task: {name: add, params: {digits: 1}}
checkpoint: base
train: {steps: 8, prompts_per_step: 2, max_resample_rounds: 0}
eval: {every: 4, prompts: 2, samples: 2, k: 2}
seeds: [1, 2]
ablate: {rollout.strategy: [flat, random_tree]}
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// child is a rollout process under test, its output gathered.
type child struct {
	cmd            *exec.Cmd
	mu             sync.Mutex
	stdout, stderr bytes.Buffer
	done           chan struct{} // closed once the output is read
}

func (c *child) output() (string, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stdout.String(), c.stderr.String()
}

// gather copies r into buf until r ends.
func (c *child) gather(buf *bytes.Buffer, r io.Reader, wg *sync.WaitGroup) {
	defer wg.Done()
	b := make([]byte, 4096)
	for {
		n, err := r.Read(b)
		c.mu.Lock()
		buf.Write(b[:n])
		c.mu.Unlock()
		if err != nil {
			return
		}
	}
}

// startRollout starts rollout with args in its own process, its stderr a
// pseudo-terminal when tty is set (so that it shows bars), else a pipe.
func startRollout(t *testing.T, tty bool, args ...string) *child {
	t.Helper()
	spec, _ := json.Marshal(args)
	c := &child{cmd: exec.Command(os.Args[0], "-test.run=^TestCLIChild$"), done: make(chan struct{})}
	c.cmd.Env = append(os.Environ(), "ROLLOUT_CLI_CHILD="+string(spec))
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	errR, errW := outR, outW
	if tty {
		errR, errW = openPTY(t)
	} else if errR, errW, err = os.Pipe(); err != nil {
		t.Fatal(err)
	}
	c.cmd.Stdout, c.cmd.Stderr = outW, errW
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	outW.Close()
	errW.Close()
	var wg sync.WaitGroup
	wg.Add(2)
	go c.gather(&c.stdout, outR, &wg)
	go c.gather(&c.stderr, errR, &wg) // a pty's master reads EIO once the child is gone
	go func() { wg.Wait(); outR.Close(); errR.Close(); close(c.done) }()
	t.Cleanup(func() { c.cmd.Process.Kill(); c.cmd.Wait() })
	return c
}

// openPTY opens a pseudo-terminal: its master and its slave.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	unlock := 0
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafePointer(&unlock))); e != 0 {
		t.Fatalf("unlockpt: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafePointer(&n))); e != 0 {
		t.Fatalf("ptsname: %v", e)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A new terminal is 0×0 characters: make it 160×40.
	ws := [4]uint16{40, 160, 0, 0}
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, s.Fd(), syscall.TIOCSWINSZ, uintptr(unsafePointer(&ws))); e != 0 {
		t.Fatalf("setting the window size: %v", e)
	}
	return m, s
}

// wait waits for the child to exit and its output to be read, and returns
// its exit status.
func (c *child) wait(t *testing.T) int {
	t.Helper()
	exited := make(chan error, 1)
	go func() { exited <- c.cmd.Wait() }()
	select {
	case err := <-exited:
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatal(err)
		}
	case <-time.After(2 * time.Minute):
		out, e := c.output()
		t.Fatalf("rollout did not exit\n%s\n%s", out, e)
	}
	<-c.done
	return c.cmd.ProcessState.ExitCode()
}

// waitFor waits until the child's stderr holds text.
func (c *child) waitFor(t *testing.T, text string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if _, e := c.output(); strings.Contains(e, text) {
			return
		}
	}
	out, e := c.output()
	t.Fatalf("rollout did not print %q:\n%s\n%s", text, out, e)
}

// waitForStep waits until some run of the store at path has committed
// step 1 (read from snapshots while rollout writes).
func waitForStep(t *testing.T, c *child, path string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if st, err := tracking.Open(path, tracking.Options{ReadOnly: true}); err == nil {
			runs, _ := st.Runs("intr")
			st.Close()
			for _, r := range runs {
				if r.LastStep >= 1 {
					return
				}
			}
		}
		select {
		case <-c.done:
			out, e := c.output()
			t.Fatalf("rollout ended before a step committed:\n%s\n%s", out, e)
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatal("no step committed within a minute")
}

// storeRuns reads the runs of experiment intr and their metrics (wall
// times left out), by run id.
func storeRuns(t *testing.T, path string) (map[string]tracking.Run, map[string][]tracking.StepMetrics) {
	t.Helper()
	st, err := tracking.Open(path, tracking.Options{ReadOnly: true, NoSnapshot: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs, err := st.Runs("intr")
	if err != nil {
		t.Fatal(err)
	}
	byID, metrics := map[string]tracking.Run{}, map[string][]tracking.StepMetrics{}
	for _, r := range runs {
		byID[r.ID] = r
		ms, err := st.Metrics(r.ID)
		if err != nil {
			t.Fatal(err)
		}
		for i := range ms {
			ms[i].Elapsed = 0
			for k := range ms[i].Values {
				if strings.HasPrefix(k, "timing_s/") {
					delete(ms[i].Values, k)
				}
			}
		}
		metrics[r.ID] = ms
	}
	return byID, metrics
}

// barLine matches a progress bar, as a terminal shows it ("[=====>----]");
// piped progress is plain lines without one.
var barLine = regexp.MustCompile(`\[[=>-]{10,}\]`)

var stoppedLine = regexp.MustCompile(`(?m)^run ([0-9a-f]{12}) .* seed \d: stopped at step (\d+)$`)

// Ctrl-C under a terminal and piped: rollout run lets the steps in flight
// commit, records the runs stopped at their step, says so per run, prints
// the command that resumes, and exits 130; that command finishes the runs
// bit-identical to an uninterrupted run. A second Ctrl-C exits 130 at once
// and leaves a store the next run resumes from.
func TestInterruptAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("runs experiments in child processes")
	}
	dir := t.TempDir()
	cfg := interruptSetup(t, dir)
	whole := filepath.Join(dir, "whole.db")
	if code, out, e := rollout(t, "run", cfg, "--store", whole, "--cache", dir, "--workers", "2"); code != 0 {
		t.Fatalf("uninterrupted run: exit %d\n%s\n%s", code, out, e)
	}
	_, want := storeRuns(t, whole)

	for _, tc := range []struct {
		name    string
		tty     bool
		signals int
		// merged resumes from a copy that rollout merge made of the
		// interrupted store (whose resume state files are then deleted).
		merged bool
	}{
		{"terminal", true, 1, false},
		{"piped", false, 1, false},
		{"twice", false, 2, false},
		{"merged", false, 1, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := filepath.Join(t.TempDir(), "s.db")
			args := []string{"run", cfg, "--store", store, "--cache", dir, "--workers", "2"}
			c := startRollout(t, tc.tty, args...)
			waitForStep(t, c, store)
			c.cmd.Process.Signal(os.Interrupt)
			if tc.signals == 2 {
				// Once the first is taken (signals sent at once may merge
				// into one), while the steps in flight compute.
				c.waitFor(t, "stopping once the steps in flight commit")
				c.cmd.Process.Signal(os.Interrupt)
			}
			code := c.wait(t)
			out, e := c.output()
			if code != exitInterrupted {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, exitInterrupted, out, e)
			}
			runs, _ := storeRuns(t, store)
			if tc.signals == 1 {
				checkStopped(t, out, e, runs, tc.tty)
			} else {
				// Stopped at once: nothing recorded the runs as stopped, yet
				// rollout ls does not show them running.
				_, ls, _ := rollout(t, "ls", "--store", store)
				if !strings.Contains(e, "SIGINT again: stopping at once") || strings.Contains(ls, "running") || !strings.Contains(ls, "interrupted at step") {
					t.Errorf("after a second interrupt: rollout ls\n%s\nstderr\n%s", ls, e)
				}
			}
			if tc.merged {
				copied := filepath.Join(t.TempDir(), "copy.db")
				if code, out, e := rollout(t, "merge", store, "--into", copied); code != 0 {
					t.Fatalf("merge: exit %d\n%s\n%s", code, out, e)
				}
				if err := os.RemoveAll(store + ".ckpt"); err != nil {
					t.Fatal(err)
				}
				if dirs, err := os.ReadDir(copied + ".ckpt"); err != nil || len(dirs) == 0 {
					t.Fatalf("merge copied no resume state of the stopped runs: %v", err)
				}
				store = copied
				args[3] = copied
			}
			// The store is whole: the rerun the hint names resumes.
			code, out, e = rollout(t, args...)
			if code != 0 || !strings.Contains(out, "resumed from step") || strings.Contains(out, "stopped at") || !strings.Contains(out, "4 finished") {
				t.Fatalf("rerun: exit %d\n%s\n%s", code, out, e)
			}
			_, got := storeRuns(t, store)
			if len(got) != len(want) {
				t.Fatalf("%d runs, want %d", len(got), len(want))
			}
			for id, ms := range want {
				if fmt.Sprint(got[id]) != fmt.Sprint(ms) {
					t.Errorf("run %s: resumed metrics differ from an uninterrupted run's:\n%v\n%v", id, got[id], ms)
				}
			}
			// Every run finished: no resume state is left beside the store.
			if _, err := os.Stat(store + ".ckpt"); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s.ckpt remains after every run finished (%v)", store, err)
			}
		})
	}
}

// checkStopped checks what rollout run printed and recorded after one
// interrupt.
func checkStopped(t *testing.T, out, stderr string, runs map[string]tracking.Run, tty bool) {
	t.Helper()
	hint := "run the same command again to resume: rollout run "
	if strings.Count(out+stderr, hint) != 1 {
		t.Errorf("the rerun hint is not said exactly once:\n%s\n%s", out, stderr)
	}
	if !strings.Contains(stderr, hint) || !strings.Contains(stderr, "interrupted by SIGINT") || !strings.Contains(stderr, "stopping once the steps in flight commit") {
		t.Errorf("no rerun hint or interrupt message:\n%s\n%s", out, stderr)
	}
	stopped := stoppedLine.FindAllStringSubmatch(out, -1)
	if len(stopped) == 0 {
		t.Fatalf("no run says it stopped:\n%s", out)
	}
	for _, m := range stopped {
		step, _ := strconv.Atoi(m[2])
		var r tracking.Run
		for id, rr := range runs {
			if strings.HasPrefix(id, m[1]) {
				r = rr
			}
		}
		if r.Status != tracking.StatusStopped || r.LastStep != step {
			t.Errorf("run %s said stopped at step %d; the store has it %s at step %d", m[1], step, r.Status, r.LastStep)
		}
		if !strings.Contains(stderr, "stopped at step "+m[2]) {
			t.Errorf("the progress of run %s does not say stopped at step %s:\n%s", m[1], m[2], stderr)
		}
	}
	for _, r := range runs {
		if r.Status == tracking.StatusRunning || r.Status == tracking.StatusInterrupted {
			t.Errorf("run %s is %s after an interrupt", r.ID, r.Status)
		}
	}
	if !tty {
		// Each progress line once.
		seen := map[string]bool{}
		for _, line := range strings.Split(stderr, "\n") {
			if line != "" && seen[line] {
				t.Errorf("progress line printed twice: %q\n%s", line, stderr)
			}
			seen[line] = true
		}
		if strings.Contains(stderr, "\x1b[") {
			t.Errorf("piped progress has terminal escapes:\n%q", stderr)
		}
	} else if !barLine.MatchString(stderr) {
		// A bar redrawn carries escapes, but a run stopped before the
		// first redraw shows its bars once, without them: look for the bars.
		t.Errorf("no bars on a terminal:\n%q", stderr)
	}
	for _, line := range strings.Split(stderr, "\n") {
		// No run's bar jumped to 100% (the overall bar counts runs).
		if strings.Contains(line, "seed") && strings.Contains(line, "100%") && strings.Contains(line, "stopped") {
			t.Errorf("a stopped run's bar shows 100%%: %q", line)
		}
	}
}

func unsafePointer[T any](p *T) unsafe.Pointer { return unsafe.Pointer(p) }
