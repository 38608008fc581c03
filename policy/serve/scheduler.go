package serve

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/rollout-rl/rollout/policy"
)

// job is one completions request in the scheduler's hands. The scheduler
// writes its fields; the handler reads them once done is closed.
type job struct {
	ctx    context.Context
	req    *request
	seqs   []*sequence // prompt-major: seqs[p*n+c] is completion c of prompt p
	live   int         // sequences still decoding
	scored int         // sequences scored, once decoded (logprobs)
	err    *APIError
	done   chan struct{}
}

func newJob(ctx context.Context, req *request) *job {
	j := &job{ctx: ctx, req: req, done: make(chan struct{})}
	for p := range req.prompts {
		for range req.n {
			j.seqs = append(j.seqs, &sequence{job: j, prompt: p})
		}
	}
	return j
}

// sequence is one completion being decoded.
type sequence struct {
	job     *job
	prompt  int
	st      policy.State
	ids     []int  // completion tokens kept (no EOS, none after a stop string)
	offs    []int  // byte offset of each kept token in text
	text    string // completion text
	sampled int    // tokens sampled, EOS included
	finish  string // "stop" or "length" once done
	logits  [][]float32
}

// Run is the scheduler: it admits queued requests, first in first out,
// while their sequences fit in the batch, prefills their prompts together
// and advances every live sequence one token per step, scoring one
// sequence of a finished request that asked for logprobs between steps,
// until ctx is cancelled. Requests still queued, decoding or scoring then
// fail with 503. Run may be called once.
func (s *Server) Run(ctx context.Context) error {
	if !s.running.CompareAndSwap(false, true) {
		return errors.New("serve: the scheduler is already running")
	}
	defer close(s.stopped)
	var live []*sequence
	var held *job // the next job, waiting for room in the batch
	for {
		if len(live) == 0 && held == nil && len(s.scoring) == 0 {
			select {
			case <-ctx.Done():
				s.drain(nil, nil)
				return nil
			case held = <-s.queue:
			}
		}
		if ctx.Err() != nil {
			s.drain(live, held)
			return nil
		}
		var admitted []*job
		room := s.opts.MaxBatch - len(live)
		for {
			if held == nil {
				select {
				case held = <-s.queue:
				default:
				}
			}
			if held != nil && held.ctx.Err() != nil {
				s.cancel(held) // gone while it waited: no room needed
				held = nil
				continue
			}
			if held == nil || held.req.seqs() > room {
				break
			}
			room -= held.req.seqs()
			admitted = append(admitted, held)
			held = nil
		}
		live = append(live, s.start(admitted)...)
		live = s.step(live)
		s.scoreOne()
	}
}

// drain fails the live sequences' jobs, the held job, the jobs being
// scored and every queued job with 503.
func (s *Server) drain(live []*sequence, held *job) {
	for _, q := range live {
		s.fail(q.job, shuttingDown())
	}
	if held != nil {
		s.fail(held, shuttingDown())
	}
	for _, j := range s.scoring {
		s.fail(j, shuttingDown())
	}
	s.scoring = nil
	for {
		select {
		case j := <-s.queue:
			s.fail(j, shuttingDown())
		default:
			return
		}
	}
}

// cancel ends a job whose client went away or whose time ran out.
func (s *Server) cancel(j *job) {
	s.stats.cancelled.Add(1)
	s.fail(j, &APIError{Status: 499, Type: invalidRequest, Message: "request cancelled"})
}

