package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/rollout-rl/rollout/tracking"
)

// tinyExperiment is a config that runs in a few seconds: 2 variants × 2
// seeds of 3 steps on 1-digit addition from a briefly pretrained policy.
const tinyExperiment = `name: dmg
task: {name: add, params: {digits: 1}}
pretrain: {steps: 20}
train: {steps: 3, prompts_per_step: 2, max_resample_rounds: 0}
eval: {every: 1, prompts: 3, samples: 2, k: 2}
seeds: [1, 2]
ablate: {rollout.strategy: [flat, entropy_tree]}
`

// runTiny runs tinyExperiment into dir/s.db and returns the store's path.
func runTiny(t *testing.T, dir string) string {
	t.Helper()
	cfg := filepath.Join(dir, "exp.yaml")
	if err := os.WriteFile(cfg, []byte(tinyExperiment), 0o644); err != nil {
		t.Fatal(err)
	}
	store := filepath.Join(dir, "s.db")
	if code, out, e := rollout(t, "run", cfg, "--store", store, "--cache", dir, "--workers", "2"); code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, e)
	}
	return store
}

// readCommands are the reading commands run on a store of tinyExperiment:
// each names the store at path; plot writes dir/p.svg.
func readCommands(dir, id, path string) [][]string {
	return [][]string{
		{"ls", "--store", path},
		{"show", id, "--store", path},
		{"report", "dmg", "--store", path, "--format", "csv"},
		{"plot", "dmg", "--metric", "eval/acc", "--out", filepath.Join(dir, "p.svg"), "--store", path},
		{"trees", id, "--store", path, "--step", "2"},
		{"export", "dmg", "--what", "groups", "--store", path},
		{"export", id, "--what", "trajectories", "--format", "csv", "--store", path},
		{"export", "dmg", "--what", "metrics", "--store", path},
	}
}

// readResult is what a reading command did: its exit status, its
// standard output (standard error when it failed) and the plot it wrote.
type readResult struct {
	code     int
	out, svg string
}

func execRead(t *testing.T, dir string, args []string) readResult {
	t.Helper()
	os.Remove(filepath.Join(dir, "p.svg"))
	code, out, errOut := rollout(t, args...)
	if code != 0 {
		out = errOut
	}
	svg, _ := os.ReadFile(filepath.Join(dir, "p.svg"))
	return readResult{code, out, string(svg)}
}

// Every reading command on truncated copies of a real store (1% to 90% of
// its size) either prints what it prints for the intact store or fails
// with exit 1 and a message naming the file, saying it is damaged and what
// to do; none panics or faults. compact and merge refuse the copies, check
// says intact (0) or damaged (1).
func TestDamagedStoreCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an experiment")
	}
	dir := t.TempDir()
	store := runTiny(t, dir)
	st, err := tracking.Open(store, tracking.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	runs, err := st.Runs("dmg")
	st.Close()
	if err != nil || len(runs) != 4 {
		t.Fatalf("%d runs, %v", len(runs), err)
	}
	id := runs[1].ID
	var intact []readResult
	for _, args := range readCommands(dir, id, store) {
		r := execRead(t, dir, args)
		if r.code != 0 {
			t.Fatalf("%v on the intact store: exit %d: %s", args, r.code, r.out)
		}
		intact = append(intact, r)
	}
	// trees without --step shows the last committed step and says so.
	last := fmt.Sprint(runs[1].LastStep)
	code, out, e := rollout(t, "trees", id, "--store", store)
	_, atLast, _ := rollout(t, "trees", id, "--store", store, "--step", last)
	if want := "run " + id + ": step " + last + ", its last committed (--step S shows another)"; code != 0 || out != atLast || !strings.Contains(e, want) {
		t.Errorf("trees without --step: exit %d, stderr %q, want %q and the output of --step %s", code, e, want, last)
	}
	if code, out, e := rollout(t, "check", "--store", store); code != 0 || !strings.Contains(out, "intact (1 experiments, 4 runs") {
		t.Fatalf("check of the intact store: exit %d\n%s%s", code, out, e)
	}
	whole, err := os.ReadFile(store)
	if err != nil {
		t.Fatal(err)
	}
	used := usedBytes(t, whole)
	for _, pct := range []int{1, 5, 10, 50, 90} {
		cut := filepath.Join(dir, fmt.Sprintf("cut%d.db", pct))
		if err := os.WriteFile(cut, whole[:used*pct/100], 0o644); err != nil {
			t.Fatal(err)
		}
		for i, args := range readCommands(dir, id, cut) {
			r := execRead(t, dir, args)
			switch {
			case r.code == 0:
				if r.out != intact[i].out || r.svg != intact[i].svg {
					t.Errorf("%d%%: %v succeeded with output unlike the intact store's", pct, args)
				}
			case r.code != 1 || !strings.Contains(r.out, "store "+cut+" is damaged") || !strings.Contains(r.out, "restore it from a copy") || !strings.Contains(r.out, "rollout check"):
				t.Errorf("%d%%: %v: exit %d, %q: want exit 1 and the damaged-store message", pct, args, r.code, r.out)
			}
		}
		checkDamagedWrites(t, pct, cut)
	}
	checkFlippedRecord(t, dir, id, whole, intact)
	if code, out, e := rollout(t, "migrate", "--store", store); code != 0 || !strings.Contains(out, "nothing to migrate") {
		t.Errorf("migrate of a current store: exit %d\n%s%s", code, out, e)
	}
}

