// Package serve is an OpenAI-compatible completions server over a policy:
// GET /v1/models and POST /v1/completions, with OpenAI's request and
// response shapes (n, max_tokens, temperature, top_p, seed, stop, logprobs,
// echo, and vLLM's return_tokens_as_token_ids and prompt_logprobs).
//
// One scheduler goroutine owns the policy's engine: every decode step it
// gathers the live sequences of all admitted requests and advances them
// together, one Backend.Step per sampling setting (temperature, top_p), so
// concurrent requests share forward passes. Requests are admitted first in,
// first out; those waiting for room are held in a bounded queue, and when
// it is full the server answers 429. A completion is a pure function of its
// prompt, settings and seed: completion c of a prompt samples from the
// counter-based stream (seed, c), whatever else is in the batch.
//
// Bounds: a request's prompts × n never exceed Options.MaxBatch, whatever
// max_tokens, logprobs and echo say; every prompt plus max_tokens fits the
// model's context; so one request's work is at most MaxBatch sequences of
// the context length, decoded, and as often scored when it asks for
// logprobs. Scoring is done one sequence per decode step, between the
// steps of the other requests. The server holds at most QueueSize +
// MaxBatch requests at once (429 beyond), a request that outlives
// Options.RequestTimeout, or whose client goes away, is dropped at the next
// step, bodies are read within Options.ReadTimeout, and Serve holds at
// most Options.MaxConnections connections open. Only
// application/json bodies are read (415 otherwise). A Guard
// (Options.Guard) adds a Host-header check and a bearer key.
//
// A text prompt is encoded as the policy reads it: BOS, its characters,
// SEP (policy.Tokenizer.EncodePrompt). A prompt of token ids is used as
// given. A response ends when the model samples EOS (finish_reason "stop"),
// when a stop string appears ("stop"), or at max_tokens ("length").
// Special tokens carry no text: in logprobs they are written <bos>, <sep>,
// <eos>, <pad>. Logprobs are those of the model's own distribution
// (temperature 1, no top_p), as vLLM reports them by default.
package serve

import (
	"context"
	cryptorand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rollout-rl/rollout/policy"
)

// Backend is what the server decodes with: a policy.Sampler that also
// prefills prompts in one batch and scores a sequence (next-token logits
// after every position). *policy.Engine is one. The server calls it from
// its scheduler goroutine only.
type Backend interface {
	policy.Sampler
	PrefillBatch(prompts [][]int, streams []policy.Stream) ([]policy.State, error)
	Logits(seq []int) ([][]float32, error)
	Config() policy.Config
}

var _ Backend = (*policy.Engine)(nil)

// Options configures a Server. Zero fields take their defaults.
type Options struct {
	// ModelName is the model's id in /v1/models; a request naming another
	// model is refused. Default "rollout".
	ModelName string
	// QueueSize is how many requests may wait for room in the batch before
	// the server answers 429. Default 64.
	QueueSize int
	// MaxBatch is the most sequences decoded together; a request's prompts
	// × n must fit in it. Default 64.
	MaxBatch int
	// MaxBodyBytes bounds a request body. Default 1 MiB.
	MaxBodyBytes int64
	// RequestTimeout bounds a request from its arrival to its answer,
	// queueing included: past it the request is dropped and answered 503.
	// Default 5 min.
	RequestTimeout time.Duration
	// ReadTimeout bounds reading a request, headers and body; IdleTimeout
	// how long a kept-alive connection may wait for its next request.
	// Defaults 30 s and 60 s. (Headers alone must come within 10 s.)
	ReadTimeout, IdleTimeout time.Duration
	// ShutdownTimeout is how long Serve waits for requests in flight when
	// its context is cancelled. Default 10s.
	ShutdownTimeout time.Duration
	// Guard is checked before every request (Host header, API key).
	Guard Guard
	// MaxConnections is the most connections Serve holds open at once;
	// further ones wait to be accepted. Default 4 × (QueueSize + MaxBatch).
	MaxConnections int
}

func (o Options) withDefaults() Options {
	if o.ModelName == "" {
		o.ModelName = "rollout"
	}
	if o.QueueSize <= 0 {
		o.QueueSize = 64
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = 64
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 1 << 20
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = 10 * time.Second
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 5 * time.Minute
	}
	if o.ReadTimeout <= 0 {
		o.ReadTimeout = 30 * time.Second
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = 60 * time.Second
	}
	if o.MaxConnections <= 0 {
		o.MaxConnections = 4 * (o.QueueSize + o.MaxBatch)
	}
	return o
}

