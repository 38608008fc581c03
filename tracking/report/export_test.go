package report

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rollout-rl/rollout/search/record"
	"github.com/rollout-rl/rollout/search/record/recordtest"
	"github.com/rollout-rl/rollout/tracking"
)

func exportStore(t testing.TB) *tracking.Store {
	s := newStore(t)
	addRun(t, s, "exp", "r1", "flat", 3, "seed: 3\n")
	tg := recordtest.Tree()
	tg.Nodes[0].LogProbs[1] = float32(math.NaN())
	if err := s.CommitStep("r1", tracking.StepRecord{Step: 0, Tokens: 10, Elapsed: 1500 * time.Millisecond, Metrics: map[string]float64{"a": 1, "b": 0.25}, Groups: []record.Group{tg, recordtest.Flat(1, 2, 3)}}); err != nil {
		t.Fatal(err)
	}
	if err := s.CommitStep("r1", tracking.StepRecord{Step: 1, Tokens: 20, Metrics: map[string]float64{"a": 2, "c": math.Inf(1)}, Groups: []record.Group{recordtest.Flat(2, 3, 2)}}); err != nil {
		t.Fatal(err)
	}
	return s
}

func TestExportTrajectoriesJSONL(t *testing.T) {
	s := exportStore(t)
	var buf bytes.Buffer
	if err := Export(&buf, s, []string{"r1"}, ExportTrajectories, JSONL); err != nil {
		t.Fatal(err)
	}
	type rec struct {
		Run, Experiment, Variant, Strategy, Prompt, Text, Reason string
		Seed, Step, Group, Leaf                                  int
		Filtered                                                 bool
		Reward                                                   float64
		Tokens                                                   []int
		Logprobs, Entropies, Advantages                          []*float64
	}
	var recs []rec
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var r rec
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		recs = append(recs, r)
	}
	if len(recs) != 3+2+3 {
		t.Fatalf("%d records, want 8", len(recs))
	}
	leaf := recs[2] // the tree's third leaf: path 1 2 | 5 | 8 9
	if leaf.Run != "r1" || leaf.Seed != 3 || leaf.Step != 0 || leaf.Group != 0 || leaf.Leaf != 2 || leaf.Text != "b\t\"q\"" || leaf.Strategy != "entropy_tree" {
		t.Errorf("record %+v", leaf)
	}
	if !reflect.DeepEqual(leaf.Tokens, []int{1, 2, 5, 8, 9}) || len(leaf.Logprobs) != 5 || len(leaf.Advantages) != 5 {
		t.Errorf("path %+v", leaf)
	}
	if leaf.Logprobs[1] != nil || *leaf.Logprobs[2] != float64(float32(-.5)) {
		t.Errorf("logprobs: NaN must be null, float32 values exact: %v %v", leaf.Logprobs[1], leaf.Logprobs[2])
	}
	if last := recs[7]; last.Step != 1 || last.Group != 0 || last.Leaf != 2 || len(last.Tokens) != 2 {
		t.Errorf("last record %+v", last)
	}
}

func TestExportTrajectoriesCSV(t *testing.T) {
	s := exportStore(t)
	var buf bytes.Buffer
	if err := Export(&buf, s, []string{"r1"}, ExportTrajectories, CSV); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 9 || !reflect.DeepEqual(rows[0], trajectoryColumns()) {
		t.Fatalf("%d rows, header %v", len(rows), rows[0])
	}
	want := map[string]string{"run": "r1", "leaf": "2", "text": "b\t\"q\"", "tokens": "1 2 5 8 9", "logprobs": "-0.1 NaN -0.5 -0.8 -0.9", "advantages": "0.5 0.5 0.7 0.7 0.7", "reward": "1"}
	for i, col := range trajectoryColumns() {
		if w, ok := want[col]; ok && rows[3][i] != w {
			t.Errorf("column %s = %q, want %q", col, rows[3][i], w)
		}
	}
}

