package serve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/rollout-rl/rollout/policy"
)

// Limits of a completions request.
const (
	defaultMaxTokens = 16 // OpenAI's default, cut to what fits the context
	maxLogprobs      = 20 // top alternatives per position, as OpenAI allows
	maxStops         = 4  // stop strings, as OpenAI allows
)

// rawRequest is the body of POST /v1/completions as decoded from JSON.
// Fields of polymorphic type are kept raw; unknown fields are ignored, as
// OpenAI ignores them. Pointers tell a field left out (or null) from a zero.
type rawRequest struct {
	Model                  *string            `json:"model"`
	Prompt                 json.RawMessage    `json:"prompt"`
	N                      *int               `json:"n"`
	MaxTokens              *int               `json:"max_tokens"`
	Temperature            *float64           `json:"temperature"`
	TopP                   *float64           `json:"top_p"`
	Seed                   *int64             `json:"seed"`
	Stop                   json.RawMessage    `json:"stop"`
	Logprobs               *int               `json:"logprobs"`
	Echo                   *bool              `json:"echo"`
	Stream                 *bool              `json:"stream"`
	BestOf                 *int               `json:"best_of"`
	PresencePenalty        *float64           `json:"presence_penalty"`
	FrequencyPenalty       *float64           `json:"frequency_penalty"`
	LogitBias              map[string]float64 `json:"logit_bias"`
	Suffix                 *string            `json:"suffix"`
	ReturnTokensAsTokenIDs *bool              `json:"return_tokens_as_token_ids"`
	PromptLogprobs         *int               `json:"prompt_logprobs"`
}

// request is a validated completions request.
type request struct {
	prompts        [][]int // token ids, BOS and SEP included for text prompts
	n              int     // completions per prompt
	maxTokens      int
	sampling       policy.Sampling
	seed           uint64
	stop           []string
	logprobs       int // top alternatives per completion token; -1: no logprobs
	promptLogprobs int // vLLM's prompt_logprobs; -1: none
	echo           bool
	tokenIDs       bool // vLLM's return_tokens_as_token_ids
}

// seqs is the number of sequences the request decodes at once (none
// with max_tokens 0).
func (r *request) seqs() int {
	if r.maxTokens == 0 {
		return 0
	}
	return len(r.prompts) * r.n
}

// scored tells whether the request needs the model's distributions at
// every position (logprobs, echoed prompt logprobs, prompt_logprobs).
func (r *request) scored() bool { return r.logprobs >= 0 || r.promptLogprobs >= 0 }

// decodeRequest reads and validates a request body against the server's
// model and limits.
func (s *Server) decodeRequest(body []byte) (*request, *APIError) {
	var raw rawRequest
	if err := json.Unmarshal(body, &raw); err != nil {
		return nil, jsonError(err)
	}
	if raw.Model != nil && *raw.Model != s.opts.ModelName {
		return nil, &APIError{Status: http.StatusNotFound, Type: invalidRequest, Param: "model", Code: "model_not_found",
			Message: fmt.Sprintf("the model %q does not exist; this server serves %q", *raw.Model, s.opts.ModelName)}
	}
	if err := unsupported(&raw); err != nil {
		return nil, err
	}
	r := &request{n: 1, sampling: policy.Sampling{Temperature: 1, TopP: 1}, logprobs: -1, promptLogprobs: -1}
	var err *APIError
	if r.prompts, err = s.parsePrompt(raw.Prompt); err != nil {
		return nil, err
	}
	if raw.N != nil {
		r.n = *raw.N
		if r.n < 1 || r.n > s.opts.MaxBatch {
			return nil, badParam("n", "n = %d, want 1..%d", r.n, s.opts.MaxBatch)
		}
	}
	// Every completion is decoded or scored as a sequence of its own, even
	// with max_tokens 0: the bound holds whatever the other fields say.
	if n := len(r.prompts) * r.n; n > s.opts.MaxBatch {
		return nil, badParam("n", "%d prompts × n = %d sequences, more than the server's batch of %d", len(r.prompts), n, s.opts.MaxBatch)
	}
	if err := s.takeMaxTokens(r, raw.MaxTokens); err != nil {
		return nil, err
	}
	if err := takeSampling(r, &raw); err != nil {
		return nil, err
	}
	if r.stop, err = parseStop(raw.Stop); err != nil {
		return nil, err
	}
	if r.logprobs, err = topK("logprobs", raw.Logprobs); err != nil {
		return nil, err
	}
	if r.promptLogprobs, err = topK("prompt_logprobs", raw.PromptLogprobs); err != nil {
		return nil, err
	}
	r.echo = raw.Echo != nil && *raw.Echo
	r.tokenIDs = raw.ReturnTokensAsTokenIDs != nil && *raw.ReturnTokensAsTokenIDs
	if raw.Seed != nil {
		r.seed = uint64(*raw.Seed)
	} else {
		r.seed = s.randomSeed()
	}
	return r, nil
}

