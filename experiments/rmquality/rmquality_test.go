package rmquality

import (
	"io"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/experiments/reward"
	"github.com/rollout-rl/rollout/experiments/rl"
)

func valid() Config {
	return Config{TrainPrompts: 4, HeldOutPrompts: 4, Samples: 4, Every: 10, Seeds: []uint64{1, 2}, TTC: rl.TTCConfig{Prompts: 10, Ns: []int{1, 4}}}
}

func TestConfigValidate(t *testing.T) {
	if err := valid().Validate(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"one sample", func(c *Config) { c.Samples = 1 }, "samples"},
		{"no checkpoints", func(c *Config) { c.Every = 0 }, "checkpoints every"},
		{"no seeds", func(c *Config) { c.Seeds = nil }, "no seeds"},
		{"bad rank", func(c *Config) { c.Rank.BCE = -1 }, "bce"},
		{"likelihood with bce", func(c *Config) { c.Scoring, c.Rank.BCE = reward.LikelihoodScore, 0.2 }, "bce 0.2 with the likelihood"},
		{"negative mark", func(c *Config) { c.Marks = []int{5, -5} }, "marks [5 -5]"},
		{"negative near misses", func(c *Config) { c.NearMisses = -1 }, "-1 near misses"},
		{"validation on trained prompts", func(c *Config) { c.Validation, c.HeldOutFirst = true, 3 }, "overlap the 4 trained on"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := valid()
			tc.edit(&c)
			if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming %q", err, tc.want)
			}
		})
	}
}

// The report gives every checkpoint's AUC, the measured ones' best-of-N
// as mean ± interval over seeds, and the reference rows.
func TestWriteMarkdown(t *testing.T) {
	pt := func(method string, n int, acc, auc float64) rl.TTCPoint {
		return rl.TTCPoint{Method: method, N: n, Acc: acc, ScorerAUC: auc}
	}
	sweep := func(acc float64) []rl.TTCPoint {
		return []rl.TTCPoint{pt("best_of_n", 1, 0.2, 0.5), pt("best_of_n", 4, acc, 0.7), pt("oracle", 4, 0.6, 1), pt("majority", 4, 0.3, 0)}
	}
	res := Result{Config: valid(), Train: reward.CollectStats{Samples: 16, Positives: 5}, HeldOut: reward.CollectStats{Samples: 16, Positives: 4},
		Checkpoints: []Checkpoint{
			{Step: 0, AUC: 0.5, Prompts: 3, TTC: [][]rl.TTCPoint{sweep(0.2), sweep(0.2)}},
			{Step: 10, AUC: 0.7, Prompts: 3},
			{Step: 20, AUC: 0.9, Prompts: 3, TTC: [][]rl.TTCPoint{sweep(0.4), sweep(0.5)}},
		}}
	write := func(wants ...string) string {
		t.Helper()
		var b strings.Builder
		if err := WriteMarkdown(&b, res, "rollout rm-quality x.yaml"); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		for _, want := range wants {
			if !strings.Contains(out, want) {
				t.Errorf("report lacks %q:\n%s", want, out)
			}
		}
		return out
	}
	out := write(
		"| 20 | 0.900 (3) | 0.700 ± 0.000 | 0.200 ± 0.000 | 0.450 ± 0.635 |",
		"| 10 | 0.700 (3) | — | — | — |",
		"| verifier (oracle) | — | — | — | 0.600 ± 0.000 |",
		"Best-of-4 goes from 0.200 at step 0 to 0.450 at step 20",
		"no near misses added",
		"a checkpoint every 10 steps and at step 0",
		"with a scalar head on EOS",
		"at step 0 the head is zero",
		"on 4 eval-split prompts × 4 samples",
	)
	if strings.Contains(out, "one measured checkpoint to the next") {
		t.Errorf("two measured checkpoints: a trend table\n%s", out)
	}

	// A third measured checkpoint: the step-to-step table over trained
	// checkpoints, paired over seeds; near misses and a validation set
	// are described.
	res.Checkpoints = append(res.Checkpoints, Checkpoint{Step: 30, AUC: 0.95, Prompts: 3, TTC: [][]rl.TTCPoint{sweep(0.6), sweep(0.5)}})
	res.Config.NearMisses, res.NearMisses = 2, 7
	res.Config.Marks = []int{10, 20}
	res.Config.Scoring = reward.LikelihoodScore
	res.Config.Validation, res.Config.HeldOutFirst = true, 100
	write(
		"| 20 (0.900) | 30 (0.950) | +0.050 | +0.100 [-1.171, +1.371] |",
		"and 7 near misses as hard negatives (up to 2 a right candidate",
		"train-split prompts 100–103 (a validation set past the 4 trained on",
		"checkpoints at steps 10 20 (fixed before the training), the last step and step 0",
		"scoring a response by its log-likelihood",
		"step 0 is the untrained body's own likelihood",
	)
	res.Checkpoints = res.Checkpoints[1:2]
	if err := WriteMarkdown(io.Discard, res, "x"); err == nil {
		t.Error("no checkpoint measured: no error")
	}
}

func TestExistingNeedsCheckpoints(t *testing.T) {
	var res Result
	if err := existing(t.TempDir(), nil, &res, func(string) {}); err == nil || !strings.Contains(err.Error(), "no checkpoints") {
		t.Errorf("empty directory: error %v", err)
	}
}

func TestMark(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		step int
		want bool
	}{
		{Config{Every: 10}, 20, true},
		{Config{Every: 10}, 25, false},
		{Config{Every: 10, Marks: []int{25, 100}}, 25, true},
		{Config{Every: 10, Marks: []int{25, 100}}, 20, false},
	} {
		if got := tc.cfg.mark(tc.step); got != tc.want {
			t.Errorf("every %d, marks %v: mark(%d) = %v, want %v", tc.cfg.Every, tc.cfg.Marks, tc.step, got, tc.want)
		}
	}
}
