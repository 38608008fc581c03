package reward

import (
	"fmt"
	"math"

	"github.com/rollout-rl/rollout/experiments/config/field"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/search/record"
)

// Config is the weights of the reward's terms (config key "reward"):
//
//	reward = verifier·V + model·M + format·F + length·L
//
// where, for one response,
//
//   - V is the verifier's reward, in [0, 1];
//   - M is the reward model's probability that the response is correct,
//     sigmoid(score), in (0, 1); a response the reward model cannot read (a
//     character outside its alphabet, or too long for its context) gets 0;
//   - F is 1 when the response is well formed — the verifier's reason is not
//     a format failure (parse_error, bad_char, empty, too_long; see
//     IsFormatFailure) — and 0 otherwise;
//   - L is the length shaping term −min(len, max)/max, in [−1, 0], with len
//     the response's length in characters and max the task's
//     MaxResponseLen: with a positive weight, shorter responses score higher.
//
// Zero is a meaningful weight (the term is off), so a loader decodes into
// DefaultConfig() and keys left out keep their defaults: verifier 1, the
// rest 0 — the verifier's reward alone.
type Config struct {
	Verifier float64 `yaml:"verifier" json:"verifier"`
	Model    float64 `yaml:"model" json:"model"`
	Format   float64 `yaml:"format" json:"format"`
	Length   float64 `yaml:"length" json:"length"`
}

// DefaultConfig is the verifier's reward alone.
func DefaultConfig() Config { return Config{Verifier: 1} }

// Validate reports the first bad weight as a *field.Error naming its key: every weight must
// be finite and non-negative (the length term is already a penalty), and
// the verifier or the model must have a positive weight, since nothing else
// rewards a correct answer.
func (c Config) Validate() error {
	for _, w := range []struct {
		key string
		v   float64
	}{{"verifier", c.Verifier}, {"model", c.Model}, {"format", c.Format}, {"length", c.Length}} {
		if math.IsNaN(w.v) || math.IsInf(w.v, 0) || w.v < 0 {
			return &field.Error{Key: "reward." + w.key, Value: w.v, Msg: "want a finite weight ≥ 0"}
		}
	}
	if c.Verifier == 0 && c.Model == 0 {
		return &field.Error{Key: "reward.verifier", Value: c.Verifier, Msg: "as is reward.model: set one of them > 0, or nothing rewards a correct answer"}
	}
	return nil
}

// IsFormatFailure reports whether a verifier's reason says the response is
// malformed rather than wrong: parse_error, bad_char, empty or too_long.
func IsFormatFailure(r task.Reason) bool {
	switch r {
	case task.ParseError, task.BadChar, task.Empty, task.TooLong:
		return true
	}
	return false
}

// Terms are the unweighted terms of one response's reward (see Config).
type Terms struct {
	Verifier float64 `json:"verifier"`
	Model    float64 `json:"model"` // 0 when the model weight is 0 (not computed)
	Format   float64 `json:"format"`
	Length   float64 `json:"length"`
}

// Record returns the terms in the form package record keeps them, in the
// order verifier, model, format, length.
func (t Terms) Record() []record.Term {
	return []record.Term{{Name: "verifier", Value: t.Verifier}, {Name: "model", Value: t.Model}, {Name: "format", Value: t.Format}, {Name: "length", Value: t.Length}}
}

// Scored is one response's reward, its terms and the verifier's verdict.
type Scored struct {
	Reward  float64      `json:"reward"`
	Terms   Terms        `json:"terms"`
	Verdict task.Verdict `json:"verdict"`
}

// Mixer computes mixed rewards for a task.
type Mixer struct {
	cfg   Config
	task  task.Task
	model *Model
}

// NewMixer returns a mixer of the configured terms. rm is the reward model;
// it may be nil when cfg.Model is 0.
func NewMixer(cfg Config, t task.Task, rm *Model) (*Mixer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if t == nil {
		return nil, fmt.Errorf("reward mixer: no task")
	}
	if cfg.Model != 0 && rm == nil {
		return nil, fmt.Errorf("reward.model = %g needs a trained reward model, and none was given", cfg.Model)
	}
	if cfg.Model != 0 && rm.Scoring != HeadScore {
		return nil, fmt.Errorf("reward.model = %g: the reward model scores by %s, not a probability", cfg.Model, rm.Scoring)
	}
	return &Mixer{cfg: cfg, task: t, model: rm}, nil
}

// Config returns the mixer's weights.
func (m *Mixer) Config() Config { return m.cfg }

// Score grades response i as an answer to prompt i, for every i; the
// reward model scores all readable responses in batches.
func (m *Mixer) Score(prompts []task.Prompt, responses []string) ([]Scored, error) {
	if len(prompts) != len(responses) {
		return nil, fmt.Errorf("reward mixer: %d prompts, %d responses", len(prompts), len(responses))
	}
	out := make([]Scored, len(responses))
	maxLen := max(m.task.MaxResponseLen(), 1)
	for i, r := range responses {
		v := m.task.Verify(prompts[i], r)
		s := &out[i]
		s.Verdict = v
		s.Terms.Verifier = v.Reward
		if !IsFormatFailure(v.Reason) {
			s.Terms.Format = 1
		}
		s.Terms.Length = -float64(min(len(r), maxLen)) / float64(maxLen)
	}
	if m.cfg.Model != 0 {
		var seqs [][]int
		var at []int
		for i, r := range responses {
			ids, err := m.model.Encode(prompts[i].Text, r)
			if err != nil {
				continue // unreadable: the model term stays 0
			}
			seqs = append(seqs, ids)
			at = append(at, i)
		}
		if len(seqs) > 0 {
			logits, err := m.model.ScoreTokens(seqs)
			if err != nil {
				return nil, fmt.Errorf("reward mixer: %w", err)
			}
			for j, z := range logits {
				out[at[j]].Terms.Model = Sigmoid(z)
			}
		}
	}
	for i := range out {
		t := out[i].Terms
		out[i].Reward = float64(m.cfg.Verifier*t.Verifier) + float64(m.cfg.Model*t.Model) + float64(m.cfg.Format*t.Format) + float64(m.cfg.Length*t.Length)
	}
	return out, nil
}

// ScoringFLOPs is the forward FLOPs the mixer's reward model spends on
// Score(prompts, responses): 0 without the model term, else ScoreFLOPs of
// every readable pair's token sequence.
func (m *Mixer) ScoringFLOPs(prompts []task.Prompt, responses []string) int64 {
	if m == nil || m.cfg.Model == 0 {
		return 0
	}
	var n int64
	for i, r := range responses {
		if ids, err := m.model.Encode(prompts[i].Text, r); err == nil {
			n += m.model.ScoreFLOPs(len(ids))
		}
	}
	return n
}

// MaxScoringFLOPs bounds ScoringFLOPs of one response of at most
// responseChars characters to a prompt of at most promptChars: 0 without
// the model term.
func (m *Mixer) MaxScoringFLOPs(promptChars, responseChars int) int64 {
	if m == nil || m.cfg.Model == 0 {
		return 0
	}
	return m.model.ScoreFLOPs(min(promptChars+responseChars+3, m.model.Body.Config.MaxSeq))
}
