package openai

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// okBody is a valid answer to a request of n = 1 with logprobs.
const okBody = `{"id":"x","choices":[{"text":"ab","index":0,"finish_reason":"length","logprobs":{"tokens":["a","b"],"token_logprobs":[-0.5,-1],"top_logprobs":[{"a":-0.5},{"b":-1}],"text_offset":[0,1]}}],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`

var okRequest = Request{Model: "m", Prompt: "12", N: 1, MaxTokens: 4, Temperature: 1, TopP: 1, Logprobs: 1}

// fault answers the i-th attempt (0-based) of a request.
type fault func(w http.ResponseWriter, r *http.Request, i int)

func status(code int, body string) fault {
	return func(w http.ResponseWriter, _ *http.Request, _ int) {
		w.WriteHeader(code)
		fmt.Fprint(w, body)
	}
}

// Each fault of a server, as the client meets it: retried or not, and the
// error it ends in. (A table of cases, hence the length.)
func TestFaults(t *testing.T) {
	apiError := `{"error":{"message":"the server is on fire","type":"server_error","param":null,"code":null}}`
	cases := []struct {
		name     string
		answer   fault
		opts     Options
		wantErr  []string        // substrings of the error; none: success
		status   int             // of the *Error
		attempts int             // requests the server saw
		pauses   []time.Duration // the waits before retries, when given
	}{
		{name: "ok", answer: status(200, okBody), attempts: 1},
		{name: "429 then 200", attempts: 2, answer: func(w http.ResponseWriter, r *http.Request, i int) {
			if i == 0 {
				status(429, `{"error":{"message":"queue full"}}`)(w, r, i)
				return
			}
			status(200, okBody)(w, r, i)
		}},
		{name: "Retry-After is honoured up to MaxBackoff", opts: Options{MaxBackoff: 30 * time.Millisecond}, attempts: 2,
			answer: func(w http.ResponseWriter, r *http.Request, i int) {
				if i == 0 {
					w.Header().Set("Retry-After", "1")
					status(429, `{"error":{"message":"slow down"}}`)(w, r, i)
					return
				}
				status(200, okBody)(w, r, i)
			}, pauses: []time.Duration{30 * time.Millisecond}},
		{name: "500 until giving up", answer: status(500, apiError), opts: Options{Retries: 2}, attempts: 3, status: 500,
			wantErr: []string{"/v1/completions: 500 Internal Server Error: the server is on fire (after 3 attempts)"}},
		{name: "400 is not retried", answer: status(400, `{"error":{"message":"n = 0, want 1..64","param":"n"}}`), attempts: 1, status: 400,
			wantErr: []string{": 400 Bad Request: n = 0, want 1..64 (param n)"}},
		{name: "error body that is not JSON", answer: status(503, "upstream gone"), opts: Options{Retries: -1}, attempts: 1, status: 503,
			wantErr: []string{`503 Service Unavailable: "upstream gone"`}},
		{name: "malformed JSON", answer: status(200, `{"choices": [`), attempts: 1, status: 200,
			wantErr: []string{"malformed JSON in the answer (it ends before the JSON does)", `"{\"choices\": ["`}},
		{name: "JSON of the wrong shape, in the answer's terms", answer: status(200, `{"choices": "many"}`), attempts: 1, status: 200,
			wantErr: []string{"malformed JSON in the answer (choices is a JSON string, want a list)"}},
		{name: "a body cut short is not retried", opts: Options{Retries: 1}, attempts: 1, status: 200,
			answer: func(w http.ResponseWriter, _ *http.Request, _ int) {
				w.Header().Set("Content-Length", "1000")
				w.WriteHeader(200)
				fmt.Fprint(w, okBody[:40])
			},
			wantErr: []string{"200 OK: the answer was cut short after 40 bytes: the server closed the connection before the end"}},
		{name: "an answer over the limit is not retried", opts: Options{MaxAnswerBytes: 100}, attempts: 1, status: 200,
			answer: status(200, okBody), wantErr: []string{"the answer is larger than the client's limit of 100 bytes"}},
		{name: "gzip", attempts: 1, answer: compressed("gzip", okBody)},
		{name: "deflate", attempts: 1, answer: compressed("deflate", okBody)},
		{name: "gzip over the limit, decompressed", opts: Options{MaxAnswerBytes: 100}, attempts: 1, status: 200,
			answer: compressed("gzip", okBody), wantErr: []string{"the answer, decompressed, is larger than the client's limit of 100 bytes"}},
		{name: "damaged gzip", attempts: 1, status: 200,
			answer: func(w http.ResponseWriter, _ *http.Request, _ int) {
				w.Header().Set("Content-Encoding", "gzip")
				fmt.Fprint(w, "not gzip at all")
			}, wantErr: []string{"the answer is not valid gzip"}},
		{name: "unknown encoding", attempts: 1, status: 200,
			answer: func(w http.ResponseWriter, _ *http.Request, _ int) {
				w.Header().Set("Content-Encoding", "br")
				fmt.Fprint(w, okBody)
			}, wantErr: []string{`the answer is in the encoding "br"`}},
		{name: "404 is not retried", answer: status(404, `{"error":{"message":"no such model"}}`), attempts: 1, status: 404,
			wantErr: []string{"404 Not Found: no such model"}},
		{name: "501 is not retried", answer: status(501, `{"error":{"message":"no"}}`), attempts: 1, status: 501,
			wantErr: []string{"501 Not Implemented"}},
		{name: "502 is retried", answer: status(502, `bad gateway`), opts: Options{Retries: 1}, attempts: 2, status: 502,
			wantErr: []string{"(after 2 attempts)"}},
		{name: "terminal escapes in the server's message are escaped", attempts: 1, status: 400,
			answer:  status(400, `{"error":{"message":"bad \u001b[31mred\u001b[0m\r\u0007 \u009b2J"}}`),
			wantErr: []string{`400 Bad Request: bad \x1b[31mred\x1b[0m\r\a \u009b2J`}},
		{name: "slow server times out", opts: Options{Timeout: 50 * time.Millisecond, Retries: 1}, attempts: 2,
			answer: func(w http.ResponseWriter, r *http.Request, _ int) {
				readAll(r) // so that the server notices the client hanging up
				select {
				case <-r.Context().Done():
				case <-time.After(5 * time.Second):
				}
			},
			wantErr: []string{"no complete answer within the timeout of 50ms", "(after 2 attempts)"}},
		{name: "wrong number of choices", answer: status(200, strings.Replace(okBody, `"index":0`, `"index":1`, 1)), attempts: 1, status: 200,
			wantErr: []string{"choice 0 has index 1"}},
		{name: "no logprobs", answer: status(200, `{"choices":[{"text":"ab","index":0,"logprobs":null}],"usage":{"completion_tokens":2}}`), attempts: 1,
			wantErr: []string{"choice 0 has no logprobs"}, status: 200},
		{name: "usage beyond max_tokens", answer: status(200, strings.Replace(okBody, `"completion_tokens":2`, `"completion_tokens":9`, 1)), attempts: 1,
			wantErr: []string{"usage.completion_tokens = 9, more than n × max_tokens = 4"}, status: 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var seen atomic.Int32
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				tc.answer(w, r, int(seen.Add(1))-1)
			}))
			defer hs.Close()
			o := tc.opts
			o.BaseURL = hs.URL + "/v1"
			o.Backoff = time.Millisecond
			c, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			var pauses []time.Duration
			c.pausing = func(d time.Duration) { pauses = append(pauses, d) }
			resp, err := c.Complete(context.Background(), okRequest)
			if tc.pauses != nil && !slices.Equal(pauses, tc.pauses) {
				t.Errorf("waited %v before the retries, want %v", pauses, tc.pauses)
			}
			if got := int(seen.Load()); got != tc.attempts {
				t.Errorf("server saw %d requests, want %d", got, tc.attempts)
			}
			if len(tc.wantErr) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				if resp.Usage.CompletionTokens != 2 || resp.Choices[0].Text != "ab" {
					t.Errorf("response %+v", resp)
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, want %q", tc.wantErr)
			}
			msg := err.Error()
			if strings.ContainsFunc(msg, unsafeRune) {
				t.Errorf("error %q holds control characters", msg)
			}
			for _, w := range append(tc.wantErr, hs.URL+"/v1/completions") {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q does not contain %q", msg, w)
				}
			}
			var e *Error
			if !errors.As(err, &e) || e.Status != tc.status {
				t.Errorf("error %#v, want an *Error with status %d", err, tc.status)
			}
		})
	}
}

