package config

import (
	"fmt"
	"slices"

	"github.com/rollout-rl/rollout/tracking"
)

// MeaningKeys are the settings a report discloses even at their defaults:
// they change what the budget or the metric means. Dynamic sampling
// (train.filter_groups, train.max_resample_rounds: filtered groups are
// sampled, counted in the budget and never trained on), the budget
// (train.total_tokens, train.steps, rollout.budget), the length cap and
// what the loss does with responses cut at it (rollout.max_tokens,
// train.overlong), and the evaluation (eval.prompts greedy, eval.samples
// per prompt at rollout.temperature for pass@k and maj@k, eval.k).
var MeaningKeys = []string{
	"train.filter_groups", "train.max_resample_rounds",
	"train.total_tokens", "train.steps", "rollout.budget",
	"rollout.max_tokens", "train.overlong",
	"eval.prompts", "eval.samples", "eval.k", "rollout.temperature",
}

// Setting is one resolved setting of a variant as a report discloses it.
type Setting struct {
	// Key is the dotted key (task.params.digits).
	Key string
	// Value is the variant's value and Default the default's ("(absent)"
	// for keys the defaults do not have, such as a task's parameters).
	Value, Default string
	// Meaning is set for the MeaningKeys.
	Meaning bool
}

// Disclose lists a resolved configuration's settings (a variant's config
// as the store records it) that differ from Defaults (the experiment's
// name aside), and every one of
// MeaningKeys, sorted by key. Keys a build leaves out of the text at their
// default (rollout.max_tokens: 0, train.overlong: truncate) are read at
// that default.
func Disclose(resolved string) ([]Setting, error) {
	text, err := Canonical(resolved)
	if err != nil {
		return nil, fmt.Errorf("disclose settings: %w", err)
	}
	def, err := Marshal(Defaults())
	if err != nil {
		return nil, fmt.Errorf("disclose settings: %w", err)
	}
	diffs, err := tracking.DiffConfigs(string(def), text)
	if err != nil {
		return nil, fmt.Errorf("disclose settings: %w", err)
	}
	all, err := tracking.DiffConfigs("{}", text)
	if err != nil {
		return nil, fmt.Errorf("disclose settings: %w", err)
	}
	defs, err := tracking.DiffConfigs("{}", string(def))
	if err != nil {
		return nil, fmt.Errorf("disclose settings: %w", err)
	}
	value := func(list []tracking.ConfigDiff, key, omitted string) string {
		for _, d := range list {
			if d.Key == key {
				return d.Given
			}
		}
		return omitted
	}
	var out []Setting
	for _, d := range diffs {
		if d.Given == "(absent)" && (d.Recorded == "null" || d.Recorded == "{}") {
			continue // an empty default replaced by keys of its own (task.params)
		}
		if d.Key == "name" {
			continue // the experiment's name, not a setting
		}
		out = append(out, Setting{Key: d.Key, Value: d.Given, Default: d.Recorded, Meaning: slices.Contains(MeaningKeys, d.Key)})
	}
	omitted := map[string]string{"rollout.max_tokens": "0", "train.overlong": "truncate"}
	for _, k := range MeaningKeys {
		if slices.ContainsFunc(out, func(s Setting) bool { return s.Key == k }) {
			continue
		}
		out = append(out, Setting{Key: k, Value: value(all, k, omitted[k]), Default: value(defs, k, omitted[k]), Meaning: true})
	}
	slices.SortFunc(out, func(a, b Setting) int {
		switch {
		case a.Key < b.Key:
			return -1
		case a.Key > b.Key:
			return 1
		}
		return 0
	})
	return out, nil
}
