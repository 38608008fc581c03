// This file: config identity, the variant configs an experiment name stands for and their key-by-key diff.

package tracking

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	bolt "go.etcd.io/bbolt"
	"go.yaml.in/yaml/v3"
)

// ConfigDiff is one dotted key whose value differs between two resolved
// configurations. Absent values read "(absent)".
type ConfigDiff struct {
	Key      string
	Recorded string
	Given    string
}

// DiffConfigs compares two resolved configuration texts (YAML or JSON) key
// by key and returns the keys whose values differ, sorted. Nested mappings
// are flattened to dotted keys (train.total_tokens), sequence items to
// key[i]. Two texts that parse to the same tree have no differences,
// whatever their formatting.
func DiffConfigs(recorded, given string) ([]ConfigDiff, error) {
	a, err := flattenConfig(recorded)
	if err != nil {
		return nil, fmt.Errorf("recorded config: %w", err)
	}
	b, err := flattenConfig(given)
	if err != nil {
		return nil, fmt.Errorf("given config: %w", err)
	}
	keys := slices.Sorted(maps.Keys(a))
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	var out []ConfigDiff
	for _, k := range keys {
		va, oka := a[k]
		vb, okb := b[k]
		if oka && okb && va == vb {
			continue
		}
		if !oka {
			va = "(absent)"
		}
		if !okb {
			vb = "(absent)"
		}
		out = append(out, ConfigDiff{Key: k, Recorded: va, Given: vb})
	}
	return out, nil
}

// flattenConfig parses a configuration text into dotted key → scalar text.
func flattenConfig(text string) (map[string]string, error) {
	var root any
	if err := yaml.Unmarshal([]byte(text), &root); err != nil {
		return nil, err
	}
	out := map[string]string{}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			if len(x) == 0 && prefix != "" {
				out[prefix] = "{}"
			}
			for k, e := range x {
				walk(joinKey(prefix, k), e)
			}
		case map[any]any:
			if len(x) == 0 && prefix != "" {
				out[prefix] = "{}"
			}
			for k, e := range x {
				walk(joinKey(prefix, fmt.Sprint(k)), e)
			}
		case []any:
			if len(x) == 0 {
				out[prefix] = "[]"
			}
			for i, e := range x {
				walk(prefix+"["+strconv.Itoa(i)+"]", e)
			}
		case nil:
			if prefix != "" {
				out[prefix] = "null"
			}
		default:
			out[prefix] = fmt.Sprint(x)
		}
	}
	walk("", root)
	return out, nil
}

func joinKey(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

// VariantConflict is a variant whose resolved configuration differs from
// the one recorded with its experiment.
type VariantConflict struct {
	Variant string
	Diffs   []ConfigDiff
	// Note, when set, replaces the diffs as the explanation (e.g. the
	// store already holds runs of two configurations under the variant).
	Note string
}

// ConfigConflictError is PutExperiment's refusal to record, under an
// existing experiment name, variants whose resolved configurations differ
// from those the experiment was run with: the experiment's runs would mix
// two settings.
type ConfigConflictError struct {
	Experiment string
	Conflicts  []VariantConflict
}

// Error names each differing variant and dotted key with both values.
func (e *ConfigConflictError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "experiment %q is recorded with other variant configs", e.Experiment)
	for _, c := range e.Conflicts {
		fmt.Fprintf(&b, "; variant %q: ", c.Variant)
		if c.Note != "" {
			b.WriteString(c.Note)
			continue
		}
		for i, d := range c.Diffs {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "%s is %s in the store, %s now", d.Key, d.Recorded, d.Given)
		}
	}
	return b.String()
}

// recordedConfigs returns the variant configs an experiment stands for:
// those recorded with it, or, for an experiment recorded before variant
// configs were kept, those of its runs (each variant's runs must then
// agree; a variant whose runs disagree is returned as a conflict).
func recordedConfigs(tx *bolt.Tx, prev Experiment) (map[string]string, []VariantConflict, error) {
	return runConfigs(tx, prev, decodeJSON)
}

// runConfigs is recordedConfigs with the decoder of run records (unsealed
// ones in Migrate).
func runConfigs(tx *bolt.Tx, prev Experiment, decode func(k, v []byte, r any) error) (map[string]string, []VariantConflict, error) {
	if prev.Configs != nil {
		return prev.Configs, nil, nil
	}
	out := map[string]string{}
	var conflicts []VariantConflict
	runs := tx.Bucket([]byte(bucketRuns))
	err := runs.ForEach(func(k, v []byte) error {
		var r Run
		if err := decode(k, v, &r); err != nil {
			return fmt.Errorf("run %s: decoding its record: %w", k, err)
		}
		if r.Experiment != prev.Name || r.Config == "" {
			return nil
		}
		seen, ok := out[r.Variant]
		if !ok {
			out[r.Variant] = r.Config
			return nil
		}
		diffs, err := DiffConfigs(seen, r.Config)
		if err != nil {
			return fmt.Errorf("run %s: %w", r.ID, err)
		}
		if len(diffs) > 0 && !slices.ContainsFunc(conflicts, func(c VariantConflict) bool { return c.Variant == r.Variant }) {
			conflicts = append(conflicts, VariantConflict{Variant: r.Variant,
				Note: fmt.Sprintf("the store already holds runs of two configs under it (%s differs, e.g. run %s)", diffs[0].Key, r.ID)})
		}
		return nil
	})
	return out, conflicts, err
}

// mergeExperiment checks e against the experiment prev recorded under the
// same name and returns the record to store: the variants and configs of
// both (prev's variants first, then e's new ones). It fails with a *ConfigConflictError when a
// variant of e has a config other than the recorded one, or when prev is a
// record without variant configs whose runs already mix two configs under
// one variant (such an experiment cannot be extended; a new name can).
func mergeExperiment(tx *bolt.Tx, prev, e Experiment) (Experiment, error) {
	recorded, conflicts, err := recordedConfigs(tx, prev)
	if err != nil {
		return e, fmt.Errorf("experiment %q: %w", e.Name, err)
	}
	for _, v := range slices.Sorted(maps.Keys(e.Configs)) {
		old, ok := recorded[v]
		if !ok || slices.ContainsFunc(conflicts, func(c VariantConflict) bool { return c.Variant == v }) {
			continue
		}
		if e.Canonical != nil {
			if text, err := e.Canonical(old); err == nil {
				old = text
			}
		}
		diffs, err := DiffConfigs(old, e.Configs[v])
		if err != nil {
			return e, fmt.Errorf("experiment %q variant %q: %w", e.Name, v, err)
		}
		if len(diffs) > 0 {
			conflicts = append(conflicts, VariantConflict{Variant: v, Diffs: diffs})
		}
	}
	if len(conflicts) > 0 {
		slices.SortFunc(conflicts, func(a, b VariantConflict) int { return cmp.Compare(a.Variant, b.Variant) })
		return e, &ConfigConflictError{Experiment: e.Name, Conflicts: conflicts}
	}
	merged := maps.Clone(recorded)
	if merged == nil {
		merged = map[string]string{}
	}
	maps.Copy(merged, e.Configs)
	if len(merged) > 0 {
		e.Configs = merged
	}
	// The recorded order first: the first variant is reports' default
	// baseline, which new variants do not displace.
	variants := slices.Clone(prev.Variants)
	for _, v := range e.Variants {
		if !slices.Contains(variants, v) {
			variants = append(variants, v)
		}
	}
	e.Variants = variants
	if e.Baseline == "" {
		e.Baseline = prev.Baseline
	}
	e.Created = prev.Created
	return e, nil
}
