package config

import (
	"strings"
	"testing"
)

// Disclose lists what differs from the defaults and every setting that
// changes what the budget or the metric means, at its default too.
func TestDisclose(t *testing.T) {
	f, err := Parse("d.yaml", []byte(designedConfig), nil)
	if err != nil {
		t.Fatal(err)
	}
	text, err := Marshal(f.Variants[1].Config)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Disclose(string(text))
	if err != nil {
		t.Fatal(err)
	}
	byKey := map[string]Setting{}
	for _, s := range got {
		byKey[s.Key] = s
	}
	for _, want := range []Setting{
		{Key: "task.name", Value: "add", Default: "", Meaning: false},
		{Key: "task.params.digits", Value: "2", Default: "(absent)"},
		{Key: "train.filter_groups", Value: "true", Default: "true", Meaning: true},
		{Key: "train.max_resample_rounds", Value: "2", Default: "2", Meaning: true},
		{Key: "rollout.max_tokens", Value: "0", Default: "0", Meaning: true},
		{Key: "train.overlong", Value: "truncate", Default: "truncate", Meaning: true},
		{Key: "rollout.temperature", Value: "1", Default: "1", Meaning: true},
	} {
		if s, ok := byKey[want.Key]; !ok || s != want {
			t.Errorf("%s: %+v, want %+v", want.Key, s, want)
		}
	}
	if _, ok := byKey["train.lr"]; ok {
		t.Errorf("train.lr at its default is disclosed")
	}
	if _, ok := byKey["name"]; ok {
		t.Errorf("the experiment's name is disclosed as a setting")
	}
	base, _ := Marshal(f.Variants[0].Config)
	got, _ = Disclose(string(base))
	for _, s := range got {
		if s.Key == "train.filter_groups" && (s.Value != "false" || !s.Meaning) {
			t.Errorf("the baseline's filter_groups: %+v", s)
		}
	}
	if _, err := Disclose("train: [oops"); err == nil || !strings.Contains(err.Error(), "disclose settings") {
		t.Errorf("a bad text: %v", err)
	}
}
