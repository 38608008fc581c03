package config

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Error is a configuration error: where the offending value stands (the
// file and its line, or the --set flag that gave it), its dotted key as
// written there and what is wrong. It renders as
//
//	cfg.yaml:7: train.prompts_per_step: "eight" is not an integer
//	cfg.yaml:12: variants[1].set.rollout.params.m: entropy_tree: m = 0, want >= 1
//	cfg.yaml: --set train.lr=abc: "abc" is not a number
//	cfg.yaml: --set rollout.params={m: 0}: rollout.params.m: entropy_tree: m = 0, want >= 1
//
// (the key is left out when the flag already starts with it).
type Error struct {
	// File is the configuration file.
	File string
	// Line is the line of the key in File; 0 when unknown or when the
	// value comes from a --set flag.
	Line int
	// Flag is the --set argument ("key=value") the value comes from, if it
	// does.
	Flag string
	// Key is the dotted key where the value stands: in the file's base
	// ("train.lr"), in a variant ("variants[1].set.train.lr"), in an
	// ablation axis ("ablate.train.lr") or in a --set flag.
	Key string
	// Msg says what is wrong with the value.
	Msg string
	// Err is the validation error behind Msg (a *field.Error, a
	// *search.ParamError, …), if any.
	Err error
}

// Error implements error.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Flag != "" {
		b.WriteString(": --set " + e.Flag)
	}
	if e.Key != "" && !(e.Flag != "" && strings.HasPrefix(e.Flag, e.Key+"=")) {
		b.WriteString(": " + e.Key)
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

// Unwrap returns the validation error behind e.
func (e *Error) Unwrap() error { return e.Err }

// origin is where a value of a variant's tree comes from when not from the
// file's base: a variant's set, an ablation axis or a --set flag.
type origin struct {
	key  string // dotted key there: "variants[1].set.rollout.params", "ablate.train.lr"
	line int    // line in the file; 0 for a flag
	flag string // the --set argument, for a flag
}

// tree is a configuration's node tree and the origins of the values placed
// in it by variants, axes and flags, so that an error about any dotted key
// names the place where the user wrote it.
type tree struct {
	path    string
	root    *yaml.Node
	origins map[*yaml.Node]origin
}

// clone deep-copies t, origins included.
func (t *tree) clone() *tree {
	copies := map[*yaml.Node]*yaml.Node{}
	c := &tree{path: t.path, root: cloneInto(t.root, copies), origins: map[*yaml.Node]origin{}}
	for n, o := range t.origins {
		if cn, ok := copies[n]; ok {
			c.origins[cn] = o
		}
	}
	return c
}

// set puts value at the dotted key and records where it came from.
func (t *tree) set(key string, value *yaml.Node, o origin) error {
	n, err := set(t.root, strings.Split(key, "."), value)
	if err != nil {
		return err
	}
	t.origins[n] = o
	return nil
}

// fail is the error about the value at the dotted key (relative to the
// root): it names the place where that value was written. cause, if not
// nil, is kept as the error's Err.
func (t *tree) fail(key string, cause error, format string, args ...any) *Error {
	e := &Error{File: t.path, Key: key, Msg: fmt.Sprintf(format, args...), Err: cause}
	parts := strings.Split(key, ".")
	n := t.root
	var from *origin
	rest := 0 // parts[rest:] lie below the origin's node
	for i, p := range parts {
		k, v := findPair(n, p)
		if v == nil {
			break
		}
		e.Line = k.Line
		if o, ok := t.origins[v]; ok {
			from, rest, e.Line = &o, i+1, o.line
		}
		n = v
	}
	switch {
	case from == nil:
	case from.flag != "":
		e.Line, e.Flag = 0, from.flag
	default:
		e.Key = from.key
		if rest < len(parts) {
			e.Key += "." + strings.Join(parts[rest:], ".")
		}
	}
	return e
}

// relocate moves an error of decodeStrict on the tree (its Key relative to
// the root) to the place where the key was written.
func (t *tree) relocate(err error) error {
	if e, ok := err.(*Error); ok {
		return t.fail(e.Key, e.Err, "%s", e.Msg)
	}
	return t.fail("", err, "%v", err)
}

// findPair returns the key and value nodes of key in mapping n, or nils.
func findPair(n *yaml.Node, key string) (k, v *yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}
