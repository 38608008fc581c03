package serve

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rollout-rl/rollout/policy"
)

// counting is a fake backend that counts the tokens of the work it is
// given: the test-only hook the bounds below are asserted on.
type counting struct {
	*fakeBackend
	mu                        sync.Mutex
	prefilled, scored, logits int // tokens prefilled, tokens scored, Logits calls
	stepped, maxStates        int // tokens decoded, most states in one Step
	onLogits                  func()
}

func (c *counting) PrefillBatch(prompts [][]int, streams []policy.Stream) ([]policy.State, error) {
	c.mu.Lock()
	for _, p := range prompts {
		c.prefilled += len(p)
	}
	c.mu.Unlock()
	return c.fakeBackend.PrefillBatch(prompts, streams)
}

func (c *counting) Step(states []policy.State, cfg policy.Sampling, out []policy.Token) error {
	c.mu.Lock()
	c.stepped += len(states)
	c.maxStates = max(c.maxStates, len(states))
	c.mu.Unlock()
	return c.fakeBackend.Step(states, cfg, out)
}

func (c *counting) Logits(seq []int) ([][]float32, error) {
	if c.onLogits != nil {
		c.onLogits()
	}
	c.mu.Lock()
	c.scored += len(seq)
	c.logits++
	c.mu.Unlock()
	return c.fakeBackend.Logits(seq)
}

// work is what the backend has done so far.
type work struct{ prefilled, scored, stepped, maxStates int }

func (c *counting) work() work {
	c.mu.Lock()
	defer c.mu.Unlock()
	return work{c.prefilled, c.scored, c.stepped, c.maxStates}
}

// boundsServer is a server with a batch of 8 over a context of 16 tokens.
const boundsBatch, boundsSeq = 8, 16

func boundsServer(t testing.TB) (*counting, *Server, string) {
	t.Helper()
	s := newFake(t, halving, boundsSeq)
	c := &counting{fakeBackend: s}
	srv, url := startServer(t, c, Options{MaxBatch: boundsBatch, QueueSize: 4})
	return c, srv, url
}

// Per request, whatever its fields: prefilled and scored tokens at most
// batch × context, decoded tokens at most batch × context, never more
// states in a step than the batch, an answer of bounded size, and bounded
// allocation. These are the bounds a request of the largest size (every
// field at its maximum) reaches; a request that skipped a check (prompts
// × n over the batch with max_tokens 0, say) would exceed them by orders
// of magnitude.
func checkBounds(t testing.TB, c *counting, before work, allocated uint64, body string, code int, answer []byte) {
	t.Helper()
	after := c.work()
	maxTokens := boundsBatch * boundsSeq
	if d := after.prefilled - before.prefilled; d > maxTokens {
		t.Errorf("%.200s: %d tokens prefilled, bound %d", body, d, maxTokens)
	}
	if d := after.scored - before.scored; d > maxTokens {
		t.Errorf("%.200s: %d tokens scored, bound %d", body, d, maxTokens)
	}
	if d := after.stepped - before.stepped; d > maxTokens {
		t.Errorf("%.200s: %d tokens decoded, bound %d", body, d, maxTokens)
	}
	if after.maxStates > boundsBatch {
		t.Errorf("%.200s: %d states in one step, batch %d", body, after.maxStates, boundsBatch)
	}
	// Each position of each sequence answers at most 21 logprobs and 21
	// prompt logprobs of well under 100 bytes each.
	if maxBytes := maxTokens*2*21*100 + 4096; len(answer) > maxBytes {
		t.Errorf("%.200s: answer of %d bytes, bound %d", body, len(answer), maxBytes)
	}
	if allocated > 64<<20 {
		t.Errorf("%.200s: %d MiB allocated for one request", body, allocated>>20)
	}
	if code != http.StatusOK && code != http.StatusBadRequest && code != http.StatusNotFound && code != http.StatusRequestEntityTooLarge {
		t.Errorf("%.200s: status %d: %s", body, code, answer)
	}
}

// measured sends one request and returns its status, answer and the bytes
// allocated meanwhile (by the whole process: the test sends one request
// at a time).
func measured(t testing.TB, url, body string) (int, []byte, uint64) {
	t.Helper()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	before := m.TotalAlloc
	code, answer := post(t, url, body)
	runtime.ReadMemStats(&m)
	return code, answer, m.TotalAlloc - before
}

