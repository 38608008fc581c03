package ui

import (
	"context"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/rollout-rl/rollout/tracking"
)

// setSelect chooses a value of a <select> or <input> by id, as a person
// would (a change event follows).
func setSelect(t *testing.T, ctx context.Context, id, value string) {
	t.Helper()
	eval[chromedp.Void](t, ctx, `(() => { const e = document.getElementById(`+strconv.Quote(id)+`); e.value = `+strconv.Quote(value)+`;
		e.dispatchEvent(new Event('change')); e.dispatchEvent(new Event('input')); })()`)
}

// seriesShown returns the variants (or groups) of the curves chart, in order.
func seriesShown(t *testing.T, ctx context.Context) []string {
	return eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#curves svg g.series:not(.grey)')).map(g => g.dataset.variant)`)
}

// TestBrowserViews drives the experiment and run pages as a user would:
// every comparison point (the tokens one offers the experiment's marks),
// an error that stays inside its box, the paired-difference view, group
// by and filters on config keys, the colours of rollout plot, the sample
// table and its link to the tree, the config diff, notes, and the URL
// keeping the view through a reload.
func TestBrowserViews(t *testing.T) {
	ctx := browser(t)
	shots := os.Getenv("ROLLOUT_UI_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	path, w := fixture(t, false)
	// A second experiment to compare with: one variant, two seeds.
	if err := w.PutExperiment(tracking.Experiment{Name: "exp2", Config: "name: exp2\n", Variants: []string{"flat"}}); err != nil {
		t.Fatal(err)
	}
	for seed := int64(1); seed <= 2; seed++ {
		id := "exp2-flat-" + strconv.FormatInt(seed, 10)
		if _, err := w.BeginRun(tracking.Run{ID: id, Experiment: "exp2", Variant: "flat", Seed: seed, Config: fixtureConfig("flat"), Version: "test", TotalSteps: 2, Start: time.Now()}); err != nil {
			t.Fatal(err)
		}
		for step := 0; step <= 2; step++ {
			m := map[string]float64{"reward/mean": 0.05 * float64(step+int(seed))}
			if err := w.CommitStep(id, tracking.StepRecord{Step: step, Tokens: fixtureTokens(seed, step), Metrics: m}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.EndRun(id, tracking.StatusFinished, ""); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	h := newHandler(t, path)
	srv := httptest.NewServer(h)
	defer srv.Close()
	do(t, ctx, "loading the experiment", chromedp.Navigate(srv.URL+"/#/exp/exp"))
	waitFor(t, ctx, `document.querySelectorAll('#report-table td.cell').length === 4 && document.querySelectorAll('#curves svg g.series').length === 2`, 10*time.Second)

	t.Run("budget axis by default", func(t *testing.T) {
		if x := eval[string](t, ctx, `document.getElementById('curve-x').value`); x != "tokens" {
			t.Errorf("x axis %q, want the experiment's budget axis, tokens", x)
		}
		if c := eval[string](t, ctx, `document.getElementById('curve-caption').textContent`); !strings.Contains(c, "n = 2 seeds at every point") {
			t.Errorf("caption %q", c)
		}
		if y := eval[string](t, ctx, `document.querySelector('#curves svg .ylabel').textContent`); y != "evaluation accuracy (share)" {
			t.Errorf("y label %q", y)
		}
	})

	t.Run("comparison points", func(t *testing.T) {
		for _, tc := range []struct{ kind, arg, query, axis string }{
			{"best", "", "?at=best", "at each run's best value"},
			{"step", "1", "?at=step:1", "at step 1 "},
			// The marks are offered, the last pre-filled: 200, not a row's
			// token count (196, 198).
			{"tokens", "", "?at=tokens:200", "at 200 sampled tokens"},
			{"final", "", "", "at the end of each run"},
		} {
			setSelect(t, ctx, "at-kind", tc.kind)
			if tc.arg != "" {
				setSelect(t, ctx, "at-arg", tc.arg)
			}
			waitFor(t, ctx, `(document.getElementById('report-axis') || {}).textContent?.startsWith(`+strconv.Quote(tc.axis)+`)`, 10*time.Second)
			checkTable(t, h, readTable(t, ctx), tc.query+map[bool]string{true: "&", false: "?"}[tc.query != ""]+"metric=eval/acc&metric=reward/mean")
			if tc.kind == "tokens" {
				marks := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#marks option')).map(o => o.value)`)
				if !slices.Equal(marks, []string{"0", "200"}) || eval[string](t, ctx, `document.getElementById('at-arg').value`) != "200" {
					t.Errorf("token marks offered %v, pre-filled %q; want [0 200], 200", marks, eval[string](t, ctx, `document.getElementById('at-arg').value`))
				}
				screenshot(t, ctx, shots, "at-tokens.png")
			}
		}
		// Points no run has (a token count between the marks; training
		// FLOPs, which the fixture does not record): the report's error is
		// shown, inside its box.
		for _, tc := range []struct{ kind, arg, want string }{
			{"train_flops", "1e12", "recorded no budget/train_flops_cum"},
			{"tokens", "150", "token marks where every run has a row of eval/acc: 0, 200"},
		} {
			setSelect(t, ctx, "at-kind", tc.kind)
			setSelect(t, ctx, "at-arg", tc.arg)
			waitFor(t, ctx, `(document.querySelector('#report .error') || {}).textContent?.includes(`+strconv.Quote(tc.want)+`)`, 10*time.Second)
			msg := eval[string](t, ctx, `document.querySelector('#report .error').textContent`)
			fits := eval[bool](t, ctx, `(() => { const e = document.querySelector('#report .error'); const b = e.getBoundingClientRect(), p = document.getElementById('app').getBoundingClientRect();
				return e.scrollWidth <= e.clientWidth && b.right <= p.right + 1; })()`)
			if !fits || !strings.Contains(msg, tc.want) {
				t.Errorf("at %s:%s: error %q (fits its box: %v), want it to say %q", tc.kind, tc.arg, msg, fits, tc.want)
			}
		}
		screenshot(t, ctx, shots, "at-error.png")
		setSelect(t, ctx, "at-kind", "final")
		waitFor(t, ctx, `document.querySelectorAll('#report-table td.cell').length === 4`, 10*time.Second)
	})

	t.Run("colours of rollout plot", func(t *testing.T) {
		got := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#curves svg g.series')).map(g => g.querySelector('polyline.mean').getAttribute('stroke'))`)
		if want := []string{"#0072b2", "#d55e00"}; !slices.Equal(got, want) {
			t.Errorf("curve colours %v, want report.Palette's %v", got, want)
		}
	})

	t.Run("paired difference", func(t *testing.T) {
		setSelect(t, ctx, "curve-x", "step")
		setSelect(t, ctx, "curve-metric", "reward/mean")
		setSelect(t, ctx, "curve-view", "diff")
		waitFor(t, ctx, `document.querySelector('#curves svg .zero') !== null && document.querySelectorAll('#curves svg g.series').length === 1`, 10*time.Second)
		if got := seriesShown(t, ctx); !slices.Equal(got, []string{"tree"}) {
			t.Errorf("diff curves %v, want tree (minus flat)", got)
		}
		if c := eval[string](t, ctx, `document.getElementById('curve-caption').textContent`); !strings.Contains(c, "paired") {
			t.Errorf("diff caption %q", c)
		}
		eval[chromedp.Void](t, ctx, `document.getElementById('curves').scrollIntoView()`)
		screenshot(t, ctx, shots, "diff.png")
		setSelect(t, ctx, "curve-view", "curves")
		waitFor(t, ctx, `document.querySelectorAll('#curves svg g.series').length === 2`, 10*time.Second)
	})

	t.Run("another experiment", func(t *testing.T) {
		setSelect(t, ctx, "compare-exp", "exp2")
		waitFor(t, ctx, `document.querySelector('#curves svg g.series[data-variant="exp2/flat"]') !== null`, 10*time.Second)
		if got := seriesShown(t, ctx); !slices.Equal(got, []string{"flat", "tree", "exp2/flat"}) {
			t.Errorf("compared with exp2: %v", got)
		}
		if dash := eval[string](t, ctx, `document.querySelector('#curves svg g.series[data-variant="exp2/flat"] polyline.mean').getAttribute('stroke-dasharray')`); dash == "" {
			t.Error("the other experiment's curve is not dashed")
		}
		screenshot(t, ctx, shots, "compare.png")
		setSelect(t, ctx, "compare-exp", "")
		waitFor(t, ctx, `document.querySelectorAll('#curves svg g.series').length === 2`, 10*time.Second)
	})

	t.Run("group by and filter", func(t *testing.T) {
		setSelect(t, ctx, "group-by", "rollout.strategy")
		waitFor(t, ctx, `document.querySelector('#curves svg g.series[data-variant="entropy_tree"]') !== null`, 10*time.Second)
		if got := seriesShown(t, ctx); !slices.Equal(got, []string{"entropy_tree", "flat"}) {
			t.Errorf("grouped by rollout.strategy: %v", got)
		}
		setSelect(t, ctx, "filter-key", "rollout.strategy")
		setSelect(t, ctx, "filter-value", "flat")
		waitFor(t, ctx, `document.querySelectorAll('#curves svg g.series').length === 1`, 10*time.Second)
		if got := seriesShown(t, ctx); !slices.Equal(got, []string{"flat"}) {
			t.Errorf("filtered on rollout.strategy=flat: %v", got)
		}
		screenshot(t, ctx, shots, "group-filter.png")
	})

	t.Run("URL state survives a reload", func(t *testing.T) {
		setSelect(t, ctx, "smooth", "0.5")
		waitFor(t, ctx, `document.querySelector('#curves svg polyline.raw') !== null`, 10*time.Second)
		before := eval[string](t, ctx, `location.hash`)
		for _, want := range []string{"metric=reward%2Fmean", "x=step", "group=rollout.strategy", "filter=rollout.strategy%3Dflat", "smooth=0.5"} {
			if !strings.Contains(before, want) {
				t.Errorf("hash %q lacks %s", before, want)
			}
		}
		do(t, ctx, "reloading", chromedp.Reload())
		waitFor(t, ctx, `document.querySelectorAll('#curves svg g.series').length === 1 && document.querySelector('#curves svg polyline.raw') !== null`, 10*time.Second)
		got := eval[[]string](t, ctx, `['curve-metric', 'curve-x', 'group-by', 'smooth'].map(id => document.getElementById(id).value).concat([location.hash])`)
		if want := []string{"reward/mean", "step", "rollout.strategy", "0.5", before}; !slices.Equal(got, want) {
			t.Errorf("after a reload: %q, want %q", got, want)
		}
		if f := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#filters .chip')).map(c => c.dataset.filter)`); !slices.Equal(f, []string{"rollout.strategy=flat"}) {
			t.Errorf("filters after a reload: %v", f)
		}
		screenshot(t, ctx, shots, "reloaded.png")
	})

	t.Run("config diff and notes", func(t *testing.T) {
		eval[chromedp.Void](t, ctx, `document.getElementById('app').replaceChildren()`) // no element of the page before
		show(t, ctx, "#/exp/exp", `document.querySelector('#diff-table tr[data-key="rollout.strategy"]') !== null && document.querySelector('#runs tr[data-run="tree-1"]') !== null`)
		if row := eval[string](t, ctx, `document.querySelector('#diff-table tr[data-key="rollout.strategy"]').textContent`); row != "rollout.strategyflatentropy_tree" {
			t.Errorf("diff row %q", row)
		}
		if n := eval[string](t, ctx, `document.querySelector('#runs tr[data-run="tree-1"] [data-field="notes"]').textContent`); n != fixtureNote {
			t.Errorf("tree-1's notes %q", n)
		}
		eval[chromedp.Void](t, ctx, `document.getElementById('config-diff').scrollIntoView()`)
		screenshot(t, ctx, shots, "config-diff.png")
	})

	t.Run("sample table", func(t *testing.T) {
		eval[chromedp.Void](t, ctx, `document.getElementById('app').replaceChildren()`)
		show(t, ctx, "#/run/tree-1?step=1", `document.querySelectorAll('#sample-table tbody tr').length === 5`)
		rows := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('#sample-table tbody tr')).map(r => Array.from(r.cells).slice(0, 6).map(c => c.textContent).join('|'))`)
		want := []string{"0|0|1+2=|301|0|-1", "0|1|1+2=|3|1|0.5", "0|2|1+2=|34|0|0.22 [-0.2, 0.5]", "1|0|2+2=|4|1|0", "1|1|2+2=|4|1|0"}
		if !slices.Equal(rows, want) {
			t.Errorf("sample table\n%q\nwant\n%q", rows, want)
		}
		if n := eval[string](t, ctx, `document.querySelector('.run-notes li').textContent`); !strings.HasSuffix(n, fixtureNote) {
			t.Errorf("run page note %q", n)
		}
		eval[chromedp.Void](t, ctx, `document.getElementById('samples').scrollIntoView()`)
		screenshot(t, ctx, shots, "samples.png")
		do(t, ctx, "following a sample's tree link", chromedp.Click(chromedp.CSS(`#sample-table tr[data-group="1"] a.tree-link`)))
		waitFor(t, ctx, `location.hash === '#/tree/tree-1?step=1&group=1' && (document.getElementById('tree-group') || {}).value === '1'`, 10*time.Second)
	})
}
