// Package openai is a client of OpenAI-compatible completions servers
// (`rollout serve`, vLLM, SGLang, llama.cpp, OpenAI): POST /v1/completions
// with a text or token-id prompt, n, max_tokens, temperature, top_p, seed,
// stop, top-k logprobs and vLLM's return_tokens_as_token_ids, GET
// /v1/models, and vLLM's POST /tokenize.
//
// A Client bounds the requests it has in flight (Options.Concurrency),
// gives each attempt a timeout (Options.Timeout), reads at most
// Options.MaxAnswerBytes of an answer, after decompression (gzip or
// deflate), and retries with exponential backoff where a retry can help:
// on 429, 500, 502, 503 and 504, connection errors and timeouts
// (Options.Retries), honouring a 429's Retry-After up to
// Options.MaxBackoff, with at most Options.RetryConcurrency retries in
// flight at once. Any other failure (another 4xx, an answer cut short or
// too large, malformed JSON), and the last one when the retries run out,
// is an *Error naming the server's URL, the HTTP status and the server's
// own error message, with terminal control characters escaped.
//
// Options.APIKey, when set, is sent as "Authorization: Bearer KEY", which
// hosted OpenAI-compatible services and `rollout serve` with a key ask
// for.
package openai

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	neturl "net/url"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"
)

// Options configures a Client. Zero fields take their defaults.
type Options struct {
	// BaseURL is the server, e.g. http://127.0.0.1:8000 (a trailing /v1 is
	// accepted). Required.
	BaseURL string
	// APIKey, if set, is sent as a bearer token.
	APIKey string
	// Concurrency is the most requests in flight at once. Default 8.
	Concurrency int
	// Timeout bounds one attempt, from sending to the last byte of the
	// answer. Default 120 s.
	Timeout time.Duration
	// Retries is how many times a failed attempt that may succeed later
	// (429, 500, 502, 503, 504, connection error, timeout) is retried.
	// Default 4; negative: none.
	Retries int
	// RetryConcurrency is the most retries in flight at once, so that a
	// failing server is not sent every request again at once. Default
	// Concurrency / 4, at least 1.
	RetryConcurrency int
	// MaxAnswerBytes bounds an answer's body, decompressed: a longer one
	// fails (and is not retried). Default 64 MiB.
	MaxAnswerBytes int64
	// Backoff is the wait before the first retry; each further retry waits
	// twice as long, up to MaxBackoff. Defaults 500 ms and 10 s.
	Backoff, MaxBackoff time.Duration
	// HTTPClient sends the requests. Default: a client of its own.
	HTTPClient *http.Client
}

// Client talks to one OpenAI-compatible server. It is safe for concurrent
// use.
type Client struct {
	base  string // without a trailing slash or /v1
	opts  Options
	sem   chan struct{}
	retry chan struct{} // a slot per retry in flight
	// pausing, when set (by tests), is told each wait before a retry as
	// it begins, so that tests check the waits without timing them.
	pausing func(time.Duration)
}

// DefaultMaxAnswerBytes is Options.MaxAnswerBytes when zero.
const DefaultMaxAnswerBytes = 64 << 20

// New returns a client of the server at o.BaseURL.
func New(o Options) (*Client, error) {
	base := strings.TrimRight(o.BaseURL, "/")
	base = strings.TrimSuffix(base, "/v1")
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("openai: server URL %q: want http://host:port or https://…", o.BaseURL)
	}
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	if o.Timeout <= 0 {
		o.Timeout = 120 * time.Second
	}
	if o.Retries == 0 {
		o.Retries = 4
	} else if o.Retries < 0 {
		o.Retries = 0
	}
	if o.Backoff <= 0 {
		o.Backoff = 500 * time.Millisecond
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 10 * time.Second
	}
	if o.RetryConcurrency <= 0 {
		o.RetryConcurrency = max(1, o.Concurrency/4)
	}
	if o.MaxAnswerBytes <= 0 {
		o.MaxAnswerBytes = DefaultMaxAnswerBytes
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{}
	}
	return &Client{base: base, opts: o, sem: make(chan struct{}, o.Concurrency), retry: make(chan struct{}, o.RetryConcurrency)}, nil
}

// URL returns the server's base URL as the client uses it.
func (c *Client) URL() string { return c.base }