// Every combination of the fields that set a request's size: the bounds
// hold in each, and what goes beyond the batch is refused.
func TestBoundsInEveryCombination(t *testing.T) {
	c, _, url := boundsServer(t)
	tokens := func(n int) string { return "[1" + strings.Repeat(",4", n-1) + "]" }
	many := func(item string, k int) string {
		return "[" + strings.TrimSuffix(strings.Repeat(item+",", k), ",") + "]"
	}
	prompts := map[string]string{
		"one text":            `"ab"`,
		"long text":           `"` + strings.Repeat("a", boundsSeq-2) + `"`,
		"batch of texts":      many(`"a"`, boundsBatch),
		"texts beyond batch":  many(`"a"`, 100),
		"ids":                 tokens(boundsSeq),
		"batch of ids":        many(tokens(boundsSeq), boundsBatch),
		"ids beyond batch":    many(`[1]`, 1000),
		"ids beyond context":  tokens(boundsSeq + 1),
		"lists beyond batch":  many(tokens(2), boundsBatch+1),
		"texts, one too many": many(`"ab"`, boundsBatch+1),
	}
	refused := 0
	for name, prompt := range prompts {
		for _, n := range []string{"", `"n": 2,`, `"n": 8,`, `"n": 64,`} {
			for _, maxTokens := range []string{"", `"max_tokens": 0,`, `"max_tokens": 14,`, `"max_tokens": 100000,`} {
				for _, scoring := range []string{"", `"logprobs": 20,`, `"logprobs": 20, "echo": true,`, `"echo": true, "prompt_logprobs": 20,`, `"logprobs": 0, "echo": true, "prompt_logprobs": 0,`} {
					body := fmt.Sprintf(`{%s%s%s"prompt": %s}`, n, maxTokens, scoring, prompt)
					before := c.work()
					code, answer, allocated := measured(t, url, body)
					checkBounds(t, c, before, allocated, name+" "+n+maxTokens+scoring, code, answer)
					if code != http.StatusOK {
						refused++
					}
				}
			}
		}
	}
	if refused == 0 {
		t.Error("no combination was refused")
	}
	// The combination that once skipped the batch check: max_tokens 0
	// with logprobs and echo, prompts × n beyond the batch.
	code, answer := post(t, url, `{"max_tokens": 0, "logprobs": 20, "echo": true, "n": 8, "prompt": `+many(`[1]`, 1000)+`}`)
	if code != http.StatusBadRequest || !strings.Contains(string(answer), "1000 prompts, more than the server's batch of 8") {
		t.Errorf("max_tokens 0, echo, logprobs, 1000 prompts × 8: status %d: %s", code, answer)
	}
	code, answer = post(t, url, `{"max_tokens": 0, "logprobs": 20, "echo": true, "n": 8, "prompt": [[1], [1]]}`)
	if code != http.StatusBadRequest || !strings.Contains(string(answer), "2 prompts × n = 16 sequences, more than the server's batch of 8") {
		t.Errorf("max_tokens 0, echo, logprobs, 2 prompts × 8: status %d: %s", code, answer)
	}
}

// FuzzCompletions sends any body to POST /v1/completions: the answer is
// a 200 or a 4xx, and the work and memory of the request stay within the
// bounds of the largest valid request.
func FuzzCompletions(f *testing.F) {
	for _, seed := range []string{
		`{"prompt": "ab", "n": 2, "max_tokens": 4, "logprobs": 2, "echo": true}`,
		`{"prompt": [[1, 4], [1, 5]], "max_tokens": 0, "logprobs": 20, "echo": true, "prompt_logprobs": 20, "n": 4}`,
		`{"prompt": ["a", "b", "a", "b", "a", "b", "a", "b"], "n": 1, "max_tokens": 14, "logprobs": 20}`,
		`{"prompt": [1], "max_tokens": 0, "n": 8, "echo": true, "logprobs": 20}`,
		`{"prompt": "ab", "stop": ["a", "b"], "temperature": 0}`,
		`{"prompt": [[1],[1],[1],[1],[1],[1],[1],[1],[1]], "max_tokens": 0, "logprobs": 1}`,
		`{"prompt": "` + strings.Repeat("a", 14) + `", "n": 8, "echo": true, "prompt_logprobs": 20, "logprobs": 20}`,
	} {
		f.Add(seed)
	}
	c, _, url := boundsServer(f)
	f.Fuzz(func(t *testing.T, body string) {
		before := c.work()
		code, answer, allocated := measured(t, url, body)
		checkBounds(t, c, before, allocated, body, code, answer)
	})
}