// compressed answers body compressed as encoding says (gzip or deflate).
func compressed(encoding, body string) fault {
	return func(w http.ResponseWriter, _ *http.Request, _ int) {
		var b bytes.Buffer
		var zw io.WriteCloser
		if encoding == "gzip" {
			zw = gzip.NewWriter(&b)
		} else {
			zw = zlib.NewWriter(&b)
		}
		io.WriteString(zw, body)
		zw.Close()
		w.Header().Set("Content-Encoding", encoding)
		w.Write(b.Bytes())
	}
}

// A compressed answer that decompresses to gibibytes fails once the
// limit is read, within a set memory bound, and is not read to its end.
func TestCompressedBombFailsWithinMemory(t *testing.T) {
	// One gzip member of 1 MiB of spaces, repeated: gzip readers read
	// concatenated members as one stream.
	var member bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&member, gzip.BestCompression)
	zw.Write(bytes.Repeat([]byte(" "), 1<<20))
	zw.Close()
	const members = 16 << 10 // 16 GiB decompressed, 17 MB sent: more than the sockets' buffers hold
	var sent atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		for range members {
			n, err := w.Write(member.Bytes())
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
	}))
	defer hs.Close()
	const limit = 4 << 20
	c, err := New(Options{BaseURL: hs.URL, MaxAnswerBytes: limit})
	if err != nil {
		t.Fatal(err)
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	before := m.TotalAlloc
	_, err = c.Complete(context.Background(), okRequest)
	runtime.ReadMemStats(&m)
	allocated := m.TotalAlloc - before
	if err == nil || !strings.Contains(err.Error(), "the answer, decompressed, is larger than the client's limit of 4194304 bytes") {
		t.Fatalf("error %v, want the answer refused as too large", err)
	}
	t.Logf("%d bytes sent of %d, %.1f MiB allocated", sent.Load(), members*member.Len(), float64(allocated)/(1<<20))
	if allocated > 8*limit {
		t.Errorf("%d MiB allocated reading an answer limited to %d MiB", allocated>>20, limit>>20)
	}
	if total := int64(members * member.Len()); sent.Load() >= total {
		t.Errorf("the whole answer (%d bytes) was read", total)
	}
}