// Request is a completions request for one prompt.
type Request struct {
	// Model names the served model.
	Model string
	// Prompt is the prompt text, used when PromptIDs is nil.
	Prompt string
	// PromptIDs, when not nil, is the prompt as token ids, sent as given.
	PromptIDs []int
	// N is the number of completions (at least 1).
	N int
	// MaxTokens caps each completion's length in tokens.
	MaxTokens int
	// Temperature and TopP are the sampling settings.
	Temperature, TopP float64
	// Seed, when HasSeed, seeds the server's sampling.
	Seed    int64
	HasSeed bool
	// Stop lists strings that end a completion.
	Stop []string
	// Logprobs asks for the log-probability of each sampled token and the
	// Logprobs most probable alternatives at each position (0: the sampled
	// token's alone, -1: no logprobs).
	Logprobs int
	// TokenIDs asks for tokens written as "token_id:N" (vLLM's
	// return_tokens_as_token_ids), which rollout serve honours too.
	TokenIDs bool
}

// wireRequest is the JSON body of a request.
type wireRequest struct {
	Model                  string   `json:"model,omitempty"`
	Prompt                 any      `json:"prompt"`
	N                      int      `json:"n"`
	MaxTokens              int      `json:"max_tokens"`
	Temperature            float64  `json:"temperature"`
	TopP                   float64  `json:"top_p"`
	Seed                   *int64   `json:"seed,omitempty"`
	Stop                   []string `json:"stop,omitempty"`
	Logprobs               *int     `json:"logprobs,omitempty"`
	ReturnTokensAsTokenIDs bool     `json:"return_tokens_as_token_ids,omitempty"`
}

// Response is a completions answer.
type Response struct {
	ID      string   `json:"id"`
	Model   string   `json:"model"`
	Choices []Choice `json:"choices"`
	Usage   Usage    `json:"usage"`
}

// Choice is one completion.
type Choice struct {
	Text         string    `json:"text"`
	Index        int       `json:"index"`
	Logprobs     *Logprobs `json:"logprobs"`
	FinishReason string    `json:"finish_reason"`
}

// Logprobs is the legacy completions logprobs object: per completion token,
// its name, its log-probability, the top alternatives and its offset in
// characters.
type Logprobs struct {
	Tokens        []string             `json:"tokens"`
	TokenLogprobs []*float64           `json:"token_logprobs"`
	TopLogprobs   []map[string]float64 `json:"top_logprobs"`
	TextOffset    []int                `json:"text_offset"`
}

// Usage counts the tokens the server processed for a request.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Error is a request the server refused or that failed for good: the URL,
// the HTTP status (0 when no answer came), the server's error message (or
// what went wrong), and the number of attempts made.
type Error struct {
	URL      string
	Status   int
	Message  string
	Attempts int
	// Err is the underlying error when there was no usable answer.
	Err error

	retryAfter time.Duration // the answer's Retry-After, in seconds
	final      bool          // sending again would not help (an answer that came but cannot be read)
}

// Error names the server, the status and the message. Control characters
// of text that came from the server are escaped (\x1b), so that printing
// the error cannot drive a terminal.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(Printable(e.URL))
	if e.Status != 0 {
		fmt.Fprintf(&b, ": %d %s", e.Status, http.StatusText(e.Status))
	}
	if e.Message != "" {
		b.WriteString(": ")
		b.WriteString(Printable(e.Message))
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " (after %d attempts)", e.Attempts)
	}
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// Complete sends a completions request and checks the answer's shape: N
// choices, in order, each with logprobs when asked for, of consistent
// lengths.
func (c *Client) Complete(ctx context.Context, r Request) (*Response, error) {
	if r.N < 1 {
		return nil, fmt.Errorf("openai: n = %d, want >= 1", r.N)
	}
	w := wireRequest{Model: r.Model, N: r.N, MaxTokens: r.MaxTokens, Temperature: r.Temperature, TopP: r.TopP,
		Stop: r.Stop, ReturnTokensAsTokenIDs: r.TokenIDs}
	if r.PromptIDs != nil {
		w.Prompt = r.PromptIDs
	} else {
		w.Prompt = r.Prompt
	}
	if r.HasSeed {
		w.Seed = &r.Seed
	}
	if r.Logprobs >= 0 {
		w.Logprobs = &r.Logprobs
	}
	body, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("openai: encode request: %w", err)
	}
	var resp Response
	if err := c.do(ctx, http.MethodPost, "/v1/completions", body, &resp); err != nil {
		return nil, err
	}
	if err := checkResponse(&resp, r); err != nil {
		return nil, &Error{URL: c.base + "/v1/completions", Status: http.StatusOK, Message: err.Error(), Attempts: 1}
	}
	return &resp, nil
}

