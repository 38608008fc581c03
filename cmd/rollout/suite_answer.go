package main

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/rollout-rl/rollout/experiments/config"
	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/experiments/runner"
	"github.com/rollout-rl/rollout/experiments/suite"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/search"
	"github.com/rollout-rl/rollout/tracking"
)

// answerMeasurer measures a suite report's policies at answer time: a
// run's config comes from f (matched by run id), its base policy and
// reward model from the cache in cacheDir (made first when missing), its
// final policy from the store's final directory. Best-of-N is selected by
// the reward model, with the verifier's choice beside it; candidates are
// sampled with the run's seed, the config's rollout sampling and its
// eval prompts.
func answerMeasurer(ctx context.Context, f *config.File, st *tracking.Store, cacheDir string) suite.Measurer {
	return func(run tracking.Run, policy string, spec suite.Spec) (suite.Measured, error) {
		i := slices.IndexFunc(f.Runs(), func(r config.Run) bool { return r.ID == run.ID })
		if i < 0 {
			return suite.Measured{}, fmt.Errorf("run %s is not a run of %s: the config changed since the run was made", run.ID, f.Path)
		}
		c := f.Runs()[i].Config
		if policy == suite.PolicyRL && !st.HasFinal(run.ID) {
			return suite.Measured{}, fmt.Errorf("no final policy at %s: the run's config needs train.save_final", st.FinalDir(run.ID))
		}
		base, err := runner.BasePolicy(ctx, c, cacheDir, nil)
		if err != nil {
			return suite.Measured{}, err
		}
		rmDir, sum, _, err := runner.RewardModel(ctx, c, cacheDir, base.Dir, nil)
		if err != nil {
			return suite.Measured{}, fmt.Errorf("reward model: %w", err)
		}
		dir := base.Dir
		if policy == suite.PolicyRL {
			dir = st.FinalDir(run.ID)
		}
		m, tok, err := loadCheckpoint(policy+" policy", dir)
		if err != nil {
			return suite.Measured{}, err
		}
		t, err := task.New(c.Task.Name, c.Task.Params)
		if err != nil {
			return suite.Measured{}, err
		}
		scorer, err := rewardModelScorer(rmDir)
		if err != nil {
			return suite.Measured{}, err
		}
		cfg := rl.TTCConfig{Prompts: c.Eval.Prompts, Ns: spec.Ns, Sampling: c.Rollout.Sampling(), Seed: uint64(run.Seed), Scorer: scorer,
			Tree: func(n int) (search.Strategy, error) {
				if !slices.Contains(spec.TreeLeaves, n) {
					return nil, fmt.Errorf("no tree of %d leaves asked for", n)
				}
				return rl.TreeWithLeaves(n)
			}}
		pts, err := rl.MeasureTTC(ctx, m, tok, t, cfg)
		if err != nil {
			return suite.Measured{}, err
		}
		desc := fmt.Sprintf("cache entry `reward/%s` (%s)", filepath.Base(rmDir), sum.Describe())
		return suite.Measured{Points: pts, RewardModel: desc}, nil
	}
}
