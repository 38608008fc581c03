package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/policytest"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata")

// testAlphabet makes a vocabulary of 8: PAD BOS EOS SEP a b 1 2.
const testAlphabet = "ab12"

// fakeBackend is a Backend over a policytest.Sampler: its distributions
// are known exactly, and a hook sees every Step.
type fakeBackend struct {
	*policytest.Sampler
	dist       policytest.Dist
	cfg        policy.Config
	beforeStep func(states int)
}

func (f *fakeBackend) Config() policy.Config { return f.cfg }

func (f *fakeBackend) Step(states []policy.State, cfg policy.Sampling, out []policy.Token) error {
	if f.beforeStep != nil {
		f.beforeStep(len(states))
	}
	return f.Sampler.Step(states, cfg, out)
}

// Logits are log p of the dist after every position.
func (f *fakeBackend) Logits(seq []int) ([][]float32, error) {
	out := make([][]float32, len(seq))
	for i := range seq {
		p := f.dist(seq[:i+1])
		row := make([]float32, len(p))
		for j, v := range p {
			row[j] = float32(math.Log(v))
		}
		out[i] = row
	}
	return out, nil
}

// halving puts mass 1/2, 1/4, 1/8, 1/16 on a, b, 1, 2 and 1/16 on EOS.
func halving([]int) []float64 { return []float64{0, 0, 1.0 / 16, 0, 0.5, 0.25, 0.125, 1.0 / 16} }

// endless never samples EOS.
func endless([]int) []float64 { return []float64{0, 0, 0, 0, 0.4, 0.3, 0.2, 0.1} }

func newFake(t testing.TB, dist policytest.Dist, maxSeq int) *fakeBackend {
	t.Helper()
	s, err := policytest.New(4+len(testAlphabet), dist)
	if err != nil {
		t.Fatal(err)
	}
	return &fakeBackend{Sampler: s, dist: dist, cfg: policy.Config{VocabSize: 4 + len(testAlphabet), MaxSeq: maxSeq}}
}

// startServer runs a server over b behind an httptest server; both stop
// when the test ends.
func startServer(t testing.TB, b Backend, opts Options) (*Server, string) {
	t.Helper()
	tok, err := policy.NewTokenizer(testAlphabet)
	if err != nil {
		t.Fatal(err)
	}
	if b.Config().VocabSize != tok.VocabSize() {
		if tok, err = policy.NewTokenizer(policy.DefaultAlphabet); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := New(b, tok, opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Run(ctx); close(done) }()
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		hs.Close()
		cancel()
		<-done
	})
	return srv, hs.URL
}

