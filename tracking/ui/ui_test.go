package ui

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rollout-rl/rollout/search/record"
	"github.com/rollout-rl/rollout/tracking"
	"github.com/rollout-rl/rollout/tracking/report"
)

// decode unmarshals body into a value of type T.
func decode[T any](t *testing.T, body []byte) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decoding %s: %v", body, err)
	}
	return v
}

// sameJSON fails unless a and b encode the same JSON value.
func sameJSON(t *testing.T, got, want []byte) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("decoding %s: %v", got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("decoding %s: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

// wantReport is the report's JSON as `rollout report --format json` writes it.
func wantReport(t *testing.T, path, at string, metrics ...string) []byte {
	t.Helper()
	st, err := tracking.Open(path, tracking.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	opts := reportOptions()
	if opts.At, err = report.ParseAt(at); err != nil {
		t.Fatal(err)
	}
	opts.Metrics = metrics
	rep, err := report.Build(st, fixtureExp, opts)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := rep.Write(&b, report.FormatJSON); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// reportJSON is the part of the report endpoint's answer tests read.
type reportJSON struct {
	Axis     string
	Variants []struct {
		Variant string
		Metrics []struct {
			Metric string
			Mean   float64
		}
	}
}

func TestEndpoints(t *testing.T) {
	path, w := fixture(t, false)
	w.Close()
	h := newHandler(t, path)
	groupsJSON := func(gs ...record.Group) []byte {
		b := []byte{'['}
		for i := range gs {
			if i > 0 {
				b = append(b, ',')
			}
			b = gs[i].AppendJSON(b)
		}
		return append(b, ']')
	}
	tree := treeGroup()
	cases := []struct {
		name   string
		method string
		path   string
		status int
		check  func(t *testing.T, body []byte)
	}{
		{"experiments", "GET", "/api/experiments", 200, func(t *testing.T, body []byte) {
			got := decode[[]ExperimentSummary](t, body)
			want := []ExperimentSummary{{Name: fixtureExp, Variants: fixtureVariants, Colours: []string{"#0072b2", "#d55e00"}, Seeds: []int64{1, 2}, Runs: 4,
				Status: map[tracking.RunStatus]int{tracking.StatusFinished: 4}, StepsDone: 8, StepsTotal: 8, Tokens: 2 * (fixtureTokens(1, 2) + fixtureTokens(2, 2))}}
			if len(got) == 1 {
				want[0].LastUpdate = got[0].LastUpdate
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v\nwant %+v", got, want)
			}
		}},
		{"experiment", "GET", "/api/experiments/exp", 200, func(t *testing.T, body []byte) {
			got := decode[ExperimentDetail](t, body)
			if len(got.Runs) != 4 || got.Experiment.Baseline != "flat" {
				t.Fatalf("runs %d, baseline %q", len(got.Runs), got.Experiment.Baseline)
			}
			if want := []string{"eval/acc", "eval/tokens_mark", "reward/mean"}; !slices.Equal(got.Metrics, want) {
				t.Fatalf("metrics %v, want %v", got.Metrics, want)
			}
			if want := []string{"eval/acc", "reward/mean"}; !slices.Equal(got.DefaultMetrics, want) {
				t.Fatalf("default metrics %v, want %v", got.DefaultMetrics, want)
			}
			// The marks the evaluations recorded, not the rows' token counts
			// (0, 196, 198).
			if want := []int64{0, 200}; !slices.Equal(got.TokenMarks, want) || !got.TokenMarksRecorded || got.XAxis != "tokens" {
				t.Fatalf("token marks %v (recorded %v), x axis %q; want %v, recorded, tokens", got.TokenMarks, got.TokenMarksRecorded, got.XAxis, want)
			}
			if c := got.RunConfigs["tree-1"]; len(c) != 1 || c["rollout.strategy"] != "entropy_tree" {
				t.Fatalf("tree-1's varying config keys %v, want rollout.strategy alone", c)
			}
			if want := map[string][]string{"rollout.strategy": {"entropy_tree", "flat"}, "train.lr": {"0.001"}}; !reflect.DeepEqual(got.ConfigKeys, want) {
				t.Fatalf("config keys %v, want %v", got.ConfigKeys, want)
			}
			if m := got.MetricInfo["eval/acc"]; m.Lo != 0 || m.Hi != 1 || m.AxisText != "evaluation accuracy (share)" {
				t.Fatalf("eval/acc's registry entry %+v", m)
			}
			if len(got.Notes) != 1 || got.Notes[0].Run != "tree-1" || got.Notes[0].Text != fixtureNote {
				t.Fatalf("notes %+v, want tree-1's", got.Notes)
			}
		}},
		{"experiment missing", "GET", "/api/experiments/nope", 404, nil},
		{"report final", "GET", "/api/experiments/exp/report", 200, func(t *testing.T, body []byte) {
			sameJSON(t, body, wantReport(t, path, "final"))
			rep := decode[reportJSON](t, body)
			// eval/acc at step 2 of tree: mean over seeds 1 and 2.
			want := (acc("tree", 1, 2) + acc("tree", 2, 2)) / 2
			if got := rep.Variants[1].Metrics[0].Mean; rep.Variants[1].Variant != "tree" || got != want {
				t.Fatalf("tree eval/acc mean %v, want %v", got, want)
			}
		}},
		{"report step", "GET", "/api/experiments/exp/report?at=step:1&metric=reward/mean", 200, func(t *testing.T, body []byte) {
			sameJSON(t, body, wantReport(t, path, "step:1", "reward/mean"))
		}},
		{"report tokens", "GET", "/api/experiments/exp/report?at=tokens:200", 200, func(t *testing.T, body []byte) {
			sameJSON(t, body, wantReport(t, path, "tokens:200"))
		}},
		{"report bad at", "GET", "/api/experiments/exp/report?at=soon", 400, nil},
		{"report beyond the end", "GET", "/api/experiments/exp/report?at=step:9", 400, nil},
		{"report unknown metric", "GET", "/api/experiments/exp/report?metric=nope", 400, nil},
		{"report missing experiment", "GET", "/api/experiments/nope/report", 404, nil},
		{"curves step", "GET", "/api/experiments/exp/curves?metric=reward/mean&x=step", 200, func(t *testing.T, body []byte) {
			got := decode[CurvesAnswer](t, body)
			if len(got.Curves) != 2 || got.Curves[0].Variant != "flat" || got.X != "step" || got.Curves[1].Colour != "#d55e00" {
				t.Fatalf("curves %+v", got)
			}
			c := got.Curves[1]
			if !slices.Equal(c.X, []jsonFloat{0, 1, 2}) || !slices.Equal(c.N, []int{2, 2, 2}) {
				t.Fatalf("tree curve x %v n %v", c.X, c.N)
			}
			if want := (reward("tree", 1, 1) + reward("tree", 2, 1)) / 2; float64(c.Mean[1]) != want || !(c.Lo[1] < c.Mean[1] && c.Mean[1] < c.Hi[1]) {
				t.Fatalf("tree at step 1: mean %v [%v, %v], want mean %v inside its band", c.Mean[1], c.Lo[1], c.Hi[1], want)
			}
		}},
		{"curves tokens", "GET", "/api/experiments/exp/curves?metric=eval/acc&x=tokens&variant=tree", 200, func(t *testing.T, body []byte) {
			got := decode[CurvesAnswer](t, body)
			if len(got.Curves) != 1 || !got.Curves[0].Marks || !slices.Equal(got.Curves[0].X, []jsonFloat{0, 200}) {
				t.Fatalf("curves %+v", got)
			}
		}},
		{"curves default to the budget axis", "GET", "/api/experiments/exp/curves?metric=eval/acc", 200, func(t *testing.T, body []byte) {
			if got := decode[CurvesAnswer](t, body); got.X != "tokens" || got.Info.AxisText != "evaluation accuracy (share)" {
				t.Fatalf("x %q, label %q", got.X, got.Info.AxisText)
			}
		}},
		{"curves diff", "GET", "/api/experiments/exp/curves?metric=reward/mean&x=step&kind=diff", 200, func(t *testing.T, body []byte) {
			got := decode[CurvesAnswer](t, body)
			if len(got.Curves) != 1 || got.Baseline != "flat" || got.Kind != "diff" {
				t.Fatalf("diff %+v", got)
			}
			// tree − flat, seed by seed: 0.2 at every step, both pairs.
			c := got.Curves[0]
			for i := range c.X {
				if math.Abs(float64(c.Mean[i])-0.2) > 1e-12 || c.N[i] != 2 {
					t.Fatalf("diff at %v: %v over %d pairs, want 0.2 over 2", c.X[i], c.Mean[i], c.N[i])
				}
			}
		}},
		{"curves grouped by a config key", "GET", "/api/experiments/exp/curves?metric=reward/mean&x=step&group=rollout.strategy", 200, func(t *testing.T, body []byte) {
			got := decode[CurvesAnswer](t, body)
			if len(got.Curves) != 2 || got.Curves[0].Variant != "entropy_tree" || got.Curves[1].Variant != "flat" || got.GroupBy != "rollout.strategy" {
				t.Fatalf("grouped %+v", got)
			}
		}},
		{"curves filtered", "GET", "/api/experiments/exp/curves?metric=reward/mean&x=step&filter=rollout.strategy=flat", 200, func(t *testing.T, body []byte) {
			got := decode[CurvesAnswer](t, body)
			if len(got.Curves) != 1 || got.Curves[0].Variant != "flat" {
				t.Fatalf("filtered %+v", got)
			}
		}},
		{"curves filter matching nothing", "GET", "/api/experiments/exp/curves?metric=reward/mean&filter=train.lr=9", 400, nil},
		{"curves bad filter", "GET", "/api/experiments/exp/curves?metric=reward/mean&filter=train.lr", 400, nil},
		{"curves bad kind", "GET", "/api/experiments/exp/curves?metric=reward/mean&kind=pie", 400, nil},
		{"samples", "GET", "/api/runs/flat-1/steps/1/samples", 200, func(t *testing.T, body []byte) {
			got := decode[[]Sample](t, body)
			if len(got) != 5 || got[1].Group != 0 || got[1].Leaf != 1 || got[1].Response != "3" || got[1].Reward == nil || *got[1].Reward != 1 ||
				float64(got[1].Advantage) != 0.5 || got[0].Prompt != "1+2=" || got[0].Reason != "wrong" || !got[3].Filtered {
				t.Fatalf("samples %+v", got)
			}
		}},
		{"samples of step 0", "GET", "/api/runs/flat-1/steps/0/samples", 200, func(t *testing.T, body []byte) { sameJSON(t, body, []byte("[]")) }},
		{"samples of a missing run", "GET", "/api/runs/nope/steps/1/samples", 404, nil},
		{"config diff of runs", "GET", "/api/config-diff?run=flat-1&run=tree-2", 200, func(t *testing.T, body []byte) {
			got := decode[ConfigDiff](t, body)
			if want := []ConfigKeyDiff{{Key: "rollout.strategy", A: "flat", B: "entropy_tree"}}; !slices.Equal(got.Diffs, want) {
				t.Fatalf("diff %+v, want %+v", got.Diffs, want)
			}
		}},
		{"config diff of variants", "GET", "/api/experiments/exp/config-diff?variant=tree&variant=flat", 200, func(t *testing.T, body []byte) {
			got := decode[ConfigDiff](t, body)
			if want := []ConfigKeyDiff{{Key: "rollout.strategy", A: "entropy_tree", B: "flat"}}; !slices.Equal(got.Diffs, want) {
				t.Fatalf("diff %+v, want %+v", got.Diffs, want)
			}
		}},
		{"config diff of one run", "GET", "/api/config-diff?run=flat-1", 400, nil},
		{"config diff of a missing variant", "GET", "/api/experiments/exp/config-diff?variant=tree&variant=nope", 404, nil},
		{"style", "GET", "/api/style", 200, func(t *testing.T, body []byte) {
			if got := decode[Style](t, body); len(got.Palette) != 12 || got.Palette[0] != "#0072b2" {
				t.Fatalf("palette %v", got.Palette)
			}
		}},
		{"curves no metric", "GET", "/api/experiments/exp/curves", 400, nil},
		{"curves bad axis", "GET", "/api/experiments/exp/curves?metric=reward/mean&x=y", 400, nil},
		{"curves unrecorded metric", "GET", "/api/experiments/exp/curves?metric=nope", 400, nil},
		{"runs", "GET", "/api/runs", 200, func(t *testing.T, body []byte) {
			got := decode[[]tracking.Run](t, body)
			var ids []string
			for _, r := range got {
				ids = append(ids, r.ID)
			}
			if want := []string{"flat-1", "flat-2", "tree-1", "tree-2"}; !slices.Equal(ids, want) {
				t.Fatalf("runs %v, want %v", ids, want)
			}
		}},
		{"runs of a missing experiment", "GET", "/api/runs?experiment=nope", 404, nil},
		{"run", "GET", "/api/runs/tree-2", 200, func(t *testing.T, body []byte) {
			got := decode[RunDetail](t, body)
			if got.Run.Variant != "tree" || got.Run.LastStep != 2 || got.Run.Config != fixtureConfig("entropy_tree") || len(got.Metrics) != 3 || len(got.Notes) != 0 {
				t.Fatalf("run %+v", got)
			}
		}},
		{"run missing", "GET", "/api/runs/nope", 404, nil},
		{"metrics", "GET", "/api/runs/flat-1/metrics", 200, func(t *testing.T, body []byte) {
			got := decode[[]StepMetrics](t, body)
			if len(got) != fixtureSteps+1 || got[2].Tokens != fixtureTokens(1, 2) || float64(got[2].Values["eval/acc"]) != acc("flat", 1, 2) {
				t.Fatalf("metrics %+v", got)
			}
			if _, ok := got[1].Values["eval/acc"]; ok {
				t.Fatalf("step 1 has eval/acc: %+v", got[1])
			}
		}},
		{"groups", "GET", "/api/runs/flat-1/steps/1/groups", 200, func(t *testing.T, body []byte) {
			sameJSON(t, body, groupsJSON(treeGroup(), flatGroup()))
		}},
		{"groups of a step without any", "GET", "/api/runs/flat-1/steps/0/groups", 200, func(t *testing.T, body []byte) {
			sameJSON(t, body, []byte("[]"))
		}},
		{"group", "GET", "/api/runs/flat-1/steps/2/groups/0", 200, func(t *testing.T, body []byte) {
			sameJSON(t, body, tree.AppendJSON(nil))
		}},
		{"group missing", "GET", "/api/runs/flat-1/steps/2/groups/5", 404, nil},
		{"group bad step", "GET", "/api/runs/flat-1/steps/x/groups/0", 400, nil},
		{"groups of a missing run", "GET", "/api/runs/nope/steps/1/groups", 404, nil},
		{"tokens", "GET", "/api/tokens?ids=5,40,2", 200, func(t *testing.T, body []byte) {
			if got := decode[[]string](t, body); !slices.Equal(got, []string{"t5", "t40", "t2"}) {
				t.Fatalf("tokens %v", got)
			}
		}},
		{"tokens bad id", "GET", "/api/tokens?ids=5,x", 400, nil},
		{"unknown endpoint", "GET", "/api/nothing", 404, nil},
		{"post refused", "POST", "/api/experiments", 405, nil},
		{"delete refused", "DELETE", "/api/runs/flat-1", 405, nil},
		{"put refused", "PUT", "/", 405, nil},
		{"page", "GET", "/", 200, func(t *testing.T, body []byte) {
			if !bytes.Contains(body, []byte(`<script src="app.js">`)) {
				t.Fatalf("index.html: %s", body)
			}
		}},
		{"script", "GET", "/app.js", 200, func(t *testing.T, body []byte) {
			if !bytes.Contains(body, []byte("/api/experiments")) {
				t.Fatalf("app.js lacks the experiments endpoint")
			}
		}},
		{"stylesheet", "GET", "/style.css", 200, nil},
		{"missing asset", "GET", "/nothing.js", 404, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := get(t, h, c.method, c.path)
			if status != c.status {
				t.Fatalf("%s %s: status %d, want %d: %s", c.method, c.path, status, c.status, body)
			}
			if strings.HasPrefix(c.path, "/api/") && status != 200 {
				if e := decode[map[string]string](t, body); e["error"] == "" {
					t.Fatalf("error without a message: %s", body)
				}
			}
			if c.check != nil {
				c.check(t, body)
			}
		})
	}
}

// TestWriterNotBlocked: a writer can open the store right after requests,
// and while it holds the store the handler reads snapshots with what it
// committed.
func TestWriterNotBlocked(t *testing.T) {
	path, w := fixture(t, true)
	w.Close()
	h := newHandler(t, path)
	clk := useFakeClock(h)
	if status, body := get(t, h, "GET", "/api/runs/tree-2"); status != 200 || decode[RunDetail](t, body).Run.LastStep != 1 {
		t.Fatalf("status %d: %s", status, body)
	}
	// Once the TTL is over the handler has let go of the store: the writer
	// takes its lock at the first try.
	clk.Advance(DefaultTTL)
	w, err := tracking.Open(path, tracking.Options{NoSync: true, Timeout: time.Nanosecond})
	if err != nil {
		t.Fatalf("a writer after a request and the TTL: %v", err)
	}
	defer w.Close()
	resumeRun(t, w, "tree-2")
	commitStep(t, w, "tree", 2, 2)
	clk.Advance(DefaultTTL + 50*time.Millisecond)
	status, body := get(t, h, "GET", "/api/runs/tree-2")
	if status != 200 || decode[RunDetail](t, body).Run.LastStep != 2 {
		t.Fatalf("while the writer holds the store: status %d: %s", status, body)
	}
}

// TestStoreReuse: requests within the TTL share one opened store; a later
// one opens anew.
func TestStoreReuse(t *testing.T) {
	path, w := fixture(t, false)
	w.Close()
	h, opens, clk := countingHandler(t, path, 200*time.Millisecond)
	for _, step := range []struct {
		wait  time.Duration
		opens int32
	}{{0, 1}, {0, 1}, {100 * time.Millisecond, 1}, {100 * time.Millisecond, 2}, {0, 2}} {
		clk.Advance(step.wait)
		if status, body := get(t, h, "GET", "/api/experiments"); status != http.StatusOK {
			t.Fatalf("status %d: %s", status, body)
		}
		if got := opens.Load(); got != step.opens {
			t.Fatalf("after a request %s later: %d opens, want %d", step.wait, got, step.opens)
		}
	}
}

func TestNewNeedsOpen(t *testing.T) {
	if _, err := New(Options{}); err == nil {
		t.Fatal("New without Open: no error")
	}
}

// TestSnapshotReuse: while a writer holds the store, the snapshot read is
// kept past the TTL until the writer commits, then read anew.
func TestSnapshotReuse(t *testing.T) {
	path, w := fixture(t, true)
	h, opens, clk := countingHandler(t, path, 100*time.Millisecond)
	lastStep := func() int {
		t.Helper()
		status, body := get(t, h, "GET", "/api/runs/tree-2")
		if status != http.StatusOK {
			t.Fatalf("status %d: %s", status, body)
		}
		return decode[RunDetail](t, body).Run.LastStep
	}
	for i, step := range []struct {
		commit      bool
		opens, last int
	}{{false, 1, 1}, {false, 2, 1}, {false, 2, 1}, {true, 3, 2}, {false, 3, 2}} {
		if step.commit {
			commitStep(t, w, "tree", 2, 2)
		}
		if got := lastStep(); got != step.last {
			t.Fatalf("request %d: last step %d, want %d", i, got, step.last)
		}
		if got := opens.Load(); got != int32(step.opens) {
			t.Fatalf("request %d: %d opens, want %d", i, got, step.opens)
		}
		clk.Advance(150 * time.Millisecond)
	}
}

// fakeClock is a clock that moves only when a test advances it, firing
// the functions whose time has come.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []fakeTimer
}

type fakeTimer struct {
	at time.Time
	f  func()
}

// countingHandler is a handler of the store at path whose store cache
// keeps a store for ttl on a fakeClock, and the count of its opens.
func countingHandler(t *testing.T, path string, ttl time.Duration) (*Handler, *atomic.Int32, *fakeClock) {
	t.Helper()
	opens := new(atomic.Int32)
	h, err := New(Options{TTL: ttl, Open: func() (*tracking.Store, error) {
		opens.Add(1)
		return tracking.Open(path, tracking.Options{ReadOnly: true})
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h, opens, useFakeClock(h)
}

// useFakeClock makes h's store cache count its TTL on a new fakeClock.
func useFakeClock(h *Handler) *fakeClock {
	c := &fakeClock{now: time.Unix(1e9, 0)}
	h.store.mu.Lock()
	h.store.clock = c
	h.store.mu.Unlock()
	return c
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.timers = append(c.timers, fakeTimer{c.now.Add(d), f})
}

// Advance moves the clock on by d and calls the functions due by then,
// in the order they were set.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []func()
	kept := c.timers[:0]
	for _, tm := range c.timers {
		if tm.at.After(c.now) {
			kept = append(kept, tm)
		} else {
			due = append(due, tm.f)
		}
	}
	c.timers = kept
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
}
