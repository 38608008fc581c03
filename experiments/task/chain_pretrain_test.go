package task_test

import (
	"context"
	"testing"

	"github.com/rollout-rl/rollout/experiments/pretrain"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
)

// A short smoke pretraining on the chain task (two operations, responses
// of 17 characters in the real step format): within 100 steps the tiny
// policy learns the form of the steps (its greedy responses parse: the
// values and operations copied, the "=" and spaces in place) and the loss
// falls well below the untrained policy's. The arithmetic takes longer than
// a test may run: the accuracy band (39% greedy on the default 6-8
// operations after 1000 steps) is measured in results/treerl.md.
func TestChainPretrainSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("pretrains a policy")
	}
	tk, err := task.New("chain", task.ChainParams{MinOps: 2, MaxOps: 2})
	if err != nil {
		t.Fatal(err)
	}
	cfg := pretrain.DefaultConfig()
	cfg.Steps, cfg.BatchSize, cfg.LR, cfg.EvalPrompts, cfg.FlawedShare = 100, 16, 3e-3, 10, 0
	var first float64
	res, err := pretrain.Train(context.Background(), tk, cfg, func(s pretrain.Step) {
		if first == 0 {
			first = s.Loss
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	const n = 50
	ids := make([][]int, n)
	prompts := make([]task.Prompt, n)
	for i := range prompts {
		if prompts[i], err = tk.Prompt(task.Eval, 1, i); err != nil {
			t.Fatal(err)
		}
		if ids[i], err = res.Tokenizer.EncodePrompt(prompts[i].Text); err != nil {
			t.Fatal(err)
		}
	}
	e := policy.NewEngine(res.Model)
	states, err := e.PrefillBatch(ids, make([]policy.Stream, n))
	if err != nil {
		t.Fatal(err)
	}
	outs, err := policy.Complete(e, states, policy.Sampling{}, len(ids[0])+tk.MaxResponseLen()+1)
	if err != nil {
		t.Fatal(err)
	}
	parsed, correct := 0, 0
	for i, toks := range outs {
		switch tk.Verify(prompts[i], pretrain.Decode(res.Tokenizer, toks)).Reason {
		case task.Correct:
			correct++
			parsed++
		case task.WrongAnswer:
			parsed++
		}
	}
	t.Logf("loss %.3f → %.3f; %d of %d greedy responses well formed, %d correct; %s", first, res.Loss, parsed, n, correct, res.Duration)
	if res.Loss > first/4 {
		t.Errorf("loss fell from %.3f to %.3f only", first, res.Loss)
	}
	if parsed < n*8/10 {
		t.Errorf("%d of %d greedy responses well formed, want ≥ 80%%", parsed, n)
	}
}
