package config

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rollout-rl/rollout/policy"
)

// decodeStrict decodes n into v after checking that every mapping key in n
// names a field of v's type (yaml tags), so a misspelt key is an error with
// its line rather than silently ignored. prefix is the dotted key of n.
func decodeStrict(n *yaml.Node, v any, prefix string) error {
	if err := checkKeys(n, reflect.TypeOf(v), prefix); err != nil {
		return err
	}
	if err := n.Decode(v); err != nil {
		var te *yaml.TypeError
		if errors.As(err, &te) && len(te.Errors) > 0 {
			line, msg := splitLine(te.Errors[0])
			return &Error{Line: line, Key: prefix, Msg: msg}
		}
		return &Error{Line: n.Line, Key: prefix, Msg: err.Error()}
	}
	return nil
}

// splitLine separates yaml's "line N: message".
func splitLine(s string) (int, string) {
	rest, ok := strings.CutPrefix(s, "line ")
	if !ok {
		return 0, s
	}
	num, msg, ok := strings.Cut(rest, ": ")
	if !ok {
		return 0, s
	}
	line, err := strconv.Atoi(num)
	if err != nil {
		return 0, s
	}
	return line, msg
}

func yamlName(f reflect.StructField) string {
	tag := f.Tag.Get("yaml")
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		return strings.ToLower(f.Name)
	}
	return name
}

var nodeType = reflect.TypeOf(yaml.Node{})

func checkKeys(n *yaml.Node, t reflect.Type, prefix string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n == nil || t == nodeType {
		return nil
	}
	if n.Kind == yaml.AliasNode {
		return checkKeys(n.Alias, t, prefix)
	}
	dot := func(k string) string {
		if prefix == "" {
			return k
		}
		return prefix + "." + k
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			return nil
		}
		if n.Kind != yaml.MappingNode {
			return &Error{Line: n.Line, Key: prefix, Msg: fmt.Sprintf("want a mapping of keys, got %s", describe(n))}
		}
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
				return &Error{Line: k.Line, Key: dot(k.Value), Msg: fmt.Sprintf("unknown key (known here: %s)", strings.Join(slices.Sorted(maps.Keys(fields)), ", "))}
			}
			if err := checkKeys(n.Content[i+1], ft, dot(k.Value)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); i += 2 {
				if err := checkKeys(n.Content[i+1], t.Elem(), dot(n.Content[i].Value)); err != nil {
					return err
				}
			}
		}
	case reflect.Slice:
		if n.Kind == yaml.SequenceNode {
			for i, c := range n.Content {
				if err := checkKeys(c, t.Elem(), fmt.Sprintf("%s[%d]", prefix, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "something else"
}

// withFile sets the file name of a configuration error.
func withFile(err error, path string) error {
	var ce *Error
	if errors.As(err, &ce) {
		ce.File = path
		return ce
	}
	return &Error{File: path, Msg: err.Error()}
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

// set puts value at the dotted path in mapping n, creating mappings on the
// way.
func set(n *yaml.Node, path []string, value *yaml.Node) error {
	for i, k := range path {
		if k == "" {
			return fmt.Errorf("empty key in %q", strings.Join(path, "."))
		}
		if n.Kind == yaml.ScalarNode && n.Tag == "!!null" {
			*n = yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line}
		}
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%s is not a mapping", strings.Join(path[:i], "."))
		}
		child := find(n, k)
		if i == len(path)-1 {
			if child != nil {
				*child = *clone(value)
			} else {
				n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, clone(value))
			}
			return nil
		}
		if child == nil {
			child = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k}, child)
		}
		n = child
	}
	return nil
}

// clone deep-copies a node tree.
func clone(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, ch := range n.Content {
		c.Content[i] = clone(ch)
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

// lineOf is n's line, or fallback's when n is nil.
func lineOf(n, fallback *yaml.Node) int {
	if n != nil {
		return n.Line
	}
	if fallback != nil {
		return fallback.Line
	}
	return 0
}

// keyNodeFromMsg finds the node of the dotted key a validation message
// starts with ("train.lr = …"), for its line.
func keyNodeFromMsg(root *yaml.Node, msg string) *yaml.Node {
	key, _, _ := strings.Cut(msg, " ")
	n := root
	for _, k := range strings.Split(key, ".") {
		c := find(n, k)
		if c == nil {
			return n
		}
		n = c
	}
	return n
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

func mapsKeys[V any](m map[string]V) func(func(string) bool) { return maps.Keys(m) }

// deref returns the value p points to.
func deref(p any) any { return reflect.ValueOf(p).Elem().Interface() }

func policyShape(name string) (policy.Config, error) { return policy.Size(name) }

// Sampling is the policy sampling the rollout settings describe.
func (r Rollout) Sampling() policy.Sampling {
	return policy.Sampling{Temperature: r.Temperature, TopK: r.TopK, TopP: r.TopP}
}