// FuzzModels sends any request to GET /v1/models: a small answer.
func FuzzModels(f *testing.F) {
	f.Add("/v1/models", "")
	f.Add("/v1/models?x="+strings.Repeat("a", 1000), "Bearer x")
	_, _, url := boundsServer(f)
	f.Fuzz(func(t *testing.T, path, auth string) {
		req, err := http.NewRequest("GET", url+"/"+strings.TrimPrefix(path, "/"), nil)
		if err != nil {
			return // not a URL: nothing is sent
		}
		if auth != "" && !strings.ContainsAny(auth, "\r\n\x00") {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
		if len(b) > 4096 || resp.StatusCode >= 500 {
			t.Errorf("GET %q: status %d, %d bytes", path, resp.StatusCode, len(b))
		}
	})
}

// A request asking for logprobs of many sequences is scored one sequence
// per decode step: another request's steps go on meanwhile.
func TestScoringDoesNotHoldUpOthers(t *testing.T) {
	s := newFake(t, endless, boundsSeq)
	c := &counting{fakeBackend: s}
	var mu sync.Mutex
	var events []byte
	var srv *Server
	var once sync.Once
	c.onLogits = func() {
		mu.Lock()
		events = append(events, 'L')
		mu.Unlock()
	}
	c.beforeStep = func(int) {
		// The second request is queued before the first one's first step.
		once.Do(func() {
			for srv.Stats().Queued == 0 {
				time.Sleep(time.Millisecond)
			}
		})
		mu.Lock()
		events = append(events, 'S')
		mu.Unlock()
	}
	srv, url := startServer(t, c, Options{MaxBatch: boundsBatch})
	done := make(chan int, 2)
	go func() {
		code, _ := post(t, url, `{"prompt": "a", "n": 8, "max_tokens": 2, "logprobs": 5}`) // the whole batch, 8 sequences to score
		done <- code
	}()
	for c.Live() == 0 {
		time.Sleep(time.Millisecond)
	}
	go func() {
		code, _ := post(t, url, `{"prompt": "a", "max_tokens": 12}`)
		done <- code
	}()
	for range 2 {
		if code := <-done; code != http.StatusOK {
			t.Errorf("status %d", code)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Count(string(events), "L") != 8 || strings.Contains(string(events), "LL") {
		t.Errorf("steps (S) and scorings (L): %s; want 8 scorings, each after a step of the other request", events)
	}
}

// A client that goes away while its request waits for room is dropped
// without its prompt being prefilled; one that goes away while decoding
// has its sequences released.
func TestDisconnectCancelsWork(t *testing.T) {
	s := newFake(t, endless, 64)
	c := &counting{fakeBackend: s}
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	c.beforeStep = func(int) { once.Do(func() { close(entered); <-release }) }
	srv, url := startServer(t, c, Options{MaxBatch: 2})
	busy := make(chan int, 1)
	go func() { code, _ := post(t, url, `{"prompt": "a", "max_tokens": 60, "n": 2}`); busy <- code }()
	<-entered
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/completions", strings.NewReader(`{"prompt": "aaaa", "max_tokens": 8}`))
	req.Header.Set("Content-Type", "application/json")
	gone := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		gone <- err
	}()
	for srv.Stats().Queued == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	<-gone
	// The server notices the client's going when its connection closes:
	// the handler then returns, releasing its slot.
	for deadline := time.Now().Add(10 * time.Second); len(srv.held) > 1 && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	prefilled := c.work().prefilled
	close(release)
	if code := <-busy; code != http.StatusOK {
		t.Errorf("busy request: status %d", code)
	}
	// Another request goes through the scheduler after the cancelled one.
	if code, b := post(t, url, `{"prompt": "a", "max_tokens": 1}`); code != http.StatusOK {
		t.Fatalf("status %d: %s", code, b)
	}
	if got := c.work().prefilled - prefilled; got != 3 {
		t.Errorf("%d tokens prefilled after the cancelled request, want 3 (the last request's; none of the cancelled one's 6)", got)
	}
	if st := srv.Stats(); st.Cancelled != 1 {
		t.Errorf("stats %+v, want 1 cancelled", st)
	}
	if live := c.Live(); live != 0 {
		t.Errorf("%d states still live", live)
	}
}

// The guard: Host header, API key (bearer, and basic for browsers), and
// JSON bodies only.
func TestGuardAndContentType(t *testing.T) {
	b := newFake(t, halving, 16)
	tok, _ := policy.NewTokenizer(testAlphabet)
	srv, err := New(b, tok, Options{Guard: Guard{LoopbackOnly: true, Key: "s3cret"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	h := srv.Handler()
	const ok = `{"prompt": "ab", "max_tokens": 1}`
	basic := func(user, pass string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	}
	for _, tc := range []struct {
		name, method, path, host, auth, ctype string
		status                                int
		want                                  string
	}{
		{"key", "POST", "/v1/completions", "127.0.0.1:8000", "Bearer s3cret", "application/json", 200, `"text_completion"`},
		{"key, charset", "POST", "/v1/completions", "localhost:8000", "bearer s3cret", "application/json; charset=utf-8", 200, `"text_completion"`},
		{"no key", "POST", "/v1/completions", "127.0.0.1:8000", "", "application/json", 401, `"code":"invalid_api_key"`},
		{"wrong key", "POST", "/v1/completions", "127.0.0.1:8000", "Bearer s3cre", "application/json", 401, `"message":"incorrect API key provided"`},
		{"key as basic, not a browser server", "POST", "/v1/completions", "127.0.0.1:8000", basic("u", "s3cret"), "application/json", 401, `invalid_api_key`},
		{"models without key", "GET", "/v1/models", "127.0.0.1", "", "", 401, `"type":"invalid_request_error"`},
		{"models with key", "GET", "/v1/models", "[::1]:8000", "Bearer s3cret", "", 200, `"object":"list"`},
		{"rebound host", "POST", "/v1/completions", "evil.example:8000", "Bearer s3cret", "application/json", 403, `host \"evil.example:8000\"`},
		{"lookalike host", "GET", "/v1/models", "localhost.evil.example", "Bearer s3cret", "", 403, `"code":"host_not_allowed"`},
		{"text/plain", "POST", "/v1/completions", "127.0.0.1", "Bearer s3cret", "text/plain", 415, `content type \"text/plain\"`},
		{"form", "POST", "/v1/completions", "127.0.0.1", "Bearer s3cret", "application/x-www-form-urlencoded", 415, `must be JSON`},
		{"no content type", "POST", "/v1/completions", "127.0.0.1", "Bearer s3cret", "", 415, `content type none`},
	} {
		var body io.Reader
		if tc.method == "POST" {
			body = strings.NewReader(ok)
		}
		req := httptest.NewRequest(tc.method, tc.path, body)
		req.Host = tc.host
		if tc.auth != "" {
			req.Header.Set("Authorization", tc.auth)
		}
		if tc.ctype != "" {
			req.Header.Set("Content-Type", tc.ctype)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.want) || rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s: status %d: %s; want %d and %s", tc.name, rec.Code, rec.Body, tc.status, tc.want)
		}
		if tc.status == 401 && rec.Header().Get("WWW-Authenticate") != `Bearer realm="rollout"` {
			t.Errorf("%s: WWW-Authenticate %q", tc.name, rec.Header().Get("WWW-Authenticate"))
		}
	}
	// A browser's server takes the key as a Basic password and asks for it.
	g := Guard{Key: "s3cret", Browser: true}.Wrap(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	for _, tc := range []struct {
		auth   string
		status int
	}{{basic("anyone", "s3cret"), 200}, {"Bearer s3cret", 200}, {basic("s3cret", ""), 401}, {"Basic !!", 401}, {"", 401}} {
		req := httptest.NewRequest("GET", "/", nil)
		req.Header.Set("Authorization", tc.auth)
		rec := httptest.NewRecorder()
		g.ServeHTTP(rec, req)
		if rec.Code != tc.status {
			t.Errorf("browser guard, %q: status %d, want %d", tc.auth, rec.Code, tc.status)
		}
		if rec.Code == 401 && !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Basic ") {
			t.Errorf("browser guard: WWW-Authenticate %q, want Basic", rec.Header().Get("WWW-Authenticate"))
		}
	}
}

func TestExposure(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		{"127.0.0.1:8080", ""},
		{"127.0.0.2:80", ""},
		{"localhost:8080", ""},
		{"[::1]:8080", ""},
		{":8080", "every network interface"},
		{"0.0.0.0:8080", "every network interface"},
		{"[::]:8080", "every network interface"},
		{"192.168.1.5:8080", "192.168.1.5"},
		{"example.org:80", "example.org"},
	} {
		if got := Exposure(tc.addr); got != tc.want {
			t.Errorf("Exposure(%q) = %q, want %q", tc.addr, got, tc.want)
		}
	}
}

// A body that comes too slowly, and a connection left idle, are closed
// after the server's read and idle timeouts.
func TestSlowClientsAreCut(t *testing.T) {
	b := newFake(t, halving, 16)
	tok, _ := policy.NewTokenizer(testAlphabet)
	srv, err := New(b, tok, Options{ReadTimeout: 100 * time.Millisecond, IdleTimeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()
	defer func() { cancel(); <-served }()
	for name, send := range map[string]string{
		"slow body":    "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"prompt\"",
		"slow headers": "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n",
		"idle":         "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
	} {
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.WriteString(conn, send); err != nil {
			t.Fatal(err)
		}
		// The server closes the connection (after any answer): reading
		// ends. The deadline only keeps a broken server from hanging
		// the test; the timeouts are 100 ms.
		conn.SetReadDeadline(time.Now().Add(20 * time.Second))
		_, err = io.Copy(io.Discard, conn)
		conn.Close()
		if err != nil {
			t.Errorf("%s: the server kept the connection open: %v", name, err)
		}
	}
}

// A request not answered within RequestTimeout is answered 503 and
// dropped.
func TestRequestTimeout(t *testing.T) {
	c := &counting{fakeBackend: newFake(t, endless, 64)}
	release := make(chan struct{})
	var once sync.Once
	c.beforeStep = func(int) { once.Do(func() { <-release }) }
	srv, url := startServer(t, c, Options{RequestTimeout: 50 * time.Millisecond})
	code, body := post(t, url, `{"prompt": "a", "max_tokens": 40}`)
	close(release)
	if code != http.StatusServiceUnavailable || !strings.Contains(string(body), "not answered within the server's limit of 50ms") {
		t.Errorf("status %d: %s", code, body)
	}
	// The scheduler drops it at its next step; the deadline only keeps a
	// broken scheduler from hanging the test.
	for deadline := time.Now().Add(10 * time.Second); (srv.Stats().Cancelled == 0 || c.Live() != 0) && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	if st := srv.Stats(); st.Cancelled != 1 || c.Live() != 0 {
		t.Errorf("stats %+v, %d states live; want the request cancelled and its states released", st, c.Live())
	}
}

// A limited listener holds at most n connections: the next is accepted
// once one closes, and Close ends a waiting Accept.
func TestLimitListener(t *testing.T) {
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := LimitListener(inner, 2)
	accepted := make(chan net.Conn, 3)
	acceptErr := make(chan error, 1)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				acceptErr <- err
				return
			}
			accepted <- c
		}
	}()
	var clients []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", inner.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		clients = append(clients, c)
	}
	first, second := <-accepted, <-accepted
	select {
	case <-accepted:
		t.Fatal("a third connection was accepted while two were open")
	case <-time.After(50 * time.Millisecond): // a correct listener never accepts it: no false failure
	}
	first.Close()
	first.Close() // a second close frees no second slot
	select {
	case third := <-accepted:
		third.Close()
	case <-time.After(10 * time.Second):
		t.Fatal("the third connection was not accepted after one closed")
	}
	// Close ends the Accept waiting meanwhile.
	ln.Close()
	select {
	case err := <-acceptErr:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept after Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Accept still waiting after Close")
	}
	second.Close()
}