// Server is an OpenAI-compatible completions server over a Backend. Its
// handler is safe for concurrent use; Run (or Serve) must be running for
// requests to be answered.
type Server struct {
	b       Backend
	tok     *policy.Tokenizer
	cfg     policy.Config
	opts    Options
	created int64 // when the server was made, for /v1/models

	queue   chan *job
	held    chan struct{} // a slot per request the server holds, from its first byte to its answer
	scoring []*job        // finished jobs being scored, oldest first (the scheduler's)
	running atomic.Bool
	stopped chan struct{} // closed when Run returns
	stats   counters
}

// New returns a server over b, whose vocabulary must be tok's.
func New(b Backend, tok *policy.Tokenizer, opts Options) (*Server, error) {
	cfg := b.Config()
	if tok.VocabSize() != cfg.VocabSize {
		return nil, fmt.Errorf("serve: tokenizer has %d tokens, model vocab_size %d", tok.VocabSize(), cfg.VocabSize)
	}
	opts = opts.withDefaults()
	return &Server{
		b: b, tok: tok, cfg: cfg, opts: opts, created: time.Now().Unix(),
		queue: make(chan *job, opts.QueueSize), held: make(chan struct{}, opts.QueueSize+opts.MaxBatch),
		stopped: make(chan struct{}),
	}, nil
}

// Serve answers requests on ln until ctx is cancelled, then stops taking
// connections, waits up to Options.ShutdownTimeout for requests in flight
// and returns nil. It runs the scheduler itself.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	runCtx, stopRun := context.WithCancel(context.Background())
	defer stopRun()
	runErr := make(chan error, 1)
	go func() { runErr <- s.Run(runCtx) }()
	hs := s.httpServer()
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(LimitListener(ln, s.opts.MaxConnections)) }()
	select {
	case err := <-serveErr:
		stopRun()
		<-runErr
		return fmt.Errorf("serve: %w", err)
	case err := <-runErr:
		hs.Close()
		<-serveErr
		return err
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), s.opts.ShutdownTimeout)
	defer cancel()
	shutErr := hs.Shutdown(shutCtx) // the scheduler still runs for requests in flight
	stopRun()
	<-runErr
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	if shutErr != nil {
		hs.Close()
		return fmt.Errorf("serve: shutdown: %w", shutErr)
	}
	return nil
}

// httpServer is the HTTP server of Serve, with its timeouts: a request
// is read within ReadTimeout and answered within RequestTimeout (the
// write timeout leaves a margin for writing the answer).
func (s *Server) httpServer() *http.Server {
	return &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: min(10*time.Second, s.opts.ReadTimeout),
		ReadTimeout:       s.opts.ReadTimeout,
		WriteTimeout:      s.opts.ReadTimeout + s.opts.RequestTimeout + 10*time.Second,
		IdleTimeout:       s.opts.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
	}
}

// Handler returns the HTTP handler of the API, behind Options.Guard.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", s.handleModels)
	mux.HandleFunc("POST /v1/completions", s.handleCompletions)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/v1/models", "/v1/completions":
			writeError(w, &APIError{Status: http.StatusMethodNotAllowed, Type: invalidRequest,
				Message: fmt.Sprintf("method %s is not allowed on %s", r.Method, r.URL.Path)})
		default:
			writeError(w, &APIError{Status: http.StatusNotFound, Type: invalidRequest,
				Message: fmt.Sprintf("no route %s %s (this server has GET /v1/models and POST /v1/completions)", r.Method, r.URL.Path)})
		}
	})
	return s.opts.Guard.Wrap(mux)
}

func (s *Server) handleModels(w http.ResponseWriter, _ *http.Request) {
	type model struct {
		ID          string `json:"id"`
		Object      string `json:"object"`
		Created     int64  `json:"created"`
		OwnedBy     string `json:"owned_by"`
		MaxModelLen int    `json:"max_model_len"`
	}
	writeJSON(w, http.StatusOK, struct {
		Object string  `json:"object"`
		Data   []model `json:"data"`
	}{"list", []model{{ID: s.opts.ModelName, Object: "model", Created: s.created, OwnedBy: "rollout", MaxModelLen: s.cfg.MaxSeq}}})
}