func TestExportMetrics(t *testing.T) {
	s := exportStore(t)
	var buf bytes.Buffer
	if err := Export(&buf, s, []string{"r1"}, ExportMetrics, JSONL); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("lines %q", lines)
	}
	var m struct {
		Step    int
		Tokens  int64
		TimeS   float64 `json:"time_s"`
		Metrics map[string]*float64
	}
	if err := json.Unmarshal([]byte(lines[0]), &m); err != nil || m.TimeS != 1.5 || *m.Metrics["b"] != 0.25 || m.Tokens != 10 {
		t.Errorf("line 0 %s: %+v %v", lines[0], m, err)
	}
	if err := json.Unmarshal([]byte(lines[1]), &m); err != nil || m.Metrics["c"] != nil {
		t.Errorf("line 1 %s: Inf must be null: %v", lines[1], err)
	}
	buf.Reset()
	if err := Export(&buf, s, []string{"r1"}, ExportMetrics, CSV); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&buf).ReadAll()
	wantHeader := []string{"run", "experiment", "variant", "seed", "step", "tokens", "time_s", "a", "b", "c"}
	if err != nil || len(rows) != 3 || !reflect.DeepEqual(rows[0], wantHeader) || rows[1][8] != "0.25" || rows[2][8] != "" || rows[2][9] != "+Inf" {
		t.Errorf("csv %v %v", rows, err)
	}
}

func TestExportGroups(t *testing.T) {
	s := exportStore(t)
	var buf bytes.Buffer
	if err := Export(&buf, s, []string{"r1"}, ExportGroups, JSONL); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines", len(lines))
	}
	var g struct {
		Run    string
		Step   int
		Group  int
		Prompt string
		Nodes  []struct{ Parent *int }
		Leaves []struct{ Node int }
	}
	if err := json.Unmarshal([]byte(lines[0]), &g); err != nil || g.Run != "r1" || g.Prompt != "3 4 7 → 21" || g.Nodes[0].Parent != nil || *g.Nodes[2].Parent != 1 || len(g.Leaves) != 3 {
		t.Errorf("group line %s: %v", lines[0], err)
	}
	if err := Export(&buf, s, []string{"r1"}, ExportGroups, CSV); err == nil {
		t.Error("groups as CSV accepted")
	}
}

func TestExportErrors(t *testing.T) {
	s := exportStore(t)
	if err := Export(&bytes.Buffer{}, s, []string{"nope"}, ExportTrajectories, JSONL); !errors.Is(err, tracking.ErrNotFound) {
		t.Errorf("unknown run: %v", err)
	}
	if err := Export(&bytes.Buffer{}, s, []string{"r1"}, "rows", JSONL); err == nil {
		t.Error("unknown kind accepted")
	}
	if err := Export(&bytes.Buffer{}, s, []string{"r1"}, ExportMetrics, "xml"); err == nil {
		t.Error("unknown format accepted")
	}
	// A failing writer stops a long export with its error, without hanging.
	big := newStore(t)
	addRun(t, big, "exp", "r", "flat", 1, "seed: 1\n")
	groups := make([]record.Group, 64)
	for i := range groups {
		groups[i] = recordtest.Flat(i, 16, 40)
	}
	for step := range 10 {
		if err := big.CommitStep("r", tracking.StepRecord{Step: step, Groups: groups}); err != nil {
			t.Fatal(err)
		}
	}
	errFull := errors.New("disk full")
	done := make(chan error, 1)
	go func() {
		done <- Export(&failWriter{after: 1 << 20, err: errFull}, big, []string{"r"}, ExportTrajectories, JSONL)
	}()
	select {
	case err := <-done:
		if !errors.Is(err, errFull) {
			t.Errorf("err %v, want disk full", err)
		}
	case <-time.After(time.Minute): // a guard against a hang, not a time limit
		t.Fatal("export hung after a write error")
	}
}

type failWriter struct {
	after int
	err   error
}

func (f *failWriter) Write(p []byte) (int, error) {
	if f.after -= len(p); f.after < 0 {
		return 0, f.err
	}
	return len(p), nil
}