// checkFlippedRecord runs the reading commands on a copy of the store
// (whole) with one byte flipped in the metric record of step 1 of run id:
// those that read it fail with exit 1 and the damaged-store message naming
// the run and the step, the others print what they print for the intact
// store; check finds the checksum mismatch.
func checkFlippedRecord(t *testing.T, dir, id string, whole []byte, intact []readResult) {
	t.Helper()
	flipped := filepath.Join(dir, "flipped.db")
	if err := os.WriteFile(flipped, whole, 0o644); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(flipped, 0o644, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	var rec []byte
	db.View(func(tx *bolt.Tx) error {
		if b := tx.Bucket([]byte("data")).Bucket([]byte(id)).Bucket([]byte("m")); b != nil {
			rec = bytes.Clone(b.Get(binary.BigEndian.AppendUint64(nil, 1)))
		}
		return nil
	})
	db.Close()
	if len(rec) < 16 {
		t.Fatalf("metric record of step 1 of run %s: %d bytes", id, len(rec))
	}
	b := bytes.Clone(whole)
	for i := 0; ; {
		j := bytes.Index(b[i:], rec)
		if j < 0 {
			break
		}
		b[i+j+len(rec)-8] ^= 0x01 // inside the last metric's value
		i += j + len(rec)
	}
	if err := os.WriteFile(flipped, b, 0o644); err != nil {
		t.Fatal(err)
	}
	failed := 0
	for i, args := range readCommands(dir, id, flipped) {
		r := execRead(t, dir, args)
		switch {
		case r.code == 0:
			if r.out != intact[i].out || r.svg != intact[i].svg {
				t.Errorf("flipped byte: %v succeeded with output unlike the intact store's", args)
			}
		case r.code != 1 || !strings.Contains(r.out, "store "+flipped+" is damaged") || !strings.Contains(r.out, "run "+id) ||
			!strings.Contains(r.out, "step 1") || !strings.Contains(r.out, "rollout check"):
			t.Errorf("flipped byte: %v: exit %d, %q: want exit 1 and the damaged-store message naming run and step", args, r.code, r.out)
		default:
			failed++
		}
	}
	if failed < 3 { // show, report, plot and the metrics export read it
		t.Errorf("flipped byte: only %d reading commands noticed it", failed)
	}
	if code, out, e := rollout(t, "check", "--store", flipped); code != 1 || !strings.Contains(out, "checksum") || !strings.Contains(out, "run "+id) {
		t.Errorf("check of the flipped store: exit %d\n%s%s", code, out, e)
	}
}

// usedBytes is the part of a bbolt file its last commit needs (the
// high-water page id of the newer meta page times the page size): what
// lies beyond is the slack bbolt grows the file by, whose loss damages
// nothing. A meta page holds, after its 16-byte header, magic, version,
// page size (offset 24), flags, root bucket, free list, pgid (offset 56)
// and txid (offset 64).
func usedBytes(t *testing.T, b []byte) int {
	t.Helper()
	le := binary.LittleEndian
	pageSize := int(le.Uint32(b[24:]))
	if pageSize < 512 || len(b) < 2*pageSize {
		t.Fatalf("not a bbolt file: page size %d, %d bytes", pageSize, len(b))
	}
	m := b[:pageSize]
	if le.Uint64(b[pageSize+64:]) > le.Uint64(m[64:]) {
		m = b[pageSize:]
	}
	return int(le.Uint64(m[56:])) * pageSize
}

// checkDamagedWrites runs compact, merge and check on a damaged store.
func checkDamagedWrites(t *testing.T, pct int, cut string) {
	t.Helper()
	merged := filepath.Join(filepath.Dir(cut), "merged.db")
	for _, args := range [][]string{{"compact", "--store", cut}, {"merge", cut, "--into", merged}} {
		if code, _, e := rollout(t, args...); code != 1 || !strings.Contains(e, "store "+cut+" is damaged") {
			t.Errorf("%d%%: %v: exit %d, %q: want exit 1 and the damaged-store message", pct, args, code, e)
		}
	}
	if _, err := os.Stat(merged); err == nil {
		t.Errorf("%d%%: merge of a damaged store created the destination", pct)
	}
	code, out, e := rollout(t, "check", "--store", cut)
	if code != 1 || !strings.Contains(out, "damaged") || !strings.Contains(out, "truncated") || !strings.Contains(e, cut) {
		t.Errorf("%d%%: check: exit %d\n%s%s", pct, code, out, e)
	}
}

// The exit status follows from the error's type: input 2, interrupt 130,
// a damaged or locked store 1 even when a command marked it as input.
func TestExitStatus(t *testing.T) {
	damaged := &tracking.DamagedError{Path: "s.db", Problem: "truncated"}
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("disk full"), 1},
		{usageError{errors.New("--n 0")}, 2},
		{fmt.Errorf("loading: %w", usageError{errors.New("bad key")}), 2},
		{usageError{fmt.Errorf("report: %w", damaged)}, 1},
		{usageError{&tracking.LockedError{Path: "s.db"}}, 1},
		{interruptedError{context.Canceled}, 130},
		{damageFound{"s.db", 3}, 1},
	} {
		if got := exitStatus(tc.err); got != tc.want {
			t.Errorf("exitStatus(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// Wrong commands and arguments exit 2; a missing store names the path
// tried and how to name another, and compact and merge create nothing.
func TestUsageAndMissingStore(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("ROLLOUT_STORE", "")
	missing := filepath.Join(dir, "nothere.db")
	for _, tc := range []struct {
		env  string
		args []string
		want []string
	}{
		{"", []string{"nosuch"}, []string{`unknown command "nosuch" for "rollout"`}},
		{"", []string{"model", "nosuch"}, []string{`unknown command "nosuch" for "rollout model"`}},
		{"", []string{"ls", "a", "b"}, []string{"accepts at most 1 arg(s), received 2"}},
		{"", []string{"show"}, []string{"accepts 1 arg(s), received 0"}},
		{"", []string{"compact", "extra"}, []string{`unknown command "extra"`}},
		{"", []string{"ls"}, []string{"no store at rollout.db (the default)", "--store PATH", "$ROLLOUT_STORE", "rollout run CONFIG"}},
		{"", []string{"show", "abc", "--store", missing}, []string{"no store at " + missing + " (--store)"}},
		{missing, []string{"report", "x"}, []string{"no store at " + missing + " ($ROLLOUT_STORE)"}},
		{"", []string{"compact", "--store", missing}, []string{"no store at " + missing + " (--store)"}},
		{"", []string{"check", "--store", missing}, []string{"no store at " + missing}},
		{"", []string{"merge", missing, "--into", filepath.Join(dir, "m.db")}, []string{missing, "no such file", "name existing stores"}},
		{"", []string{"merge", missing}, []string{"--into"}},
		{"", []string{"model", "logits", "--checkpoint", missing, "--prompt", "1"}, []string{"--checkpoint " + missing + ": no checkpoint there"}},
		{"", []string{"sample", "--checkpoint", missing, "--task", "add"}, []string{"--checkpoint " + missing + ": no checkpoint there"}},
		{"", []string{"ttc", "--checkpoint", missing, "--task", "add"}, []string{"--checkpoint " + missing + ": no checkpoint there"}},
	} {
		t.Setenv("ROLLOUT_STORE", tc.env)
		code, _, errOut := rollout(t, tc.args...)
		if code != 2 {
			t.Errorf("%v: exit %d, want 2 (%q)", tc.args, code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("%v: stderr %q, want %q", tc.args, errOut, w)
			}
		}
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("commands on missing stores created %v", entries[0].Name())
	}
}

// --version prints the module version and the commit.
func TestVersion(t *testing.T) {
	code, out, _ := rollout(t, "--version")
	if code != 0 || !strings.HasPrefix(out, "rollout ") || !strings.Contains(out, "commit") {
		t.Fatalf("--version: exit %d, %q", code, out)
	}
	bi := &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}
	for _, tc := range []struct {
		settings []debug.BuildSetting
		want     string
	}{
		{nil, "rollout v1.2.3, commit unknown (built without version control information)"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "false"}}, "rollout v1.2.3, commit abc123"},
		{[]debug.BuildSetting{{Key: "vcs.revision", Value: "abc123"}, {Key: "vcs.modified", Value: "true"}}, "rollout v1.2.3, commit abc123 with uncommitted changes"},
	} {
		bi.Settings = tc.settings
		if got := version(bi, true); got != tc.want {
			t.Errorf("version(%v) = %q, want %q", tc.settings, got, tc.want)
		}
	}
}

