package reward

import (
	"context"
	"fmt"
	"math"

	"github.com/rollout-rl/rollout/experiments/pretrain"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
)

// Example is a response to a prompt with its verifier label.
type Example struct {
	Prompt   string      `json:"prompt"`
	Response string      `json:"response"`
	Label    bool        `json:"label"`  // the verifier's reward is 1
	Reason   task.Reason `json:"reason"` // the verifier's reason
}

// CollectConfig says which prompts Collect samples responses to, and how.
// The zero value of Prompts, Samples and Temperature means their default.
type CollectConfig struct {
	Split       task.Split // the prompts' split: task.Train for training data, task.Eval for held-out data
	First       int        // index of the first prompt in the split
	Prompts     int        // number of prompts, First… First+Prompts−1; default 4096
	Samples     int        // responses sampled per prompt; default 4
	Temperature float64    // sampling temperature; default 1
	Seed        uint64     // the task's prompt seed and the sampling streams' seed
}

// Defaults returns c with every zero field that has a default set to it.
func (c CollectConfig) Defaults() CollectConfig {
	if c.Prompts == 0 {
		c.Prompts = 4096
	}
	if c.Samples == 0 {
		c.Samples = 4
	}
	if c.Temperature == 0 {
		c.Temperature = 1
	}
	return c
}

// Validate reports the first setting out of range.
func (c CollectConfig) Validate() error {
	switch {
	case c.Split != task.Train && c.Split != task.Eval:
		return fmt.Errorf("collect: unknown split %d", c.Split)
	case c.First < 0:
		return fmt.Errorf("collect: first prompt index %d, want ≥ 0", c.First)
	case c.Prompts < 1:
		return fmt.Errorf("collect: prompts = %d, want ≥ 1", c.Prompts)
	case c.Samples < 1:
		return fmt.Errorf("collect: samples = %d, want ≥ 1", c.Samples)
	case !(c.Temperature > 0) || math.IsInf(c.Temperature, 0):
		return fmt.Errorf("collect: temperature = %g, want > 0", c.Temperature)
	}
	return nil
}

// CollectStats counts what Collect sampled.
type CollectStats struct {
	Samples   int // responses sampled
	Positives int // of the kept examples, those the verifier graded correct
	// Skipped responses cannot be read back as text: they hold a special
	// token other than the final EOS (the policy sampled BOS, SEP or PAD)
	// or fill the context without an EOS. The verifier grades such responses
	// bad_char or too_long anyway.
	Skipped int
}

// collectChunk is the number of prompts sampled together.
const collectChunk = 64

// Collect samples cfg.Samples responses from the base policy to each of
// cfg.Prompts prompts of a split, grades each with the task's verifier and
// returns them as examples (label: reward 1). Sampling is batched over
// prompts and deterministic in cfg; response i of prompt index k uses the
// stream (seed, k·Samples+i), so the examples of a prompt do not depend on
// which other prompts are collected with it.
func Collect(ctx context.Context, base *policy.Model, tok *policy.Tokenizer, t task.Task, cfg CollectConfig) ([]Example, CollectStats, error) {
	var stats CollectStats
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, stats, err
	}
	e := policy.NewEngine(base)
	sampling := policy.Sampling{Temperature: cfg.Temperature, TopP: 1}
	seed := cfg.Seed ^ uint64(cfg.Split+1)*0x9e3779b97f4a7c15 // train and eval draw different streams
	var out []Example
	for lo := 0; lo < cfg.Prompts; lo += collectChunk {
		if err := ctx.Err(); err != nil {
			return nil, stats, err
		}
		n := min(collectChunk, cfg.Prompts-lo)
		prompts := make([]task.Prompt, n)
		ids := make([][]int, n)
		maxLen := 0
		for i := range prompts {
			k := cfg.First + lo + i
			p, err := t.Prompt(cfg.Split, cfg.Seed, k)
			if err != nil {
				return nil, stats, fmt.Errorf("collect: %w", err)
			}
			prompts[i] = p
			if ids[i], err = tok.EncodePrompt(p.Text); err != nil {
				return nil, stats, fmt.Errorf("collect: prompt %q: %w", p.Text, err)
			}
			maxLen = max(maxLen, len(ids[i])+t.MaxResponseLen()+1)
		}
		maxLen = min(maxLen, base.Config.MaxSeq)
		roots, err := e.PrefillBatch(ids, make([]policy.Stream, n))
		if err != nil {
			return nil, stats, fmt.Errorf("collect: %w", err)
		}
		states := make([]policy.State, 0, n*cfg.Samples)
		for i, root := range roots {
			for j := 0; j < cfg.Samples; j++ {
				id := uint64((cfg.First+lo+i)*cfg.Samples + j)
				st, err := root.Fork(len(ids[i]), policy.Stream{Seed: seed, ID: id})
				if err != nil {
					return nil, stats, fmt.Errorf("collect: %w", err)
				}
				states = append(states, st)
			}
			root.Release()
		}
		toks, err := policy.Complete(e, states, sampling, maxLen)
		if err != nil {
			return nil, stats, fmt.Errorf("collect: %w", err)
		}
		for s, ts := range toks {
			states[s].Release()
			stats.Samples++
			p := prompts[s/cfg.Samples]
			if !readable(ts, len(ids[s/cfg.Samples]), base.Config.MaxSeq) {
				stats.Skipped++
				continue
			}
			response := pretrain.Decode(tok, ts)
			v := t.Verify(p, response)
			ex := Example{Prompt: p.Text, Response: response, Label: v.Reward == 1, Reason: v.Reason}
			if ex.Label {
				stats.Positives++
			}
			out = append(out, ex)
		}
	}
	return out, stats, nil
}

// readable reports whether sampled tokens are text followed by at most one
// EOS, and whether BOS prompt SEP text EOS fits in maxSeq positions.
func readable(ts []policy.Token, promptLen, maxSeq int) bool {
	n := len(ts)
	if n > 0 && ts[n-1].ID == policy.EOS {
		n--
	}
	for _, tk := range ts[:n] {
		if tk.ID < 4 {
			return false
		}
	}
	return promptLen+n+1 <= maxSeq
}

// Eval is how well a reward model separates correct from wrong responses.
type Eval struct {
	N         int     // examples
	Positives int     // examples labelled correct
	AUC       float64 // area under the ROC curve of the logits
	Accuracy  float64 // share on the right side of logit 0
	LogLoss   float64 // mean binary cross-entropy, in nats
}

// Evaluate scores the examples and measures the model on them. The AUC
// needs both labels among the examples.
func (m *Model) Evaluate(data []Example) (Eval, error) {
	if len(data) == 0 {
		return Eval{}, fmt.Errorf("evaluate reward model: no examples")
	}
	pairs := make([]Pair, len(data))
	labels := make([]bool, len(data))
	for i, ex := range data {
		pairs[i] = Pair{Prompt: ex.Prompt, Response: ex.Response}
		labels[i] = ex.Label
	}
	scores, err := m.Scores(pairs)
	if err != nil {
		return Eval{}, fmt.Errorf("evaluate reward model: %w", err)
	}
	ev := Eval{N: len(data)}
	right := 0
	for i, z := range scores {
		y := 0.0
		if labels[i] {
			ev.Positives++
			y = 1
		}
		if (z > 0) == labels[i] {
			right++
		}
		ev.LogLoss += bce(z, y) / float64(len(data))
	}
	ev.Accuracy = float64(right) / float64(len(data))
	if ev.AUC, err = AUC(scores, labels); err != nil {
		return ev, fmt.Errorf("evaluate reward model: %w", err)
	}
	return ev, nil
}
