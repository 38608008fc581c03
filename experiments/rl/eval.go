package rl

import (
	"fmt"
	"math"

	"github.com/rollout-rl/rollout/experiments/pretrain"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
)

// EvalResult is a held-out evaluation.
type EvalResult struct {
	Acc        float64 // greedy accuracy
	RewardMean float64 // mean reward of the samples
	PassAt1    float64 // mean over prompts of the share of correct samples
	PassAtK    float64 // unbiased pass@k
	MajAtK     float64 // majority vote over the first k samples
	Tokens     int64   // sampled tokens
}

// Metrics names the result as the store and reports do.
func (r EvalResult) Metrics() map[string]float64 {
	return map[string]float64{
		"eval/acc": r.Acc, "eval/reward_mean": r.RewardMean, "eval/pass@1": r.PassAt1,
		"eval/pass@k": r.PassAtK, "eval/maj@k": r.MajAtK, "eval/tokens": float64(r.Tokens),
	}
}

// Evaluate scores the model on the first cfg.Prompts eval-split prompts
// (those of cfg.ExcludeSeeds held out, cfg.Task): greedy decoding for
// accuracy, and cfg.Samples samples per prompt (with
// sampling, streams from seed) for the sampled metrics. It is an
// evaluation by a new Evaluator: a run that evaluates several times keeps
// one Evaluator instead, which gives the same results at a lower cost.
func Evaluate(m *policy.Model, tok *policy.Tokenizer, t task.Task, cfg EvalConfig, sampling policy.Sampling, seed uint64) (EvalResult, error) {
	var ev Evaluator
	return ev.Evaluate(m, tok, t, cfg, sampling, seed)
}

// Evaluator evaluates the successive policies of a run. Each evaluation
// samples from a new engine over the model's weights as they are then
// (after any number of optimizer steps or a restore), which takes over the
// scratch buffers of the previous evaluation's engine
// (policy.WithCachesFrom) instead of allocating them afresh: its results
// are those of Evaluate, bit for bit. Within an evaluation the batches of
// samples reuse one another's KV caches; between evaluations it holds none
// (policy.Engine.FreeCaches), only the scratch buffers. The zero value is ready to use; an Evaluator is used by one
// goroutine at a time.
type Evaluator struct {
	engine *policy.Engine // the last evaluation's, holding its released caches
}

// Evaluate scores the model as the package's Evaluate does.
func (ev *Evaluator) Evaluate(m *policy.Model, tok *policy.Tokenizer, t task.Task, cfg EvalConfig, sampling policy.Sampling, seed uint64) (EvalResult, error) {
	var r EvalResult
	if err := cfg.Validate(); err != nil {
		return r, err
	}
	t, err := cfg.Task(t)
	if err != nil {
		return r, fmt.Errorf("evaluate: %w", err)
	}
	e := policy.NewEngine(m, policy.WithCachesFrom(ev.engine))
	ev.engine = e
	acc, err := pretrain.GreedyAccuracy(e, tok, t, cfg.Prompts, seed)
	if err != nil {
		return r, err
	}
	r.Acc = acc
	prompts := make([]task.Prompt, cfg.Prompts)
	ids := make([][]int, cfg.Prompts)
	maxLen := 0
	for i := range prompts {
		p, err := t.Prompt(task.Eval, seed, i)
		if err != nil {
			return r, fmt.Errorf("evaluate: %w", err)
		}
		prompts[i] = p
		if ids[i], err = tok.EncodePrompt(p.Text); err != nil {
			return r, fmt.Errorf("evaluate: prompt %q: %w", p.Text, err)
		}
		maxLen = max(maxLen, len(ids[i])+t.MaxResponseLen()+1)
	}
	maxLen = min(maxLen, m.Config.MaxSeq)
	// The prompts' samples run in batches of at most policy.EvalBatch
	// states, whose caches the next batch reuses: a state's tokens do not
	// depend on the other states of its batch, so the results are those of
	// one batch of all, in a fraction of the memory.
	outs := make([][]policy.Token, 0, cfg.Prompts*cfg.Samples)
	per := max(1, policy.EvalBatch/cfg.Samples)
	for lo := 0; lo < cfg.Prompts; lo += per {
		batch, err := sampleEvalBatch(e, ids, lo, min(lo+per, cfg.Prompts), cfg.Samples, sampling, seed, maxLen)
		if err != nil {
			return r, err
		}
		outs = append(outs, batch...)
	}
	// Until the next evaluation the caches would only hold memory.
	e.FreeCaches()
	for i, p := range prompts {
		verdicts := make([]task.Verdict, cfg.Samples)
		correct := 0
		for j := range verdicts {
			toks := outs[i*cfg.Samples+j]
			r.Tokens += int64(len(toks))
			verdicts[j] = t.Verify(p, pretrain.Decode(tok, toks))
			r.RewardMean += verdicts[j].Reward
			if verdicts[j].Reward == 1 {
				correct++
			}
		}
		r.PassAt1 += float64(correct) / float64(cfg.Samples)
		r.PassAtK += PassAtK(cfg.Samples, correct, cfg.K)
		if v, ok := MajorityVote(verdicts[:cfg.K]); ok && v.Reward == 1 {
			r.MajAtK++
		}
	}
	n := float64(cfg.Prompts)
	r.RewardMean /= n * float64(cfg.Samples)
	r.PassAt1 /= n
	r.PassAtK /= n
	r.MajAtK /= n
	return r, nil
}