// checkResponse checks that resp answers r.
func checkResponse(resp *Response, r Request) error {
	if len(resp.Choices) != r.N {
		return fmt.Errorf("%d choices for n = %d", len(resp.Choices), r.N)
	}
	for i := range resp.Choices {
		ch := &resp.Choices[i]
		if ch.Index != i {
			return fmt.Errorf("choice %d has index %d", i, ch.Index)
		}
		if r.Logprobs < 0 {
			continue
		}
		lp := ch.Logprobs
		if lp == nil {
			return fmt.Errorf("choice %d has no logprobs (asked for %d)", i, r.Logprobs)
		}
		n := len(lp.Tokens)
		if len(lp.TokenLogprobs) != n || len(lp.TopLogprobs) != n || len(lp.TextOffset) != n {
			return fmt.Errorf("choice %d: logprobs of %d tokens, %d token_logprobs, %d top_logprobs, %d text_offset",
				i, n, len(lp.TokenLogprobs), len(lp.TopLogprobs), len(lp.TextOffset))
		}
		if r.MaxTokens > 0 && n > r.MaxTokens {
			return fmt.Errorf("choice %d: %d tokens, more than max_tokens = %d", i, n, r.MaxTokens)
		}
		for k, v := range lp.TokenLogprobs {
			if v == nil {
				return fmt.Errorf("choice %d: token %d (%q) has no logprob", i, k, lp.Tokens[k])
			}
		}
	}
	if r.MaxTokens > 0 && resp.Usage.CompletionTokens > r.N*r.MaxTokens {
		return fmt.Errorf("usage.completion_tokens = %d, more than n × max_tokens = %d", resp.Usage.CompletionTokens, r.N*r.MaxTokens)
	}
	if resp.Usage.CompletionTokens <= 0 && r.MaxTokens > 0 {
		return fmt.Errorf("usage.completion_tokens = %d: the server reported no usage", resp.Usage.CompletionTokens)
	}
	return nil
}

// Model is one entry of GET /v1/models.
type Model struct {
	ID          string `json:"id"`
	OwnedBy     string `json:"owned_by"`
	MaxModelLen int    `json:"max_model_len"`
}

// Models lists the served models.
func (c *Client) Models(ctx context.Context) ([]Model, error) {
	var list struct {
		Data []Model `json:"data"`
	}
	if err := c.do(ctx, http.MethodGet, "/v1/models", nil, &list); err != nil {
		return nil, err
	}
	return list.Data, nil
}

// Tokenize returns the token ids the server makes of a prompt text through
// vLLM's POST /tokenize (special tokens added as for a completion).
func (c *Client) Tokenize(ctx context.Context, model, text string) ([]int, error) {
	body, err := json.Marshal(struct {
		Model  string `json:"model,omitempty"`
		Prompt string `json:"prompt"`
	}{model, text})
	if err != nil {
		return nil, fmt.Errorf("openai: encode request: %w", err)
	}
	var out struct {
		Tokens []int `json:"tokens"`
	}
	if err := c.do(ctx, http.MethodPost, "/tokenize", body, &out); err != nil {
		return nil, err
	}
	if len(out.Tokens) == 0 {
		return nil, &Error{URL: c.base + "/tokenize", Status: http.StatusOK, Message: fmt.Sprintf("no tokens for the prompt %q", text), Attempts: 1}
	}
	return out.Tokens, nil
}

