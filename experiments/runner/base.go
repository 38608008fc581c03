package runner

import (
	"context"
	"fmt"

	"github.com/rollout-rl/rollout/experiments/config"
	"github.com/rollout-rl/rollout/experiments/pretrain"
	"github.com/rollout-rl/rollout/experiments/reward"
	"github.com/rollout-rl/rollout/experiments/rl"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/team"
)

// Base is a run's base policy: the checkpoint its RL starts from.
type Base struct {
	// Dir is the checkpoint directory.
	Dir string
	// FromConfig is true when the config named the checkpoint
	// (`checkpoint:`); Summary is then zero.
	FromConfig bool
	// Cached is true when pretraining was not needed: the cache had it.
	Cached bool
	// Summary describes the pretraining (loss, held-out accuracy, time).
	Summary pretrain.Summary
}

// BasePolicy finds the base policy of a config: the config's `checkpoint:`
// when it names one, else the cached pretrained policy of its task and
// pretrain settings under cacheDir, trained first (reporting each step to
// onStep, which may be nil) when the cache does not have it. `rollout run`,
// `rollout pretrain` and `rollout reward-model` all find base policies here.
func BasePolicy(ctx context.Context, c config.Experiment, cacheDir string, onStep func(pretrain.Step)) (Base, error) {
	if c.Checkpoint != "" {
		return Base{Dir: c.Checkpoint, FromConfig: true}, nil
	}
	t, err := task.New(c.Task.Name, c.Task.Params)
	if err != nil {
		return Base{}, err
	}
	if onStep == nil {
		onStep = func(pretrain.Step) {}
	}
	dir, sum, cached, err := pretrain.Cached(ctx, cacheDir, t, c.Task.Params, c.Pretrain, onStep)
	if err != nil {
		return Base{}, fmt.Errorf("pretrain base policy for %s: %w", c.Task.Name, err)
	}
	return Base{Dir: dir, Cached: cached, Summary: sum}, nil
}

// baseKey identifies the base policy a config starts from.
func baseKey(c config.Experiment) string {
	if c.Checkpoint != "" {
		return "checkpoint:" + c.Checkpoint
	}
	return fmt.Sprintf("%s %v %+v", c.Task.Name, c.Task.Params, c.Pretrain)
}

// rewardModelKey identifies the reward model a config uses.
func rewardModelKey(c config.Experiment) string {
	return baseKey(c) + fmt.Sprintf(" %+v", c.RewardModel)
}

// RewardModel finds the learned reward model of a config built on the base
// policy in baseDir: from the cache under cacheDir, or built first
// (reporting each step to onStep, which may be nil). The bool reports
// whether it came from the cache.
func RewardModel(ctx context.Context, c config.Experiment, cacheDir, baseDir string, onStep func(reward.Step)) (string, reward.Summary, bool, error) {
	t, err := task.New(c.Task.Name, c.Task.Params)
	if err != nil {
		return "", reward.Summary{}, false, err
	}
	if onStep == nil {
		onStep = func(reward.Step) {}
	}
	dir, sum, cached, err := reward.Cached(ctx, cacheDir, baseDir, t, c.Task.Params, c.RewardModel, onStep)
	if err != nil {
		return "", reward.Summary{}, false, fmt.Errorf("reward model for %s: %w", c.Task.Name, err)
	}
	return dir, sum, cached, nil
}

// NewSetup builds what the RL loop of one run needs from its resolved
// config: the task, the base policy loaded from baseDir (and a second copy
// as the KL reference when train.kl_coef > 0), the strategy, the sampling
// settings and the reward mixer (with the reward model from rewardDir when
// reward.model is set). `rollout run` and `rollout sample` build their
// setups here. Each model runs its passes on its own team, sized from
// GOMAXPROCS (policy.Model.SetTeam).
func NewSetup(c config.Experiment, seed uint64, baseDir, rewardDir string) (rl.Setup, error) {
	return newSetup(c, seed, baseDir, rewardDir, nil)
}

// newSetup is NewSetup with every model of the run (policy, reference,
// reward model) running its passes on tm, when tm is not nil.
func newSetup(c config.Experiment, seed uint64, baseDir, rewardDir string, tm *team.Team) (rl.Setup, error) {
	s, err := c.Setup()
	if err != nil {
		return rl.Setup{}, err
	}
	s.Seed = seed
	if s.Policy, s.Tokenizer, err = policy.Load(baseDir); err != nil {
		return rl.Setup{}, err
	}
	useTeam(s.Policy, tm)
	if c.Train.KLCoef > 0 {
		if s.Reference, _, err = policy.Load(baseDir); err != nil {
			return rl.Setup{}, err
		}
		useTeam(s.Reference, tm)
	}
	if c.Reward != reward.DefaultConfig() {
		var rm *reward.Model
		if c.Reward.Model != 0 {
			if rm, err = reward.Load(rewardDir); err != nil {
				return rl.Setup{}, err
			}
			useTeam(rm.Body, tm)
		}
		if s.Reward, err = reward.NewMixer(c.Reward, s.Task, rm); err != nil {
			return rl.Setup{}, err
		}
	}
	return s, nil
}

// useTeam makes m run its passes on tm unless tm is nil (m keeps its own).
func useTeam(m *policy.Model, tm *team.Team) {
	if tm != nil {
		m.SetTeam(tm)
	}
}
