package reward

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
)

func TestCollect(t *testing.T) {
	tk := smallTask(t)
	base, err := policy.NewModel(smallConfig, 11)
	if err != nil {
		t.Fatal(err)
	}
	tok := policy.DefaultTokenizer()
	ctx := context.Background()
	cfg := CollectConfig{Split: task.Eval, Prompts: 5, Samples: 3, Seed: 2}
	exs, stats, err := Collect(ctx, base, tok, tk, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(exs) == 0 || stats.Skipped == 0 {
		t.Fatalf("stats %+v: want both kept and skipped samples from this random model", stats)
	}
	if stats.Samples != 15 || len(exs)+stats.Skipped != 15 {
		t.Fatalf("stats %+v with %d examples, want 15 samples = examples + skipped", stats, len(exs))
	}
	pos := 0
	byPrompt := map[string][]string{}
	for _, ex := range exs {
		if task.SplitOf(ex.Prompt) != task.Eval {
			t.Errorf("prompt %q is not an eval prompt", ex.Prompt)
		}
		p, err := tk.ParsePrompt(ex.Prompt)
		if err != nil {
			t.Fatal(err)
		}
		v := tk.Verify(p, ex.Response)
		if ex.Label != (v.Reward == 1) || ex.Reason != v.Reason {
			t.Errorf("%q → %q: label %v reason %s, verifier says %+v", ex.Prompt, ex.Response, ex.Label, ex.Reason, v)
		}
		if ex.Label {
			pos++
		}
		byPrompt[ex.Prompt] = append(byPrompt[ex.Prompt], ex.Response)
	}
	if pos != stats.Positives {
		t.Errorf("stats count %d positives, examples hold %d", stats.Positives, pos)
	}
	again, _, err := Collect(ctx, base, tok, tk, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(exs, again) {
		t.Error("two identical collections differ")
	}
	// Prompts 2 and 3 alone get the responses they got among all five.
	sub, _, err := Collect(ctx, base, tok, tk, CollectConfig{Split: task.Eval, First: 2, Prompts: 2, Samples: 3, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	subBy := map[string][]string{}
	for _, ex := range sub {
		subBy[ex.Prompt] = append(subBy[ex.Prompt], ex.Response)
	}
	for prompt, rs := range subBy {
		if !slices.Equal(rs, byPrompt[prompt]) {
			t.Errorf("prompt %q: responses %q alone, %q among others", prompt, rs, byPrompt[prompt])
		}
	}
}

func TestCollectErrors(t *testing.T) {
	tk := smallTask(t)
	base, err := policy.NewModel(smallConfig, 1)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		cfg  CollectConfig
		want string
	}{
		{CollectConfig{Split: 7}, "unknown split"},
		{CollectConfig{First: -1}, "first prompt index -1"},
		{CollectConfig{Prompts: -3}, "prompts = -3"},
		{CollectConfig{Samples: -1}, "samples = -1"},
		{CollectConfig{Temperature: -0.5}, "temperature = -0.5"},
	}
	for _, c := range cases {
		_, _, err := Collect(context.Background(), base, policy.DefaultTokenizer(), tk, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Collect(%+v) error = %v, want one containing %q", c.cfg, err, c.want)
		}
	}
}

func TestEvaluateErrors(t *testing.T) {
	m := smallModel(t, 1)
	if _, err := m.Evaluate(nil); err == nil {
		t.Error("Evaluate of no examples: no error")
	}
	if _, err := m.Evaluate([]Example{{Prompt: "1+2", Response: "03=3", Label: true}}); err == nil || !strings.Contains(err.Error(), "0 negatives") {
		t.Errorf("Evaluate of positives only: %v", err)
	}
}
