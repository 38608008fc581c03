package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rollout-rl/rollout/experiments/design"
	"github.com/rollout-rl/rollout/tracking/report"
)

// parseDesign decodes the file's design: key (design.Default when there
// is none) and checks it against the file's variants. Errors name the
// key's line: "cfg.yaml:31: design.checks[1].want: …".
func (t *tree) parseDesign(n *yaml.Node, f *File) (design.Design, error) {
	d := design.Default()
	if n == nil {
		return d, nil
	}
	if err := decodeStrict(n, &d, "design"); err != nil {
		return d, t.atNode(n, err)
	}
	names := make([]string, len(f.Variants))
	for i, v := range f.Variants {
		names[i] = v.Name
	}
	err := d.Validate(names, func(at string) error {
		if _, err := report.ParseAt(at); err != nil {
			return errors.New(strings.TrimPrefix(err.Error(), "--at "))
		}
		return nil
	})
	if fe, ok := err.(*design.FieldError); ok {
		return d, t.atNode(n, &Error{Line: lineOf(n, fe.Key), Key: "design." + fe.Key, Msg: fe.Msg, Err: fe})
	}
	return d, err
}

// lineOf is the line of the dotted key (items as key[i]) under mapping n,
// or of the deepest part of it that exists.
func lineOf(n *yaml.Node, key string) int {
	line := n.Line
	for _, part := range strings.Split(key, ".") {
		name, index, hasIndex := strings.Cut(strings.TrimSuffix(part, "]"), "[")
		k, v := findPair(n, name)
		if k == nil {
			return line
		}
		line, n = k.Line, v
		if hasIndex {
			i, err := strconv.Atoi(index)
			if err != nil || n.Kind != yaml.SequenceNode || i >= len(n.Content) {
				return line
			}
			n = n.Content[i]
			line = n.Line
		}
	}
	return line
}

// DesignRecord is the file's whole resolved design: every variant's
// resolved configuration, the seeds, the baseline and the declared
// checks. rollout run records it, with its hash, before its first run.
func (f *File) DesignRecord() (design.Record, error) {
	r := design.Record{Experiment: f.Name, Baseline: f.Baseline, Seeds: f.Seeds, Design: f.Design}
	for _, v := range f.Variants {
		text, err := Marshal(v.Config)
		if err != nil {
			return r, fmt.Errorf("design of %s: variant %s: %w", f.Name, v.Name, err)
		}
		tree, err := design.ConfigTree(string(text))
		if err != nil {
			return r, fmt.Errorf("design of %s: variant %s: %w", f.Name, v.Name, err)
		}
		r.Variants = append(r.Variants, design.Variant{Name: v.Name, Config: tree})
	}
	return r, nil
}

// CanonicalDesign rewrites a design record's text (as DesignRecord wrote
// it, possibly by an earlier build) into the text DesignRecord writes
// today: every variant's configuration goes through Canonical (keys added
// since filled in with their defaults). The store compares a recorded
// design with a new one through it.
func CanonicalDesign(text string) (string, error) {
	r, err := design.Decode(text)
	if err != nil {
		return "", err
	}
	for i, v := range r.Variants {
		b, err := yaml.Marshal(v.Config)
		if err != nil {
			return "", fmt.Errorf("design record: variant %s: %w", v.Name, err)
		}
		c, err := Canonical(string(b))
		if err != nil {
			return "", fmt.Errorf("design record: variant %s: %w", v.Name, err)
		}
		if r.Variants[i].Config, err = design.ConfigTree(c); err != nil {
			return "", fmt.Errorf("design record: variant %s: %w", v.Name, err)
		}
	}
	return r.Text()
}
