package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/experiments/reward"
	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/experiments/rmquality"
	"github.com/rollout-rl/rollout/experiments/runner"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/team"
)

func newRMQualityCmd() *cobra.Command {
	var sets []string
	var cache, out, dir, scoring string
	var cfg rmquality.Config
	var ns []int
	var seeds []uint
	cmd := &cobra.Command{
		Use:   "rm-quality CONFIG --checkpoints DIR [--out FILE] [--steps 1500] [--every 250] [--near-misses K] [--n 1,2,4,8,16] [--seeds 1,2,3,4,5]",
		Short: "Best-of-N over reward-model quality: a ranking reward model's checkpoints, their within-prompt AUC and best-of-N accuracy",
		Long: `Trains a reward model to order one prompt's candidates (a pairwise Bradley–Terry loss over
the right and wrong samples the config's base policy drew for the same train prompt), keeps a
checkpoint every --every steps in --checkpoints DIR with its within-prompt AUC on held-out
prompts, then measures best-of-N at answer time with each checkpoint as the selector (the base
policy's candidates on the config's eval prompts, one sweep per seed, as rollout ttc does).
Prints (or writes to --out) the markdown report; the test-time compute report is untouched.
With --evaluate the checkpoints already in DIR are measured again without training;
--measure-steps limits the answer-time sweeps to some checkpoints. --near-misses K adds hard
negatives (a right candidate with one character changed, graded wrong by the verifier);
--validation measures the AUC on train-split prompts past those trained on (a pilot's
validation set) instead of the eval split.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				return usageError{fmt.Errorf("--checkpoints: a directory for the reward model's checkpoints is required")}
			}
			f, err := loadConfig(args[0], sets)
			if err != nil {
				return err
			}
			cacheRoot, err := cacheDir(cache)
			if err != nil {
				return err
			}
			c := f.Variants[0].Config
			cfg.TTC = rl.TTCConfig{Prompts: c.Eval.Prompts, Ns: ns, Sampling: c.Rollout.Sampling()}
			cfg.Seeds = nil
			for _, s := range seeds {
				cfg.Seeds = append(cfg.Seeds, uint64(s))
			}
			if cfg.Scoring, err = reward.ParseScoring(scoring); err != nil {
				return usageError{fmt.Errorf("--scoring: %w", err)}
			}
			if err := cfg.Validate(); err != nil {
				return usageError{err}
			}
			t, err := task.New(c.Task.Name, c.Task.Params)
			if err != nil {
				return usageError{err}
			}
			base, err := runner.BasePolicy(cmd.Context(), c, cacheRoot, nil)
			if err != nil {
				return err
			}
			m, tok, err := policy.Load(base.Dir)
			if err != nil {
				return err
			}
			tm := team.New(0)
			defer tm.Close()
			m.SetTeam(tm)
			log := func(s string) { fmt.Fprintln(cmd.ErrOrStderr(), "rm-quality:", s) }
			res, err := rmquality.Run(cmd.Context(), m, tok, t, dir, cfg, log)
			if err != nil {
				return err
			}
			command := "rollout rm-quality " + strings.Join(os.Args[2:], " ")
			w := cmd.OutOrStdout()
			if out != "" {
				fh, err := os.Create(out)
				if err != nil {
					return fmt.Errorf("rm-quality: %w", err)
				}
				defer fh.Close()
				w = fh
			}
			return rmquality.WriteMarkdown(w, res, command)
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVar(&sets, "set", nil, "override a config key: dotted.key=value (repeatable)")
	fl.StringVar(&cache, "cache", "", "cache directory of the base policy (default $ROLLOUT_CACHE or the user cache dir)")
	fl.StringVar(&dir, "checkpoints", "", "directory for the reward model's checkpoints (step-NNNNN/)")
	fl.StringVar(&out, "out", "", "write the markdown report to this file (default: standard output)")
	fl.IntVar(&cfg.TrainPrompts, "train-prompts", 1024, "train-split prompts whose samples the model trains on")
	fl.IntVar(&cfg.HeldOutPrompts, "held-out-prompts", 256, "eval-split prompts of the within-prompt AUC")
	fl.IntVar(&cfg.Samples, "samples", 16, "candidates sampled per prompt")
	fl.StringVar(&scoring, "scoring", "head", "how the reward model scores a response: head (a scalar head on EOS) or likelihood (the body's log-likelihood of the response; needs --bce 0)")
	fl.IntVar(&cfg.NearMisses, "near-misses", 0, "near misses (one character of a right candidate changed, graded wrong by the verifier) added per right training candidate as hard negatives")
	fl.BoolVar(&cfg.Validation, "validation", false, "held-out prompts from the train split past those trained on (a pilot's validation set; see --held-out-first) instead of the eval split")
	fl.IntVar(&cfg.HeldOutFirst, "held-out-first", 0, "index of the first held-out prompt in its split")
	fl.IntVar(&cfg.Rank.Steps, "steps", 1500, "optimizer steps")
	fl.IntVar(&cfg.Rank.PromptsPerStep, "prompts-per-step", 8, "prompts per optimizer step")
	fl.IntVar(&cfg.Rank.PerLabel, "per-label", 4, "right and wrong candidates per prompt and step, at most")
	fl.Float64Var(&cfg.Rank.LR, "lr", 3e-4, "Adam step size of the body")
	fl.Float64Var(&cfg.Rank.BCE, "bce", 0, "weight of a pointwise binary cross-entropy term beside the pairwise loss")
	fl.Uint64Var(&cfg.Rank.Seed, "seed", 1, "seed of the training order")
	fl.IntVar(&cfg.Every, "every", 250, "steps between checkpoints")
	fl.IntSliceVar(&cfg.Marks, "marks", nil, "the steps of the checkpoints instead of every --every steps (step 0 and the last are always kept)")
	fl.IntSliceVar(&ns, "n", []int{1, 2, 4, 8, 16}, "candidates per prompt at answer time")
	fl.UintSliceVar(&seeds, "seeds", []uint{1, 2, 3, 4, 5}, "answer-time seeds (prompts and streams)")
	fl.IntSliceVar(&cfg.Measure, "measure-steps", nil, "checkpoint steps measured at answer time (default: every checkpoint)")
	fl.BoolVar(&cfg.Evaluate, "evaluate", false, "no training: measure the checkpoints already in --checkpoints DIR (trained with the same flags)")
	return cmd
}