// model init refuses a non-empty --out unless --force.
func TestModelInitOut(t *testing.T) {
	dir := t.TempDir()
	full := filepath.Join(dir, "full")
	os.Mkdir(full, 0o755)
	os.WriteFile(filepath.Join(full, "notes.txt"), []byte("mine"), 0o644)
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--out", full}, 2, "directory is not empty (it holds notes.txt…): choose another or add --force"},
		{[]string{"--out", file}, 2, "exists and is not a directory"},
		{[]string{"--out", full, "--force"}, 0, ""},
		{[]string{"--out", filepath.Join(dir, "new")}, 0, ""},
		{[]string{"--out", filepath.Join(dir, "new")}, 2, "not empty"},
	} {
		code, _, errOut := rollout(t, append([]string{"model", "init", "--size", "tiny"}, tc.args...)...)
		if code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want %d, %q", tc.args, code, errOut, tc.code, tc.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(full, "notes.txt")); string(b) != "mine" {
		t.Error("--force removed a file it does not write")
	}
}

// task show and verify take --param and --config; the README's examples
// print what the README shows.
func TestTaskParams(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	os.WriteFile(cfg, []byte("name: c\ntask: {name: countdown, params: {numbers: 4}}\n"), 0o644)
	data := filepath.Join(dir, "d.jsonl")
	os.WriteFile(data, []byte(`{"prompt": "1+1", "answer": 2}`+"\n"), 0o644)
	jsonl := []string{"verify", "jsonl", "--param", "path=" + data, "--param", "verifier=numeric", "--param", "max_response_len=20", "--prompt", "1+1"}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"verify", "countdown", "--param", "numbers=4", "--prompt", "4 7 9 7:23", "--response", "9+7+7"}, 0, `{"reward":1,"reason":"correct","answer":"23"}` + "\n"},
		{[]string{"verify", "add", "--param", "digits=3", "--prompt", "758+467", "--response", "15 12 12=1225"}, 0, `"reason":"correct"`},
		{[]string{"verify", "countdown", "--param", "numbers=4", "--prompt", "4 7 9 7:23", "--response", "7+7+9=23"}, 0, `"reason":"correct"`},
		{[]string{"verify", "path", "--prompt", "ab ac bd ce cf dg:a>g", "--response", "abdg"}, 0, `"reason":"correct"`},
		{[]string{"verify", "--config", cfg, "--prompt", "4 7 9 7:23", "--response", "9+7+7"}, 0, `"reason":"correct"`},
		{[]string{"show", "add", "--n", "5", "--seed", "1", "--split", "eval"}, 0, "# add, eval split, seed 1"},
		{[]string{"show", "--config", "../../experiments/configs/quickstart.yaml", "--n", "3"}, 0, "# add, train split, seed 1 (prompt ≤ 5"},
		{[]string{"show", "add", "--param", "digits=2", "--n", "1"}, 0, "prompt ≤ 5"},
		{[]string{"show", "--config", cfg, "--param", "max_target=20", "--n", "1"}, 0, "# countdown"},
		{[]string{"verify", "countdown", "--prompt", "4 7 9 7:23", "--response", "9+7+7"}, 2, `countdown prompt "4 7 9 7:23": 4 numbers, want 3 (the task's parameter numbers)`},
		{[]string{"show", "countdown", "--param", "number=4"}, 2, "--param number=4: unknown parameter (want one of numbers, min_number"},
		{[]string{"show", "countdown", "--param", "numbers=x"}, 2, "--param numbers=x: want a value of type int"},
		{[]string{"show", "countdown", "--param", "numbers"}, 2, `--param "numbers": want key=value`},
		{[]string{"show", "countdown", "--param", "numbers=9"}, 2, "numbers"},
		{[]string{"show", "add", "--config", cfg}, 2, "has task countdown: give one"},
		{[]string{"show"}, 2, "name a TASK (add, countdown, path, long_add, chain, countdown_search, dag_search, jsonl) or give --config FILE"},
		// a pattern starting with # (a YAML comment) is the string as given
		{append(jsonl, "--param", `pattern=#### (\S+)`, "--response", "so #### 2"), 0, `{"reward":1,"reason":"correct","answer":"2"}`},
		{append(jsonl, "--param", `pattern='#### (\S+)'`, "--response", "so #### 3"), 0, `"reason":"wrong_answer","answer":"3"`},
		{append(jsonl, "--param", "max_response_len=x", "--response", "2"), 2, "--param max_response_len=x: want a value of type int"},
	} {
		code, out, errOut := rollout(t, append([]string{"task"}, tc.args...)...)
		got := out
		if code != 0 {
			got = errOut
		}
		if code != tc.code || !strings.Contains(got, tc.want) {
			t.Errorf("%v: exit %d, %q; want %d, %q", tc.args, code, got, tc.code, tc.want)
		}
	}
}

