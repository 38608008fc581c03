package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/experiments/task"
)

func newTaskCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "task", Short: "Look at the bundled tasks and their verifiers"}
	cmd.AddCommand(newTaskShowCmd(), newTaskVerifyCmd())
	return cmd
}

func newTaskShowCmd() *cobra.Command {
	var n int
	var seed uint64
	var split string
	cmd := &cobra.Command{
		Use:   "show TASK [--n N] [--seed S] [--split train|eval]",
		Short: "Print prompts of a task with their demonstrations",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := task.New(args[0], nil)
			if err != nil {
				return usageError{err}
			}
			sp, err := task.ParseSplit(split)
			if err != nil {
				return usageError{fmt.Errorf("--split: %w", err)}
			}
			if n < 1 {
				return usageError{fmt.Errorf("--n %d: want at least 1", n)}
			}
			return task.Show(cmd.OutOrStdout(), t, sp, seed, n)
		},
	}
	cmd.Flags().IntVar(&n, "n", 5, "number of prompts")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "prompt seed")
	cmd.Flags().StringVar(&split, "split", "train", "train or eval")
	return cmd
}

func newTaskVerifyCmd() *cobra.Command {
	var prompt, response string
	cmd := &cobra.Command{
		Use:   "verify TASK --prompt P --response R",
		Short: `Grade a response: prints {"reward": …, "reason": …, "answer": …}`,
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := task.New(args[0], nil)
			if err != nil {
				return usageError{err}
			}
			v, err := task.VerifyText(t, prompt, response)
			if err != nil {
				return usageError{fmt.Errorf("--prompt: %w", err)}
			}
			b, err := json.Marshal(v)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), string(b))
			return nil
		},
	}
	cmd.Flags().StringVar(&prompt, "prompt", "", "prompt text, in the task's format")
	cmd.Flags().StringVar(&response, "response", "", "response text (any string)")
	return cmd
}

// taskFromFlags builds the task of --config (its first variant's task and
// parameters) or else the --task name with default parameters.
func taskFromFlags(cmd *cobra.Command, name, configPath string) (task.Task, error) {
	if configPath != "" {
		if cmd.Flags().Changed("task") {
			return nil, usageError{fmt.Errorf("--task and --config: give one")}
		}
		f, err := loadConfig(configPath, nil)
		if err != nil {
			return nil, err
		}
		c := f.Variants[0].Config
		t, err := task.New(c.Task.Name, c.Task.Params)
		if err != nil {
			return nil, usageError{fmt.Errorf("--config: %w", err)}
		}
		return t, nil
	}
	t, err := task.New(name, nil)
	if err != nil {
		return nil, usageError{fmt.Errorf("--task: %w", err)}
	}
	return t, nil
}