// sampleEvalBatch samples the evaluation's responses to prompts [lo, hi)
// (encoded in ids), samples of each, and releases their states.
func sampleEvalBatch(e *policy.Engine, ids [][]int, lo, hi, samples int, sampling policy.Sampling, seed uint64, maxLen int) ([][]policy.Token, error) {
	states := make([]policy.State, 0, (hi-lo)*samples)
	defer func() {
		for _, st := range states {
			st.Release()
		}
	}()
	for i := lo; i < hi; i++ {
		root, err := e.Prefill(ids[i], policy.Stream{Seed: seed, ID: uint64(i)})
		if err != nil {
			return nil, fmt.Errorf("evaluate: %w", err)
		}
		for j := 0; j < samples; j++ {
			st, err := root.Fork(len(ids[i]), policy.Stream{Seed: seed ^ 0xe7a1, ID: uint64(i*samples + j)})
			if err != nil {
				root.Release()
				return nil, fmt.Errorf("evaluate: %w", err)
			}
			states = append(states, st)
		}
		// The forks hold copies of the prompt's cache: the next prompt
		// reuses the root's.
		root.Release()
	}
	outs, err := policy.Complete(e, states, sampling, maxLen)
	if err != nil {
		return nil, fmt.Errorf("evaluate: %w", err)
	}
	return outs, nil
}

// PassAtK is the unbiased estimator of pass@k from n samples of which c
// are correct (Chen et al. 2021): 1 − C(n−c, k) / C(n, k).
func PassAtK(n, c, k int) float64 {
	if n-c < k {
		return 1
	}
	// C(n−c, k)/C(n, k) = Π_{i=n−c+1}^{n} (1 − k/i)
	p := 1.0
	for i := n - c + 1; i <= n; i++ {
		p *= 1 - float64(k)/float64(i)
	}
	return 1 - p
}

// MajorityVote returns the verdict of the most frequent non-empty answer
// (ties go to the answer seen first); ok is false when no verdict has an
// answer.
func MajorityVote(vs []task.Verdict) (task.Verdict, bool) {
	counts := map[string]int{}
	best, bestN := -1, 0
	for i, v := range vs {
		if v.Answer == "" {
			continue
		}
		counts[v.Answer]++
		if n := counts[v.Answer]; n > bestN || (n == bestN && firstIndex(vs, v.Answer) < firstIndex(vs, vs[best].Answer)) {
			best, bestN = i, n
		}
	}
	if best < 0 {
		return task.Verdict{}, false
	}
	return vs[best], true
}

func firstIndex(vs []task.Verdict, answer string) int {
	for i, v := range vs {
		if v.Answer == answer {
			return i
		}
	}
	return math.MaxInt
}