// jsonError turns a JSON decoding error into a 400 naming the field.
func jsonError(err error) *APIError {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return badParam("", "the request body must be a JSON object, not %s", te.Value)
		}
		return badParam(te.Field, "%s: a JSON %s where %s is expected", te.Field, te.Value, typeName(te.Type.String()))
	}
	return badParam("", "the request body is not valid JSON: %v", err)
}

// typeName names a Go type of rawRequest as JSON does.
func typeName(goType string) string {
	switch goType {
	case "int", "int64":
		return "an integer"
	case "float64":
		return "a number"
	case "bool":
		return "a boolean"
	case "string":
		return "a string"
	}
	return "an object of numbers"
}

// unsupported rejects OpenAI parameters that would change the result but
// that this server does not implement, rather than ignore them silently.
func unsupported(raw *rawRequest) *APIError {
	switch {
	case raw.Stream != nil && *raw.Stream:
		return badParam("stream", "stream = true is not supported: responses are returned whole")
	case raw.BestOf != nil && (raw.N == nil && *raw.BestOf != 1 || raw.N != nil && *raw.BestOf != *raw.N):
		return badParam("best_of", "best_of = %d is not supported (only best_of = n)", *raw.BestOf)
	case raw.PresencePenalty != nil && *raw.PresencePenalty != 0:
		return badParam("presence_penalty", "presence_penalty = %g is not supported (only 0)", *raw.PresencePenalty)
	case raw.FrequencyPenalty != nil && *raw.FrequencyPenalty != 0:
		return badParam("frequency_penalty", "frequency_penalty = %g is not supported (only 0)", *raw.FrequencyPenalty)
	case len(raw.LogitBias) > 0:
		return badParam("logit_bias", "logit_bias is not supported")
	case raw.Suffix != nil && *raw.Suffix != "":
		return badParam("suffix", "suffix is not supported")
	}
	return nil
}

