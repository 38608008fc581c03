package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/experiments/config"
	"github.com/rollout-rl/rollout/experiments/pretrain"
	"github.com/rollout-rl/rollout/experiments/reward"
	"github.com/rollout-rl/rollout/experiments/runner"
)

// cacheDir is where base policies are cached: --cache, $ROLLOUT_CACHE, or
// the user's cache directory.
func cacheDir(flag string) (string, error) {
	if flag != "" {
		return flag, nil
	}
	if d := os.Getenv("ROLLOUT_CACHE"); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory (set --cache or ROLLOUT_CACHE): %w", err)
	}
	return filepath.Join(d, "rollout"), nil
}

// loadConfig reads a config file with overrides; its errors are the user's.
func loadConfig(path string, sets []string) (*config.File, error) {
	f, err := config.Load(path, sets)
	if err != nil {
		return nil, usageError{err}
	}
	return f, nil
}

func newPretrainCmd() *cobra.Command {
	var sets []string
	var cache string
	cmd := &cobra.Command{
		Use:   "pretrain CONFIG [--set key=value]... [--cache DIR]",
		Short: "Train (or find in the cache) the base policy of a config's variants",
		Long: `Trains the base policy that the config's runs start from: supervised training on the
task's demonstrations (a share of them flawed), with a progress bar, then greedy accuracy
on held-out prompts. The checkpoint is cached under the hash of its resolved settings, so
runs that share it train it once.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := loadConfig(args[0], sets)
			if err != nil {
				return err
			}
			dir, err := cacheDir(cache)
			if err != nil {
				return err
			}
			pr := newProgress(cmd.ErrOrStderr())
			defer pr.wait()
			seen := map[string]bool{}
			for _, v := range f.Variants {
				c := v.Config
				if c.Checkpoint != "" {
					if !seen[c.Checkpoint] {
						fmt.Fprintf(cmd.OutOrStdout(), "base policy %s: named by the config (checkpoint:), not pretrained\n", c.Checkpoint)
					}
					seen[c.Checkpoint] = true
					continue
				}
				// The bar starts with the first step trained: a base policy
				// found in the cache (another variant's, say) shows none.
				var bar *bar
				base, err := runner.BasePolicy(cmd.Context(), c, dir, func(s pretrain.Step) {
					if bar == nil {
						bar = pr.add("pretrain "+c.Task.Name, c.Pretrain.Steps)
					}
					bar.set(s.Step, fmt.Sprintf(" loss %.3f", s.Loss))
				})
				if bar != nil && err != nil {
					bar.abort()
				}
				if err != nil {
					return err
				}
				if bar != nil {
					bar.set(c.Pretrain.Steps, "")
				}
				if seen[base.Dir] {
					continue
				}
				seen[base.Dir] = true
				how := "trained"
				if base.Cached {
					how = "cached"
				}
				sum := base.Summary
				fmt.Fprintf(cmd.OutOrStdout(), "%s base policy %s: task %s, loss %.4f, eval greedy accuracy %.1f%% (%d prompts), %.0fs\n",
					how, base.Dir, c.Task.Name, sum.Loss, 100*sum.EvalAcc, c.Pretrain.EvalPrompts, sum.Seconds)
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a config key: dotted.key=value (repeatable)")
	cmd.Flags().StringVar(&cache, "cache", "", "base-policy cache directory (default $ROLLOUT_CACHE or the user cache dir)")
	return cmd
}

func newConfigCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Check and resolve experiment configs"}
	var sets []string
	show := &cobra.Command{
		Use:   "show CONFIG [--set key=value]...",
		Short: "Print the fully resolved config of every variant, defaults filled in, and the design with its hash",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := loadConfig(args[0], sets)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			fmt.Fprintf(out, "# experiment %s: %d variants × %d seeds %v = %d runs; baseline %s\n", f.Name, len(f.Variants), len(f.Seeds), f.Seeds, len(f.Runs()), f.Baseline)
			for _, v := range f.Variants {
				b, err := config.Marshal(v.Config)
				if err != nil {
					return err
				}
				fmt.Fprintf(out, "---\n# variant %s\n%s", v.Name, b)
			}
			return showDesign(out, f)
		},
	}
	show.Flags().StringArrayVar(&sets, "set", nil, "override a config key: dotted.key=value (repeatable)")
	cmd.AddCommand(show)
	return cmd
}

func newRewardModelCmd() *cobra.Command {
	var sets []string
	var cache string
	cmd := &cobra.Command{
		Use:   "reward-model CONFIG [--set key=value]... [--cache DIR]",
		Short: "Train (or find in the cache) the reward model of a config and report its held-out AUC",
		Long: `Builds the learned reward model of the config's first variant: responses sampled from the
base policy on train prompts, labelled by the verifier, a classifier (the policy's
architecture with a scalar head) trained on them, and its AUC on held-out prompts. With
reward_model.scoring: likelihood it is instead the policy's log-likelihood of a response,
trained to order one prompt's candidates (as rollout rm-quality trains it), and its
within-prompt AUC on held-out prompts. The model is cached under the hash of the base
policy and the reward_model settings.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := loadConfig(args[0], sets)
			if err != nil {
				return err
			}
			dir, err := cacheDir(cache)
			if err != nil {
				return err
			}
			c := f.Variants[0].Config
			pr := newProgress(cmd.ErrOrStderr())
			defer pr.wait()
			var pb *bar
			if c.Checkpoint == "" {
				pb = pr.add("pretrain "+c.Task.Name, c.Pretrain.Steps)
			}
			base, err := runner.BasePolicy(cmd.Context(), c, dir, func(s pretrain.Step) {
				pb.set(s.Step, fmt.Sprintf(" loss %.3f", s.Loss))
			})
			if err != nil {
				if pb != nil {
					pb.abort()
				}
				return err
			}
			if pb != nil {
				pb.set(c.Pretrain.Steps, "")
			}
			pb = pr.add("reward model "+c.Task.Name, c.RewardModel.Steps())
			path, sum, cached, err := runner.RewardModel(cmd.Context(), c, dir, base.Dir, func(s reward.Step) {
				pb.set(s.Step, fmt.Sprintf(" loss %.3f", s.Loss))
			})
			if err != nil {
				pb.abort()
				return err
			}
			pb.set(c.RewardModel.Steps(), "")
			how := "trained"
			if cached {
				how = "cached"
			}
			if sum.Scoring == reward.LikelihoodScore.String() {
				fmt.Fprintf(cmd.OutOrStdout(), "%s reward model %s: %s, %.0fs\n", how, path, sum.Describe(), sum.Seconds)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s reward model %s: held-out AUC %.3f (%d responses, %d right), train AUC %.3f, %.0fs\n",
				how, path, sum.HeldOut.AUC, sum.HeldOut.N, sum.HeldOut.Positives, sum.Train.AUC, sum.Seconds)
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&sets, "set", nil, "override a config key: dotted.key=value (repeatable)")
	cmd.Flags().StringVar(&cache, "cache", "", "cache directory (default $ROLLOUT_CACHE or the user cache dir)")
	return cmd
}
