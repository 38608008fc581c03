package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// completionResponse is OpenAI's text_completion object.
type completionResponse struct {
	ID      string   `json:"id"`
	Object  string   `json:"object"`
	Created int64    `json:"created"`
	Model   string   `json:"model"`
	Choices []choice `json:"choices"`
	Usage   usage    `json:"usage"`
}

type choice struct {
	Text         string    `json:"text"`
	Index        int       `json:"index"`
	Logprobs     *logprobs `json:"logprobs"`
	FinishReason string    `json:"finish_reason"`
	// PromptLogprobs is vLLM's: per prompt token, null for the first, else
	// the token and the top alternatives by id.
	PromptLogprobs []orderedObject `json:"prompt_logprobs,omitempty"`
}

// logprobs is OpenAI's legacy completions logprobs object.
type logprobs struct {
	Tokens        []string        `json:"tokens"`
	TokenLogprobs []*float64      `json:"token_logprobs"`
	TopLogprobs   []orderedObject `json:"top_logprobs"`
	TextOffset    []int           `json:"text_offset"`
}

type usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// orderedObject is a JSON object whose keys keep their order (most
// probable first); a nil one is written as null.
type orderedObject []member

type member struct {
	key   string
	value any
}

// MarshalJSON writes the members in order.
func (o orderedObject) MarshalJSON() ([]byte, error) {
	if o == nil {
		return []byte("null"), nil
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(m.key)
		if err != nil {
			return nil, err
		}
		v, err := marshal(m.value)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal is json.Marshal without HTML escaping, so that <bos> stays
// readable.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// minLogprob stands for log 0, which JSON cannot write (as vLLM does).
const minLogprob = -9999.0

// response builds the answer to a finished job.
func (s *Server) response(j *job) completionResponse {
	r := j.req
	resp := completionResponse{ID: completionID(), Object: "text_completion", Created: time.Now().Unix(), Model: s.opts.ModelName}
	for _, p := range r.prompts {
		resp.Usage.PromptTokens += len(p)
	}
	for i, q := range j.seqs {
		resp.Usage.CompletionTokens += q.sampled
		prompt := r.prompts[q.prompt]
		c := choice{Index: i, FinishReason: q.finish, Text: q.text}
		promptText := s.render(prompt)
		if r.echo {
			c.Text = promptText + q.text
		}
		if r.logprobs >= 0 {
			c.Logprobs = s.logprobs(r, q, prompt, promptText)
		}
		if r.promptLogprobs >= 0 {
			c.PromptLogprobs = s.promptLogprobs(prompt, q.logits, r.promptLogprobs)
		}
		resp.Choices = append(resp.Choices, c)
	}
	resp.Usage.TotalTokens = resp.Usage.PromptTokens + resp.Usage.CompletionTokens
	return resp
}

// render is the text of tokens (special tokens have none).
func (s *Server) render(ids []int) string {
	var b []byte
	for _, id := range ids {
		b = append(b, s.textOf(id)...)
	}
	return string(b)
}

// name is how a token is written in logprobs: its text, its special name
// (<bos>, <sep>, <eos>, <pad>), or "token_id:N" when asked.
func (s *Server) name(id int, tokenIDs bool) string {
	if tokenIDs {
		return "token_id:" + strconv.Itoa(id)
	}
	t, err := s.tok.Decode([]int{id})
	if err != nil {
		return fmt.Sprintf("<id %d>", id)
	}
	return t
}

// logprobs builds a choice's logprobs object: the echoed prompt tokens
// first (the first has no logprob), then the completion's tokens.
// text_offset counts characters from the start of the prompt's text.
func (s *Server) logprobs(r *request, q *sequence, prompt []int, promptText string) *logprobs {
	lp := &logprobs{Tokens: []string{}, TokenLogprobs: []*float64{}, TopLogprobs: []orderedObject{}, TextOffset: []int{}}
	offset := 0
	add := func(id, row int) {
		lp.Tokens = append(lp.Tokens, s.name(id, r.tokenIDs))
		lp.TextOffset = append(lp.TextOffset, offset)
		offset += utf8.RuneCountInString(s.textOf(id))
		if row < 0 {
			lp.TokenLogprobs = append(lp.TokenLogprobs, nil)
			lp.TopLogprobs = append(lp.TopLogprobs, nil)
			return
		}
		dist := logSoftmax(q.logits[row])
		v := clampLog(dist[id])
		lp.TokenLogprobs = append(lp.TokenLogprobs, &v)
		top := orderedObject{}
		chosen := false
		for _, alt := range topIDs(dist, r.logprobs) {
			top = append(top, member{s.name(alt, r.tokenIDs), clampLog(dist[alt])})
			chosen = chosen || alt == id
		}
		if !chosen {
			top = append(top, member{s.name(id, r.tokenIDs), v})
		}
		lp.TopLogprobs = append(lp.TopLogprobs, top)
	}
	if r.echo {
		for i, id := range prompt {
			add(id, i-1)
		}
	} else {
		offset = utf8.RuneCountInString(promptText)
	}
	for k, id := range q.ids {
		add(id, len(prompt)+k-1)
	}
	return lp
}

// promptLogprobs is vLLM's prompt_logprobs: null for the first prompt
// token, then per token an object keyed by token id holding the prompt's
// token and the k most probable ones, each with its logprob, its rank
// (1: most probable) and its text.
func (s *Server) promptLogprobs(prompt []int, logits [][]float32, k int) []orderedObject {
	out := make([]orderedObject, len(prompt))
	for i := 1; i < len(prompt); i++ {
		dist := logSoftmax(logits[i-1])
		entry := func(id int) member {
			return member{strconv.Itoa(id), struct {
				Logprob      float64 `json:"logprob"`
				Rank         int     `json:"rank"`
				DecodedToken string  `json:"decoded_token"`
			}{clampLog(dist[id]), rank(dist, id), s.name(id, false)}}
		}
		obj := orderedObject{entry(prompt[i])}
		for _, alt := range topIDs(dist, k) {
			if alt != prompt[i] {
				obj = append(obj, entry(alt))
			}
		}
		out[i] = obj
	}
	return out
}

// logSoftmax is log softmax(logits), in float64.
func logSoftmax(logits []float32) []float64 {
	mx := math.Inf(-1)
	for _, z := range logits {
		mx = math.Max(mx, float64(z))
	}
	var sum float64
	for _, z := range logits {
		sum += math.Exp(float64(z) - mx)
	}
	lse := mx + math.Log(sum)
	out := make([]float64, len(logits))
	for i, z := range logits {
		out[i] = float64(z) - lse
	}
	return out
}

// topIDs returns the k most probable ids, most probable first, ties to the
// lower id.
func topIDs(dist []float64, k int) []int {
	ids := make([]int, len(dist))
	for i := range ids {
		ids[i] = i
	}
	slices.SortStableFunc(ids, func(a, b int) int {
		switch {
		case dist[a] > dist[b]:
			return -1
		case dist[a] < dist[b]:
			return 1
		}
		return 0
	})
	return ids[:min(k, len(ids))]
}

// rank is 1 + the number of ids more probable than id (ties to the lower
// id, as topIDs orders them).
func rank(dist []float64, id int) int {
	r := 1
	for j, v := range dist {
		if v > dist[id] || v == dist[id] && j < id {
			r++
		}
	}
	return r
}

// clampLog replaces log 0 (and NaN) by minLogprob.
func clampLog(v float64) float64 {
	if math.IsNaN(v) || v < minLogprob {
		return minLogprob
	}
	return v
}