// do sends one request with retries and decodes a 200 answer into out. A
// request keeps its slot of the concurrency limit while it waits to retry
// (the wait doubles from Backoff up to MaxBackoff, or is the answer's
// Retry-After when that is longer, up to MaxBackoff), so a server that
// sheds load is not sent more; a retry also takes one of the
// RetryConcurrency slots for its wait and its attempt.
func (c *Client) do(ctx context.Context, method, path string, body []byte, out any) error {
	url := c.base + path
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", url, ctx.Err())
	}
	defer func() { <-c.sem }()
	wait := c.opts.Backoff
	for attempt := 1; ; attempt++ {
		data, e := c.attempt(ctx, method, url, body, attempt > 1)
		if e == nil {
			if err := json.Unmarshal(data, out); err != nil {
				return &Error{URL: url, Status: http.StatusOK, Attempts: attempt, Err: err,
					Message: fmt.Sprintf("malformed JSON in the answer (%s): %s", jsonProblem(err, len(data)), snippet(data))}
			}
			return nil
		}
		e.Attempts = attempt
		if !e.retryable() || attempt > c.opts.Retries || ctx.Err() != nil {
			return e
		}
		select {
		case c.retry <- struct{}{}:
		case <-ctx.Done():
			return e
		}
		pause := max(wait, min(e.retryAfter, c.opts.MaxBackoff))
		if c.pausing != nil {
			c.pausing(pause)
		}
		t := time.NewTimer(pause)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			<-c.retry
			return e
		}
		wait = min(2*wait, c.opts.MaxBackoff)
	}
}

// jsonProblem says what is wrong with a JSON answer of n bytes, in the
// answer's terms rather than Go's.
func jsonProblem(err error, n int) string {
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &te) && te.Field != "":
		return fmt.Sprintf("%s is a JSON %s, want %s", te.Field, te.Value, jsonKind(te.Type.Kind()))
	case errors.As(err, &te):
		return fmt.Sprintf("a JSON %s where an object is expected", te.Value)
	case errors.As(err, &se) && se.Offset >= int64(n):
		return "it ends before the JSON does"
	case errors.As(err, &se):
		return fmt.Sprintf("not valid JSON at byte %d", se.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the JSON ends early"
	}
	return "not valid JSON"
}

// jsonKind names the JSON value a Go kind is read from.
func jsonKind(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint64, reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	}
	return "an object"
}

// retryable tells whether a failed attempt may succeed when repeated: no
// answer (a connection error or a timeout), 429, or a server error that
// may pass (500, 502, 503, 504). An answer cut short or too large, or any
// other refusal, would come back the same.
func (e *Error) retryable() bool {
	if e.final {
		return false
	}
	switch e.Status {
	case 0:
		return true
	case http.StatusTooManyRequests, http.StatusInternalServerError, http.StatusBadGateway,
		http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// attempt sends one request and returns the body of a 200 answer, or the
// failure. A retry releases its retry slot when done.
func (c *Client) attempt(ctx context.Context, method, url string, body []byte, retry bool) ([]byte, *Error) {
	if retry {
		defer func() { <-c.retry }()
	}
	actx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(actx, method, url, rd)
	if err != nil {
		return nil, &Error{URL: url, Message: err.Error(), Err: err, final: true}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Accept-Encoding", "gzip, deflate")
	if c.opts.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.opts.APIKey)
	}
	resp, err := c.opts.HTTPClient.Do(req)
	if err != nil {
		return nil, c.transportError(ctx, actx, url, err)
	}
	defer resp.Body.Close()
	data, err := c.readAnswer(resp)
	if err != nil {
		e := c.transportError(ctx, actx, url, err)
		if actx.Err() == nil { // not a timeout: the answer itself is at fault
			e.Status, e.final = resp.StatusCode, true
		}
		return nil, e
	}
	if resp.StatusCode != http.StatusOK {
		e := &Error{URL: url, Status: resp.StatusCode, Message: serverMessage(data)}
		if secs, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && secs > 0 {
			e.retryAfter = time.Duration(secs) * time.Second
		}
		return nil, e
	}
	return data, nil
}

// answerError is an answer that came but cannot be read: cut short, too
// large, or in an unknown encoding. Sending the request again would bring
// the same.
type answerError struct {
	msg string
	err error
}

func (e *answerError) Error() string { return e.msg }
func (e *answerError) Unwrap() error { return e.err }

// readAnswer reads an answer's body, decompressed, up to MaxAnswerBytes.
func (c *Client) readAnswer(resp *http.Response) ([]byte, error) {
	limit := c.opts.MaxAnswerBytes
	var body io.Reader = resp.Body
	enc := strings.ToLower(strings.TrimSpace(resp.Header.Get("Content-Encoding")))
	switch enc {
	case "", "identity":
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return nil, &answerError{msg: "the answer is not valid gzip", err: err}
		}
		defer zr.Close()
		body = zr
	case "deflate":
		zr, err := zlib.NewReader(resp.Body)
		if err != nil {
			return nil, &answerError{msg: "the answer is not valid deflate (zlib) data", err: err}
		}
		defer zr.Close()
		body = zr
	default:
		return nil, &answerError{msg: fmt.Sprintf("the answer is in the encoding %q, which this client does not read (it asks for gzip or deflate)", enc)}
	}
	data, err := io.ReadAll(io.LimitReader(body, limit+1))
	if int64(len(data)) > limit {
		what := "the answer"
		if enc != "" && enc != "identity" {
			what = "the answer, decompressed,"
		}
		return nil, &answerError{msg: fmt.Sprintf("%s is larger than the client's limit of %d bytes: ask for less (n, max_tokens, logprobs) or raise the limit", what, limit)}
	}
	if err != nil {
		return nil, &answerError{msg: fmt.Sprintf("the answer was cut short after %d bytes: %s", len(data), readProblem(err)), err: err}
	}
	return data, nil
}