// post sends a completions request and returns the status and body.
func post(t testing.TB, url, body string) (int, []byte) {
	t.Helper()
	resp, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// normalised replaces the fields that change from run to run and indents
// the response, keeping its keys in the server's order.
func normalised(t *testing.T, body []byte) []byte {
	t.Helper()
	if !regexp.MustCompile(`^\{"id":"cmpl-[0-9a-f]{24}","object":"text_completion","created":[0-9]+,`).Match(body) {
		t.Errorf("response does not start with an id, object and created: %s", body)
	}
	body = regexp.MustCompile(`"id":"cmpl-[0-9a-f]+"`).ReplaceAll(body, []byte(`"id":"cmpl-ID"`))
	body = regexp.MustCompile(`"created":[0-9]+`).ReplaceAll(body, []byte(`"created":0`))
	var out bytes.Buffer
	if err := json.Indent(&out, body, "", "  "); err != nil {
		t.Fatalf("response %s: %v", body, err)
	}
	return out.Bytes()
}

func TestGoldenResponses(t *testing.T) {
	_, url := startServer(t, newFake(t, halving, 16), Options{ModelName: "tiny"})
	for _, tc := range []struct{ name, body string }{
		{"logprobs_echo_n2", `{"model": "tiny", "prompt": "ab", "n": 2, "max_tokens": 4, "seed": 3, "logprobs": 2, "echo": true}`},
		{"batch_stop", `{"prompt": ["a", "b1"], "max_tokens": 6, "seed": 5, "stop": ["1", "2b"]}`},
		{"token_ids", `{"prompt": [1, 4, 3], "max_tokens": 3, "seed": 1, "temperature": 0, "logprobs": 0, "return_tokens_as_token_ids": true, "prompt_logprobs": 1}`},
		{"score_only", `{"prompt": "ba", "max_tokens": 0, "echo": true, "logprobs": 1}`},
		{"nothing", `{"prompt": [[1, 5]], "max_tokens": 0, "logprobs": 3}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := post(t, url, tc.body)
			if code != http.StatusOK {
				t.Fatalf("status %d: %s", code, body)
			}
			got := normalised(t, body)
			path := filepath.Join("testdata", tc.name+".golden.json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("response differs from %s:\n%s", path, got)
			}
		})
	}
}

// top_logprobs lists the most probable first, and always holds the chosen
// token.
func TestTopLogprobsOrder(t *testing.T) {
	_, url := startServer(t, newFake(t, halving, 16), Options{})
	code, body := post(t, url, `{"prompt": "a", "max_tokens": 8, "seed": 9, "logprobs": 3}`)
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	if !regexp.MustCompile(`"top_logprobs":\[\{"a":[^,]+,"b":[^,]+,"1":`).Match(body) {
		t.Errorf("top_logprobs not most probable first: %s", body)
	}
	var lps struct {
		Choices []struct {
			Logprobs struct {
				Tokens      []string             `json:"tokens"`
				TopLogprobs []map[string]float64 `json:"top_logprobs"`
			} `json:"logprobs"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &lps); err != nil {
		t.Fatal(err)
	}
	for i, tok := range lps.Choices[0].Logprobs.Tokens {
		if _, ok := lps.Choices[0].Logprobs.TopLogprobs[i][tok]; !ok {
			t.Errorf("position %d: chosen token %q not in top_logprobs %v", i, tok, lps.Choices[0].Logprobs.TopLogprobs[i])
		}
	}
}

func TestBadRequests(t *testing.T) {
	_, url := startServer(t, newFake(t, halving, 16), Options{ModelName: "tiny", MaxBatch: 8})
	for _, tc := range []struct {
		body   string
		status int
		param  string // "" for null
		want   string
	}{
		{`{"prompt": "ab", "max_tokens": "4"}`, 400, "max_tokens", "string"},
		{`{"prompt": "ab", "n": 1.5}`, 400, "n", "integer"},
		{`{"prompt": "ab", "n": 0}`, 400, "n", "n = 0"},
		{`{"prompt": "ab", "n": 9}`, 400, "n", "1..8"},
		{`{"prompt": ["a", "b", "a"], "n": 3}`, 400, "n", "9 sequences"},
		{`{"prompt": "ab", "temperature": 2.5}`, 400, "temperature", "0..2"},
		{`{"prompt": "ab", "top_p": 0}`, 400, "top_p", "(0, 1]"},
		{`{"prompt": "ab", "logprobs": 21}`, 400, "logprobs", "0..20"},
		{`{"prompt": "ab", "prompt_logprobs": -1}`, 400, "prompt_logprobs", "0..20"},
		{`{"prompt": "ab", "max_tokens": -1}`, 400, "max_tokens", "0 or more"},
		{`{"prompt": "ab", "max_tokens": 13}`, 400, "max_tokens", "maximum context length of 16"},
		{`{"prompt": "abc"}`, 400, "prompt", `unknown character 'c' at position 2`},
		{`{"prompt": ["ab", "x"]}`, 400, "prompt[1]", `'x'`},
		{`{"prompt": [1, 4, 99]}`, 400, "prompt", "token id 99 at position 2"},
		{`{"prompt": [[1, 4], []]}`, 400, "prompt[1]", "empty list"},
		{`{"prompt": []}`, 400, "prompt", "empty list"},
		{`{"prompt": ["a", 1]}`, 400, "prompt", "mixing"},
		{`{"prompt": 7}`, 400, "prompt", "must be a string"},
		{`{"max_tokens": 2}`, 400, "prompt", "required"},
		{`{"prompt": "aaaaaaaaaaaaaaaaaaaa"}`, 400, "prompt", "22 tokens"},
		{`{"prompt": "ab", "stop": ["a", "b", "1", "2", "ab"]}`, 400, "stop", "at most 4"},
		{`{"prompt": "ab", "stop": ""}`, 400, "stop", "empty"},
		{`{"prompt": "ab", "stop": 3}`, 400, "stop", "string or a list"},
		{`{"prompt": "ab", "stream": true}`, 400, "stream", "not supported"},
		{`{"prompt": "ab", "best_of": 3}`, 400, "best_of", "not supported"},
		{`{"prompt": "ab", "logit_bias": {"4": 100}}`, 400, "logit_bias", "not supported"},
		{`{"prompt": "ab", "model": "gpt-4"}`, 404, "model", `"gpt-4" does not exist`},
		{`[1, 2]`, 400, "", "JSON object"},
		{`{"prompt": "ab"`, 400, "", "not valid JSON"},
	} {
		code, body := post(t, url, tc.body)
		var e struct {
			Error struct {
				Message string  `json:"message"`
				Type    string  `json:"type"`
				Param   *string `json:"param"`
				Code    *string `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(body, &e); err != nil {
			t.Errorf("%s: body %s: %v", tc.body, body, err)
			continue
		}
		param := ""
		if e.Error.Param != nil {
			param = *e.Error.Param
		}
		if code != tc.status || param != tc.param || e.Error.Type != "invalid_request_error" || !strings.Contains(e.Error.Message, tc.want) {
			t.Errorf("%s: status %d, %s; want %d, param %q, a message with %q", tc.body, code, body, tc.status, tc.param, tc.want)
		}
	}
	// Unknown fields are ignored, as OpenAI ignores them.
	if code, body := post(t, url, `{"prompt": "ab", "max_tokens": 1, "user": "me", "frobnicate": [1]}`); code != http.StatusOK {
		t.Errorf("unknown fields: status %d: %s", code, body)
	}
	for _, tc := range []struct {
		method, path string
		status       int
	}{{"GET", "/v1/completions", 405}, {"GET", "/v1/chat/completions", 404}, {"GET", "/v1/models", 200}} {
		req, _ := http.NewRequest(tc.method, url+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || resp.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s: status %d (%s), want %d", tc.method, tc.path, resp.StatusCode, b, tc.status)
		}
		if tc.status == 200 && !strings.Contains(string(b), `"id":"tiny"`) {
			t.Errorf("/v1/models: %s", b)
		}
	}
}

// completionText returns the texts of a response's choices.
func completionTexts(t *testing.T, body []byte) []string {
	t.Helper()
	var resp struct {
		Choices []struct {
			Text string `json:"text"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	var out []string
	for _, c := range resp.Choices {
		out = append(out, c.Text)
	}
	return out
}

// Eight concurrent requests are decoded in shared Step calls, and each
// gets the completion it gets alone.
func TestConcurrentRequestsShareSteps(t *testing.T) {
	const clients = 8
	b := newFake(t, endless, 32)
	var srv *Server
	var once sync.Once
	b.beforeStep = func(states int) {
		// Hold the first step until every other request is queued.
		once.Do(func() {
			deadline := time.Now().Add(5 * time.Second)
			for srv.Stats().Queued+states < clients && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond)
			}
		})
	}
	srv, url := startServer(t, b, Options{})
	body := func(i int) string {
		return `{"prompt": "ab", "max_tokens": 12, "seed": ` + string(rune('0'+i)) + `}`
	}
	got := make([][]byte, clients)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			code, b := post(t, url, body(i))
			if code != http.StatusOK {
				t.Errorf("request %d: status %d: %s", i, code, b)
			}
			got[i] = b
		})
	}
	wg.Wait()
	st := srv.Stats()
	if st.MaxStepRequests != clients {
		t.Errorf("at most %d requests shared a step, want %d (stats %+v)", st.MaxStepRequests, clients, st)
	}
	for i := range clients {
		code, alone := post(t, url, body(i))
		if code != http.StatusOK {
			t.Fatalf("status %d: %s", code, alone)
		}
		if a, c := completionTexts(t, alone), completionTexts(t, got[i]); a[0] != c[0] {
			t.Errorf("seed %d: %q alone, %q in a batch", i, a[0], c[0])
		}
	}
	if live := b.Live(); live != 0 {
		t.Errorf("%d states not released", live)
	}
}

func TestQueueFullIs429(t *testing.T) {
	b := newFake(t, endless, 32)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	b.beforeStep = func(int) {
		once.Do(func() {
			close(entered)
			<-release
		})
	}
	srv, url := startServer(t, b, Options{QueueSize: 1, MaxBatch: 2})
	req := `{"prompt": "a", "max_tokens": 3, "n": 2}` // fills the batch
	codes := make(chan int, 2)
	go func() { c, _ := post(t, url, req); codes <- c }()
	<-entered
	go func() { c, _ := post(t, url, req); codes <- c }()
	for srv.Stats().Queued < 1 {
		time.Sleep(time.Millisecond)
	}
	code, body := post(t, url, req)
	if code != http.StatusTooManyRequests || !strings.Contains(string(body), `"code":"rate_limit_exceeded"`) || !strings.Contains(string(body), `"message":"the server's queue of 1 requests is full`) {
		t.Errorf("third request: status %d: %s", code, body)
	}
	close(release)
	for range 2 {
		if c := <-codes; c != http.StatusOK {
			t.Errorf("queued request: status %d", c)
		}
	}
	if st := srv.Stats(); st.Rejected != 1 || st.Requests != 2 {
		t.Errorf("stats %+v, want 1 rejected and 2 served", st)
	}
}

// A client that goes away has its sequences dropped.
func TestCancelledRequestIsDropped(t *testing.T) {
	b := newFake(t, endless, 64)
	stepped := make(chan struct{}, 1)
	b.beforeStep = func(int) {
		select {
		case stepped <- struct{}{}:
		default:
		}
		time.Sleep(time.Millisecond)
	}
	_, url := startServer(t, b, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "POST", url+"/v1/completions", strings.NewReader(`{"prompt": "a", "max_tokens": 60, "n": 4}`))
	req.Header.Set("Content-Type", "application/json")
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-stepped
	cancel()
	<-errc
	deadline := time.Now().Add(5 * time.Second)
	for b.Live() != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if live := b.Live(); live != 0 {
		t.Errorf("%d states still live after the client left", live)
	}
}

// tinyEngine is a real engine over a small random model with the default
// vocabulary.
func tinyEngine(t *testing.T) *policy.Engine {
	t.Helper()
	cfg := policy.Config{VocabSize: 64, Dim: 16, Hidden: 32, Layers: 1, Heads: 2, KVHeads: 2, MaxSeq: 32, NormEps: 1e-5, RopeTheta: 10000}
	m, err := policy.NewModel(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	return policy.NewEngine(m)
}

// Over the real engine, the same seed gives the same completions, and a
// greedy completion's tokens are the most probable ones.
func TestEngineSeededAndGreedy(t *testing.T) {
	_, url := startServer(t, tinyEngine(t), Options{})
	req := `{"prompt": "12+34", "max_tokens": 10, "n": 3, "seed": 42}`
	_, first := post(t, url, req)
	_, second := post(t, url, req)
	a, b := completionTexts(t, first), completionTexts(t, second)
	if len(a) != 3 || strings.Join(a, "|") != strings.Join(b, "|") {
		t.Errorf("same seed: %q then %q", a, b)
	}
	code, body := post(t, url, `{"prompt": "12+34", "max_tokens": 10, "temperature": 0, "logprobs": 5}`)
	if code != http.StatusOK {
		t.Fatalf("status %d: %s", code, body)
	}
	var resp struct {
		Choices []struct {
			Logprobs struct {
				TokenLogprobs []float64            `json:"token_logprobs"`
				TopLogprobs   []map[string]float64 `json:"top_logprobs"`
			} `json:"logprobs"`
		} `json:"choices"`
		Usage usage `json:"usage"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatal(err)
	}
	lp := resp.Choices[0].Logprobs
	for i, v := range lp.TokenLogprobs {
		for tok, alt := range lp.TopLogprobs[i] {
			if alt > v+1e-6 {
				t.Errorf("position %d: greedy token logprob %g below %q's %g", i, v, tok, alt)
			}
		}
		if len(lp.TopLogprobs[i]) != 5 {
			t.Errorf("position %d: %d alternatives, want 5", i, len(lp.TopLogprobs[i]))
		}
	}
	if u := resp.Usage; u.PromptTokens != 7 || u.TotalTokens != u.PromptTokens+u.CompletionTokens || u.CompletionTokens < len(lp.TokenLogprobs) {
		t.Errorf("usage %+v with %d completion tokens", u, len(lp.TokenLogprobs))
	}
}

// Serve answers on a loopback listener and, when its context is
// cancelled, finishes the request in flight before returning.
func TestServeGracefulShutdown(t *testing.T) {
	b := newFake(t, endless, 32)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	b.beforeStep = func(int) {
		once.Do(func() {
			close(entered)
			<-release
		})
	}
	tok, _ := policy.NewTokenizer(testAlphabet)
	srv, err := New(b, tok, Options{})
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
	url := "http://" + ln.Addr().String()
	codes := make(chan int, 1)
	go func() { c, _ := post(t, url, `{"prompt": "a", "max_tokens": 4}`); codes <- c }()
	<-entered
	cancel()
	time.Sleep(20 * time.Millisecond) // let Shutdown close the listener
	close(release)
	if c := <-codes; c != http.StatusOK {
		t.Errorf("request in flight: status %d", c)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	if _, err := http.Post(url+"/v1/completions", "application/json", strings.NewReader(`{"prompt": "a"}`)); err == nil {
		t.Error("a request after shutdown was answered")
	}
}
