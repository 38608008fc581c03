package remote

import (
	"context"
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

// Dial returns a sampler of the model called model on the server at
// o.BaseURL ("" picks the server's only model), set up from what GET
// /v1/models says: against rollout serve prompts and forks are sent as the
// character tokenizer's token ids and its vocabulary size bounds the
// entropy; against vLLM prompts and forks are text and tokens come back as
// ids (return_tokens_as_token_ids); against any other server everything is
// text. The caller sets the sampling fields (Temperature, TopP, MaxTokens,
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
			return nil, fmt.Errorf("%s serves %d models (%s): name one", c.URL(), len(models), strings.Join(names, ", "))
		}
		return nil, fmt.Errorf("%s does not serve the model %q (it serves: %s)", c.URL(), model, strings.Join(names, ", "))
	}
	s := &Sampler{Client: c, Model: m.ID, Temperature: 1, TopP: 1}
	switch strings.ToLower(m.OwnedBy) {
	case OwnedByRollout:
		tok := policy.DefaultTokenizer()
		s.PromptIDs, s.TokenIDs, s.Encode, s.Vocab = true, true, tok.EncodePrompt, tok.VocabSize()
	case OwnedByVLLM:
		s.TokenIDs = true
	}
	return s, nil
}