// signalOnWrite sends the process an interrupt at its first write: the
// run command writes its progress only once it listens for interrupts.
type signalOnWrite struct {
	once sync.Once
	bytes.Buffer
}

func (w *signalOnWrite) Write(p []byte) (int, error) {
	w.once.Do(func() { syscall.Kill(os.Getpid(), syscall.SIGINT) })
	return w.Buffer.Write(p)
}

// An interrupted run exits 130 after saying how to resume, once.
func TestRunInterruptedExits130(t *testing.T) {
	if testing.Short() {
		t.Skip("runs an experiment")
	}
	dir := t.TempDir()
	cfg := filepath.Join(dir, "exp.yaml")
	os.WriteFile(cfg, []byte(tinyExperiment), 0o644)
	var out bytes.Buffer
	errOut := &signalOnWrite{}
	code := run([]string{"run", cfg, "--store", filepath.Join(dir, "s.db"), "--cache", dir, "--workers", "1"}, &out, errOut)
	if code != 130 || !strings.Contains(errOut.String(), "run the same command again to resume") || !strings.Contains(errOut.String(), "interrupt") {
		t.Fatalf("exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	if n := strings.Count(out.String()+errOut.String(), "run the same command again"); n != 1 {
		t.Errorf("the resume command is said %d times, want once:\n%s\n%s", n, out.String(), errOut.String())
	}
}

// rollout pretrain shows one progress bar per base policy it trains:
// none for a variant whose base policy another variant just trained, nor
// for one found in the cache, which its summary line says.
func TestPretrainProgressOncePerPolicy(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "exp.yaml")
	if err := os.WriteFile(cfg, []byte(tinyExperiment), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		bars    int
		summary string
	}{
		{1, "trained base policy"},
		{0, "cached base policy"},
	} {
		code, out, errOut := rollout(t, "pretrain", cfg, "--cache", dir)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		if n := strings.Count(errOut, "pretrain add: 20/20"); n != tc.bars {
			t.Errorf("stderr %q: %d final progress lines, want %d", errOut, n, tc.bars)
		}
		if strings.Count(out, tc.summary) != 1 || strings.Count(out, "base policy") != 1 {
			t.Errorf("stdout %q, want one line %q", out, tc.summary)
		}
	}
}

