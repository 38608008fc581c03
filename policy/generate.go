package policy

import "fmt"

// EvalBatch is the most states an evaluation decodes at once: enough to
// fill the engine's products (batch-64 decoding runs at several times the
// batch-1 rate), few enough that their caches stay small whatever the
// number of prompts; the states of the next batch reuse them.
const EvalBatch = 128

// Complete steps every state, all in one batch, until each has sampled EOS
// or holds maxLen tokens, and returns the tokens each sampled (EOS
// included). States that are already done are not stepped.
func Complete(s Sampler, states []State, cfg Sampling, maxLen int) ([][]Token, error) {
	out := make([][]Token, len(states))
	live := make([]int, 0, len(states))
	for i, st := range states {
		if len(st.Tokens()) < maxLen {
			live = append(live, i)
		}
	}
	batch := make([]State, 0, len(live))
	toks := make([]Token, len(live))
	for len(live) > 0 {
		batch = batch[:0]
		for _, i := range live {
			batch = append(batch, states[i])
		}
		if err := s.Step(batch, cfg, toks[:len(batch)]); err != nil {
			return nil, fmt.Errorf("complete: %w", err)
		}
		next := live[:0]
		for j, i := range live {
			out[i] = append(out[i], toks[j])
			if toks[j].ID != EOS && len(states[i].Tokens()) < maxLen {
				next = append(next, i)
			}
		}
		live = next
	}
	return out, nil
}

// Sample is one sampled response: its token ids and per-token outcomes.
type Sample struct {
	IDs    []int
	Tokens []Token
}

// Generate forks n children from root at its end, each with its own stream
// (seed, child index), and completes them together up to maxLen tokens.
func Generate(s Sampler, root State, n int, cfg Sampling, seed uint64, maxLen int) ([]Sample, error) {
	states := make([]State, n)
	for i := range states {
		st, err := root.Fork(len(root.Tokens()), Stream{Seed: seed, ID: uint64(i)})
		if err != nil {
			return nil, fmt.Errorf("generate: %w", err)
		}
		states[i] = st
	}
	toks, err := Complete(s, states, cfg, maxLen)
	if err != nil {
		return nil, err
	}
	out := make([]Sample, n)
	for i, ts := range toks {
		for _, t := range ts {
			out[i].IDs = append(out[i].IDs, t.ID)
		}
		out[i].Tokens = ts
		states[i].Release()
	}
	return out, nil
}
