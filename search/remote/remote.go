// Package remote samples rollout groups from a policy behind an
// OpenAI-compatible completions server (package openai's client), in the
// same search.Group shape the local strategies make, so that remote trees
// render, are stored and get advantages as local ones do.
//
// Two strategies have a remote form. Flat (search.Flat) sends one request
// with n = N. The entropy tree (search.EntropyTree, also as random_tree)
// sends one request with n = M for its roots, then L times picks in every
// tree the N best positions by fork score among those a local tree may
// fork at (search.EligiblePositions: before the answer start, never a
// node's first or last token, never twice) and forks each by sending the
// prompt plus the response's first t tokens as a new prompt with n = T. A
// fork is sent as token ids when the server takes them (Sampler.PromptIDs),
// else as text: the prompt text and the text of those t tokens.
//
// Fork scores: entropy is estimated per token from the returned top-k
// log-probabilities (openai.TopKEntropy: a lower bound on the true
// entropy); surprisal is −log p of the sampled token; random is the local
// trees' counter-based draw. Log-probabilities are what the server reports,
// which for rollout serve and vLLM are those of the model's own
// distribution (temperature 1).
//
// Budget: a group's generated tokens are the server's usage.completion_tokens
// summed over its requests. A server counts there the end-of-sequence
// tokens it does not return; the nodes hold the tokens returned, and the
// group's Usage.UnheldTokens counts the rest, so that generated tokens are
// the nodes' tokens plus the unheld ones, as in every record (a local
// group's nodes hold their EOS, and it has none unheld). A request is sent only if the per-prompt budget
// left covers n × max_tokens, its longest possible cost (a fork at t asks
// for max_tokens = MaxTokens − t), so the budget is never exceeded; a
// request the budget cannot cover in full asks for as many completions as
// it covers, and the rest count as skipped branches.
//
// A remote group of rollout serve is a sample of the same distribution as
// the local group of the same seed, not the same sample: rollout serve
// draws completion c of a request from stream (request seed, c), and the
// request seed here is a 31-bit hash of (seed, step, prompt id, call), while
// a local node draws from stream (seed, hash(step, prompt id, node id)),
// which no request can name. Remote fork positions also differ, ranked by
// the top-k entropy estimate instead of the exact entropy.
package remote

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/rollout-rl/rollout/policy/openai"
	"github.com/rollout-rl/rollout/search"
)

// Prompt is one prompt to sample a group for.
type Prompt struct {
	// Text is the prompt text, sent as it is unless Sampler.PromptIDs.
	Text string
	// Tokens is the prompt as the server's token ids: sent instead of Text
	// when Sampler.PromptIDs (required then), and kept as the group's
	// prompt tokens.
	Tokens []int
	// ID seeds the prompt's requests with Sampler.Seed and Sampler.Step;
	// ids must be distinct within a call.
	ID uint64
	// AnswerStart, if not nil, returns the index in a response text (in
	// characters) from which on it is the final answer: trees fork only
	// before it.
	AnswerStart func(response string) int
}

// Sampler generates rollout groups through a completions server. Set its
// fields before the first Generate; a Sampler is safe for concurrent
// Generate calls and remembers the text of every token it has seen (Text).
type Sampler struct {
	// Client talks to the server.
	Client *openai.Client
	// Model names the served model.
	Model string
	// Temperature and TopP are the sampling settings (TopP 0: off, as 1).
	Temperature, TopP float64
	// MaxTokens is the maximum response length in tokens.
	MaxTokens int
	// Budget is the per-prompt limit on generated tokens as the server
	// counts them, 0 for none.
	Budget int64
	// Seed and Step seed the requests: each request's seed is a fixed hash
	// of (Seed, Step, Prompt.ID, the request's place in the group).
	Seed, Step uint64
	// TopLogprobs is the k of the top-k log-probabilities asked for at
	// every token (1..20; default 20), from which entropies are estimated.
	TopLogprobs int
	// Vocab is the server's vocabulary size, for the entropy's upper bound
	// (0: unknown). The estimate itself does not need it.
	Vocab int
	// Stop lists strings that end a response.
	Stop []string
	// PromptIDs sends prompts and forks as token ids (Prompt.Tokens and the
	// response's ids); the server must then return token ids (TokenIDs).
	PromptIDs bool
	// Encode, if not nil, makes a prompt's token ids from its text when
	// Prompt.Tokens is nil (Dial sets it to the character tokenizer's
	// EncodePrompt for rollout serve, to the server's /tokenize for vLLM).
	Encode func(ctx context.Context, text string) ([]int, error)
	// TokenIDs asks the server for token ids (vLLM's
	// return_tokens_as_token_ids, honoured by rollout serve); without it a
	// token's id is the index of its name (the server's "tokens" entry)
	// among the names seen.
	TokenIDs bool

	mu     sync.Mutex
	texts  map[int]string // id → text, as first seen
	intern map[string]int // text → id, when the server returns no ids
}

