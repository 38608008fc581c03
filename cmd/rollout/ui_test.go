package main

import (
	"bytes"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/rollout-rl/rollout/tracking"
)

// uiStore writes a store with experiment "exp": variants a (baseline) and
// b, seeds 1 and 2, steps 0 to 2 of 100 sampled tokens each, with
// reward/mean at each step and eval/acc at steps 0 and 2.
func uiStore(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.db")
	st, err := tracking.Open(path, tracking.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.PutExperiment(tracking.Experiment{Name: "exp", Variants: []string{"a", "b"}, Baseline: "a"}); err != nil {
		t.Fatal(err)
	}
	for vi, v := range []string{"a", "b"} {
		for seed := int64(1); seed <= 2; seed++ {
			id := v + string(rune('0'+seed))
			if _, err := st.BeginRun(tracking.Run{ID: id, Experiment: "exp", Variant: v, Seed: seed, Config: "variant: " + v + "\n", TotalSteps: 2}); err != nil {
				t.Fatal(err)
			}
			for step := range 3 {
				m := map[string]float64{"reward/mean": 0.1*float64(vi+step) + 0.013*float64(seed*seed)}
				if step%2 == 0 {
					m["eval/acc"] = 0.2*float64(vi) + 0.05*float64(step) + 0.01*float64(seed)
				}
				if err := st.CommitStep(id, tracking.StepRecord{Step: step, Tokens: int64(100 * step), Metrics: m}); err != nil {
					t.Fatal(err)
				}
			}
			if err := st.EndRun(id, tracking.StatusFinished, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	return path
}

// The dashboard's report endpoint answers exactly what `rollout report
// --format json` prints, at every kind of point.
func TestUIReportEqualsReportJSON(t *testing.T) {
	path := uiStore(t)
	h, err := newUIHandler(path)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, tc := range []struct {
		at      string
		metrics []string
	}{
		{"final", nil},
		{"best", nil},
		{"step:1", []string{"reward/mean"}},
		{"tokens:200", []string{"eval/acc", "reward/mean"}},
	} {
		args := []string{"report", "exp", "--store", path, "--format", "json", "--at", tc.at}
		query := "?at=" + tc.at
		for _, m := range tc.metrics {
			args = append(args, "--metric", m)
			query += "&metric=" + m
		}
		code, want, errOut := rollout(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/api/experiments/exp/report"+query, nil))
		if rec.Code != http.StatusOK || rec.Body.String() != want {
			t.Errorf("at %s: status %d\ngot  %s\nwant %s", tc.at, rec.Code, rec.Body.String(), want)
		}
	}
}

var servingLine = regexp.MustCompile(`on (http://\S+/)`)

// rollout ui serves the store on a loopback port until interrupted, and
// refuses a store that does not exist or an address it cannot listen on.
func TestUICommand(t *testing.T) {
	path := uiStore(t)
	var status int
	var body string
	out := &requestsWhenServing{done: make(chan struct{}), do: func(base string) {
		if resp, err := http.Get(base + "api/experiments"); err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			status, body = resp.StatusCode, string(b)
		}
	}}
	var errOut bytes.Buffer
	code := run([]string{"ui", "--store", path, "--addr", "127.0.0.1:0"}, out, &errOut)
	out.wait(t)
	if code != 0 || status != http.StatusOK || !strings.Contains(body, `"name":"exp"`) || strings.Contains(errOut.String(), "warning") {
		t.Fatalf("exit %d, GET /api/experiments: %d %s\nstdout %s\nstderr %s", code, status, body, out.String(), errOut.String())
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"ui", "--store", filepath.Join(t.TempDir(), "none.db")}, "no store at"},
		{[]string{"ui", "--store", path, "--addr", "127.0.0.1:99999"}, "--addr 127.0.0.1:99999"},
		{[]string{"ui", "extra"}, "unknown command"},
	} {
		code, _, errOut := rollout(t, tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want %d and %q", tc.args, code, errOut, exitUsage, tc.want)
		}
	}
}

// With a key, the dashboard answers 401 (asking a browser for the key)
// without it, and 200 with it as a bearer key or a browser's password.
func TestUIKey(t *testing.T) {
	path := uiStore(t)
	t.Setenv(apiKeyEnv, "ui-key")
	type answer struct {
		status    int
		challenge string
	}
	var got []answer
	out := &requestsWhenServing{done: make(chan struct{}), do: func(base string) {
		for _, auth := range []string{"", "Bearer nope", "Bearer ui-key", "Basic " + base64.StdEncoding.EncodeToString([]byte("me:ui-key"))} {
			req, _ := http.NewRequest("GET", base+"api/experiments", nil)
			if auth != "" {
				req.Header.Set("Authorization", auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				got = append(got, answer{})
				continue
			}
			resp.Body.Close()
			got = append(got, answer{resp.StatusCode, resp.Header.Get("WWW-Authenticate")})
		}
	}}
	var errOut bytes.Buffer
	code := run([]string{"ui", "--store", path, "--addr", "127.0.0.1:0"}, out, &errOut)
	out.wait(t)
	want := []answer{{401, `Basic realm="rollout", charset="UTF-8"`}, {401, `Basic realm="rollout", charset="UTF-8"`}, {200, ""}, {200, ""}}
	if code != 0 || !slices.Equal(got, want) || !strings.Contains(out.String(), "API key required") {
		t.Errorf("exit %d, answers %v, want %v\nstdout %s\nstderr %s", code, got, want, out.String(), errOut.String())
	}
}

// requestsWhenServing, written to as standard output, calls do with the
// address the dashboard serves on, then interrupts the process.
type requestsWhenServing struct {
	once    sync.Once
	serving atomic.Bool // the serving line was written: the requests began
	bytes.Buffer
	do   func(base string)
	done chan struct{}
}

func (w *requestsWhenServing) Write(p []byte) (int, error) {
	if m := servingLine.FindSubmatch(p); m != nil {
		w.once.Do(func() {
			w.serving.Store(true)
			go func() {
				defer close(w.done)
				w.do(string(m[1]))
				syscall.Kill(os.Getpid(), syscall.SIGINT)
			}()
		})
	}
	return w.Buffer.Write(p)
}

// wait waits, once the command has returned, for the requests to end;
// when the command never served, no request was made.
func (w *requestsWhenServing) wait(t *testing.T) {
	t.Helper()
	if !w.serving.Load() {
		t.Fatal("no request was made: the command never served")
	}
	<-w.done
}