func (s *Server) handleCompletions(w http.ResponseWriter, r *http.Request) {
	if apiErr := jsonBody(r); apiErr != nil {
		writeError(w, apiErr)
		return
	}
	select {
	case s.held <- struct{}{}:
		defer func() { <-s.held }()
	default:
		s.stats.rejected.Add(1)
		writeError(w, busy(fmt.Sprintf("the server holds %d requests, its most; retry later", cap(s.held))))
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), s.opts.RequestTimeout)
	defer cancel()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, &APIError{Status: http.StatusRequestEntityTooLarge, Type: invalidRequest,
				Message: fmt.Sprintf("request body larger than %d bytes", tooBig.Limit)})
			return
		}
		writeError(w, badParam("", "the request body could not be read: the connection failed or the body came too slowly (within %v)", s.opts.ReadTimeout))
		return
	}
	req, apiErr := s.decodeRequest(body)
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	j := newJob(ctx, req)
	if apiErr := s.submit(j); apiErr != nil {
		writeError(w, apiErr)
		return
	}
	select {
	case <-j.done:
	case <-ctx.Done():
		// The scheduler drops the job at its next step.
		if r.Context().Err() == nil {
			writeError(w, &APIError{Status: http.StatusServiceUnavailable, Type: serverError, Code: "timeout",
				Message: fmt.Sprintf("the request was not answered within the server's limit of %v; retry later or ask for less", s.opts.RequestTimeout)})
		}
		return
	case <-s.stopped:
		select {
		case <-j.done:
		default:
			writeError(w, shuttingDown())
			return
		}
	}
	if j.err != nil {
		writeError(w, j.err)
		return
	}
	s.stats.requests.Add(1)
	writeJSON(w, http.StatusOK, s.response(j))
}

// submit puts a job in the queue, or refuses it when the queue is full or
// the scheduler has stopped.
func (s *Server) submit(j *job) *APIError {
	select {
	case <-s.stopped:
		return shuttingDown()
	default:
	}
	select {
	case s.queue <- j:
		return nil
	default:
		s.stats.rejected.Add(1)
		return busy(fmt.Sprintf("the server's queue of %d requests is full; retry later", s.opts.QueueSize))
	}
}

// busy is a 429 saying why.
func busy(msg string) *APIError {
	return &APIError{Status: http.StatusTooManyRequests, Type: "rate_limit_error", Code: "rate_limit_exceeded", Message: msg}
}

// jsonBody refuses (415) a body that does not say it is JSON, such as the
// form or text/plain posts a web page may send to any site without asking.
func jsonBody(r *http.Request) *APIError {
	ct := r.Header.Get("Content-Type")
	if mt, _, err := mime.ParseMediaType(ct); err == nil && mt == "application/json" {
		return nil
	}
	if ct == "" {
		ct = "none"
	} else {
		ct = strconv.Quote(ct)
	}
	return &APIError{Status: http.StatusUnsupportedMediaType, Type: invalidRequest,
		Message: fmt.Sprintf("content type %s: the request body must be JSON, sent with \"Content-Type: application/json\"", ct)}
}

func shuttingDown() *APIError {
	return &APIError{Status: http.StatusServiceUnavailable, Type: serverError, Message: "the server is shutting down"}
}

// randomSeed draws a seed for a request that gives none.
func (s *Server) randomSeed() uint64 { return rand.Uint64() }

// completionID is a fresh "cmpl-…" id.
func completionID() string {
	var b [12]byte
	if _, err := cryptorand.Read(b[:]); err != nil {
		return fmt.Sprintf("cmpl-%d", time.Now().UnixNano())
	}
	return "cmpl-" + hex.EncodeToString(b[:])
}

// Stats is what the server has done since it was made.
type Stats struct {
	Requests        int64 // completions answered with 200
	Rejected        int64 // requests refused with 429 (queue full, or the server holds its most)
	Steps           int64 // Backend.Step calls
	StepSeqs        int64 // sequences over all Step calls
	MaxStepSeqs     int64 // most sequences in one Step call
	MaxStepRequests int64 // most requests whose sequences shared one Step call
	Cancelled       int64 // requests dropped because their client went away or their time ran out
	Prefilled       int64 // prompt tokens prefilled
	Scored          int64 // tokens scored for logprobs (Backend.Logits)
	Queued          int   // requests waiting now
}

type counters struct {
	requests, rejected, steps, stepSeqs, maxStepSeqs, maxStepRequests atomic.Int64
	cancelled, prefilled, scored                                      atomic.Int64
}

// Stats returns the server's counters.
func (s *Server) Stats() Stats {
	c := &s.stats
	return Stats{
		Requests: c.requests.Load(), Rejected: c.rejected.Load(), Steps: c.steps.Load(), StepSeqs: c.stepSeqs.Load(),
		MaxStepSeqs: c.maxStepSeqs.Load(), MaxStepRequests: c.maxStepRequests.Load(),
		Cancelled: c.cancelled.Load(), Prefilled: c.prefilled.Load(), Scored: c.scored.Load(), Queued: len(s.queue),
	}
}

// storeMax raises a to v if v is larger.
func storeMax(a *atomic.Int64, v int64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}