// Text returns the text of a response's tokens, as the server wrote them
// (ids the sampler has not seen have none).
func (s *Sampler) Text(ids []int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, id := range ids {
		b.WriteString(s.texts[id])
	}
	return b.String()
}

// pieces returns the text of each token of a response.
func (s *Sampler) pieces(ids []int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = s.texts[id]
	}
	return out
}

// Generate samples one group per prompt with strategy st (one that
// implements search.Remote: search.Flat, search.EntropyTree), in prompt
// order.
// Prompts are sampled concurrently, as many requests in flight as the
// client allows. This is the entry point for studies over many prompts
// (pass rates, test-time compute): score the leaves with Text.
func (s *Sampler) Generate(ctx context.Context, st search.Strategy, prompts []Prompt) ([]*search.Group, error) {
	plan, err := s.planOf(st)
	if err != nil {
		return nil, err
	}
	prompts, err = s.encode(ctx, prompts)
	if err != nil {
		return nil, fmt.Errorf("remote %s: %w", st.Name(), err)
	}
	if err := s.validate(prompts); err != nil {
		return nil, fmt.Errorf("remote %s: %w", st.Name(), err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	groups := make([]*search.Group, len(prompts))
	errs := make([]error, len(prompts))
	var wg sync.WaitGroup
	for i := range prompts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := &groupRun{s: s, p: prompts[i], name: st.Name()}
			if errs[i] = plan(ctx, g); errs[i] != nil {
				cancel()
				return
			}
			groups[i] = g.group()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) {
			return nil, fmt.Errorf("remote %s: prompt %d: %w", st.Name(), i, err)
		}
	}
	for i, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("remote %s: prompt %d: %w", st.Name(), i, err)
		}
	}
	return groups, nil
}

// Check returns the error Generate would give for strategy st before
// sending anything: nil for a strategy that implements search.Remote
// (search.Flat and search.EntropyTree, also as random_tree) with valid
// parameters, an error naming st otherwise (the segment tree has no remote
// form).
func (s *Sampler) Check(st search.Strategy) error {
	_, err := s.planOf(st)
	return err
}

// encode fills in the token ids of prompts that have none, with Encode.
func (s *Sampler) encode(ctx context.Context, prompts []Prompt) ([]Prompt, error) {
	if s.Encode == nil {
		return prompts, nil
	}
	out := make([]Prompt, len(prompts))
	for i, p := range prompts {
		if p.Tokens == nil {
			ids, err := s.Encode(ctx, p.Text)
			if err != nil {
				return nil, fmt.Errorf("prompt %d (%q): %w", i, p.Text, err)
			}
			p.Tokens = ids
		}
		out[i] = p
	}
	return out, nil
}

// Supports returns nil when st has a remote form (flat, entropy_tree,
// random_tree) with valid parameters, else the error Generate would
// return for it, so that a caller can refuse it before contacting a server.
func Supports(st search.Strategy) error {
	_, err := (&Sampler{}).planOf(st)
	return err
}

// planOf returns the plan of a strategy with a remote form (search.Remote).
func (s *Sampler) planOf(st search.Strategy) (func(context.Context, *groupRun) error, error) {
	r, ok := st.(search.Remote)
	if !ok {
		return nil, fmt.Errorf("remote: strategy %q has no remote form (%s)", st.Name(), strings.Join(remoteNames(), ", "))
	}
	e, err := r.RemoteTree()
	if err != nil {
		return nil, err
	}
	switch e.Score {
	case search.ScoreStepEntropy, search.ScoreStepRandom, search.ScoreAttention:
		// A completions server knows no task's steps and gives no attention.
		return nil, fmt.Errorf("remote: fork score %q needs the local engine (a task's step ends, the attention weights)", e.Score)
	}
	return func(ctx context.Context, g *groupRun) error { return g.tree(ctx, e) }, nil
}

// remoteNames lists the registered strategies with a remote form (as their
// defaults make them).
func remoteNames() []string {
	var out []string
	for _, name := range search.Names() {
		if st, err := search.NewStrategy(name, nil); err == nil {
			if _, ok := st.(search.Remote); ok {
				out = append(out, name)
			}
		}
	}
	return out
}

// validate checks the sampler's settings and the prompts.
func (s *Sampler) validate(prompts []Prompt) error {
	switch {
	case s.Client == nil:
		return errors.New("no client")
	case s.MaxTokens < 1:
		return fmt.Errorf("max_tokens = %d, want >= 1", s.MaxTokens)
	case s.Budget < 0:
		return fmt.Errorf("budget = %d, want >= 0 (0: no limit)", s.Budget)
	case s.Budget > 0 && s.Budget < int64(s.MaxTokens):
		return fmt.Errorf("budget = %d is smaller than one max-length response (max_tokens = %d)", s.Budget, s.MaxTokens)
	case s.TopLogprobs < 0 || s.TopLogprobs > 20:
		return fmt.Errorf("top logprobs = %d, want 1..20 (0: the default 20)", s.TopLogprobs)
	case s.PromptIDs && !s.TokenIDs:
		return errors.New("prompts as token ids need token ids back (TokenIDs)")
	case len(prompts) == 0:
		return errors.New("no prompts")
	}
	ids := map[uint64]int{}
	for i, p := range prompts {
		if s.PromptIDs && len(p.Tokens) == 0 {
			return fmt.Errorf("prompt %d (%q) has no token ids", i, p.Text)
		}
		if j, ok := ids[p.ID]; ok {
			return fmt.Errorf("prompts %d and %d have the same id %d", j, i, p.ID)
		}
		ids[p.ID] = i
	}
	return nil
}

