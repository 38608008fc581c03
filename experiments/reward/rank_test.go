package reward

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/experiments/task"
)

func TestGroupsAndPairAUC(t *testing.T) {
	data := []Example{
		{Prompt: "a", Response: "1", Label: true},
		{Prompt: "b", Response: "2", Label: false},
		{Prompt: "a", Response: "3", Label: false},
		{Prompt: "b", Response: "4", Label: false},
	}
	gs := Groups(data)
	if len(gs) != 2 || gs[0].Prompt != "a" || len(gs[0].Responses) != 2 || gs[1].Responses[1] != "4" {
		t.Fatalf("Groups = %+v", gs)
	}
	if !gs[0].Mixed() || gs[1].Mixed() {
		t.Errorf("Mixed: %v %v, want true false", gs[0].Mixed(), gs[1].Mixed())
	}
	for _, tc := range []struct {
		labels []bool
		scores []float64
		want   float64
		ok     bool
	}{
		{[]bool{true, false}, []float64{1, 0}, 1, true},
		{[]bool{true, false}, []float64{0, 1}, 0, true},
		{[]bool{true, false, false}, []float64{1, 1, 0}, 0.75, true},
		{[]bool{true, true}, []float64{1, 0}, 0, false},
	} {
		if got, ok := PairAUC(tc.labels, tc.scores); got != tc.want || ok != tc.ok {
			t.Errorf("PairAUC(%v, %v) = %v, %v; want %v, %v", tc.labels, tc.scores, got, ok, tc.want, tc.ok)
		}
	}
}

// TestTrainRankingOrdersCandidates trains a small reward model from
// scratch with the pairwise loss on each train prompt's demonstration
// (right) and flawed demonstration (wrong) and checks that it orders the
// candidates of held-out prompts, that checkpoints along training see the
// model as it is then, and that training is deterministic.
func TestTrainRankingOrdersCandidates(t *testing.T) {
	tk := smallTask(t)
	train, held := Groups(demoData(t, tk, task.Train, 400)), Groups(demoData(t, tk, task.Eval, 100))
	cfg := RankConfig{Steps: 200, PromptsPerStep: 16, LR: 1e-3, HeadLR: 1e-2, BCE: 0.1, Seed: 1}
	trainOnce := func(cfg RankConfig) (*Model, []float64) {
		m := smallModel(t, 1)
		var aucs []float64
		err := TrainRanking(context.Background(), m, train, cfg, func(s Step) error {
			if s.Step%100 == 0 {
				auc, _, err := m.WithinPromptAUC(held)
				aucs = append(aucs, auc)
				return err
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return m, aucs
	}
	before, _, err := smallModel(t, 1).WithinPromptAUC(held)
	if err != nil {
		t.Fatal(err)
	}
	_, aucs := trainOnce(cfg)
	t.Logf("held-out within-prompt AUC: before %.3f, at steps 100 and 200: %v", before, aucs)
	if len(aucs) != 2 || aucs[1] < 0.65 {
		t.Errorf("held-out within-prompt AUC after training %v, want two checkpoints, the last ≥ 0.65", aucs)
	}
	cfg.Steps = 10
	m, _ := trainOnce(cfg)
	m2, _ := trainOnce(cfg)
	a, _ := m.Scores([]Pair{{Prompt: held[0].Prompt, Response: held[0].Responses[0]}})
	b, _ := m2.Scores([]Pair{{Prompt: held[0].Prompt, Response: held[0].Responses[0]}})
	if a[0] != b[0] {
		t.Errorf("two trainings of the same config score %v and %v", a[0], b[0])
	}
}

func TestTrainRankingErrors(t *testing.T) {
	m := smallModel(t, 1)
	onlyRight := []Group{{Prompt: "12+34", Responses: []string{"46"}, Labels: []bool{true}}}
	stop := errors.New("stop")
	for _, tc := range []struct {
		name   string
		groups []Group
		cfg    RankConfig
		onStep func(Step) error
		want   string
	}{
		{"no mixed prompt", onlyRight, RankConfig{}, nil, "no prompt has both"},
		{"negative steps", onlyRight, RankConfig{Steps: -1}, nil, "steps"},
		{"negative bce", onlyRight, RankConfig{BCE: -1}, nil, "bce"},
		{"onStep stops", []Group{{Prompt: "12+34", Responses: []string{"46", "47"}, Labels: []bool{true, false}}}, RankConfig{Steps: 5}, func(Step) error { return stop }, "stop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := TrainRanking(context.Background(), m, tc.groups, tc.cfg, tc.onStep)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming %q", err, tc.want)
			}
		})
	}
	if _, _, err := m.WithinPromptAUC(onlyRight); err == nil {
		t.Error("WithinPromptAUC without a mixed prompt: no error")
	}
}
