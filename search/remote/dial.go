package remote

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/openai"
)

// Server kinds Dial tells apart by /v1/models' owned_by.
const (
	// OwnedByRollout is rollout serve: prompts go as the character
	// tokenizer's ids (BOS prompt SEP) and forks as ids.
	OwnedByRollout = "rollout"
	// OwnedByVLLM is vLLM: prompts go as text, tokens come back as ids.
	OwnedByVLLM = "vllm"
)

// ErrModel is what Dial's error is (errors.Is) when the server does not
// serve the model named, or serves several and none was named: the
// caller's input, not a failure of the server.
var ErrModel = errors.New("remote: no such served model")

// modelError is Dial's error about the model named; it is ErrModel.
type modelError struct{ error }

func (modelError) Is(target error) bool { return target == ErrModel }

// Dial returns a sampler of the model called model on the server at
// o.BaseURL ("" picks the server's only model), set up from what GET
// /v1/models says: against rollout serve prompts and forks are sent as the
// character tokenizer's token ids and its vocabulary size bounds the
// entropy; against vLLM tokens come back as ids (return_tokens_as_token_ids)
// and prompts and forks are sent as ids too, the prompt's from the server's
// /tokenize (as text when it has none); against any other server
// everything is text. The caller sets the sampling fields (Temperature, TopP, MaxTokens,
// Budget, Seed, Step).
func Dial(ctx context.Context, o openai.Options, model string) (*Sampler, error) {
	c, err := openai.New(o)
	if err != nil {
		return nil, err
	}
	models, err := c.Models(ctx)
	if err != nil {
		return nil, fmt.Errorf("list the served models: %w", err)
	}
	var m *openai.Model
	names := make([]string, len(models))
	for i := range models {
		names[i] = models[i].ID
		if models[i].ID == model {
			m = &models[i]
		}
	}
	if model == "" && len(models) == 1 {
		m = &models[0]
	}
	if m == nil {
		if model == "" {
			return nil, modelError{fmt.Errorf("%s serves %d models (%s): name one", c.URL(), len(models), strings.Join(names, ", "))}
		}
		return nil, modelError{fmt.Errorf("%s does not serve the model %q (it serves: %s)", c.URL(), model, strings.Join(names, ", "))}
	}
	s := &Sampler{Client: c, Model: m.ID, Temperature: 1, TopP: 1}
	switch strings.ToLower(m.OwnedBy) {
	case OwnedByRollout:
		tok := policy.DefaultTokenizer()
		s.PromptIDs, s.TokenIDs, s.Vocab = true, true, tok.VocabSize()
		s.Encode = func(_ context.Context, text string) ([]int, error) { return tok.EncodePrompt(text) }
	case OwnedByVLLM:
		s.TokenIDs = true
		// Token-id forks need the prompt's ids: from /tokenize where the
		// server has it, else forks go as text.
		if _, err := c.Tokenize(ctx, m.ID, "a"); err == nil {
			s.PromptIDs = true
			s.Encode = func(ctx context.Context, text string) ([]int, error) { return c.Tokenize(ctx, m.ID, text) }
		}
	}
	return s, nil
}
