package rl

import (
	"context"
	"fmt"

	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/search"
	"github.com/rollout-rl/rollout/search/remote"
)

// Scorer scores responses for best-of-N selection: scores[i] is the score
// of responses[i] to prompts[i] (a reward model's logit, or the verifier's
// reward); higher is better. MeasureTTC calls it once per sweep point with
// every candidate of every prompt, so that a model can score them all in
// batched forwards (reward.Model.SelectionScores does).
type Scorer func(prompts []task.Prompt, responses []string) ([]float64, error)

// TTCPoint is one point of an accuracy-against-compute curve of test-time
// compute: a selection method at N candidates per prompt.
type TTCPoint struct {
	Method string  `json:"method"` // best_of_n, majority, tree_majority, tree_best
	N      int     `json:"n"`      // candidates per prompt (leaves for trees)
	Tokens float64 `json:"tokens"` // mean generated tokens per prompt
	Acc    float64 `json:"acc"`    // share of prompts whose selected answer is correct
}

// TTCConfig selects the test-time compute sweep.
type TTCConfig struct {
	Prompts  int   // eval-split prompts
	Ns       []int // candidates per prompt, e.g. 1, 2, 4, 8, 16
	Sampling policy.Sampling
	Seed     uint64
	// Scorer picks best-of-N; nil uses the verifier's reward (an oracle
	// upper bound).
	Scorer Scorer
	// Tree makes the tree candidates: an entropy tree whose leaves number
	// N (M = N/(1+N_fork·T) roots); nil skips the tree methods.
	Tree func(n int) (search.Strategy, error)
}

// MeasureTTC measures accuracy against generated tokens for best-of-N,
// majority vote and (when cfg.Tree is set) tree search at answer time, on
// the first cfg.Prompts eval prompts.
func MeasureTTC(ctx context.Context, m *policy.Model, tok *policy.Tokenizer, t task.Task, cfg TTCConfig) ([]TTCPoint, error) {
	setup := Setup{Task: t, Tokenizer: tok, Policy: m, Sampling: cfg.Sampling, Seed: cfg.Seed}
	prompts, indices, err := ttcPrompts(t, cfg)
	if err != nil {
		return nil, err
	}
	run := func(st search.Strategy) ([]*search.Group, error) {
		req, err := setup.Request(0, prompts, indices)
		if err != nil {
			return nil, err
		}
		return st.Generate(ctx, req)
	}
	return measureTTC(t, cfg, prompts, run, tok.ResponseText)
}

// MeasureRemoteTTC is MeasureTTC for a policy behind a completions server:
// s's sampling settings are cfg.Sampling's (top-k is refused: the
// completions API has none), its responses are at most the task's longest
// response and one token more, and its seed and step cfg.Seed and 0.
func MeasureRemoteTTC(ctx context.Context, s *remote.Sampler, t task.Task, cfg TTCConfig) ([]TTCPoint, error) {
	if cfg.Sampling.TopK > 0 {
		return nil, fmt.Errorf("test-time compute: top-k %d: a completions server takes temperature and top-p only", cfg.Sampling.TopK)
	}
	prompts, indices, err := ttcPrompts(t, cfg)
	if err != nil {
		return nil, err
	}
	s.Temperature, s.TopP = cfg.Sampling.Temperature, cfg.Sampling.TopP
	s.MaxTokens, s.Seed, s.Step = t.MaxResponseLen()+1, cfg.Seed, 0
	rps := RemotePrompts(t, prompts, indices)
	run := func(st search.Strategy) ([]*search.Group, error) { return s.Generate(ctx, st, rps) }
	return measureTTC(t, cfg, prompts, run, s.Text)
}

// RemotePrompts turns task prompts into prompts of a remote sampler, with
// ids[i] seeding prompts[i]'s requests and the task's answer start.
func RemotePrompts(t task.Task, prompts []task.Prompt, ids []int) []remote.Prompt {
	out := make([]remote.Prompt, len(prompts))
	for i, p := range prompts {
		out[i] = remote.Prompt{Text: p.Text, ID: uint64(ids[i]), AnswerStart: func(r string) int { return t.AnswerStart(p, r) }}
	}
	return out
}

