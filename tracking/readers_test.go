package tracking

import (
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/rollout-rl/rollout/search/record"
)

// A reader during a run gets a snapshot the writer copies in a read
// transaction: the writer's commits go on while a copy is in progress (the
// copy holds the state of the commit it began at), and a reader in a loop
// sees a consistent view, one further commit at each read.
func TestReadersDoNotStallWriter(t *testing.T) {
	s, path := newStore(t, Options{NoSync: true})
	addRun(t, s, "e", "r", "flat", 1)
	groups := []record.Group{flatGroup(1, 4, 10), flatGroup(2, 4, 10)}
	var commits atomic.Int64
	commit := func(step int) {
		rec := StepRecord{Step: step, Tokens: int64(80 * (step + 1)), Metrics: map[string]float64{"m": float64(step)}, Groups: groups}
		if err := s.CommitStep("r", rec); err != nil {
			t.Error(err)
		}
		commits.Add(1)
	}
	commit(0)

	// One copy held in its read transaction while the writer commits.
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	s.copyHook = func() { once.Do(func() { close(entered); <-release }) }
	type opened struct {
		st  *Store
		err error
	}
	got := make(chan opened)
	go func() {
		r, err := Open(path, Options{ReadOnly: true, Scope: &ReadScope{Metrics: true, Groups: true}})
		got <- opened{r, err}
	}()
	<-entered
	done := make(chan struct{})
	go func() {
		for step := 1; step <= 10; step++ {
			commit(step)
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatalf("the writer committed %d steps while a reader's copy was in progress, want 10", commits.Load()-1)
	}
	close(release)
	o := <-got
	if o.err != nil {
		t.Fatal(o.err)
	}
	if r, err := o.st.Run("r"); err != nil || r.LastStep != 0 {
		t.Errorf("the held copy shows last step %d (%v), want 0: the commit it began at", r.LastStep, err)
	}
	o.st.Close()

	// A reader in a loop while the writer commits.
	stop := make(chan struct{})
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		for step := 11; ; step++ {
			select {
			case <-stop:
				return
			default:
			}
			commit(step)
		}
	}()
	defer func() { close(stop); <-writerDone }()
	last := -1
	for i := range 15 {
		snapshotView(t, path, i, &last)
		// One more commit before the next read. The counter moves after
		// CommitStep returns, so one commit the read saw may not be counted
		// yet: two more counted commits include one the read did not see.
		seen := commits.Load()
		for commits.Load() < seen+2 {
			time.Sleep(time.Millisecond)
		}
	}
}

// snapshotView opens a snapshot and checks that it is consistent and
// further along than the last one.
func snapshotView(t *testing.T, path string, i int, last *int) {
	t.Helper()
	r, err := Open(path, Options{ReadOnly: true, Scope: &ReadScope{Runs: "e", Metrics: true, Groups: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if snap, _ := r.Snapshot(); !snap {
		t.Fatalf("read %d: not a snapshot", i)
	}
	run, err := r.Run("r")
	if err != nil {
		t.Fatal(err)
	}
	ms, err := r.Metrics("r")
	if err != nil {
		t.Fatal(err)
	}
	gs, err := r.Groups("r", run.LastStep)
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != run.LastStep+1 || ms[len(ms)-1].Tokens != run.Tokens || len(gs) != 2 {
		t.Fatalf("read %d: last step %d with %d tokens, %d metric records (the last with %d tokens), %d groups at the last step",
			i, run.LastStep, run.Tokens, len(ms), ms[len(ms)-1].Tokens, len(gs))
	}
	if run.LastStep <= *last {
		t.Fatalf("read %d: last step %d, not past the previous read's %d although the writer committed", i, run.LastStep, *last)
	}
	*last = run.LastStep
}

// A snapshot holds what its scope asks for: records of every run, data
// of the selected runs only; reading what it left out is an error saying
// so.
func TestReadScope(t *testing.T) {
	s, path := newStore(t, Options{NoSync: true})
	addRun(t, s, "a", "ra", "flat", 1)
	addRun(t, s, "b", "rb", "flat", 1)
	if err := s.PutDesigned(Experiment{Name: "a", Config: "strategy: flat\n"}, DesignRecord{Hash: "h", Text: "{}"}); err != nil {
		t.Fatal(err)
	}
	if err := s.PutLoad("ra", LoadSample{Event: "start", Load1: 1, CPUs: 2}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"ra", "rb"} {
		if err := s.CommitStep(id, StepRecord{Step: 0, Metrics: map[string]float64{"m": 1}, Groups: []record.Group{flatGroup(1, 2, 3)},
			Checkpoint: []Blob{{Name: "state", Data: []byte("x")}}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		scope *ReadScope
		// what reads of run ra and rb give: metrics, groups, checkpoint
		ra, rb [3]bool
	}{
		{"everything", nil, [3]bool{true, true, true}, [3]bool{true, true, true}},
		{"records only (ls)", &ReadScope{}, [3]bool{}, [3]bool{}},
		{"metrics of experiment a (report)", &ReadScope{Runs: "a", Metrics: true}, [3]bool{true, false, false}, [3]bool{}},
		{"groups of run rb by prefix (trees)", &ReadScope{Runs: "r", Groups: true}, [3]bool{false, true, false}, [3]bool{false, true, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Open(path, Options{ReadOnly: true, Scope: tc.scope})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if runs, err := r.Runs(""); err != nil || len(runs) != 2 {
				t.Fatalf("runs %v %v, want both", runs, err)
			}
			if d, err := r.Design("a"); err != nil || d.Hash != "h" {
				t.Errorf("design of a: %+v, %v; want it in every snapshot", d, err)
			}
			if l, err := r.Loads("ra"); err != nil || len(l) != 1 {
				t.Errorf("loads of ra: %+v, %v; want them in every snapshot", l, err)
			}
			for i, id := range []string{"ra", "rb"} {
				want := [][3]bool{tc.ra, tc.rb}[i]
				_, e1 := r.Metrics(id)
				_, e2 := r.Groups(id, 0)
				_, e3 := r.Checkpoint(id, 0)
				for j, err := range []error{e1, e2, e3} {
					if (err == nil) != want[j] {
						t.Errorf("run %s read %d: %v, want success %v", id, j, err, want[j])
					}
					if err != nil && !strings.Contains(err.Error(), "not in the snapshot") {
						t.Errorf("run %s read %d: %v, want it to say the snapshot left it out", id, j, err)
					}
				}
			}
		})
	}
}

// A writer that does not answer snapshot requests (an older build: here
// the file held by bbolt alone) is read as a copy of the whole file once
// the request has waited Options.Timeout; the request is withdrawn.
func TestSnapshotOfASilentWriter(t *testing.T) {
	s, path := newStore(t, Options{NoSync: true})
	addRun(t, s, "e", "r", "flat", 1)
	if err := s.CommitStep("r", StepRecord{Step: 0, Metrics: map[string]float64{"m": 1}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	db, err := bolt.Open(path, 0o644, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r, err := Open(path, Options{ReadOnly: true, Timeout: 100 * time.Millisecond, Scope: &ReadScope{}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if snap, _ := r.Snapshot(); !snap {
		t.Error("not a snapshot")
	}
	if ms, err := r.Metrics("r"); err != nil || len(ms) != 1 {
		t.Errorf("metrics of the whole-file copy: %d, %v; want the step committed", len(ms), err)
	}
	if left, _ := os.ReadDir(readersDir(path)); len(left) != 0 {
		t.Errorf("%s holds %v after the read, want nothing", readersDir(path), left)
	}
}