// parsePrompt reads prompt: a string, a list of strings (a batch), a list
// of token ids, or a list of lists of token ids (a batch). Text is encoded
// as the policy reads it: BOS, the characters, SEP. Token ids are used as
// given.
func (s *Server) parsePrompt(raw json.RawMessage) ([][]int, *APIError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, badParam("prompt", "prompt is required")
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		ids, err := s.encode("prompt", text)
		if err != nil {
			return nil, err
		}
		return [][]int{ids}, nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil, badParam("prompt", "prompt must be a string, a list of strings, a list of token ids or a list of lists of token ids")
	}
	if len(items) == 0 {
		return nil, badParam("prompt", "prompt is an empty list")
	}
	var ids []int
	if json.Unmarshal(raw, &ids) == nil {
		if err := s.checkIDs("prompt", ids); err != nil {
			return nil, err
		}
		return [][]int{ids}, nil
	}
	var texts []string
	if json.Unmarshal(raw, &texts) == nil {
		if err := s.checkCount(len(texts)); err != nil {
			return nil, err
		}
		out := make([][]int, len(texts))
		for i, t := range texts {
			var err *APIError
			if out[i], err = s.encode(fmt.Sprintf("prompt[%d]", i), t); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	var lists [][]int
	if json.Unmarshal(raw, &lists) == nil {
		if err := s.checkCount(len(lists)); err != nil {
			return nil, err
		}
		for i, l := range lists {
			if err := s.checkIDs(fmt.Sprintf("prompt[%d]", i), l); err != nil {
				return nil, err
			}
		}
		return lists, nil
	}
	return nil, badParam("prompt", "prompt is a list mixing types: want all strings, all token ids or all lists of token ids")
}

// checkCount refuses a batch of more prompts than the server decodes at
// once, before they are encoded.
func (s *Server) checkCount(prompts int) *APIError {
	if prompts > s.opts.MaxBatch {
		return badParam("prompt", "%d prompts, more than the server's batch of %d", prompts, s.opts.MaxBatch)
	}
	return nil
}

// encode encodes a text prompt, naming a character outside the alphabet.
func (s *Server) encode(param, text string) ([]int, *APIError) {
	ids, err := s.tok.EncodePrompt(text)
	if err != nil {
		return nil, badParam(param, "%s: %v; the model's alphabet is %q", param, err, s.tok.Alphabet())
	}
	return ids, s.checkLen(param, ids)
}

// checkIDs checks a token-id prompt against the vocabulary.
func (s *Server) checkIDs(param string, ids []int) *APIError {
	if len(ids) == 0 {
		return badParam(param, "%s is an empty list of token ids", param)
	}
	for i, id := range ids {
		if id < 0 || id >= s.cfg.VocabSize {
			return badParam(param, "%s: token id %d at position %d is outside the vocabulary of %d", param, id, i, s.cfg.VocabSize)
		}
	}
	return s.checkLen(param, ids)
}

// checkLen checks that a prompt fits the model's context.
func (s *Server) checkLen(param string, ids []int) *APIError {
	if len(ids) > s.cfg.MaxSeq {
		return badParam(param, "%s is %d tokens, more than the model's maximum context length of %d", param, len(ids), s.cfg.MaxSeq)
	}
	return nil
}

// takeMaxTokens sets max_tokens: given, it must fit every prompt's context;
// left out, it is 16 cut to what the longest prompt leaves.
func (s *Server) takeMaxTokens(r *request, maxTokens *int) *APIError {
	longest := 0
	for _, p := range r.prompts {
		longest = max(longest, len(p))
	}
	room := s.cfg.MaxSeq - longest
	if maxTokens == nil {
		r.maxTokens = min(defaultMaxTokens, room)
		return nil
	}
	r.maxTokens = *maxTokens
	if r.maxTokens < 0 {
		return badParam("max_tokens", "max_tokens = %d, want 0 or more", r.maxTokens)
	}
	if r.maxTokens > room {
		return badParam("max_tokens", "a prompt of %d tokens + max_tokens %d = %d, more than the model's maximum context length of %d",
			longest, r.maxTokens, longest+r.maxTokens, s.cfg.MaxSeq)
	}
	return nil
}

// takeSampling sets temperature and top_p.
func takeSampling(r *request, raw *rawRequest) *APIError {
	if t := raw.Temperature; t != nil {
		if !(*t >= 0 && *t <= 2) {
			return badParam("temperature", "temperature = %g, want 0..2", *t)
		}
		r.sampling.Temperature = *t
	}
	if p := raw.TopP; p != nil {
		if !(*p > 0 && *p <= 1) {
			return badParam("top_p", "top_p = %g, want a value in (0, 1]", *p)
		}
		r.sampling.TopP = *p
	}
	return nil
}

// parseStop reads stop: a string or a list of up to four non-empty strings.
func parseStop(raw json.RawMessage) ([]string, *APIError) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		if one == "" {
			return nil, badParam("stop", "stop is an empty string")
		}
		return []string{one}, nil
	}
	var list []string
	if json.Unmarshal(raw, &list) != nil {
		return nil, badParam("stop", "stop must be a string or a list of strings")
	}
	if len(list) > maxStops {
		return nil, badParam("stop", "stop has %d strings, at most %d are allowed", len(list), maxStops)
	}
	for i, s := range list {
		if s == "" {
			return nil, badParam("stop", "stop[%d] is an empty string", i)
		}
	}
	return list, nil
}

// topK reads logprobs or prompt_logprobs: null for none, else 0..20.
func topK(param string, v *int) (int, *APIError) {
	if v == nil {
		return -1, nil
	}
	if *v < 0 || *v > maxLogprobs {
		return 0, badParam(param, "%s = %d, want 0..%d", param, *v, maxLogprobs)
	}
	return *v, nil
}