// ttcPrompts are the first cfg.Prompts eval prompts and their indices.
func ttcPrompts(t task.Task, cfg TTCConfig) ([]task.Prompt, []int, error) {
	setup := Setup{Task: t, Seed: cfg.Seed}
	indices := make([]int, cfg.Prompts)
	for i := range indices {
		indices[i] = i
	}
	prompts, err := setup.Prompts(task.Eval, indices)
	if err != nil {
		return nil, nil, fmt.Errorf("test-time compute: %w", err)
	}
	return prompts, indices, nil
}

// measureTTC runs the sweep with run making the groups of a strategy and
// text giving a response's text.
func measureTTC(t task.Task, cfg TTCConfig, prompts []task.Prompt, run func(search.Strategy) ([]*search.Group, error), text func([]int) string) ([]TTCPoint, error) {
	score := cfg.Scorer
	if score == nil {
		score = func(ps []task.Prompt, rs []string) ([]float64, error) {
			out := make([]float64, len(rs))
			for i, r := range rs {
				out[i] = t.Verify(ps[i], r).Reward
			}
			return out, nil
		}
	}
	// tally appends, for each method named in methods, the share of prompts
	// whose chosen candidate is correct.
	tally := func(groups []*search.Group, methods map[string]string, n int, out *[]TTCPoint) error {
		var tokens int64
		var candPrompts []task.Prompt
		var texts []string
		verdicts := make([][]task.Verdict, len(groups))
		for i, g := range groups {
			tokens += g.Usage.GeneratedTokens
			for _, leaf := range g.Leaves() {
				resp := text(leaf.Response())
				verdicts[i] = append(verdicts[i], t.Verify(prompts[i], resp))
				candPrompts = append(candPrompts, prompts[i])
				texts = append(texts, resp)
			}
		}
		scores, err := score(candPrompts, texts)
		if err != nil {
			return fmt.Errorf("score %d candidates: %w", len(texts), err)
		}
		if len(scores) != len(texts) {
			return fmt.Errorf("score %d candidates: %d scores", len(texts), len(scores))
		}
		correct := map[string]int{}
		k := 0
		for _, vs := range verdicts {
			best, bestScore := -1, 0.0
			for j := range vs {
				if s := scores[k+j]; best < 0 || s > bestScore {
					best, bestScore = j, s
				}
			}
			k += len(vs)
			if methods["best"] != "" && best >= 0 && vs[best].Reward == 1 {
				correct[methods["best"]]++
			}
			if v, ok := MajorityVote(vs); ok && methods["majority"] != "" && v.Reward == 1 {
				correct[methods["majority"]]++
			}
		}
		for _, name := range []string{methods["best"], methods["majority"]} {
			if name != "" {
				*out = append(*out, TTCPoint{Method: name, N: n, Tokens: float64(tokens) / float64(len(groups)), Acc: float64(correct[name]) / float64(len(groups))})
			}
		}
		return nil
	}
	var out []TTCPoint
	for _, n := range cfg.Ns {
		if n < 1 {
			return nil, fmt.Errorf("test-time compute: N = %d, want ≥ 1", n)
		}
		groups, err := run(search.Flat{N: n})
		if err != nil {
			return nil, fmt.Errorf("test-time compute: %w", err)
		}
		if err := tally(groups, map[string]string{"best": "best_of_n", "majority": "majority"}, n, &out); err != nil {
			return nil, fmt.Errorf("test-time compute: best-of-%d: %w", n, err)
		}
		if cfg.Tree != nil {
			st, err := cfg.Tree(n)
			if err != nil {
				continue // no tree shape with n leaves
			}
			groups, err := run(st)
			if err != nil {
				return nil, fmt.Errorf("test-time compute: %w", err)
			}
			if err := tally(groups, map[string]string{"best": "tree_best", "majority": "tree_majority"}, n, &out); err != nil {
				return nil, fmt.Errorf("test-time compute: tree with %d leaves: %w", n, err)
			}
		}
	}
	return out, nil
}

// TreeWithLeaves returns an entropy tree with n leaves per prompt when
// n = M·(1 + N·T) has a solution with N = 2, T = 1, L = 1 (n divisible by
// 3), else an error.
func TreeWithLeaves(n int) (search.Strategy, error) {
	if n%3 != 0 {
		return nil, fmt.Errorf("no entropy tree (N=2, T=1, L=1) has %d leaves", n)
	}
	return search.NewStrategy("entropy_tree", map[string]string{"m": fmt.Sprint(n / 3), "n": "2", "l": "1", "t": "1"})
}
