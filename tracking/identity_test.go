package tracking

import (
	"errors"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

func TestDiffConfigs(t *testing.T) {
	tests := []struct {
		name, a, b string
		want       []ConfigDiff
	}{
		{"same tree, other layout", "train: {lr: 1, steps: 2}\n", "train:\n  steps: 2\n  lr: 1\n", nil},
		{"yaml and json", "train: {lr: 1}\n", `{"train": {"lr": 1}}`, nil},
		{"changed value", "train: {total_tokens: 2000}\n", "train: {total_tokens: 3000}\n", []ConfigDiff{{"train.total_tokens", "2000", "3000"}}},
		{"absent key", "train: {lr: 1}\n", "train: {lr: 1, kl: 0.1}\n", []ConfigDiff{{"train.kl", "(absent)", "0.1"}}},
		{"list item", "seeds: [1, 2]\n", "seeds: [1, 3]\n", []ConfigDiff{{"seeds[1]", "2", "3"}}},
		{"sorted keys", "b: 1\na: {x: 1}\n", "b: 2\na: {x: 2}\n", []ConfigDiff{{"a.x", "1", "2"}, {"b", "1", "2"}}},
	}
	for _, tc := range tests {
		got, err := DiffConfigs(tc.a, tc.b)
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
	if _, err := DiffConfigs("a: [", "a: 1"); err == nil || !strings.Contains(err.Error(), "recorded config") {
		t.Errorf("bad yaml: %v", err)
	}
}

// An experiment name stands for one set of variant configs: more seeds and
// new variants extend it, another config for a recorded variant is refused
// and nothing is written.
func TestPutExperimentIdentity(t *testing.T) {
	s, _ := newStore(t, Options{NoSync: true})
	flat := "rollout: {strategy: flat}\ntrain: {total_tokens: 2000}\n"
	tree := "rollout: {strategy: tree}\ntrain: {total_tokens: 2000}\n"
	if err := s.PutExperiment(Experiment{Name: "e", Config: "v1", Variants: []string{"flat"}, Configs: map[string]string{"flat": flat}}); err != nil {
		t.Fatal(err)
	}
	// A new variant, and the old one unchanged (new config text: more seeds).
	if err := s.PutExperiment(Experiment{Name: "e", Config: "v2", Variants: []string{"tree"}, Configs: map[string]string{"tree": tree}}); err != nil {
		t.Fatal(err)
	}
	e, _ := s.Experiment("e")
	if !reflect.DeepEqual(e.Variants, []string{"flat", "tree"}) || len(e.Configs) != 2 || e.Config != "v2" {
		t.Errorf("extended experiment %+v", e)
	}
	before, _ := s.dump()
	err := s.PutExperiment(Experiment{Name: "e", Config: "v3", Variants: []string{"flat", "tree"}, Configs: map[string]string{
		"flat": strings.Replace(flat, "2000", "3000", 1), "tree": strings.Replace(tree, "tree", "segment", 1)}})
	var conflict *ConfigConflictError
	if !errors.As(err, &conflict) || len(conflict.Conflicts) != 2 {
		t.Fatalf("differing configs: %v", err)
	}
	for _, want := range []string{`experiment "e" is recorded with other variant configs`, `variant "flat": train.total_tokens is 2000 in the store, 3000 now`, `variant "tree": rollout.strategy is tree in the store, segment now`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if after, _ := s.dump(); !reflect.DeepEqual(before, after) {
		t.Error("a refused experiment changed the store")
	}
}

// An experiment recorded before variant configs were kept takes those of
// its runs: the same config is accepted (and recorded), another refused; a
// variant whose runs already disagree cannot be extended.
func TestPutExperimentLegacy(t *testing.T) {
	s, _ := newStore(t, Options{NoSync: true})
	legacy := func(name string, configs ...string) {
		t.Helper()
		err := s.db.Update(func(tx *bolt.Tx) error {
			return putJSON(tx.Bucket([]byte(bucketExperiments)), name, Experiment{Name: name, Variants: []string{"flat"}})
		})
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range configs {
			if _, err := s.BeginRun(Run{ID: name + string(rune('0'+i)), Experiment: name, Variant: "flat", Seed: int64(i), Config: c}); err != nil {
				t.Fatal(err)
			}
		}
	}
	legacy("old", "lr: 1\n", "lr: 1\n")
	err := s.PutExperiment(Experiment{Name: "old", Variants: []string{"flat"}, Configs: map[string]string{"flat": "lr: 2\n"}})
	if err == nil || !strings.Contains(err.Error(), `variant "flat": lr is 1 in the store, 2 now`) {
		t.Errorf("legacy, other config: %v", err)
	}
	if err := s.PutExperiment(Experiment{Name: "old", Variants: []string{"flat"}, Configs: map[string]string{"flat": "lr: 1\n"}}); err != nil {
		t.Fatalf("legacy, same config: %v", err)
	}
	if e, _ := s.Experiment("old"); e.Configs["flat"] != "lr: 1\n" {
		t.Errorf("legacy configs not filled: %+v", e)
	}
	legacy("mixed", "lr: 1\n", "lr: 2\n")
	err = s.PutExperiment(Experiment{Name: "mixed", Variants: []string{"flat"}, Configs: map[string]string{"flat": "lr: 1\n"}})
	if err == nil || !strings.Contains(err.Error(), `variant "flat": the store already holds runs of two configs under it (lr differs, e.g. run mixed1)`) {
		t.Errorf("legacy, mixed runs: %v", err)
	}
}

// Merging stores whose experiment of one name has other variant configs
// is refused; new variants are added.
func TestMergeExperimentConfigs(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, configs map[string]string) string {
		path := filepath.Join(dir, name)
		s, err := Open(path, Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		e := Experiment{Name: "exp", Configs: configs}
		for _, v := range slices.Sorted(maps.Keys(configs)) {
			e.Variants = append(e.Variants, v)
		}
		if err := s.PutExperiment(e); err != nil {
			t.Fatal(err)
		}
		return path
	}
	a := write("a.db", map[string]string{"flat": "lr: 1\n"})
	b := write("b.db", map[string]string{"flat": "lr: 1\n", "tree": "lr: 1\n"})
	c := write("c.db", map[string]string{"flat": "lr: 2\n"})
	into := filepath.Join(dir, "into.db")
	if _, err := Merge(into, []string{a, b}, Options{}); err != nil {
		t.Fatal(err)
	}
	s, err := Open(into, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	e, _ := s.Experiment("exp")
	s.Close()
	if !reflect.DeepEqual(e.Variants, []string{"flat", "tree"}) || len(e.Configs) != 2 {
		t.Errorf("merged experiment %+v", e)
	}
	var conflict *ConfigConflictError
	if _, err := Merge(into, []string{c}, Options{}); !errors.As(err, &conflict) || !strings.Contains(err.Error(), "lr is 1 in the store, 2 now") {
		t.Errorf("merge of other configs: %v", err)
	}
}
