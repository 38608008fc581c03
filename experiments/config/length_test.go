package config

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/experiments/rl"
)

// The run ids of the bundled configs are those they had before
// rollout.max_tokens and train.overlong existed: the new keys at their
// defaults are left out of the resolved config's JSON and of the variant
// configs a store records. (strategies.yaml's and path_strategies.yaml's
// are those of their designs of 2026-12-03, experiments strategies_confirm
// and path_strategies_confirm, whose configs changed.)
func TestBundledRunIDsUnchanged(t *testing.T) {
	for _, tc := range []struct{ file, first, last string }{
		{"long_add.yaml", "a011a4b63d2b", "77d10de2555d"},
		{"path_strategies.yaml", "b1058e7c461d", "d58a6b015e2e"},
		{"quickstart.yaml", "b9950931ad81", "2d8fb1b5c291"},
		{"strategies.yaml", "390560ba7155", "5ec266291961"},
		{"treerl_headline.yaml", "8c1e0bd85699", "778bbee7d925"},
	} {
		f, err := Load(filepath.Join("..", "configs", tc.file), nil)
		if err != nil {
			t.Fatal(err)
		}
		runs := f.Runs()
		if runs[0].ID != tc.first || runs[len(runs)-1].ID != tc.last {
			t.Errorf("%s: run ids %s … %s, want %s … %s", tc.file, runs[0].ID, runs[len(runs)-1].ID, tc.first, tc.last)
		}
		b, _ := json.Marshal(runs[0].Config)
		for _, k := range []string{"max_tokens", "overlong", "bf16", "async"} {
			if strings.Contains(string(b), `"`+k) {
				t.Errorf("%s: the resolved JSON holds %q: %s", tc.file, k, b)
			}
		}
		// The variant configs a store records (Marshal) leave them out too,
		// so experiments recorded before the keys existed still resume.
		y, err := Marshal(runs[0].Config)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"max_tokens:", "overlong:", "overlong_cache:", "save_final:", "bf16:", "async:"} {
			if strings.Contains(string(y), k) {
				t.Errorf("%s: the recorded variant config holds %q", tc.file, k)
			}
		}
	}
}

// Settings that change nothing resolve to the defaults' run: a cap equal
// to the task's maximum, overlong: truncate, a cache without penalty. The
// others reach the config and change the id.
func TestLengthKeysResolve(t *testing.T) {
	const base = "task: {name: add, params: {digits: 2}}\n" // responses up to 9 characters: cap 10 with EOS
	id := func(overrides ...string) (string, Experiment) {
		t.Helper()
		return firstRun(t, base, overrides...)
	}
	plain, c := id()
	if c.Rollout.MaxTokens != 0 || c.Train.Overlong != rl.OverlongTruncate || c.Train.OverlongCache != 0 {
		t.Fatalf("defaults: max_tokens %d, overlong %q, cache %d", c.Rollout.MaxTokens, c.Train.Overlong, c.Train.OverlongCache)
	}
	for _, same := range [][]string{
		{"rollout.max_tokens=10"}, {"rollout.max_tokens=0"}, {"train.overlong=truncate"},
		{"train.overlong=truncate", "train.overlong_cache=4"}, {"train.overlong=filter", "train.overlong_cache=4"},
	} {
		got, c := id(same...)
		if same[0] == "train.overlong=filter" {
			if c.Train.OverlongCache != 0 {
				t.Errorf("%v: cache %d kept without penalty", same, c.Train.OverlongCache)
			}
			continue
		}
		if got != plain {
			t.Errorf("%v: run id %s, want the defaults' %s", same, got, plain)
		}
	}
	seen := map[string]string{plain: "defaults"}
	for _, diff := range [][]string{
		{"rollout.max_tokens=8"}, {"train.overlong=filter"},
		{"train.overlong=penalty", "train.overlong_cache=4"}, {"train.overlong=penalty", "train.overlong_cache=5"},
	} {
		got, c := id(diff...)
		if prev, ok := seen[got]; ok {
			t.Errorf("%v: run id %s, the same as %s", diff, got, prev)
		}
		seen[got] = strings.Join(diff, " ")
		b, _ := json.Marshal(c)
		if !strings.Contains(string(b), strings.SplitN(strings.TrimPrefix(strings.TrimPrefix(diff[0], "rollout."), "train."), "=", 2)[0]) {
			t.Errorf("%v: not in the resolved JSON %s", diff, b)
		}
	}
}

