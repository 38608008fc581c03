package ui

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"testing"
)

// FuzzEndpoints requests any path and query of the dashboard over the
// fixture store: the answer is a 2xx, 3xx or 4xx (never a failure of the
// server), and the work of one request is bounded by the store and the
// request's own length: what it allocates and answers grows at most
// linearly with the URL (the tokens endpoint answers a text per id
// asked), on top of a fixed bound for the store (a few MiB here).
func FuzzEndpoints(f *testing.F) {
	for _, seed := range []string{
		"/api/experiments",
		"/api/experiments/exp",
		"/api/experiments/exp/report?at=final&metric=eval/acc&metric=reward/mean&baseline=flat",
		"/api/experiments/exp/report?at=step:1&metric=" + strings.Repeat("x", 200),
		"/api/experiments/exp/curves?metric=reward/mean&x=tokens&variant=tree",
		"/api/experiments/exp/curves?metric=eval/acc&x=time",
		"/api/runs?experiment=exp",
		"/api/runs/flat-1",
		"/api/runs/tree-2/metrics",
		"/api/runs/tree-1/steps/1/groups",
		"/api/runs/tree-1/steps/2/groups/0",
		"/api/runs/tree-1/steps/99999999999999999999/groups/1",
		"/api/tokens?ids=1,2,3," + strings.Repeat("7,", 2000) + "8",
		"/api/nothing",
		"/index.html",
		"/../../etc/passwd",
	} {
		f.Add(seed)
	}
	path, w := fixture(f, false)
	w.Close()
	h := newHandler(f, path)
	f.Fuzz(func(t *testing.T, target string) {
		u, err := url.ParseRequestURI(target)
		if err != nil || !strings.HasPrefix(target, "/") {
			return // not a request target: no request is made
		}
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		before := m.TotalAlloc
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, &http.Request{Method: "GET", URL: u, RequestURI: target, Host: "localhost", Header: http.Header{}})
		runtime.ReadMemStats(&m)
		allocated := m.TotalAlloc - before
		if rec.Code >= 500 {
			t.Errorf("GET %q: status %d: %s", target, rec.Code, rec.Body)
		}
		const fixed = 8 << 20 // the fixture store read whole, a few times
		if n := len(target); rec.Body.Len() > fixed+64*n || allocated > fixed+4096*uint64(n) {
			t.Errorf("GET %q (%d bytes): answer of %d bytes, %d bytes allocated", target, n, rec.Body.Len(), allocated)
		}
	})
}
