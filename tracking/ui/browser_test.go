package ui

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rollout-rl/rollout/tracking"
)

// chromium returns the path of a Chromium or Chrome binary: $ROLLOUT_CHROMIUM,
// else the first of the usual names on PATH; "" when there is none.
func chromium() string {
	if p := os.Getenv("ROLLOUT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// browser starts a headless Chromium for the test (skipping it when there
// is none) and returns its context, which ends with the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	exe := chromium()
	if exe == "" {
		t.Skip("no chromium binary (chromium, chromium-browser or google-chrome on PATH, or $ROLLOUT_CHROMIUM): the browser tests need one (.ci/run installs Debian's chromium)")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1280, 900),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	return ctx
}

// do runs actions, failing the test with what it was doing.
func do(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// waitFor polls a JavaScript condition until it holds.
func waitFor(t *testing.T, ctx context.Context, cond string, timeout time.Duration) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](cond, chromedp.WithPollingTimeout(timeout), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		t.Fatalf("waiting for %s: %v", cond, err)
	}
}

// show opens a page of the dashboard by its hash and waits until cond holds.
func show(t *testing.T, ctx context.Context, hash, cond string) {
	t.Helper()
	do(t, ctx, "opening "+hash, chromedp.Evaluate[chromedp.Void](`location.hash = `+strconv.Quote(hash)))
	waitFor(t, ctx, cond, 10*time.Second)
}

