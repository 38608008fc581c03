package main

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/rollout-rl/rollout/search/record"
	"github.com/rollout-rl/rollout/tracking"
)

// TestMain makes the test binary the rollout program when it is run under
// that name (a symbolic link, see rolloutOnPath), so that the cluster tests
// start shards as separate processes of the program under test.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == "rollout" {
		os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(m.Run())
}

// The cluster files, relative to this package.
const (
	slurmScript     = "../../experiments/cluster/slurm.sh"
	indexedJobFile  = "../../experiments/cluster/indexed-job.yaml"
	clusterTestName = "cluster"
)

// clusterConfig is a tiny experiment of 2 variants × 2 seeds whose base
// policy is pretrained (a few steps), so that shards sharing a cache
// pretrain it at the same time.
const clusterConfig = `name: ` + clusterTestName + `
task: {name: add, params: {digits: 1}}
pretrain: {steps: 3, batch_size: 4, eval_prompts: 4}
train: {steps: 2, prompts_per_step: 2, max_resample_rounds: 0}
eval: {every: 1, prompts: 3, samples: 2, k: 2}
seeds: [1, 2]
ablate: {rollout.strategy: [flat, entropy_tree]}
`

// rolloutOnPath links the test binary as dir/rollout and returns its path.
func rolloutOnPath(t *testing.T, dir string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "rollout")
	if err := os.Symlink(exe, bin); err != nil {
		t.Fatal(err)
	}
	return bin
}

// cleanEnv is the test's environment without the variables rollout reads
// for shards, stores and caches.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "SLURM_") || strings.HasPrefix(name, "ROLLOUT_") || name == envK8sIndex {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// slurmArray is what the script's #SBATCH directives ask for.
type slurmArray struct{ lo, hi, step, cpus int }

// readSlurmScript parses the #SBATCH directives sbatch reads (those before
// the first command) and the line that runs rollout.
func readSlurmScript(t *testing.T, path string) (slurmArray, string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	arr := slurmArray{step: 1}
	rangeRE := regexp.MustCompile(`^(\d+)-(\d+)(?::(\d+))?(?:%\d+)?$`)
	var command string
	directives := true
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if !strings.HasPrefix(line, "#") && line != "" {
			directives = false
			if strings.Contains(line, "rollout run") {
				command = line
			}
			continue
		}
		d, ok := strings.CutPrefix(line, "#SBATCH ")
		if !ok {
			continue
		}
		if !directives {
			t.Fatalf("%s:%d: #SBATCH after the first command: sbatch ignores it", path, n)
		}
		key, val, _ := strings.Cut(d, "=")
		switch key {
		case "--array":
			m := rangeRE.FindStringSubmatch(val)
			if m == nil {
				t.Fatalf("%s:%d: --array=%s: want a range A-B[:S]", path, n, val)
			}
			arr.lo, _ = strconv.Atoi(m[1])
			arr.hi, _ = strconv.Atoi(m[2])
			if m[3] != "" {
				arr.step, _ = strconv.Atoi(m[3])
			}
		case "--cpus-per-task":
			arr.cpus, _ = strconv.Atoi(val)
		}
	}
	if arr.hi == 0 || command == "" {
		t.Fatalf("%s: no --array directive (%+v) or no rollout run line", path, arr)
	}
	return arr, command
}

// env is what Slurm sets in the array task with index id (the variables of
// an array job that rollout and the script read).
func (a slurmArray) env(id int) []string {
	count := (a.hi-a.lo)/a.step + 1
	return []string{
		"SLURM_JOB_ID=" + strconv.Itoa(5000+id), "SLURM_ARRAY_JOB_ID=5000",
		envSlurmTaskID + "=" + strconv.Itoa(id), envSlurmTaskMin + "=" + strconv.Itoa(a.lo),
		envSlurmTaskMax + "=" + strconv.Itoa(a.hi), envSlurmTaskStep + "=" + strconv.Itoa(a.step),
		envSlurmTaskCount + "=" + strconv.Itoa(count), "SLURM_CPUS_PER_TASK=" + strconv.Itoa(a.cpus),
	}
}

