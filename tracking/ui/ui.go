// Package ui is the web dashboard of a tracking store (`rollout ui`): an
// http.Handler that serves a few pages — experiments, one experiment's
// comparison table and curves, one run, and a viewer of rollout trees —
// and the JSON endpoints under /api/ they are drawn from, which scripts
// can read too.
//
// Every asset is embedded: the pages are plain JavaScript drawing SVG, with
// no library and no network access. The handler only reads: it answers GET
// (and HEAD) alone, and opens the store read-only, so while a run writes
// the store the handler reads snapshots of it (see tracking.Options), each
// kept until the writer's next commit, and otherwise never holds the store
// for longer than a request and a short reuse window (Options.TTL).
//
// Endpoints (all GET, all JSON; errors are {"error": "..."} with status 400
// for a bad parameter, 404 for something the store does not have, 500 for
// a store that cannot be read):
//
//	/api/experiments                              experiments with run counts by status and progress
//	/api/experiments/{name}                       the experiment, its runs (with their flattened
//	                                              configs and notes), metric names and labels,
//	                                              token marks and budget axis, variant colours
//	/api/experiments/{name}/report?at=&metric=&baseline=
//	                                              the comparison table, as `rollout report --format json`
//	/api/experiments/{name}/curves?metric=&x=step|tokens|time&kind=curves|diff&baseline=
//	                  &variant=&group=KEY&filter=KEY=VALUE
//	                                              per-variant mean curves with 95% bands, or paired
//	                                              differences from the baseline (as `rollout plot`),
//	                                              runs grouped by or filtered on config keys
//	/api/experiments/{name}/config-diff?variant=A&variant=B
//	                                              the keys two variants' configs differ in
//	/api/config-diff?run=A&run=B                  the keys two runs' configs differ in
//	/api/runs?experiment=                         runs (all, or one experiment's)
//	/api/runs/{id}                                a run with its metric names and notes
//	/api/runs/{id}/metrics                        every step's metric record
//	/api/runs/{id}/steps/{step}/groups            the step's rollout groups, as record JSON
//	/api/runs/{id}/steps/{step}/groups/{index}    one group, as record JSON
//	/api/runs/{id}/steps/{step}/samples           the step's responses: prompt, response, reward, advantage
//	/api/tokens?ids=1,2,3                         the display text of token ids
//	/api/style                                    the palette the figures share
package ui

import (
	"embed"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/rollout-rl/rollout/tracking"
	"github.com/rollout-rl/rollout/tracking/report"
)

//go:embed assets
var assets embed.FS

// DefaultTTL is how long an opened store is reused by later requests when
// Options.TTL is zero.
const DefaultTTL = 300 * time.Millisecond

// Options configure a Handler.
type Options struct {
	// Open opens the store read-only; the handler calls it when a request
	// finds no store opened within TTL, and closes what it returns.
	Open func() (*tracking.Store, error)
	// Report holds the defaults of the report endpoint (default metrics,
	// minimised metrics, the training-FLOP metric), as `rollout report`
	// has them; the request sets Metrics, At and Baseline.
	Report report.Options
	// Range gives a metric's possible range: curve bands are clipped to
	// it (report.PlotOptions.Range); nil means the registry's
	// (report.MetricRange), as `rollout plot` has it.
	Range func(metric string) (lo, hi float64, ok bool)
	// TokenText is the display text of one token id; nil shows the id.
	TokenText func(id int) string
	// TTL is how long one opened store serves further requests; 0 means
	// DefaultTTL. A store is closed once it is older and no request uses
	// it, so that a writer starting meanwhile finds the file free; a
	// snapshot, read while a writer holds the store, serves on until the
	// file changes.
	TTL time.Duration
}

// Handler serves the dashboard's pages and JSON endpoints.
type Handler struct {
	mux   *http.ServeMux
	store *storeCache
	opts  Options
}

// New returns the dashboard handler over the store Options.Open opens.
func New(opts Options) (*Handler, error) {
	if opts.Open == nil {
		return nil, fmt.Errorf("ui: no function to open the store (Options.Open)")
	}
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	static, err := fs.Sub(assets, "assets")
	if err != nil {
		return nil, fmt.Errorf("ui: embedded assets: %w", err)
	}
	h := &Handler{mux: http.NewServeMux(), store: newStoreCache(opts.Open, opts.TTL), opts: opts}
	routes := map[string]func(*tracking.Store, *http.Request) (any, error){
		"GET /api/experiments":                           h.experiments,
		"GET /api/experiments/{name}":                    h.experiment,
		"GET /api/experiments/{name}/report":             h.report,
		"GET /api/experiments/{name}/curves":             h.curves,
		"GET /api/runs":                                  h.runs,
		"GET /api/runs/{id}":                             h.run,
		"GET /api/runs/{id}/metrics":                     h.metrics,
		"GET /api/runs/{id}/steps/{step}/groups":         h.groups,
		"GET /api/runs/{id}/steps/{step}/groups/{index}": h.group,
		"GET /api/runs/{id}/steps/{step}/samples":        h.samples,
		"GET /api/config-diff":                           h.runDiff,
		"GET /api/experiments/{name}/config-diff":        h.variantDiff,
	}
	for pattern, fn := range routes {
		h.mux.Handle(pattern, h.api(fn))
	}
	h.mux.HandleFunc("GET /api/tokens", func(w http.ResponseWriter, r *http.Request) {
		v, err := h.tokens(r)
		answer(w, r, v, err)
	})
	h.mux.HandleFunc("GET /api/style", func(w http.ResponseWriter, r *http.Request) {
		v, err := h.style(r)
		answer(w, r, v, err)
	})
	h.mux.HandleFunc("GET /api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, fmt.Errorf("no endpoint %s (the package documentation of tracking/ui lists them)", r.URL.Path))
	})
	files := http.FileServerFS(static)
	h.mux.Handle("GET /", noCache(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A path no file can have (invalid UTF-8, say) is not found,
		// where the file server would answer 500.
		if name := strings.TrimPrefix(path.Clean(r.URL.Path), "/"); name != "" && !fs.ValidPath(name) {
			writeError(w, http.StatusNotFound, fmt.Errorf("no page %q", r.URL.Path))
			return
		}
		files.ServeHTTP(w, r)
	})))
	return h, nil
}

// ServeHTTP answers GET and HEAD requests; any other method is refused
// with 405, since nothing the dashboard does changes the store.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, fmt.Errorf("%s %s: the dashboard is read-only: only GET", r.Method, r.URL.Path))
		return
	}
	w.Header().Set("X-Content-Type-Options", "nosniff")
	h.mux.ServeHTTP(w, r)
}

// Close closes the store the handler keeps open, if any.
func (h *Handler) Close() error { return h.store.close() }

// noCache makes browsers revalidate the embedded files, so that a new
// build's pages are never mixed with an old build's script.
func noCache(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-cache")
		next.ServeHTTP(w, r)
	})
}