// A store of an older schema is refused by reading commands, exit 1,
// with the command that upgrades it; rollout migrate upgrades it once and
// says so, then reads work and a second migrate has nothing to do.
func TestMigrateCommand(t *testing.T) {
	store := filepath.Join(t.TempDir(), "old.db")
	db, err := bolt.Open(store, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		meta, err := tx.CreateBucket([]byte("meta"))
		if err == nil {
			err = meta.Put([]byte("schema"), binary.BigEndian.AppendUint32(nil, 1))
		}
		for _, b := range []string{"experiments", "runs", "data"} {
			if err == nil {
				_, err = tx.CreateBucket([]byte(b))
			}
		}
		return err
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if code, out, e := rollout(t, "ls", "--store", store); code != 1 || !strings.Contains(e, "schema version 1, older than") || !strings.Contains(e, "rollout migrate --store "+store) {
		t.Errorf("ls of a schema-1 store: exit %d\n%s%s", code, out, e)
	}
	if code, out, e := rollout(t, "migrate", "--store", store); code != 0 || !strings.Contains(out, "migrated "+store+" from schema version 1 to") {
		t.Errorf("migrate: exit %d\n%s%s", code, out, e)
	}
	if code, out, e := rollout(t, "ls", "--store", store); code != 0 {
		t.Errorf("ls after the migration: exit %d\n%s%s", code, out, e)
	}
	if code, out, e := rollout(t, "migrate", "--store", store); code != 0 || !strings.Contains(out, "nothing to migrate") {
		t.Errorf("second migrate: exit %d\n%s%s", code, out, e)
	}
	missing := filepath.Join(t.TempDir(), "none.db")
	if code, _, e := rollout(t, "migrate", "--store", missing); code != 2 || !strings.Contains(e, "no store at "+missing) {
		t.Errorf("migrate of a missing store: exit %d, %s", code, e)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("migrate created a store")
	}
}
