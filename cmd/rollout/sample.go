package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/experiments/config"
	"github.com/rollout-rl/rollout/experiments/reward"
	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/experiments/runner"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/search"
	"github.com/rollout-rl/rollout/search/record"
	"github.com/rollout-rl/rollout/search/remote"
)

// sampleShorthands maps sample's own flags to the config keys they set.
var sampleShorthands = []struct{ flag, key string }{
	{"strategy", "rollout.strategy"},
	{"temperature", "rollout.temperature"},
	{"top-k", "rollout.top_k"},
	{"top-p", "rollout.top_p"},
	{"budget", "rollout.budget"},
	{"advantage", "train.advantage"},
}

func newSampleCmd() *cobra.Command {
	var ckpt, taskName, cfgPath, variant, prompt, split, format, cache string
	var sets, params, strategyParams []string
	var seed uint64
	var step, index int
	var rf remoteFlags
	cmd := &cobra.Command{
		Use:   "sample [--config FILE [--variant V] | --task TASK] [--checkpoint DIR | --policy URL [--model NAME]] [--strategy NAME] [--strategy-param key=value]... [--param key=value]... [--set key=value]... [--prompt TEXT | --split train|eval --index I] [--seed S] [--step N] [--format text|json]",
		Short: "Run one rollout group on one prompt and print its tree",
		Long: `Makes one rollout group on one prompt exactly as a run of the config does (the same
sampling request, random streams, rewards, advantages and filtering rule), and prints the
tree — indentation per fork, the fork score at each fork, leaf text, reward and reason — or,
with --format json, the group's record. The config is --config's variant (--variant,
default the first), or, with --task, the defaults for that task. --param k=v sets a
task parameter, as in rollout task (--set task.params.k=v). --strategy,
--strategy-param k=v, --temperature, --top-k, --top-p, --budget and --advantage are
shorthands for --set rollout.strategy=…, rollout.params.k=v, rollout.temperature=…,
rollout.top_k=…, rollout.top_p=…, rollout.budget=… and train.advantage=…; --set
overrides any key.
The policy is --checkpoint, or the config's base policy (its checkpoint:, or pretrained and
cached as rollout run does). The prompt is --prompt, or prompt --index of --split drawn
with --seed. With a run's seed, --split train --step 0 and the base policy, group I equals
group I of the run's step 1: rollout trees RUN --step 1 --group I prints the same text.
With --policy URL (and --model NAME), the policy is the one behind that OpenAI-compatible
server: flat, entropy_tree and random_tree groups are sampled through its completions API
in the same tree shape, the budget counting the tokens the server reports.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "text" && format != "json" {
				return usageError{fmt.Errorf("--format %q: want text or json", format)}
			}
			sp, err := parseSplit(split)
			if err != nil {
				return err
			}
			if err := rf.check(cmd); err != nil {
				return err
			}
			c, err := sampleConfig(cmd, cfgPath, taskName, variant, sampleOverrides{taskParams: params, strategyParams: strategyParams, sets: sets})
			if err != nil {
				return err
			}
			o := runner.SampleOptions{Seed: seed, Step: step, Split: sp, Index: index, Prompt: prompt, Checkpoint: ckpt}
			if rf.url != "" {
				rec, text, err := sampleRemote(cmd.Context(), &rf, c, o)
				if err != nil {
					return err
				}
				return writeSample(cmd.OutOrStdout(), format, rec, text)
			}
			rec, err := sampleLocal(cmd.Context(), c, o, cache)
			if err != nil {
				return err
			}
			return writeSample(cmd.OutOrStdout(), format, rec, policy.DefaultTokenizer().DisplayText)
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfgPath, "config", "", "experiment config to sample as (default: --task with default settings)")
	f.StringVar(&variant, "variant", "", "variant of --config (default: the first)")
	f.StringVar(&taskName, "task", "add", "task with its default parameters, when there is no --config")
	f.StringArrayVar(&sets, "set", nil, "override a config key: dotted.key=value (repeatable)")
	f.StringVar(&ckpt, "checkpoint", "", "policy checkpoint directory (default: the config's base policy)")
	f.StringVar(&cache, "cache", "", "base-policy cache directory (default $ROLLOUT_CACHE or the user cache dir)")
	f.String("strategy", "", "shorthand for --set rollout.strategy=NAME ("+strings.Join(search.Names(), ", ")+")")
	f.StringArrayVar(&params, "param", nil, "a task parameter key=value, as in rollout task; shorthand for --set task.params.key=value (repeatable)")
	f.StringArrayVar(&strategyParams, "strategy-param", nil, "a strategy parameter key=value; shorthand for --set rollout.params.key=value (repeatable)")
	f.Float64("temperature", 1, "shorthand for --set rollout.temperature=T")
	f.Int("top-k", 0, "shorthand for --set rollout.top_k=K (0: off)")
	f.Float64("top-p", 1, "shorthand for --set rollout.top_p=P (1: off)")
	f.Int64("budget", 0, "shorthand for --set rollout.budget=TOKENS, the per-prompt budget (0: none)")
	f.String("advantage", "", "shorthand for --set train.advantage=NAME ("+strings.Join(search.EstimatorNames(), ", ")+")")
	f.StringVar(&prompt, "prompt", "", "prompt text (default: prompt --index of --split)")
	f.StringVar(&split, "split", "eval", "split of the prompt: train or eval")
	f.IntVar(&index, "index", 0, "index of the prompt in its split")
	f.Uint64Var(&seed, "seed", 1, "seed (a run's seed reproduces its groups)")
	f.IntVar(&step, "step", 0, "0-based RL step whose random streams are used")
	f.StringVar(&format, "format", "text", "text (an indented tree) or json (one object)")
	rf.add(cmd)
	return cmd
}

// sampleLocal makes the group of `rollout sample` from o.Checkpoint, or
// from c's base policy cached under --cache.
func sampleLocal(ctx context.Context, c config.Experiment, o runner.SampleOptions, cache string) (*record.Group, error) {
	if o.Checkpoint == "" {
		dir, err := cacheDir(cache)
		if err != nil {
			return nil, err
		}
		o.CacheDir = dir
	} else if _, _, err := loadCheckpoint("--checkpoint", o.Checkpoint); err != nil {
		return nil, err
	}
	rec, err := runner.Sample(ctx, c, o)
	if err != nil {
		return nil, usageError{err}
	}
	return rec, nil
}

// writeSample prints a group's record as JSON or as text.
func writeSample(w io.Writer, format string, rec *record.Group, text record.Detokenizer) error {
	if format == "json" {
		return rec.WriteJSON(w)
	}
	return rec.WriteText(w, text)
}

// sampleRemote makes one rollout group of c's strategy on one prompt from
// the policy behind --policy, scores it with c's task and reward and sets
// c's advantages, as a run would. It returns the group's record and the
// text of the server's tokens.
func sampleRemote(ctx context.Context, rf *remoteFlags, c config.Experiment, o runner.SampleOptions) (*record.Group, record.Detokenizer, error) {
	t, err := task.New(c.Task.Name, c.Task.Params)
	if err != nil {
		return nil, nil, usageError{err}
	}
	st, err := c.Rollout.NewStrategy()
	if err != nil {
		return nil, nil, usageError{err}
	}
	if err := remote.Supports(st); err != nil {
		return nil, nil, usageError{fmt.Errorf("rollout.strategy %s with --policy: %w", c.Rollout.Strategy, err)}
	}
	est, err := search.NewEstimator(c.Train.Advantage)
	if err != nil {
		return nil, nil, usageError{err}
	}
	sp := c.Rollout.Sampling()
	if sp.TopK > 0 {
		return nil, nil, usageError{fmt.Errorf("rollout.top_k = %d: a completions server takes temperature and top-p only", sp.TopK)}
	}
	var mix *reward.Mixer
	if c.Reward != reward.DefaultConfig() {
		if c.Reward.Model != 0 {
			return nil, nil, usageError{fmt.Errorf("reward.model = %g: the learned reward model reads a local policy's tokens; not with --policy", c.Reward.Model)}
		}
		if mix, err = reward.NewMixer(c.Reward, t, nil); err != nil {
			return nil, nil, usageError{err}
		}
	}
	p, id, err := samplePrompt(t, o)
	if err != nil {
		return nil, nil, usageError{err}
	}
	s, err := rf.dial(ctx)
	if err != nil {
		return nil, nil, err
	}
	s.Temperature, s.TopP = sp.Temperature, sp.TopP
	s.MaxTokens, s.Budget = t.MaxResponseLen()+1, c.Rollout.Budget
	s.Seed, s.Step = o.Seed, uint64(o.Step)
	groups, err := s.Generate(ctx, st, rl.RemotePrompts(t, []task.Prompt{p}, []int{id}))
	if err != nil {
		return nil, nil, err
	}
	g := groups[0]
	if err := rl.ScoreWithPenalty(t, mix, s.Text, p, g, est, nil); err != nil {
		return nil, nil, err
	}
	rec := g.Record(p.Text, s.Text)
	rec.Filtered = c.Train.FilterGroups && allSame(g.Rewards())
	return rec, s.Text, nil
}

// samplePrompt is the prompt of o (its text, or index o.Index of o.Split
// drawn with o.Seed) and the id that seeds its streams.
func samplePrompt(t task.Task, o runner.SampleOptions) (task.Prompt, int, error) {
	if o.Prompt != "" {
		p, err := t.ParsePrompt(o.Prompt)
		if err != nil {
			return task.Prompt{}, 0, fmt.Errorf("--prompt %q: %w", o.Prompt, err)
		}
		return p, 0, nil
	}
	p, err := t.Prompt(o.Split, o.Seed, o.Index)
	return p, o.Index, err
}

// allSame reports whether every value equals the first (true for none).
func allSame(xs []float64) bool {
	for _, x := range xs {
		if x != xs[0] {
			return false
		}
	}
	return true
}

// sampleOverrides are the flags of `rollout sample` that override config
// keys: task parameters (--param), strategy parameters (--strategy-param)
// and any key (--set).
type sampleOverrides struct {
	taskParams, strategyParams, sets []string
}

// sampleConfig resolves the config `rollout sample` samples as: --config's
// variant (or the defaults for --task) with --set and the shorthand flags
// applied as overrides. --param values are checked against the task's
// parameters first, so that an unknown one is named with the task's.
func sampleConfig(cmd *cobra.Command, path, taskName, variant string, o sampleOverrides) (config.Experiment, error) {
	var overrides []string
	for _, sh := range sampleShorthands {
		if fl := cmd.Flags().Lookup(sh.flag); fl.Changed {
			overrides = append(overrides, sh.key+"="+fl.Value.String())
		}
	}
	for _, p := range o.strategyParams {
		overrides = append(overrides, "rollout.params."+p)
	}
	overrides = append(overrides, o.sets...)
	if path != "" && cmd.Flags().Changed("task") {
		return config.Experiment{}, usageError{fmt.Errorf("--task and --config: give one (the config names its task)")}
	}
	c, err := resolveSample(path, taskName, variant, overrides)
	if err != nil || len(o.taskParams) == 0 {
		return c, err
	}
	p, err := task.DefaultParams(c.Task.Name)
	if err != nil {
		return config.Experiment{}, usageError{err}
	}
	if err := setParams(p, nil, o.taskParams); err != nil {
		return config.Experiment{}, usageError{fmt.Errorf("task %s: %w; a strategy parameter is --strategy-param key=value", c.Task.Name, err)}
	}
	for _, kv := range o.taskParams {
		overrides = append(overrides, "task.params."+kv)
	}
	return resolveSample(path, taskName, variant, overrides)
}

// resolveSample is the variant of the config at path (or of the defaults
// for taskName when path is empty) with overrides applied.
func resolveSample(path, taskName, variant string, overrides []string) (config.Experiment, error) {
	var f *config.File
	var err error
	if path != "" {
		f, err = loadConfig(path, overrides)
	} else {
		f, err = config.Parse("(sample flags)", []byte("task: {name: "+strconv.Quote(taskName)+"}\n"), overrides)
		if err != nil {
			err = usageError{err}
		}
	}
	if err != nil {
		return config.Experiment{}, err
	}
	return pickVariant(f, variant)
}

// parseSplit reads --split.
func parseSplit(s string) (task.Split, error) {
	switch s {
	case "train":
		return task.Train, nil
	case "eval":
		return task.Eval, nil
	}
	return 0, usageError{fmt.Errorf("--split %q: want train or eval", s)}
}