// indexedJob is the part of a Kubernetes Job that the test reads.
type indexedJob struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
	Spec       struct {
		CompletionMode string `yaml:"completionMode"`
		Completions    int    `yaml:"completions"`
		Template       struct {
			Spec struct {
				Containers []struct {
					Command []string `yaml:"command"`
					Args    []string `yaml:"args"`
					Env     []struct {
						Name  string `yaml:"name"`
						Value string `yaml:"value"`
					} `yaml:"env"`
					VolumeMounts []struct {
						Name      string `yaml:"name"`
						MountPath string `yaml:"mountPath"`
					} `yaml:"volumeMounts"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// readIndexedJob parses the manifest and returns its Job, the container's
// command line and its environment.
func readIndexedJob(t *testing.T, path string) (indexedJob, []string, map[string]string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var job indexedJob
	if err := yaml.Unmarshal(raw, &job); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if job.APIVersion != "batch/v1" || job.Kind != "Job" || job.Spec.CompletionMode != "Indexed" || job.Spec.Completions < 1 {
		t.Fatalf("%s: want a batch/v1 Job with completionMode Indexed and completions ≥ 1, got %+v", path, job)
	}
	if n := len(job.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("%s: %d containers, want 1", path, n)
	}
	c := job.Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	for _, e := range c.Env {
		env[e.Name] = e.Value
	}
	return job, append(slices.Clone(c.Command), c.Args...), env
}

// checkRunCommand checks that words (after "rollout run") are a command
// line rollout run accepts, with --shard auto, and returns its flags.
func checkRunCommand(t *testing.T, what string, words []string) runArgs {
	t.Helper()
	if len(words) < 2 || words[0] != "rollout" || words[1] != "run" {
		t.Fatalf("%s: command %q, want rollout run …", what, words)
	}
	cmd := newRunCmd()
	if err := cmd.ParseFlags(words[2:]); err != nil {
		t.Fatalf("%s: %q: %v", what, words, err)
	}
	var a runArgs
	a.shard.shard, _ = cmd.Flags().GetString("shard")
	a.shard.shards, _ = cmd.Flags().GetInt("shards")
	a.store, _ = cmd.Flags().GetString("store")
	if cmd.Flags().NArg() != 1 || a.shard.shard != "auto" {
		t.Fatalf("%s: %q: want one config and --shard auto", what, words)
	}
	a.config = cmd.Flags().Arg(0)
	return a
}

// The Slurm script and the Indexed Job ask for what rollout reads: a range
// array (so the shards are SLURM_ARRAY_TASK_MIN…MAX), and an index with
// ROLLOUT_SHARDS equal to the Job's completions, the config and the store
// on mounted volumes; both run rollout run --shard auto.
func TestClusterFilesMatchTheCLI(t *testing.T) {
	arr, line := readSlurmScript(t, slurmScript)
	if !strings.Contains(line, "--shard auto") || !strings.HasPrefix(strings.TrimPrefix(line, "exec "), "rollout run ") {
		t.Errorf("%s: the command %q does not run rollout run … --shard auto", slurmScript, line)
	}
	for _, flag := range regexp.MustCompile(`--[a-z-]+`).FindAllString(line, -1) {
		if newRunCmd().Flags().Lookup(flag[2:]) == nil {
			t.Errorf("%s: rollout run has no flag %s", slurmScript, flag)
		}
	}
	for _, id := range []int{arr.lo, arr.hi} {
		ch, err := resolveShard(shardFlags{shard: "auto"}, env(envMap(arr.env(id))))
		if err != nil || ch.Count != (arr.hi-arr.lo)/arr.step+1 {
			t.Errorf("%s: array task %d: %+v, %v", slurmScript, id, ch, err)
		}
	}

	job, words, vars := readIndexedJob(t, indexedJobFile)
	a := checkRunCommand(t, indexedJobFile, words)
	n := job.Spec.Completions
	if a.shard.shards == 0 && vars[envShards] != strconv.Itoa(n) {
		t.Errorf("%s: %s=%q, want the completions, %d", indexedJobFile, envShards, vars[envShards], n)
	}
	mounted := func(p string) bool {
		for _, m := range job.Spec.Template.Spec.Containers[0].VolumeMounts {
			if strings.HasPrefix(p, strings.TrimSuffix(m.MountPath, "/")+"/") {
				return true
			}
		}
		return false
	}
	if !mounted(a.config) || !mounted(a.store) || !strings.HasSuffix(a.store, "/") {
		t.Errorf("%s: config %s and store %s: want them on mounted volumes, the store a directory", indexedJobFile, a.config, a.store)
	}
	// README links the directory, and the reference names both files.
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(readme, []byte("](experiments/cluster)")) {
		t.Error("README.md does not link experiments/cluster")
	}
	for _, f := range []string{slurmScript, indexedJobFile} {
		if !strings.Contains(reference(), filepath.Base(f)) {
			t.Errorf("the reference (doc.go) does not name %s", filepath.Base(f))
		}
	}
	for i := range n {
		lookup := env(map[string]string{envK8sIndex: strconv.Itoa(i), envShards: vars[envShards]})
		if ch, err := resolveShard(a.shard, lookup); err != nil || ch.Index != i || ch.Count != n {
			t.Errorf("%s: pod %d: %+v, %v", indexedJobFile, i, ch, err)
		}
	}
}

// envMap turns NAME=value pairs into a map.
func envMap(kvs []string) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// startShards starts n shard processes, shard i by start(i), all at once,
// and fails the test unless every one exits 0.
func startShards(t *testing.T, n int, start func(i int) *exec.Cmd) {
	t.Helper()
	var wg sync.WaitGroup
	errs := make([]string, n)
	for i := range n {
		cmd := start(i)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := cmd.Run(); err != nil {
				errs[i] = fmt.Sprintf("shard %d: %v\n%s", i, err, out.String())
			}
		}()
	}
	wg.Wait()
	for _, e := range errs {
		if e != "" {
			t.Error(e)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
}

// mergeShards merges the shard stores in dir, n of them, into one.
func mergeShards(t *testing.T, dir string, n int) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "shard-*.db"))
	if len(files) != n {
		t.Fatalf("%s holds the stores %v, want %d shards", dir, files, n)
	}
	merged := filepath.Join(t.TempDir(), "merged.db")
	if code, _, e := rollout(t, append(append([]string{"merge"}, files...), "--into", merged)...); code != 0 {
		t.Fatal(e)
	}
	return merged
}

// Shards run as separate processes with the variables Slurm and
// Kubernetes set, by the repository's Slurm script and as the Indexed
// Job's container command, merge into a store equal to a single-process
// run of the same config: the same runs, metrics bit for bit (wall times
// aside) and the same rollout groups. The shards pretrain the base policy
// at once into one cache.
func TestShardsEqualOneProcess(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an experiment in several processes")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash to run the Slurm script")
	}
	root := t.TempDir()
	bin := rolloutOnPath(t, root)
	want := singleProcessDump(t, root)

	t.Run("slurm", func(t *testing.T) {
		arr, _ := readSlurmScript(t, slurmScript)
		script, _ := filepath.Abs(slurmScript)
		work := filepath.Join(root, "slurm")
		os.Mkdir(work, 0o755)
		os.WriteFile(filepath.Join(work, "exp.yaml"), []byte(clusterConfig), 0o644)
		base := append(cleanEnv(), "PATH="+root+string(os.PathListSeparator)+os.Getenv("PATH"), "ROLLOUT_CACHE="+filepath.Join(work, "cache"))
		n := (arr.hi-arr.lo)/arr.step + 1
		startShards(t, n, func(i int) *exec.Cmd {
			cmd := exec.Command("bash", script, "exp.yaml")
			cmd.Dir, cmd.Env = work, append(slices.Clone(base), arr.env(arr.lo+i*arr.step)...)
			return cmd
		})
		if got := storeDump(t, mergeShards(t, filepath.Join(work, "shards"), n)); !reflect.DeepEqual(got, want) {
			t.Fatal(dumpDiff(got, want))
		}
	})

	t.Run("kubernetes", func(t *testing.T) {
		job, words, vars := readIndexedJob(t, indexedJobFile)
		// The pod's volumes are directories here: each mount path maps to one.
		pod := filepath.Join(root, "pod")
		var pairs []string
		for _, m := range job.Spec.Template.Spec.Containers[0].VolumeMounts {
			dir := filepath.Join(pod, m.Name)
			os.MkdirAll(dir, 0o755)
			pairs = append(pairs, m.MountPath, dir)
		}
		local := strings.NewReplacer(pairs...)
		a := checkRunCommand(t, indexedJobFile, words)
		if err := os.WriteFile(local.Replace(a.config), []byte(clusterConfig), 0o644); err != nil {
			t.Fatal(err)
		}
		base := cleanEnv()
		for k, v := range vars {
			base = append(base, k+"="+local.Replace(v))
		}
		args := make([]string, len(words)-1)
		for i, w := range words[1:] {
			args[i] = local.Replace(w)
		}
		n := job.Spec.Completions
		startShards(t, n, func(i int) *exec.Cmd {
			cmd := exec.Command(bin, args...)
			cmd.Dir, cmd.Env = pod, append(slices.Clone(base), envK8sIndex+"="+strconv.Itoa(i))
			return cmd
		})
		if got := storeDump(t, mergeShards(t, local.Replace(a.store), n)); !reflect.DeepEqual(got, want) {
			t.Fatal(dumpDiff(got, want))
		}
	})
}

// runDump is what a store holds of one run, for comparing stores: the
// run's outcome, every metric's bits (wall times aside) and every rollout
// group's JSON.
type runDump struct {
	Variant, Config, Status string
	Seed                    int64
	LastStep                int
	Tokens                  int64
	Metrics                 []map[string]uint64
	Groups                  []string
}

// storeDump reads the cluster experiment's variants' configs and runs.
func storeDump(t *testing.T, path string) map[string]runDump {
	t.Helper()
	st, err := tracking.Open(path, tracking.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	exp, err := st.Experiment(clusterTestName)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]runDump{}
	for v, c := range exp.Configs {
		out["variant "+v] = runDump{Config: c}
	}
	runs, err := st.Runs(clusterTestName)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		d := runDump{Variant: r.Variant, Config: r.Config, Status: string(r.Status), Seed: r.Seed, LastStep: r.LastStep, Tokens: r.Tokens}
		ms, err := st.Metrics(r.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			bits := map[string]uint64{"step": uint64(m.Step), "tokens": uint64(m.Tokens)}
			for k, v := range m.Values {
				if !strings.HasPrefix(k, "timing_s/") {
					bits[k] = math.Float64bits(v)
				}
			}
			d.Metrics = append(d.Metrics, bits)
		}
		err = st.EachGroup(r.ID, func(step, index int, g *record.Group) error {
			var b bytes.Buffer
			if err := g.WriteJSON(&b); err != nil {
				return err
			}
			d.Groups = append(d.Groups, fmt.Sprintf("step %d group %d: %s", step, index, b.String()))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		out[r.ID] = d
	}
	if len(runs) != 4 || len(out) != 6 {
		t.Fatalf("%s: %d runs, %d entries; want the 4 runs of 2 variants", path, len(runs), len(out))
	}
	return out
}

// dumpDiff says where two store dumps first differ.
func dumpDiff(got, want map[string]runDump) string {
	for id, w := range want {
		g, ok := got[id]
		switch {
		case !ok:
			return fmt.Sprintf("the shards lack %s", id)
		case g.Variant != w.Variant || g.Config != w.Config || g.Status != w.Status || g.Seed != w.Seed || g.LastStep != w.LastStep || g.Tokens != w.Tokens:
			return fmt.Sprintf("%s: shards %+v\nsingle %+v", id, g, w)
		case !reflect.DeepEqual(g.Metrics, w.Metrics):
			for i := range min(len(g.Metrics), len(w.Metrics)) {
				if !reflect.DeepEqual(g.Metrics[i], w.Metrics[i]) {
					return fmt.Sprintf("%s: metrics of record %d differ:\nshards %v\nsingle %v", id, i, g.Metrics[i], w.Metrics[i])
				}
			}
			return fmt.Sprintf("%s: %d metric records against %d", id, len(g.Metrics), len(w.Metrics))
		case !slices.Equal(g.Groups, w.Groups):
			for i := range min(len(g.Groups), len(w.Groups)) {
				if g.Groups[i] != w.Groups[i] {
					return fmt.Sprintf("%s: groups differ:\nshards %s\nsingle %s", id, g.Groups[i], w.Groups[i])
				}
			}
			return fmt.Sprintf("%s: %d groups against %d", id, len(g.Groups), len(w.Groups))
		}
	}
	return fmt.Sprintf("the shards have %d entries, the single run %d", len(got), len(want))
}

// singleProcessDump runs clusterConfig in one process into a store under
// root and returns its dump: what every cluster recipe must reproduce.
func singleProcessDump(t *testing.T, root string) map[string]runDump {
	t.Helper()
	single := filepath.Join(root, "single.db")
	cfg := filepath.Join(root, "single.yaml")
	if err := os.WriteFile(cfg, []byte(clusterConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, e := rollout(t, "run", cfg, "--store", single, "--cache", filepath.Join(root, "cache-single"), "--workers", "2"); code != 0 {
		t.Fatalf("single run: %s%s", out, e)
	}
	return storeDump(t, single)
}
