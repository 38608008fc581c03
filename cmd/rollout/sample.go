package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/search"
)

func newSampleCmd() *cobra.Command {
	var ckpt, taskName, cfgPath, strategy, prompt, advantage string
	var sets []string
	var budget int64
	var seed uint64
	var format string
	sampling := policy.DefaultSampling
	cmd := &cobra.Command{
		Use:   "sample --checkpoint DIR --task TASK --strategy NAME [--param key=value]... [--budget TOKENS] [--seed S] [--format text|json]",
		Short: "Run one rollout group on one prompt and print its tree",
		Long: `Runs one group of the strategy on one prompt (--prompt, or the task's first eval
prompt for --seed), grades every leaf with the task's verifier, computes advantages and
prints the tree: indentation per fork, the fork score at each fork, leaf text and reward.
--param gives strategy parameters (flat: n; entropy_tree: m, n, l, t, score; random_tree:
m, n, l, t; segment_tree: s, b, w).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			params := map[string]string{}
			for _, s := range sets {
				k, v, ok := strings.Cut(s, "=")
				if !ok {
					return usageError{fmt.Errorf("--param %q: want key=value", s)}
				}
				params[k] = v
			}
			st, err := search.NewStrategy(strategy, params)
			if err != nil {
				return usageError{fmt.Errorf("--strategy: %w", err)}
			}
			est, err := search.ByName(advantage)
			if err != nil {
				return usageError{fmt.Errorf("--advantage: %w", err)}
			}
			if format != "text" && format != "json" {
				return usageError{fmt.Errorf("--format %q: want text or json", format)}
			}
			if err := sampling.Validate(); err != nil {
				return usageError{err}
			}
			t, err := taskFromFlags(cmd, taskName, cfgPath)
			if err != nil {
				return err
			}
			if ckpt == "" {
				return usageError{fmt.Errorf("--checkpoint: a checkpoint directory is required")}
			}
			m, tok, err := loadCheckpoint("--checkpoint", ckpt)
			if err != nil {
				return err
			}
			var p task.Prompt
			if prompt != "" {
				p, err = t.ParsePrompt(prompt)
			} else {
				p, err = t.Prompt(task.Eval, seed, 0)
			}
			if err != nil {
				return usageError{fmt.Errorf("--prompt: %w", err)}
			}
			ids, err := tok.EncodePrompt(p.Text)
			if err != nil {
				return usageError{fmt.Errorf("--prompt: %w", err)}
			}
			req := search.Request{
				Prompts:  []search.Prompt{{Tokens: ids, AnswerStart: rl.AnswerStart(t, tok, p)}},
				Sampler:  policy.NewEngine(m),
				Sampling: sampling, EOS: []int{policy.EOS}, MaxTokens: t.MaxResponseLen() + 1,
				Budget: budget, Seed: seed, FLOPs: m.Config.ForwardFLOPs,
			}
			groups, err := st.Generate(cmd.Context(), req)
			if err != nil {
				return usageError{err}
			}
			g := groups[0]
			if err := rl.Score(t, nil, tok, p, g, est); err != nil {
				return err
			}
			rec := rl.ScoredGroup{Group: g, Prompt: p}.Record(tok)
			if format == "json" {
				return rec.WriteJSON(cmd.OutOrStdout())
			}
			return rec.WriteText(cmd.OutOrStdout(), tok.DisplayText)
		},
	}
	f := cmd.Flags()
	f.StringVar(&ckpt, "checkpoint", "", "policy checkpoint directory")
	f.StringVar(&taskName, "task", "add", "task: add, countdown, path (with its default parameters)")
	f.StringVar(&cfgPath, "config", "", "take the task and its parameters from this experiment config instead of --task")
	f.StringVar(&strategy, "strategy", "entropy_tree", "flat, entropy_tree, random_tree, segment_tree")
	f.StringArrayVar(&sets, "param", nil, "strategy parameter key=value (repeatable)")
	f.StringVar(&prompt, "prompt", "", "prompt text (default: the task's first eval prompt)")
	f.StringVar(&advantage, "advantage", "grpo", "advantage estimator for the leaves")
	f.Int64Var(&budget, "budget", 0, "per-prompt generated-token budget (0: none)")
	f.Uint64Var(&seed, "seed", 1, "seed of the random streams")
	f.StringVar(&format, "format", "text", "text (an indented tree) or json (one object)")
	f.Float64Var(&sampling.Temperature, "temperature", 1, "sampling temperature")
	f.IntVar(&sampling.TopK, "top-k", 0, "top-k (0: off)")
	f.Float64Var(&sampling.TopP, "top-p", 1, "top-p (1: off)")
	return cmd
}
