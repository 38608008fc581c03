package reward_test

import (
	"context"
	"fmt"
	"log"

	"github.com/rollout-rl/rollout/experiments/pretrain"
	"github.com/rollout-rl/rollout/experiments/reward"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
)

// Example trains a reward model on the base policy's own samples, measures
// its held-out AUC, saves it and mixes its probability into the reward. (It
// pretrains a base policy first, which takes about a minute, so it is
// compiled but not run by go test.)
func Example() {
	ctx := context.Background()
	t, err := task.New("add", nil)
	if err != nil {
		log.Fatal(err)
	}
	pcfg := pretrain.DefaultConfig()
	pcfg.Steps = 600
	base, err := pretrain.Train(ctx, t, pcfg, nil)
	if err != nil {
		log.Fatal(err)
	}
	// Responses sampled at temperature 1 (4 to each of 4096 train prompts by
	// default), labelled by the verifier.
	train, _, err := reward.Collect(ctx, base.Model, base.Tokenizer, t, reward.CollectConfig{Split: task.Train})
	if err != nil {
		log.Fatal(err)
	}
	held, _, err := reward.Collect(ctx, base.Model, base.Tokenizer, t, reward.CollectConfig{Split: task.Eval, Prompts: 1024})
	if err != nil {
		log.Fatal(err)
	}
	rm, err := reward.NewModel(base.Model, base.Tokenizer) // a copy of the base policy with a scalar head
	if err != nil {
		log.Fatal(err)
	}
	if _, err := reward.Train(ctx, rm, train, reward.TrainConfig{}, func(s reward.Step) {
		if s.Step%400 == 0 {
			fmt.Printf("step %d: loss %.3f\n", s.Step, s.Loss)
		}
	}); err != nil {
		log.Fatal(err)
	}
	ev, err := rm.Evaluate(held)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("held-out AUC %.3f\n", ev.AUC)
	if err := reward.Save("rm-checkpoint", rm); err != nil {
		log.Fatal(err)
	}
	mix, err := reward.NewMixer(reward.Config{Verifier: 1, Model: 0.5}, t, rm)
	if err != nil {
		log.Fatal(err)
	}
	p, _ := t.Prompt(task.Eval, 0, 0)
	scored, err := mix.Score([]task.Prompt{p}, []string{p.Demo})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s → %s: reward %.2f\n", p.Text, p.Demo, scored[0].Reward)
}

// ExampleMixer mixes the verifier's reward with format and length shaping
// and the probability of a reward model (here an untrained one, which says
// ½ to everything).
func ExampleMixer() {
	t, err := task.New("add", task.AddParams{Digits: 3, Scratchpad: true}) // responses up to 13 characters
	if err != nil {
		log.Fatal(err)
	}
	body, err := policy.NewModel(policy.Config{VocabSize: 64, Dim: 16, Hidden: 32, Layers: 1, Heads: 2, KVHeads: 2, MaxSeq: 32, NormEps: 1e-5, RopeTheta: 10000}, 1)
	if err != nil {
		log.Fatal(err)
	}
	rm, err := reward.NewModel(body, policy.DefaultTokenizer())
	if err != nil {
		log.Fatal(err)
	}
	cfg := reward.DefaultConfig() // verifier: 1, model: 0, format: 0, length: 0
	cfg.Model, cfg.Format, cfg.Length = 0.2, 0.1, 0.13
	mix, err := reward.NewMixer(cfg, t, rm)
	if err != nil {
		log.Fatal(err)
	}
	p, err := t.ParsePrompt("123+456")
	if err != nil {
		log.Fatal(err)
	}
	responses := []string{"09 07 05=579", "=579", "09 07 05=578", "579"}
	scored, err := mix.Score([]task.Prompt{p, p, p, p}, responses)
	if err != nil {
		log.Fatal(err)
	}
	for i, s := range scored {
		fmt.Printf("%-14q %-12s verifier %.0f model %.1f format %.0f length %+.2f → %.3f\n",
			responses[i], s.Verdict.Reason, s.Terms.Verifier, s.Terms.Model, s.Terms.Format, s.Terms.Length, s.Reward)
	}
	// Output:
	// "09 07 05=579" correct      verifier 1 model 0.5 format 1 length -0.92 → 1.080
	// "=579"         correct      verifier 1 model 0.5 format 1 length -0.31 → 1.160
	// "09 07 05=578" wrong_answer verifier 0 model 0.5 format 1 length -0.92 → 0.080
	// "579"          parse_error  verifier 0 model 0.5 format 0 length -0.23 → 0.070
}

// ExampleAUC ranks three positives and two negatives: the positives win 5
// of the 6 pairs outright and tie one, which counts half.
func ExampleAUC() {
	auc, err := reward.AUC(
		[]float64{0.9, 0.8, 0.3, 0.3, 0.1},
		[]bool{true, true, true, false, false},
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%.4f\n", auc)
	// Output: 0.9167
}
