package rl

import (
	"context"
	"fmt"
	"maps"
	"strconv"

	"github.com/rollout-rl/rollout/experiments/reward"
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
	// Method is best_of_n (by the scorer), majority, oracle (best-of-N by
	// the verifier, reported only beside a scorer), and tree_best,
	// tree_majority, tree_oracle over the leaves of an entropy tree.
	Method string  `json:"method"`
	N      int     `json:"n"`      // candidates per prompt asked for (leaves for trees)
	Tokens float64 `json:"tokens"` // mean generated tokens per prompt
	// Candidates is the mean number of candidates per prompt: N for flat
	// sampling, at most N for a tree (a response that ends before its
	// fork point does not fork).
	Candidates float64 `json:"candidates"`
	Acc        float64 `json:"acc"` // share of prompts whose selected answer is correct
	// ScorerAUC is how well the scorer orders one prompt's candidates:
	// the mean, over prompts with right and wrong candidates, of PairAUC
	// (0 when no prompt has both). The same for every method of one set
	// of candidates; 1 for the verifier.
	ScorerAUC float64 `json:"scorer_auc"`
}

// TTCConfig selects the test-time compute sweep.
type TTCConfig struct {
	Prompts  int   // eval-split prompts
	Ns       []int // candidates per prompt, e.g. 1, 2, 4, 8, 16
	Sampling policy.Sampling
	Seed     uint64
	// Scorer picks best-of-N; nil uses the verifier's reward (an oracle
	// upper bound). With a scorer, the verifier's choice among the same
	// candidates is reported too (methods oracle and tree_oracle).
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
	flat := ttcMethods{best: "best_of_n", majority: "majority"}
	tree := ttcMethods{best: "tree_best", majority: "tree_majority"}
	if cfg.Scorer != nil {
		flat.oracle, tree.oracle = "oracle", "tree_oracle"
	}
	var out []TTCPoint
	for _, n := range cfg.Ns {
		if n < 1 {
			return nil, fmt.Errorf("test-time compute: N = %d, want ≥ 1", n)
		}
		flatN, err := search.NewStrategy("flat", map[string]string{"n": strconv.Itoa(n)})
		if err != nil {
			return nil, fmt.Errorf("test-time compute: %w", err)
		}
		groups, err := run(flatN)
		if err != nil {
			return nil, fmt.Errorf("test-time compute: %w", err)
		}
		pts, err := tallyTTC(t, prompts, groups, text, score, flat, n)
		if err != nil {
			return nil, fmt.Errorf("test-time compute: best-of-%d: %w", n, err)
		}
		out = append(out, pts...)
		if cfg.Tree == nil {
			continue
		}
		st, err := cfg.Tree(n)
		if err != nil {
			continue // no tree shape with n leaves
		}
		if groups, err = run(st); err != nil {
			return nil, fmt.Errorf("test-time compute: %w", err)
		}
		if pts, err = tallyTTC(t, prompts, groups, text, score, tree, n); err != nil {
			return nil, fmt.Errorf("test-time compute: tree with %d leaves: %w", n, err)
		}
		out = append(out, pts...)
	}
	return out, nil
}

// ttcMethods names the points one set of candidates gives: best-of-N by
// the scorer, majority vote and, when named, best-of-N by the verifier
// (the oracle, reported beside a learned scorer's choice).
type ttcMethods struct{ best, majority, oracle string }

// tallyTTC verifies and scores the candidates of groups (groups[i]
// answers prompts[i]) and returns one point per named method: the share
// of prompts whose chosen candidate is correct, at the mean generated
// tokens and candidates per prompt.
func tallyTTC(t task.Task, prompts []task.Prompt, groups []*search.Group, text func([]int) string, score Scorer, m ttcMethods, n int) ([]TTCPoint, error) {
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
		return nil, fmt.Errorf("score %d candidates: %w", len(texts), err)
	}
	if len(scores) != len(texts) {
		return nil, fmt.Errorf("score %d candidates: %d scores", len(texts), len(scores))
	}
	var correct Selected
	var aucSum float64
	aucN, k := 0, 0
	for _, vs := range verdicts {
		correct = correct.Add(Select(vs, scores[k:k+len(vs)]))
		if auc, ok := PairAUC(vs, scores[k:k+len(vs)]); ok {
			aucSum, aucN = aucSum+auc, aucN+1
		}
		k += len(vs)
	}
	np := float64(len(groups))
	at := TTCPoint{N: n, Tokens: float64(tokens) / np, Candidates: float64(len(texts)) / np}
	if aucN > 0 {
		at.ScorerAUC = aucSum / float64(aucN)
	}
	var out []TTCPoint
	for _, c := range []struct {
		name  string
		count int
	}{{m.best, correct.Best}, {m.majority, correct.Majority}, {m.oracle, correct.Oracle}} {
		if c.name != "" {
			p := at
			p.Method, p.Acc = c.name, float64(c.count)/np
			out = append(out, p)
		}
	}
	return out, nil
}