// fail ends a job with err, releasing its states.
func (s *Server) fail(j *job, err *APIError) {
	if j.err != nil || isClosed(j.done) {
		return
	}
	j.err = err
	for _, q := range j.seqs {
		if q.st != nil {
			q.st.Release()
			q.st = nil
		}
	}
	j.live = 0
	close(j.done)
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// start prefills the prompts of the admitted jobs in one batch and forks
// each prompt's n completions; it returns the new live sequences. A job
// with max_tokens 0 is finished at once.
func (s *Server) start(jobs []*job) []*sequence {
	var prompts [][]int
	var streams []policy.Stream
	var decoding []*job
	for _, j := range jobs {
		switch {
		case j.ctx.Err() != nil:
			s.cancel(j)
		case j.req.maxTokens == 0:
			for _, q := range j.seqs {
				q.finish = "length"
			}
			s.finishJob(j)
		default:
			decoding = append(decoding, j)
			for _, p := range j.req.prompts {
				prompts = append(prompts, p)
				streams = append(streams, policy.Stream{Seed: j.req.seed})
			}
		}
	}
	if len(prompts) == 0 {
		return nil
	}
	for _, p := range prompts {
		s.stats.prefilled.Add(int64(len(p)))
	}
	roots, err := s.b.PrefillBatch(prompts, streams)
	if err != nil {
		for _, j := range decoding {
			s.fail(j, internal(fmt.Errorf("prefill: %w", err)))
		}
		return nil
	}
	var live []*sequence
	k := 0
	for _, j := range decoding {
		jobRoots := roots[k : k+len(j.req.prompts)]
		k += len(j.req.prompts)
		live = append(live, s.fork(j, jobRoots)...)
	}
	return live
}

// fork makes the job's sequences from its prompts' prefilled states:
// completion c of every prompt samples from stream (seed, c).
func (s *Server) fork(j *job, roots []policy.State) []*sequence {
	defer func() {
		for _, r := range roots {
			r.Release()
		}
	}()
	for i, q := range j.seqs {
		root := roots[q.prompt]
		st, err := root.Fork(len(root.Tokens()), policy.Stream{Seed: j.req.seed, ID: uint64(i % j.req.n)})
		if err != nil {
			s.fail(j, internal(fmt.Errorf("fork: %w", err)))
			return nil
		}
		q.st = st
	}
	j.live = len(j.seqs)
	return j.seqs
}

func internal(err error) *APIError {
	return &APIError{Status: http.StatusInternalServerError, Type: serverError, Message: err.Error()}
}

// step advances every live sequence by one token, one Backend.Step per
// sampling setting, and returns the sequences still live. Sequences of
// cancelled or failed jobs are dropped first.
func (s *Server) step(live []*sequence) []*sequence {
	var groups []policy.Sampling
	bySampling := make(map[policy.Sampling][]*sequence)
	for _, q := range live {
		j := q.job
		if j.err == nil && j.ctx.Err() != nil {
			s.cancel(j)
		}
		if j.err != nil {
			continue
		}
		cfg := j.req.sampling
		if _, ok := bySampling[cfg]; !ok {
			groups = append(groups, cfg)
		}
		bySampling[cfg] = append(bySampling[cfg], q)
	}
	next := live[:0]
	for _, cfg := range groups {
		next = append(next, s.stepGroup(bySampling[cfg], cfg)...)
	}
	clear(live[len(next):])
	return next
}

// stepGroup runs one Backend.Step over sequences that share a sampling
// setting and returns those still live.
func (s *Server) stepGroup(group []*sequence, cfg policy.Sampling) []*sequence {
	states := make([]policy.State, len(group))
	jobs := make(map[*job]bool)
	for i, q := range group {
		states[i] = q.st
		jobs[q.job] = true
	}
	out := make([]policy.Token, len(group))
	if err := s.b.Step(states, cfg, out); err != nil {
		for j := range jobs {
			s.fail(j, internal(fmt.Errorf("step: %w", err)))
		}
		return nil
	}
	s.stats.steps.Add(1)
	s.stats.stepSeqs.Add(int64(len(group)))
	storeMax(&s.stats.maxStepSeqs, int64(len(group)))
	storeMax(&s.stats.maxStepRequests, int64(len(jobs)))
	var still []*sequence
	for i, q := range group {
		if q.job.err != nil {
			continue
		}
		if !s.advance(q, out[i].ID) {
			still = append(still, q)
			continue
		}
		q.st.Release()
		q.st = nil
		if q.job.live--; q.job.live == 0 {
			s.finishJob(q.job)
		}
	}
	return still
}

// advance adds a sampled token to a sequence and reports whether the
// sequence is finished.
func (s *Server) advance(q *sequence, id int) bool {
	q.sampled++
	if id == policy.EOS {
		q.finish = "stop"
		return true
	}
	piece := s.textOf(id)
	q.offs = append(q.offs, len(q.text))
	q.ids = append(q.ids, id)
	q.text += piece
	if piece != "" {
		for _, stop := range q.job.req.stop {
			from := max(0, len(q.text)-len(piece)-len(stop)+1)
			if at := strings.Index(q.text[from:], stop); at >= 0 {
				cut := from + at
				q.text = q.text[:cut]
				n := 0
				for n < len(q.offs) && q.offs[n] < cut {
					n++
				}
				q.ids, q.offs = q.ids[:n], q.offs[:n]
				q.finish = "stop"
				return true
			}
		}
	}
	if q.sampled >= q.job.req.maxTokens || len(q.st.Tokens()) >= s.cfg.MaxSeq {
		q.finish = "length"
		return true
	}
	return false
}

// finishJob hands a finished job back to its handler, or, when it asked
// for logprobs, to scoreOne first.
func (s *Server) finishJob(j *job) {
	if j.req.scored() {
		s.scoring = append(s.scoring, j)
		return
	}
	close(j.done)
}

// scoreOne scores the next sequence of the oldest job waiting for its
// logprobs (the model's distributions after every position of prompt and
// completion), and hands the job back once all its sequences are scored.
// One sequence per decode step: a request asking for logprobs of many
// long sequences does not hold up the others' steps.
func (s *Server) scoreOne() {
	for len(s.scoring) > 0 {
		j := s.scoring[0]
		if j.err == nil && j.ctx.Err() != nil {
			s.cancel(j)
		}
		if j.err != nil {
			s.scoring = s.scoring[1:]
			continue
		}
		q := j.seqs[j.scored]
		if len(q.ids) == 0 && j.scored > 0 && j.seqs[j.scored-1].prompt == q.prompt && len(j.seqs[j.scored-1].ids) == 0 {
			q.logits = j.seqs[j.scored-1].logits // the same tokens: the same distributions
		} else {
			seq := append(append([]int(nil), j.req.prompts[q.prompt]...), q.ids...)
			s.stats.scored.Add(int64(len(seq)))
			logits, err := s.b.Logits(seq)
			if err != nil {
				s.scoring = s.scoring[1:]
				s.fail(j, internal(fmt.Errorf("logprobs: %w", err)))
				return
			}
			q.logits = logits
		}
		if j.scored++; j.scored == len(j.seqs) {
			s.scoring = s.scoring[1:]
			close(j.done)
		}
		return
	}
}

// textOf is the text of a token: its character, or "" for a special token.
func (s *Server) textOf(id int) string {
	if id < 4 || id >= s.cfg.VocabSize {
		return ""
	}
	t, err := s.tok.Decode([]int{id})
	if err != nil {
		return ""
	}
	return t
}