// Retries of a failing server are sent at most RetryConcurrency at once,
// while first attempts use the whole Concurrency.
func TestRetryConcurrency(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	var retrying, peakRetrying, live, peakLive int
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := readAll(r)
		mu.Lock()
		seen[body]++
		retry := seen[body] > 1
		live++
		peakLive = max(peakLive, live)
		if retry {
			retrying++
			peakRetrying = max(peakRetrying, retrying)
		}
		mu.Unlock()
		time.Sleep(10 * time.Millisecond)
		mu.Lock()
		live--
		if retry {
			retrying--
		}
		mu.Unlock()
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer hs.Close()
	c, err := New(Options{BaseURL: hs.URL, Concurrency: 4, RetryConcurrency: 1, Retries: 2, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Go(func() {
			r := okRequest
			r.Prompt = fmt.Sprint(i)
			if _, err := c.Complete(context.Background(), r); err == nil || !strings.Contains(err.Error(), "(after 3 attempts)") {
				t.Errorf("error %v, want 3 attempts", err)
			}
		})
	}
	wg.Wait()
	if peakRetrying != 1 || peakLive != 4 {
		t.Errorf("at most %d retries and %d requests at once, want 1 and 4", peakRetrying, peakLive)
	}
}

// The API key goes as a bearer token.
func TestAPIKeySent(t *testing.T) {
	var got string
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Get("Authorization")
		fmt.Fprint(w, okBody)
	}))
	defer hs.Close()
	c, _ := New(Options{BaseURL: hs.URL, APIKey: "sk-test"})
	if _, err := c.Complete(context.Background(), okRequest); err != nil {
		t.Fatal(err)
	}
	if got != "Bearer sk-test" {
		t.Errorf("Authorization %q, want Bearer sk-test", got)
	}
}

func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, ünïcode\tand\nlines": "plain text, ünïcode\tand\nlines",
		"\x1b[2J\x1b]0;title\a":           `\x1b[2J\x1b]0;title\a`,
		"cr\roverwrite\x7f":               `cr\roverwrite\x7f`,
		"c1 \u009b31m":                    `c1 \u009b31m`,
		"bad byte \xff":                   "bad byte \ufffd",
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

