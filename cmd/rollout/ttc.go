package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/experiments/reward"
	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/search"
)

func newTTCCmd() *cobra.Command {
	var ckpt, taskName, cfgPath, rmDir string
	var ns []int
	var params []string
	var prompts int
	var seed uint64
	var noTree bool
	var tree, treeRoots string
	var format string
	var rf remoteFlags
	sampling := policy.DefaultSampling
	cmd := &cobra.Command{
		Use:   "ttc (--checkpoint DIR | --policy URL [--model NAME]) [--task TASK | --config FILE] [--param key=value]... [--n 1,2,4,8] [--prompts P]",
		Short: "Test-time compute: accuracy against generated tokens for best-of-N, majority vote and tree search",
		Long: `Samples N candidates per held-out prompt (flat, and as an entropy tree with N leaves where
N is a multiple of 3 or 4), then selects one answer per prompt by best-of-N (by the reward
model of --reward-model, with the verifier's choice beside it as "oracle"; else by the
verifier: an oracle upper bound), by majority vote over the candidates' answers, and the
same over tree leaves. Prints accuracy against mean generated tokens and candidates per
prompt. With --policy URL (and --model NAME) the candidates come from the policy behind
that OpenAI-compatible server, the tokens counted as the server reports them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := rf.check(cmd); err != nil {
				return err
			}
			if ckpt == "" && rf.url == "" {
				return usageError{fmt.Errorf("--checkpoint or --policy: a checkpoint directory or a server's URL is required")}
			}
			t, err := taskFromFlags(cmd, taskName, cfgPath, params)
			if err != nil {
				return err
			}
			if format != "table" && format != "json" {
				return usageError{fmt.Errorf("--format %q: want table or json", format)}
			}
			if prompts < 1 {
				return usageError{fmt.Errorf("--prompts %d: want at least 1", prompts)}
			}
			if err := sampling.Validate(); err != nil {
				return usageError{err}
			}
			cfg := rl.TTCConfig{Prompts: prompts, Ns: ns, Sampling: sampling, Seed: seed}
			if !noTree {
				if cfg.Tree, err = ttcTree(tree, treeRoots); err != nil {
					return usageError{err}
				}
			}
			if rmDir != "" {
				if cfg.Scorer, err = rewardModelScorer(rmDir); err != nil {
					return err
				}
			}
			if rf.url != "" {
				return remoteTTC(cmd, &rf, t, cfg, format)
			}
			m, tok, err := loadCheckpoint("--checkpoint", ckpt)
			if err != nil {
				return err
			}
			pts, err := rl.MeasureTTC(cmd.Context(), m, tok, t, cfg)
			if err != nil {
				return usageError{err}
			}
			return writeTTC(cmd.OutOrStdout(), format, pts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&ckpt, "checkpoint", "", "policy checkpoint directory")
	f.StringVar(&taskName, "task", "add", "task with its default parameters (rollout task show lists them with --help)")
	f.StringVar(&cfgPath, "config", "", "take the task and its parameters from this experiment config instead of --task")
	f.StringArrayVar(&params, "param", nil, "a task parameter key=value, as in rollout task (repeatable)")
	f.StringVar(&rmDir, "reward-model", "", "select best-of-N by this reward model (default: the verifier, an oracle)")
	f.IntSliceVar(&ns, "n", []int{1, 3, 6, 12}, "candidates per prompt")
	f.IntVar(&prompts, "prompts", 100, "held-out prompts")
	f.Uint64Var(&seed, "seed", 1, "seed of prompts and sampling streams")
	f.BoolVar(&noTree, "no-tree", false, "skip the tree methods")
	f.StringVar(&tree, "tree", "", "the tree methods' strategy, any registered one as NAME or NAME:key=value,... (default: an entropy tree, N = 2 or 3 forks, L = T = 1)")
	f.StringVar(&treeRoots, "tree-roots", "m", "the --tree strategy's key set so that it has N leaves a prompt")
	f.StringVar(&format, "format", "table", "table or json (the points as one JSON array)")
	f.Float64Var(&sampling.Temperature, "temperature", 1, "sampling temperature")
	f.IntVar(&sampling.TopK, "top-k", 0, "top-k (0: off)")
	f.Float64Var(&sampling.TopP, "top-p", 1, "top-p (1: off)")
	rf.add(cmd)
	return cmd
}

// ttcTree makes the tree methods' strategy with n leaves a prompt: the
// registered strategy of --tree (NAME or NAME:key=value,...) with its
// --tree-roots key scaled to n leaves, or rl.TreeWithLeaves without one.
func ttcTree(tree, roots string) (func(n int) (search.Strategy, error), error) {
	if tree == "" {
		return rl.TreeWithLeaves, nil
	}
	name, params, err := parseMethod("--tree", tree)
	if err != nil {
		return nil, err
	}
	one := maps.Clone(params)
	one[roots] = "1"
	if _, err := search.NewStrategy(name, one); err != nil {
		return nil, fmt.Errorf("--tree %s --tree-roots %s: %w", tree, roots, err)
	}
	return func(n int) (search.Strategy, error) { return rl.StrategyWithLeaves(name, params, roots, n) }, nil
}

// rewardModelScorer scores best-of-N candidates by the reward model in dir
// (a response it cannot read, e.g. with characters outside its alphabet,
// is never selected).
func rewardModelScorer(dir string) (rl.Scorer, error) {
	rm, err := reward.Load(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, usageError{fmt.Errorf("--reward-model %s: no reward model there (rollout reward-model writes one): %w", dir, err)}
	}
	if err != nil {
		return nil, err
	}
	return rm.SelectionScores, nil
}

// remoteTTC runs the test-time compute sweep against the policy behind
// --policy and prints it.
func remoteTTC(cmd *cobra.Command, rf *remoteFlags, t task.Task, cfg rl.TTCConfig, format string) error {
	if cfg.Sampling.TopK > 0 {
		return usageError{fmt.Errorf("--top-k and --policy: a completions server takes --temperature and --top-p only")}
	}
	s, err := rf.dial(cmd.Context())
	if err != nil {
		return err
	}
	pts, err := rl.MeasureRemoteTTC(cmd.Context(), s, t, cfg)
	if err != nil {
		return err
	}
	return writeTTC(cmd.OutOrStdout(), format, pts)
}

// writeTTC prints test-time compute points as a table or as JSON.
func writeTTC(w io.Writer, format string, pts []rl.TTCPoint) error {
	if format == "json" {
		return json.NewEncoder(w).Encode(pts)
	}
	return writeTTCTable(w, pts)
}

// writeTTCTable prints test-time compute points as a table.
func writeTTCTable(w io.Writer, pts []rl.TTCPoint) error {
	tbl := tablewriter.NewTable(w,
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{Global: tw.AlignRight, PerColumn: []tw.Align{tw.AlignLeft}}))
	tbl.Header([]string{"method", "N", "candidates/prompt", "tokens/prompt", "accuracy"})
	for _, p := range pts {
		if err := tbl.Append([]string{p.Method, fmt.Sprint(p.N), fmt.Sprintf("%.2f", p.Candidates), fmt.Sprintf("%.1f", p.Tokens), fmt.Sprintf("%.3f", p.Acc)}); err != nil {
			return err
		}
	}
	return tbl.Render()
}
