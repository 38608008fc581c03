package main

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// envSlurm, set to 1, runs the test under a real Slurm (and fails it when
// Slurm or munge is missing); .ci/run sets it when it could install
// Debian's slurm-wlm and munge.
const envSlurm = "ROLLOUT_SLURM"

// slurmCluster is a one-node Slurm cluster started by the test: munged,
// slurmctld and slurmd, each a child process of the test, with every file
// under dir.
type slurmCluster struct {
	dir, conf string
	daemons   []*exec.Cmd
}

// freePort returns a TCP port on the loopback interface that nothing
// listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startSlurm starts munged, slurmctld and slurmd (as root, with process
// tracking through /proc and no task plugin, so that no cgroups are
// needed) and waits until the node is idle. The node says it has cpus
// CPUs, whatever the machine has, so that the array's tasks run at once.
// Every daemon is stopped when the test ends, whether it passed or not.
func startSlurm(t *testing.T, cpus int) *slurmCluster {
	t.Helper()
	dir, err := os.MkdirTemp("", "rollout-slurm-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(dir, 0o755)
	c := &slurmCluster{dir: dir, conf: filepath.Join(dir, "slurm.conf")}
	t.Cleanup(func() {
		c.stop(t)
		if !t.Failed() {
			os.RemoveAll(dir)
		} else {
			t.Logf("Slurm files kept in %s", dir)
		}
	})
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ = strings.Cut(host, ".")
	for _, d := range []string{"munge", "state", "spool"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	key := filepath.Join(dir, "munge", "munge.key")
	if out, err := exec.Command("mungekey", "--create", "--keyfile", key).CombinedOutput(); err != nil {
		t.Fatalf("mungekey: %v\n%s", err, out)
	}
	socket := filepath.Join(dir, "munge", "munge.socket")
	c.start(t, "munged", "--foreground", "--force", "--key-file", key, "--socket", socket,
		"--pid-file", filepath.Join(dir, "munge", "munged.pid"), "--seed-file", filepath.Join(dir, "munge", "seed"),
		"--log-file", filepath.Join(dir, "munged.log"))
	c.waitFor(t, 20*time.Second, "munged's socket", func() bool { _, err := os.Stat(socket); return err == nil })

	conf := fmt.Sprintf(`ClusterName=rollouttest
SlurmctldHost=%[1]s(127.0.0.1)
SlurmctldPort=%[2]d
SlurmdPort=%[3]d
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=%[4]s
CredType=cred/munge
StateSaveLocation=%[5]s/state
SlurmdSpoolDir=%[5]s/spool
SlurmctldPidFile=%[5]s/slurmctld.pid
SlurmdPidFile=%[5]s/slurmd.pid
SlurmctldLogFile=%[5]s/slurmctld.log
SlurmdLogFile=%[5]s/slurmd.log
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MinJobAge=600
NodeName=%[1]s NodeAddr=127.0.0.1 CPUs=%[6]d RealMemory=%[7]d State=UNKNOWN
PartitionName=test Nodes=%[1]s Default=YES MaxTime=INFINITE State=UP
`, host, freePort(t), freePort(t), socket, dir, cpus, 16384)
	if err := os.WriteFile(c.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	c.start(t, "slurmctld", "-D", "-i", "-f", c.conf)
	c.start(t, "slurmd", "-D", "-f", c.conf, "-N", host)
	c.waitFor(t, 60*time.Second, "the node to be idle", func() bool {
		out, _ := c.command("sinfo", "-h", "-o", "%t").Output()
		return strings.TrimSpace(string(out)) == "idle"
	})
	return c
}

// start starts a daemon in the foreground as a child of the test.
func (c *slurmCluster) start(t *testing.T, name string, args ...string) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(cleanEnv(), "SLURM_CONF="+c.conf)
	f, err := os.Create(filepath.Join(c.dir, name+".out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		f.Close()
		t.Fatalf("start %s: %v", name, err)
	}
	f.Close()
	c.daemons = append(c.daemons, cmd)
}

// stop ends the daemons it started, last first, and waits for them.
func (c *slurmCluster) stop(t *testing.T) {
	for i := len(c.daemons) - 1; i >= 0; i-- {
		d := c.daemons[i]
		d.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { d.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			d.Process.Kill()
			<-done
		}
	}
	c.daemons = nil
}

// command is a Slurm client command for this cluster.
func (c *slurmCluster) command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = append(cleanEnv(), "SLURM_CONF="+c.conf)
	return cmd
}

// log is a daemon's log file, for failure messages.
func (c *slurmCluster) log(name string) string {
	b, _ := os.ReadFile(filepath.Join(c.dir, name))
	return string(b)
}

// waitFor polls ok every 100 ms until it holds, failing the test after
// limit (a bound against a daemon that never comes up, not a timing
// assertion) with the daemons' logs.
func (c *slurmCluster) waitFor(t *testing.T, limit time.Duration, what string, ok func() bool) {
	t.Helper()
	for end := time.Now().Add(limit); !ok(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(end) {
			var logs strings.Builder
			for _, name := range []string{"munged.log", "munged.out", "slurmctld.log", "slurmctld.out", "slurmd.log", "slurmd.out"} {
				fmt.Fprintf(&logs, "\n%s:\n%s", name, c.log(name))
			}
			t.Fatalf("waited %v for %s%s", limit, what, logs.String())
		}
	}
}

// The repository's Slurm script, submitted with sbatch as a job array to
// a one-node Slurm cluster started here (munged, slurmctld, slurmd), runs
// one shard per array task under slurmd; the merged shards equal a
// single-process run of the same config: the same runs, metrics bit for
// bit (wall times aside) and the same rollout groups.
func TestSlurmArrayEqualsOneProcess(t *testing.T) {
	if os.Getenv(envSlurm) != "1" {
		t.Skipf("%s is not 1: set it to start a one-node Slurm (needs root, Debian's slurm-wlm and munge; .ci/run does when it can install them)", envSlurm)
	}
	for _, bin := range []string{"munged", "mungekey", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol", "sinfo"} {
		if _, err := exec.LookPath(bin); err != nil {
			t.Fatalf("%s=1 but %s is missing: %v", envSlurm, bin, err)
		}
	}
	if os.Geteuid() != 0 {
		t.Fatalf("%s=1 but the test is not root: the one-node cluster runs its daemons as root", envSlurm)
	}
	arr, _ := readSlurmScript(t, slurmScript)
	n := (arr.hi-arr.lo)/arr.step + 1
	cluster := startSlurm(t, n*arr.cpus)

	root := t.TempDir()
	os.Chmod(root, 0o755)
	bin := rolloutOnPath(t, root)
	want := singleProcessDump(t, root)

	script, _ := filepath.Abs(slurmScript)
	work := filepath.Join(root, "slurm")
	os.Mkdir(work, 0o755)
	if err := os.WriteFile(filepath.Join(work, "exp.yaml"), []byte(clusterConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	sbatch := cluster.command("sbatch", "--parsable", "--chdir", work, script, "exp.yaml")
	sbatch.Env = append(sbatch.Env, "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"), "ROLLOUT_CACHE="+filepath.Join(work, "cache"))
	out, err := sbatch.CombinedOutput()
	if err != nil {
		t.Fatalf("sbatch: %v\n%s\nslurmctld.log:\n%s", err, out, cluster.log("slurmctld.log"))
	}
	job := strings.TrimSpace(string(out))
	if _, err := strconv.Atoi(job); err != nil {
		t.Fatalf("sbatch --parsable printed %q, want a job id", out)
	}
	t.Logf("submitted %s as array job %s (tasks %d-%d)", slurmScript, job, arr.lo, arr.hi)
	cluster.waitFor(t, 5*time.Minute, "array job "+job, func() bool {
		out, err := cluster.command("squeue", "-h", "-j", job).Output()
		return err == nil && len(bytes.TrimSpace(out)) == 0
	})
	// Every array task ran to completion under slurmd, each writing the
	// log its #SBATCH --output names.
	info, err := cluster.command("scontrol", "-o", "show", "job", job).Output()
	if err != nil {
		t.Fatalf("scontrol show job %s: %v", job, err)
	}
	state := regexp.MustCompile(`^JobId=(\d+) .*?ArrayTaskId=(\d+) .*?JobState=(\S+) .*?ExitCode=(\S+)`)
	var done []int
	var launched []string
	for _, line := range strings.Split(strings.TrimSpace(string(info)), "\n") {
		m := state.FindStringSubmatch(line)
		if m == nil {
			t.Fatalf("scontrol show job: %q", line)
		}
		id, _ := strconv.Atoi(m[2])
		logFile := filepath.Join(work, fmt.Sprintf("rollout-%s_%d.log", job, id))
		taskLog, _ := os.ReadFile(logFile)
		if m[3] != "COMPLETED" || m[4] != "0:0" {
			t.Errorf("array task %d: %s, exit code %s\n%s:\n%s", id, m[3], m[4], logFile, taskLog)
		}
		// slurmd launched the task's batch script (each array task is a
		// job of its own id) and saw it end.
		slurmd := cluster.log("slurmd.log")
		launch := regexp.MustCompile(`(?m)^.*Launching batch job ` + m[1] + ` .*$`).FindString(slurmd)
		end := regexp.MustCompile(`(?m)^.*\[` + m[1] + `\.batch\] done with job$`).FindString(slurmd)
		if launch == "" || end == "" {
			t.Errorf("array task %d (job %s): slurmd.log does not show its launch and end:\n%s", id, m[1], slurmd)
		}
		launched = append(launched, fmt.Sprintf("array task %d = job %s: %s; %s", id, m[1], launch, end))
		done = append(done, id)
	}
	slices.Sort(done)
	var wantIDs []int
	for id := arr.lo; id <= arr.hi; id += arr.step {
		wantIDs = append(wantIDs, id)
	}
	if !slices.Equal(done, wantIDs) {
		t.Errorf("array tasks %v ran, want %v", done, wantIDs)
	}
	for _, l := range launched {
		t.Logf("slurmd.log: %s", l)
	}
	if t.Failed() {
		t.FailNow()
	}
	if got := storeDump(t, mergeShards(t, filepath.Join(work, "shards"), n)); !reflect.DeepEqual(got, want) {
		t.Fatal(dumpDiff(got, want))
	}
}