// A server that refuses connections is retried, then named.
func TestConnectionRefused(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close()
	c, err := New(Options{BaseURL: url, Retries: 2, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Complete(context.Background(), okRequest)
	var e *Error
	if !errors.As(err, &e) || e.Attempts != 3 || e.Status != 0 || !strings.Contains(err.Error(), url+"/v1/completions: connection refused") {
		t.Errorf("error %v, want a connection error naming %s after 3 attempts", err, url)
	}
}

// No more than Options.Concurrency requests are in flight at once.
func TestConcurrencyLimit(t *testing.T) {
	var live, peak atomic.Int32
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := live.Add(1)
		for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
		}
		time.Sleep(20 * time.Millisecond)
		live.Add(-1)
		fmt.Fprint(w, okBody)
	}))
	defer hs.Close()
	c, err := New(Options{BaseURL: hs.URL, Concurrency: 2})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := c.Complete(context.Background(), okRequest); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if p := peak.Load(); p != 2 {
		t.Errorf("peak of %d requests in flight, want 2", p)
	}
}

// The request body carries what the Request asks for.
func TestRequestBody(t *testing.T) {
	cases := []struct {
		name string
		req  Request
		want string
	}{
		{"text", okRequest, `{"model":"m","prompt":"12","n":1,"max_tokens":4,"temperature":1,"top_p":1,"logprobs":1}`},
		{"ids, seed, stop, token ids, no logprobs",
			Request{PromptIDs: []int{1, 5, 3}, N: 2, MaxTokens: 3, Temperature: 0.7, TopP: 0.9, Seed: 7, HasSeed: true, Stop: []string{"="}, Logprobs: -1, TokenIDs: true},
			`{"prompt":[1,5,3],"n":2,"max_tokens":3,"temperature":0.7,"top_p":0.9,"seed":7,"stop":["="],"return_tokens_as_token_ids":true}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b := new(strings.Builder)
				_, _ = fmt.Fprint(b, readAll(r))
				got = b.String()
				w.WriteHeader(400)
			}))
			defer hs.Close()
			c, _ := New(Options{BaseURL: hs.URL})
			_, _ = c.Complete(context.Background(), tc.req)
			if got != tc.want {
				t.Errorf("body\n%s\nwant\n%s", got, tc.want)
			}
		})
	}
}

func readAll(r *http.Request) string {
	var b strings.Builder
	buf := make([]byte, 512)
	for {
		n, err := r.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

func TestTopKEntropy(t *testing.T) {
	lg := math.Log
	// p = 1/2, 1/4, 1/8, 1/16, 1/16 over a vocabulary of 5.
	probs := []float64{0.5, 0.25, 0.125, 0.0625, 0.0625}
	var H float64
	for _, p := range probs {
		H -= p * lg(p)
	}
	top := func(k int) map[string]float64 {
		m := map[string]float64{}
		for i := range k {
			m[fmt.Sprint(i)] = lg(probs[i])
		}
		return m
	}
	cases := []struct {
		name       string
		top        map[string]float64
		k, vocab   int
		est, upper float64
	}{
		{"whole distribution", top(5), 5, 5, H, H},
		{"top 2 of 5", top(2), 2, 5, 0.5*lg(2) + 0.25*lg(4) + 0.25*lg(4), 0.5*lg(2) + 0.25*lg(4) + 0.25*lg(3/0.25)},
		{"top 1, tail smaller than p_1", top(1), 1, 5, 0.5*lg(2) + 0.5*lg(2), 0.5*lg(2) + 0.5*lg(4/0.5)},
		{"sampled token beyond the top 1 keeps the cap", map[string]float64{"0": lg(0.5), "4": lg(0.0625)}, 1, 0,
			0.5*lg(2) + 0.0625*lg(16) + 0.4375*lg(1/0.4375), math.Inf(1)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			est, upper := TopKEntropy(tc.top, tc.k, tc.vocab)
			if math.Abs(est-tc.est) > 1e-9 || !(math.IsInf(tc.upper, 1) && math.IsInf(upper, 1) || math.Abs(upper-tc.upper) < 1e-9) {
				t.Errorf("got %g ≤ H ≤ %g, want %g and %g", est, upper, tc.est, tc.upper)
			}
			if tc.vocab == 5 && (est > H+1e-9 || upper < H-1e-9) {
				t.Errorf("true entropy %g outside [%g, %g]", H, est, upper)
			}
		})
	}
}
