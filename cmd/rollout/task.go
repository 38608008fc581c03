package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/spf13/cobra"
	"go.yaml.in/yaml/v3"

	"github.com/rollout-rl/rollout/experiments/task"
)

func newTaskCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "task", Short: "Look at the bundled tasks and their verifiers"}
	cmd.AddCommand(newTaskShowCmd(), newTaskVerifyCmd())
	return cmd
}

// taskParamsFlags adds --param and --config to a task command.
func taskParamsFlags(cmd *cobra.Command, params *[]string, config *string) {
	cmd.Flags().StringArrayVar(params, "param", nil, "task parameter key=value, e.g. digits=3 (repeatable)")
	cmd.Flags().StringVar(config, "config", "", "take the task and its parameters from an experiment config (its first variant)")
}

// taskOfCommand builds the task a task command names: the TASK argument
// with its default parameters, or the task of --config, then --param
// overrides.
func taskOfCommand(args []string, configPath string, params []string) (task.Task, error) {
	name := ""
	if len(args) == 1 {
		name = args[0]
	}
	var base any
	if configPath != "" {
		f, err := loadConfig(configPath, nil)
		if err != nil {
			return nil, err
		}
		c := f.Variants[0].Config
		if name != "" && name != c.Task.Name {
			return nil, usageError{fmt.Errorf("task %s, but --config %s has task %s: give one", name, configPath, c.Task.Name)}
		}
		name, base = c.Task.Name, c.Task.Params
	}
	if name == "" {
		return nil, usageError{fmt.Errorf("name a TASK (%s) or give --config FILE", strings.Join(task.AllNames(), ", "))}
	}
	p, err := task.DefaultParams(name)
	if err != nil {
		return nil, usageError{fmt.Errorf("%w%s", err, didYouMean(name, task.AllNames()))}
	}
	if err := setParams(p, base, params); err != nil {
		return nil, usageError{fmt.Errorf("task %s: %w", name, err)}
	}
	t, err := task.New(name, p)
	if err != nil {
		return nil, usageError{err}
	}
	return t, nil
}

// setParams sets the task parameter struct *p to base (when not nil),
// then each key=value of sets, the key being a field's YAML name and the
// value YAML of the field's type (or, when it is no YAML document, the
// plain string).
func setParams(p, base any, sets []string) error {
	v := reflect.ValueOf(p).Elem()
	if base != nil {
		b := reflect.Indirect(reflect.ValueOf(base))
		if b.Type() != v.Type() {
			return fmt.Errorf("config parameters of type %s, want %s", b.Type(), v.Type())
		}
		v.Set(b)
	}
	var keys []string
	fields := map[string]reflect.Value{}
	for i := range v.NumField() {
		key, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		if key != "" && key != "-" {
			keys = append(keys, key)
			fields[key] = v.Field(i)
		}
	}
	for _, kv := range sets {
		key, val, ok := strings.Cut(kv, "=")
		if !ok || key == "" {
			return fmt.Errorf("--param %q: want key=value", kv)
		}
		f, found := fields[key]
		if !found {
			return fmt.Errorf("--param %s: unknown parameter (want one of %s)", kv, strings.Join(keys, ", "))
		}
		// As for --set: a value that is no YAML document (such as one
		// starting with #, a comment) is the plain string.
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(val), &doc); err != nil || len(doc.Content) == 0 {
			doc = yaml.Node{Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: val}}}
		}
		nv := reflect.New(f.Type())
		if err := doc.Content[0].Decode(nv.Interface()); err != nil || val == "" {
			return fmt.Errorf("--param %s: want a value of type %s", kv, f.Type())
		}
		f.Set(nv.Elem())
	}
	return nil
}

func newTaskShowCmd() *cobra.Command {
	var n int
	var seed uint64
	var split, config string
	var params []string
	cmd := &cobra.Command{
		Use:   "show TASK|--config FILE [--param key=value]... [--n N] [--seed S] [--split train|eval]",
		Short: "Print prompts of a task with their demonstrations",
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := taskOfCommand(args, config, params)
			if err != nil {
				return err
			}
			sp, err := task.ParseSplit(split)
			if err != nil {
				return usageError{fmt.Errorf("--split: %w", err)}
			}
			if n < 1 {
				return usageError{fmt.Errorf("--n %d: want at least 1", n)}
			}
			if config != "" && sp == task.Eval {
				// The eval prompts the config's runs are evaluated on:
				// those of eval.exclude_seeds held out.
				f, err := loadConfig(config, nil)
				if err != nil {
					return err
				}
				if t, err = f.Variants[0].Config.Eval.Task(t); err != nil {
					return err
				}
			}
			return task.Show(cmd.OutOrStdout(), t, sp, seed, n)
		},
	}
	cmd.Flags().IntVar(&n, "n", 5, "number of prompts")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "prompt seed")
	cmd.Flags().StringVar(&split, "split", "train", "train or eval")
	taskParamsFlags(cmd, &params, &config)
	return cmd
}

func newTaskVerifyCmd() *cobra.Command {
	var prompt, response, config string
	var params []string
	cmd := &cobra.Command{
		Use:   "verify TASK|--config FILE [--param key=value]... --prompt P --response R",
		Short: `Grade a response: prints {"reward": …, "reason": …, "answer": …}`,
		Args:  cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			t, err := taskOfCommand(args, config, params)
			if err != nil {
				return err
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
	taskParamsFlags(cmd, &params, &config)
	return cmd
}

// taskFromFlags builds the task of --config (its first variant's task and
// parameters) or else the --task name with default parameters, then sets
// each --param.
func taskFromFlags(cmd *cobra.Command, name, configPath string, params []string) (task.Task, error) {
	if configPath != "" {
		if cmd.Flags().Changed("task") {
			return nil, usageError{fmt.Errorf("--task and --config: give one")}
		}
		return taskOfCommand(nil, configPath, params)
	}
	return taskOfCommand([]string{name}, "", params)
}