// screenshot saves the viewport as dir/name.
func screenshot(t *testing.T, ctx context.Context, dir, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// tableCell is one cell of the page's comparison table.
type tableCell struct {
	Variant, Metric, Mean, Text string
}

// readTable returns the cells of the comparison table the page shows.
func readTable(t *testing.T, ctx context.Context) []tableCell {
	return eval[[]tableCell](t, ctx, `Array.from(document.querySelectorAll('#report-table td.cell')).map(td => ({
		Variant: td.closest('tr').dataset.variant, Metric: td.dataset.metric, Mean: td.dataset.mean, Text: td.textContent}))`)
}

// checkTable compares the page's table with the report endpoint's answer
// to query: every variant and metric, each mean exactly, and its text.
func checkTable(t *testing.T, h *Handler, cells []tableCell, query string) {
	t.Helper()
	status, body := get(t, h, "GET", "/api/experiments/exp/report"+query)
	if status != 200 {
		t.Fatalf("report%s: %d %s", query, status, body)
	}
	var rep reportJSON
	if err := json.Unmarshal(body, &rep); err != nil {
		t.Fatal(err)
	}
	var want []tableCell
	for _, v := range rep.Variants {
		for _, m := range v.Metrics {
			want = append(want, tableCell{Variant: v.Variant, Metric: m.Metric, Mean: strconv.FormatFloat(m.Mean, 'g', 4, 64)})
			mean, err := strconv.ParseFloat(strconvMean(cells, v.Variant, m.Metric), 64)
			if err != nil || mean != m.Mean {
				t.Errorf("page's %s %s mean %q, want %v", v.Variant, m.Metric, strconvMean(cells, v.Variant, m.Metric), m.Mean)
			}
		}
	}
	if len(cells) != len(want) {
		t.Fatalf("page's table has %d cells, the report %d: %+v", len(cells), len(want), cells)
	}
	for i, c := range cells {
		if c.Variant != want[i].Variant || c.Metric != want[i].Metric || !strings.HasPrefix(c.Text, want[i].Mean) {
			t.Errorf("cell %d: %s %s %q, want %s %s starting %q", i, c.Variant, c.Metric, c.Text, want[i].Variant, want[i].Metric, want[i].Mean)
		}
	}
}

func strconvMean(cells []tableCell, variant, metric string) string {
	for _, c := range cells {
		if c.Variant == variant && c.Metric == metric {
			return c.Mean
		}
	}
	return "(no cell)"
}

// TestBrowser loads every page in headless Chromium: the experiments, the
// comparison table (whose numbers must be the report's) at two points,
// the curves with a variant toggled off, a run, and the tree viewer with
// two groups side by side; then a step committed while a run's page is
// open appears (polled for, with a generous deadline against hangs only). Screenshots go to a temporary
// directory ($ROLLOUT_UI_SCREENSHOTS keeps them).
func TestBrowser(t *testing.T) {
	ctx := browser(t)
	shots := os.Getenv("ROLLOUT_UI_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}

	t.Run("pages", func(t *testing.T) {
		path, w := fixture(t, false)
		w.Close()
		h := newHandler(t, path)
		srv := httptest.NewServer(h)
		defer srv.Close()
		do(t, ctx, "loading the dashboard", chromedp.Navigate(srv.URL+"/#/"))
		waitFor(t, ctx, `document.querySelector('#experiments tr[data-experiment="exp"]') !== null`, 10*time.Second)
		if row := eval[string](t, ctx, `document.querySelector('#experiments tr[data-experiment="exp"]').textContent`); !strings.Contains(row, "4 finished") || !strings.Contains(row, "8/8") {
			t.Errorf("experiments row %q: want 4 finished runs and 8/8 steps", row)
		}
		screenshot(t, ctx, shots, "experiments.png")

		show(t, ctx, "#/exp/exp", `document.querySelectorAll('#report-table td.cell').length === 4 && document.querySelectorAll('#curves svg g.series').length === 2`)
		checkTable(t, h, readTable(t, ctx), "")
		screenshot(t, ctx, shots, "experiment.png")

		// The point chosen in the page: step 1.
		eval[chromedp.Void](t, ctx, `(() => {
			const k = document.getElementById('at-kind'); k.value = 'step'; k.dispatchEvent(new Event('change'));
			const a = document.getElementById('at-arg'); a.value = '1'; a.dispatchEvent(new Event('change'));
		})()`)
		waitFor(t, ctx, `(document.getElementById('report-axis') || {}).textContent?.startsWith('at step 1 ')`, 10*time.Second)
		checkTable(t, h, readTable(t, ctx), "?at=step:1&metric=eval/acc&metric=reward/mean")

		// A variant toggled off leaves one curve.
		do(t, ctx, "toggling tree off", chromedp.Click(chromedp.CSS(`#variant-toggles .chip[data-variant="tree"]`)))
		waitFor(t, ctx, `document.querySelectorAll('#curves svg g.series').length === 1 && document.querySelector('#curves svg g.series').dataset.variant === 'flat'`, 10*time.Second)

		show(t, ctx, "#/run/tree-1", `document.querySelectorAll('#run-charts svg').length === 3 && document.querySelectorAll('#eval-table tbody tr').length === 2`)
		if cfg := eval[string](t, ctx, `document.getElementById('config').textContent`); cfg != fixtureConfig("entropy_tree") {
			t.Errorf("run page config %q", cfg)
		}
		screenshot(t, ctx, shots, "run.png")

		show(t, ctx, "#/tree/tree-1?step=1&group=0&vs=1", `document.querySelectorAll('.group[data-group="0"] li.node').length === 3 && document.querySelector('.group[data-group="1"]') !== null`)
		tree := eval[struct {
			Node0, Node1, Node2 string
			Leaves              int
			Filtered            []bool
		}](t, ctx, `(() => {
			const g = document.querySelector('.group[data-group="0"]');
			const toks = id => g.querySelector('li.node[data-node="' + id + '"] > details > .toks').textContent;
			return {Node0: toks(0), Node1: toks(1), Node2: toks(2), Leaves: g.querySelectorAll('.leaf').length,
				Filtered: Array.from(document.querySelectorAll('.group')).map(e => e.classList.contains('filtered'))};
		})()`)
		// Node 0's tokens 7 4 5 2 with node 1 forking at 2; node 1's 6 2
		// with node 2 forking at 1; node 2's 8 2.
		if tree.Node0 != "t7t4|1t5t2" || tree.Node1 != "t6|2t2" || tree.Node2 != "t8t2" || tree.Leaves != 3 {
			t.Errorf("tree viewer shows %+v", tree)
		}
		if len(tree.Filtered) != 2 || tree.Filtered[0] || !tree.Filtered[1] {
			t.Errorf("groups marked filtered: %v, want [false true]", tree.Filtered)
		}
		screenshot(t, ctx, shots, "tree.png")
		do(t, ctx, "collapsing", chromedp.Click(chromedp.Search(`//button[text()="collapse all"]`)))
		if open := eval[int](t, ctx, `document.querySelectorAll('#tree-body details[open]').length`); open != 0 {
			t.Errorf("after collapse all, %d nodes open", open)
		}
	})

	t.Run("live", func(t *testing.T) {
		path, w := fixture(t, true) // the writer stays open, as a run's would
		h := newHandler(t, path)
		srv := httptest.NewServer(h)
		defer srv.Close()
		// The experiment page: tree seed 2's progress and the table.
		do(t, ctx, "loading a running experiment's page", chromedp.Navigate(srv.URL+"/#/exp/exp"))
		progress := `(document.querySelector('#runs tr[data-run="tree-2"] [data-field="progress"]') || {}).textContent`
		waitFor(t, ctx, progress+` === '1/2' && document.querySelectorAll('#report-table td.cell').length === 4`, 10*time.Second)
		waitFor(t, ctx, `!document.getElementById('live').hidden`, 5*time.Second)
		commitStep(t, w, "tree", 2, 2)
		waitFor(t, ctx, progress+` === '2/2'`, 10*time.Second)
		// The table follows: tree's eval/acc is now the mean at step 2 of both seeds.
		want := strconv.FormatFloat((acc("tree", 1, 2)+acc("tree", 2, 2))/2, 'g', -1, 64)
		waitFor(t, ctx, `document.querySelector('#report-table tr[data-variant="tree"] td.cell[data-metric="eval/acc"]').dataset.mean === '`+want+`'`, 5*time.Second)
		checkTable(t, h, readTable(t, ctx), "")

		// The run's page: its status when it ends.
		show(t, ctx, "#/run/tree-2", `(document.querySelector('[data-field="last_step"]') || {}).textContent === '2'`)
		if err := w.EndRun("tree-2", tracking.StatusFinished, ""); err != nil {
			t.Fatal(err)
		}
		waitFor(t, ctx, `document.querySelector('.kv .badge[data-status]').dataset.status === 'finished'`, 10*time.Second)
		if n := eval[int](t, ctx, `document.querySelectorAll('#eval-table tbody tr').length`); n != 2 {
			t.Errorf("after step 2, %d evaluations shown, want 2", n)
		}
	})
}