// readProblem says why reading an answer failed, without Go's error text
// where a plainer one exists.
func readProblem(err error) string {
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "the server closed the connection before the end"
	case errors.Is(err, gzip.ErrChecksum), errors.Is(err, zlib.ErrChecksum):
		return "the compressed data fail their checksum"
	case errors.Is(err, gzip.ErrHeader), errors.Is(err, zlib.ErrHeader):
		return "the compressed data are damaged"
	case errors.Is(err, context.DeadlineExceeded):
		return "time ran out"
	}
	var fe flate.CorruptInputError
	if errors.As(err, &fe) {
		return "the compressed data are damaged"
	}
	return err.Error()
}

// transportError describes an attempt that got no complete answer.
func (c *Client) transportError(ctx, actx context.Context, url string, err error) *Error {
	msg := err.Error()
	var ae *answerError
	switch {
	case ctx.Err() == nil && errors.Is(actx.Err(), context.DeadlineExceeded):
		msg = fmt.Sprintf("no complete answer within the timeout of %v", c.opts.Timeout)
	case errors.As(err, &ae):
	default:
		msg = connProblem(err)
	}
	return &Error{URL: url, Message: msg, Err: err}
}

// connProblem says why a request got no answer, in plain words where Go's
// error has a known cause (the underlying error stays in Error.Err).
func connProblem(err error) string {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused: is the server running, on this address and port?"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "the server closed the connection without an answer"
	case errors.As(err, &dnsErr):
		return fmt.Sprintf("cannot resolve the host name %q", dnsErr.Name)
	case errors.Is(err, context.Canceled):
		return "cancelled"
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return fmt.Sprintf("cannot connect: %v", opErr.Err)
	}
	var ue *neturl.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// Printable returns s with control characters (ANSI escape codes, carriage
// returns, DEL, C1 controls) written as Go escapes (\x1b), so that text
// from outside can be printed to a terminal as it is. Tabs and newlines
// are kept.
func Printable(s string) string {
	if !strings.ContainsFunc(s, unsafeRune) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !unsafeRune(r) {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRune(r)
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}

// unsafeRune tells a character that can drive a terminal: a control
// character other than tab and newline, or an invalid byte.
func unsafeRune(r rune) bool {
	return r != '\t' && r != '\n' && (unicode.IsControl(r) || r == utf8.RuneError || r == '\u2028' || r == '\u2029')
}

// serverMessage is the message of an OpenAI error object, else the body.
func serverMessage(data []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(data, &e) == nil && len(e.Error) > 0 {
		var obj struct {
			Message string  `json:"message"`
			Param   *string `json:"param"`
		}
		if json.Unmarshal(e.Error, &obj) == nil && obj.Message != "" {
			if obj.Param != nil && *obj.Param != "" {
				return obj.Message + " (param " + *obj.Param + ")"
			}
			return obj.Message
		}
		var s string
		if json.Unmarshal(e.Error, &s) == nil && s != "" {
			return s
		}
	}
	return snippet(data)
}

// snippet is the start of a body, quoted, for an error message.
func snippet(data []byte) string {
	const max = 200
	if len(data) == 0 {
		return "(empty body)"
	}
	if len(data) > max {
		return strconv.Quote(string(data[:max])) + "…"
	}
	return strconv.Quote(string(data))
}
