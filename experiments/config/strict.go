package config

import (
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rollout-rl/rollout/experiments/pretrain"
	"github.com/rollout-rl/rollout/policy"
)

// decodeStrict decodes n into v after checking that every mapping key in n
// names a field of v's type (yaml tags) and that every scalar parses as its
// field's type, so a misspelt key or a wrong value is an *Error with the
// dotted key and the line of that key rather than silently ignored or
// reported without them. prefix is the dotted key of n.
func decodeStrict(n *yaml.Node, v any, prefix string) error {
	if err := checkNode(n, reflect.TypeOf(v), prefix, n.Line); err != nil {
		return err
	}
	if err := n.Decode(v); err != nil {
		// checkNode refuses what Decode would: this is a bug, but its
		// message stays in the configuration's words.
		return &Error{Line: n.Line, Key: prefix, Msg: fmt.Sprintf("%s cannot be read as %s", describe(n), wanted(reflect.TypeOf(v).Elem())), Err: err}
	}
	return nil
}

func yamlName(f reflect.StructField) string {
	tag := f.Tag.Get("yaml")
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		return strings.ToLower(f.Name)
	}
	return name
}

var (
	nodeType  = reflect.TypeOf(yaml.Node{})
	modelType = reflect.TypeOf(pretrain.Model{})
)

// checkNode checks n against the type t it will be decoded into: known
// keys, and scalars that parse as their fields' types. prefix is n's dotted
// key and line the line of that key.
func checkNode(n *yaml.Node, t reflect.Type, prefix string, line int) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n == nil || t == nodeType {
		return nil
	}
	if n.Kind == yaml.AliasNode {
		return checkNode(n.Alias, t, prefix, line)
	}
	fail := func(format string, args ...any) error {
		return &Error{Line: line, Key: prefix, Msg: fmt.Sprintf(format, args...)}
	}
	if t == modelType && n.Kind == yaml.ScalarNode {
		// A model is a size's name or a mapping of its fields.
		return checkNode(n, reflect.TypeOf(""), prefix, line)
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return nil
		}
		if n.Kind != yaml.MappingNode {
			return fail("want a mapping of keys, got %s", describe(n))
		}
		return checkStruct(n, t, prefix)
	case reflect.Map:
		if n.Kind != yaml.MappingNode && !(n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
			return fail("want a mapping, got %s", describe(n))
		}
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				if err := checkNode(n.Content[i+1], t.Elem(), dot(prefix, k.Value), k.Line); err != nil {
					return err
				}
			}
		}
	case reflect.Slice:
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return nil
		}
		if n.Kind != yaml.SequenceNode {
			return fail("want %s, got %s", wanted(t), describe(n))
		}
		for i, c := range n.Content {
			if err := checkNode(c, t.Elem(), fmt.Sprintf("%s[%d]", prefix, i), c.Line); err != nil {
				return err
			}
		}
	case reflect.Bool, reflect.String, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.Kind != yaml.ScalarNode {
			return fail("want %s, got %s", wanted(t), describe(n))
		}
		if err := n.Decode(reflect.New(t).Interface()); err != nil || !integral(n, t) {
			return fail("%s is not %s", describe(n), wanted(t))
		}
	}
	return nil
}

// checkStruct checks the keys of mapping n against the fields of struct
// type t.
func checkStruct(n *yaml.Node, t reflect.Type, prefix string) error {
	fields := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		if f := t.Field(i); f.IsExported() && f.Tag.Get("yaml") != "-" {
			fields[yamlName(f)] = f.Type
		}
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		ft, ok := fields[k.Value]
		if !ok {
			known := slices.Sorted(maps.Keys(fields))
			msg := "unknown key"
			if near := closest(k.Value, known); near != "" {
				msg += fmt.Sprintf("; did you mean %s?", dot(prefix, near))
			}
			return &Error{Line: k.Line, Key: dot(prefix, k.Value), Msg: fmt.Sprintf("%s (known here: %s)", msg, strings.Join(known, ", "))}
		}
		if err := checkNode(n.Content[i+1], ft, dot(prefix, k.Value), k.Line); err != nil {
			return err
		}
	}
	return nil
}

// integral reports whether scalar n is a whole number when t is an integer
// type: go-yaml decodes 2.5 into an int as 2.
func integral(n *yaml.Node, t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if n.ShortTag() == "!!float" {
			var x float64
			return n.Decode(&x) == nil && x == math.Trunc(x)
		}
	}
	return true
}

// wanted names what a value of type t must be.
func wanted(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return "a mapping"
	case reflect.Slice:
		return "a list"
	case reflect.Bool:
		return "true or false"
	case reflect.String:
		return "a string"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	}
	return "an integer"
}

// dot joins a dotted prefix and a key.
func dot(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}

// find returns the value node of key in mapping n, or nil.
func find(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// take removes key from mapping n and returns its value node, or nil.
func take(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			v := n.Content[i+1]
			n.Content = slices.Delete(n.Content, i, i+2)
			return v
		}
	}
	return nil
}

// set puts a copy of value at the dotted path in mapping n, creating
// mappings on the way, and returns the copy.
func set(n *yaml.Node, path []string, value *yaml.Node) (*yaml.Node, error) {
	for i, k := range path {
		if k == "" {
			return nil, fmt.Errorf("empty key in %q", strings.Join(path, "."))
		}
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			*n = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line}
		}
		if n.Kind != yaml.MappingNode {
			return nil, fmt.Errorf("%s is not a mapping", strings.Join(path[:i], "."))
		}
		child := find(n, k)
		if i == 0 && k == "model" && i < len(path)-1 && child != nil && child.Kind == yaml.ScalarNode && child.Tag != "!!null" {
			// A model written as a size's name takes keys below it
			// (--set model.max_seq=384) as the mapping {size: name}.
			name := *child
			*child = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: child.Line, Column: child.Column,
				Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: "size", Line: child.Line}, &name}}
		}
		if i == len(path)-1 {
			if child != nil {
				*child = *clone(value)
				return child, nil
			}
			child = clone(value)
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, child)
			return child, nil
		}
		if child == nil {
			child = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, child)
		}
		n = child
	}
	return nil, fmt.Errorf("empty key")
}

// clone deep-copies a node tree.
func clone(n *yaml.Node) *yaml.Node { return cloneInto(n, nil) }

// cloneInto deep-copies a node tree and, if copies is not nil, records the
// copy of every node.
func cloneInto(n *yaml.Node, copies map[*yaml.Node]*yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, ch := range n.Content {
		c.Content[i] = cloneInto(ch, copies)
	}
	if copies != nil {
		copies[n] = &c
	}
	return &c
}

// clearLines marks a node tree as coming from an override (line 0).
func clearLines(n *yaml.Node) {
	n.Line, n.Column = 0, 0
	for _, c := range n.Content {
		clearLines(c)
	}
}

func lastPart(key string) string {
	parts := strings.Split(key, ".")
	return parts[len(parts)-1]
}

func scalarText(n *yaml.Node) string {
	if n.Kind == yaml.ScalarNode {
		return n.Value
	}
	b, _ := yaml.Marshal(n)
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\n", " "))
}

func joinName(a, b string) string {
	if a == "" {
		return b
	}
	return a + "," + b
}

// deref returns the value p points to.
func deref(p any) any { return reflect.ValueOf(p).Elem().Interface() }

// Sampling is the policy sampling the rollout settings describe.
func (r Rollout) Sampling() policy.Sampling {
	return policy.Sampling{Temperature: r.Temperature, TopK: r.TopK, TopP: r.TopP}
}