// Selected counts correct choices of the three selection rules.
type Selected struct {
	// Best: the candidate with the highest score (the first of equals).
	Best int
	// Majority: the most frequent answer (MajorityVote).
	Majority int
	// Oracle: the candidate with the highest verifier reward.
	Oracle int
}

// Add returns the sum of two counts.
func (s Selected) Add(o Selected) Selected {
	return Selected{Best: s.Best + o.Best, Majority: s.Majority + o.Majority, Oracle: s.Oracle + o.Oracle}
}

// Select applies the selection rules to one prompt's candidates, their
// verdicts vs and scores (scores[i] is vs[i]'s; higher is better), and
// returns 1 for each rule whose choice is correct (reward 1), else 0. No
// candidate, or no candidate with an answer for the majority, chooses
// nothing (0).
func Select(vs []task.Verdict, scores []float64) Selected {
	var s Selected
	if best := argmax(len(vs), func(i int) float64 { return scores[i] }); best >= 0 && vs[best].Reward == 1 {
		s.Best = 1
	}
	if o := argmax(len(vs), func(i int) float64 { return vs[i].Reward }); o >= 0 && vs[o].Reward == 1 {
		s.Oracle = 1
	}
	if v, ok := MajorityVote(vs); ok && v.Reward == 1 {
		s.Majority = 1
	}
	return s
}

// PairAUC is the share of (right, wrong) pairs of one prompt's
// candidates that the scores order right (a right candidate scored above
// a wrong one; equal scores count half), and whether there is such a
// pair. Right means reward 1.
func PairAUC(vs []task.Verdict, scores []float64) (float64, bool) {
	right := make([]bool, len(vs))
	for i, v := range vs {
		right[i] = v.Reward == 1
	}
	return reward.PairAUC(right, scores)
}

// argmax is the first index of the largest of f(0), …, f(n−1), or −1 when
// n is 0.
func argmax(n int, f func(int) float64) int {
	best, bestV := -1, 0.0
	for i := range n {
		if v := f(i); best < 0 || v > bestV {
			best, bestV = i, v
		}
	}
	return best
}

// TreeWithLeaves returns an entropy tree with n leaves per prompt,
// M·(1 + N·T) with T = 1, L = 1: N = 2 when n is divisible by 3, else
// N = 3 when n is divisible by 4 (4, 8, 16, …), else an error.
func TreeWithLeaves(n int) (search.Strategy, error) {
	for _, forks := range []string{"2", "3"} {
		params := map[string]string{"n": forks, "l": "1", "t": "1", "score": string(search.ScoreEntropy)}
		if st, err := StrategyWithLeaves("entropy_tree", params, "m", n); err == nil {
			return st, nil
		}
	}
	return nil, fmt.Errorf("no entropy tree (N=2 or 3, T=1, L=1) has %d leaves: want a multiple of 3 or 4", n)
}

// StrategyWithLeaves returns the registered strategy name with params
// and its key roots (entropy_tree's m) set so that it has n leaves per
// prompt: a multiple of its leaves with roots = 1, else an error. A
// strategy registered by another package works as a built-in one does.
func StrategyWithLeaves(name string, params map[string]string, roots string, n int) (search.Strategy, error) {
	with := func(r int) (search.Strategy, error) {
		p := maps.Clone(params)
		if p == nil {
			p = map[string]string{}
		}
		p[roots] = strconv.Itoa(r)
		return search.NewStrategy(name, p)
	}
	one, err := with(1)
	if err != nil {
		return nil, err
	}
	per := one.Leaves()
	if n < 1 || per < 1 || n%per != 0 {
		return nil, fmt.Errorf("%s has %d leaves a prompt per %s: %d leaves is not a multiple", name, per, roots, n)
	}
	st, err := with(n / per)
	if err != nil {
		return nil, err
	}
	if st.Leaves() != n {
		return nil, fmt.Errorf("%s with %s = %d has %d leaves a prompt, want %d: its leaves do not grow with %s", name, roots, n/per, st.Leaves(), n, roots)
	}
	return st, nil
}