// topK is the k of the top-k log-probabilities asked for.
func (s *Sampler) topK() int {
	if s.TopLogprobs == 0 {
		return 20
	}
	return s.TopLogprobs
}

// seed is the seed of a request of a group: a fixed hash of (Seed, Step,
// prompt id, a, b), non-negative as servers want it.
func (s *Sampler) seed(promptID uint64, a, b int) int64 {
	h := mix64(s.Seed ^ 0x243f6a8885a308d3)
	h = mix64(h ^ s.Step)
	h = mix64(h ^ promptID)
	h = mix64(h ^ uint64(a))
	h = mix64(h ^ uint64(b))
	return int64(h >> 33) // 31 bits: every server's seed type holds it
}

// mix64 is the SplitMix64 finaliser.
func mix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// parsed is one completion read into tokens.
type parsed struct {
	ids       []int
	logprobs  []float32
	entropies []float32
	finish    search.Finish
}

// parse reads a completion's tokens, logprobs and entropies, learning the
// text of its tokens.
func (s *Sampler) parse(ch *openai.Choice) (parsed, error) {
	lp := ch.Logprobs
	n := len(lp.Tokens)
	out := parsed{ids: make([]int, n), logprobs: make([]float32, n), entropies: make([]float32, n), finish: finishOf(ch.FinishReason)}
	texts := tokenTexts(ch)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.texts == nil {
		s.texts, s.intern = map[int]string{}, map[string]int{}
	}
	for i, name := range lp.Tokens {
		if s.TokenIDs {
			id, ok := tokenID(name)
			if !ok {
				return parsed{}, fmt.Errorf("token %d is %q, not token_id:N: the server does not return token ids (return_tokens_as_token_ids)", i, name)
			}
			out.ids[i] = id
			if _, seen := s.texts[id]; !seen {
				s.texts[id] = texts[i]
			}
		} else {
			id, seen := s.intern[name]
			if !seen {
				id = len(s.intern)
				s.intern[name] = id
				s.texts[id] = texts[i]
			}
			out.ids[i] = id
		}
		out.logprobs[i] = float32(*lp.TokenLogprobs[i])
		est, _ := openai.TopKEntropy(lp.TopLogprobs[i], s.topK(), s.Vocab)
		out.entropies[i] = float32(est)
	}
	return out, nil
}

// finishOf maps a finish_reason to the search's finish reasons: "stop" (an
// end-of-sequence token or a stop string) is FinishEOS, "length"
// FinishLength; others are kept as the server wrote them, control
// characters escaped (they are printed).
func finishOf(reason string) search.Finish {
	switch reason {
	case "stop":
		return search.FinishEOS
	case "length":
		return search.FinishLength
	}
	return search.Finish(openai.Printable(reason))
}

// tokenID reads "token_id:N".
func tokenID(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, "token_id:")
	if !ok {
		return 0, false
	}
	id, err := strconv.Atoi(rest)
	return id, err == nil && id >= 0
}

// tokenTexts cuts a completion's text at its tokens' text offsets (in
// characters, the first token's offset being the text's start). A token
// whose offsets do not fit the text gets its name as text unless the name
// is a token id.
func tokenTexts(ch *openai.Choice) []string {
	lp := ch.Logprobs
	runes := []rune(ch.Text)
	out := make([]string, len(lp.Tokens))
	if len(lp.Tokens) == 0 {
		return out
	}
	base := lp.TextOffset[0]
	for i := range lp.Tokens {
		from, to := lp.TextOffset[i]-base, len(runes)
		if i+1 < len(lp.Tokens) {
			to = lp.TextOffset[i+1] - base
		}
		if from >= 0 && from <= to && to <= len(runes) {
			out[i] = string(runes[from:to])
		} else if _, isID := tokenID(lp.Tokens[i]); !isID {
			out[i] = lp.Tokens[i]
		}
	}
	return out
}

// answerStart maps a prompt's answer start (a character index of the
// response text, in bytes as Go indexes strings) to a token index of a
// response: the first token holding a byte at or after it.
func (s *Sampler) answerStart(p Prompt) func([]int) int {
	if p.AnswerStart == nil {
		return nil
	}
	return func(resp []int) int {
		pieces := s.pieces(resp)
		a := p.AnswerStart(strings.Join(pieces, ""))
		end := 0
		for i, t := range pieces {
			end += len(t)
			if end > a {
				return i
			}
		}
		return len(resp)
	}
}
