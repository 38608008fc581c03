package rl

import (
	"errors"
	"testing"

	"github.com/rollout-rl/rollout/experiments/config/field"
)

// Validate's errors are typed, naming the key and the value.
func TestValidateFieldErrors(t *testing.T) {
	for _, tc := range []struct {
		err   error
		key   string
		value any
	}{
		{func() error { c := DefaultConfig(); c.LR = -1; return c.Validate() }(), "train.lr", -1.0},
		{func() error { c := DefaultConfig(); c.PromptsPerStep = 0; return c.Validate() }(), "train.prompts_per_step", 0},
		{func() error { c := DefaultConfig(); c.Steps, c.TotalTokens = 0, 0; return c.Validate() }(), "train.steps", 0},
		{func() error { c := DefaultConfig(); c.Advantage = "ppo"; return c.Validate() }(), "train.advantage", "ppo"},
		{func() error { c := DefaultConfig(); c.Correction = "x"; return c.Validate() }(), "train.correction", "x"},
		{func() error { c := DefaultEvalConfig(); c.K = 9; return c.Validate() }(), "eval.k", 9},
		{func() error { c := DefaultEvalConfig(); c.Every = -1; return c.Validate() }(), "eval.every", -1},
	} {
		var fe *field.Error
		if !errors.As(tc.err, &fe) || fe.Key != tc.key || fe.Value != tc.value {
			t.Errorf("error %v (%+v), want a field error on %s = %v", tc.err, fe, tc.key, tc.value)
		}
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Error(err)
	}
	if err := DefaultEvalConfig().Validate(); err != nil {
		t.Error(err)
	}
}