// Bad lengths and overlong settings are errors naming the key and value.
func TestLengthKeyErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		src  string
		want string
	}{
		{"cap above the task's", "task: {name: add, params: {digits: 2}}\nrollout:\n  max_tokens: 40\n", "c.yaml:3: rollout.max_tokens: 40, want in [1, 10] (task add's longest response, 9 tokens, and EOS"},
		{"negative cap", "task: {name: add}\nrollout:\n  max_tokens: -1\n", "c.yaml:3: rollout.max_tokens: -1, want in [1,"},
		{"cap not a number", "task: {name: add}\nrollout:\n  max_tokens: long\n", `c.yaml:3: rollout.max_tokens: "long" is not an integer`},
		{"unknown mode", "task: {name: add}\ntrain:\n  overlong: drop\n", `c.yaml:3: train.overlong: "drop", want one of truncate, filter, penalty`},
		{"penalty without cache", "task: {name: add}\ntrain:\n  overlong: penalty\n", "train.overlong_cache: 0, want ≥ 1 with train.overlong: penalty"},
		{"cache above the cap", "task: {name: add, params: {digits: 2}}\nrollout: {max_tokens: 8}\ntrain:\n  overlong: penalty\n  overlong_cache: 9\n", "c.yaml:5: train.overlong_cache: 9 is longer than the response cap L_max = 8 tokens"},
		{"negative cache", "task: {name: add}\ntrain:\n  overlong_cache: -2\n", "c.yaml:3: train.overlong_cache: -2, want ≥ 0"},
	} {
		_, err := Parse("c.yaml", []byte(tc.src), nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

// Canonical turns a variant config recorded by a build that wrote the
// length keys at their defaults, and one recorded before they existed,
// into today's text, so that the store compares them equal; a real
// difference stays.
func TestCanonicalRecordedConfigs(t *testing.T) {
	f, err := Load(filepath.Join("..", "configs", "quickstart.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	today, err := Marshal(f.Variants[0].Config)
	if err != nil {
		t.Fatal(err)
	}
	withDefaults := strings.Replace(string(today), "\ntrain:\n", "\ntrain:\n  overlong: truncate\n  overlong_cache: 0\n", 1)
	if withDefaults == string(today) {
		t.Fatal("no train: section in the resolved config")
	}
	changed := strings.Replace(string(today), "\ntrain:\n", "\ntrain:\n  overlong: filter\n", 1)
	for _, tc := range []struct {
		name, text string
		same       bool
	}{
		{"today's", string(today), true},
		{"with the defaults written", withDefaults, true},
		{"with another setting", changed, false},
	} {
		got, err := Canonical(tc.text)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if (got == string(today)) != tc.same {
			t.Errorf("%s: canonical text equal to today's = %v, want %v", tc.name, got == string(today), tc.same)
		}
	}
}

// firstRun parses the config text with the overrides and returns its first
// run's id and its first variant's resolved config.
func firstRun(t *testing.T, text string, overrides ...string) (string, Experiment) {
	t.Helper()
	f, err := Parse("c.yaml", []byte(text), overrides)
	if err != nil {
		t.Fatal(err)
	}
	return f.Runs()[0].ID, f.Variants[0].Config
}

// experiments/configs/async.yaml declares its checks: the asynchronous
// variants against the synchronous loop, in accuracy at the budget and in
// wall time to spend it, each variant with its staleness.
func TestAsyncDesignDeclared(t *testing.T) {
	f, err := Load(filepath.Join("..", "configs", "async.yaml"), nil)
	if err != nil {
		t.Fatal(err)
	}
	stale := map[string]int{}
	for _, v := range f.Variants {
		stale[v.Name] = v.Config.Train.Async
	}
	if stale["sync"] != 0 || stale["async1"] != 1 || stale["async2"] != 2 || f.Baseline != "sync" {
		t.Fatalf("variants' train.async %v, baseline %s", stale, f.Baseline)
	}
	want := map[string]string{"async1_keeps_accuracy": "eval/acc", "async2_keeps_accuracy": "eval/acc", "async1_faster": "wall_s", "async2_faster": "wall_s"}
	for _, c := range f.Design.Checks {
		if want[c.Name] != c.Metric {
			t.Errorf("check %s on %s", c.Name, c.Metric)
		}
		if c.Metric == "wall_s" && c.At != "mean" {
			t.Errorf("check %s reads wall_s at %s; the reports read a run's wall time at mean only", c.Name, c.At)
		}
		delete(want, c.Name)
	}
	if len(want) > 0 {
		t.Errorf("checks not declared: %v", want)
	}
}
