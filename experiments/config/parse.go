package config

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rollout-rl/rollout/experiments/task"
)

// The steps of Parse, in order.

// parseBase parses a file's content into the tree of its base
// configuration.
func parseBase(path string, raw []byte) (*tree, error) {
	root, err := readDocument(path, raw)
	if err != nil {
		return nil, err
	}
	if root.Kind != yaml.MappingNode {
		return nil, &Error{File: path, Line: root.Line, Msg: "the configuration must be a mapping of keys"}
	}
	return &tree{path: path, root: root, origins: map[*yaml.Node]origin{}}, nil
}

// flagSet is one --set override: its dotted key and the whole argument.
type flagSet struct{ key, arg string }

// applyOverrides sets each "dotted.key=value" override (the value in YAML
// syntax, a plain string if it does not parse) in the base.
func (t *tree) applyOverrides(overrides []string) ([]flagSet, error) {
	var flags []flagSet
	for _, o := range overrides {
		key, value, ok := strings.Cut(o, "=")
		if !ok || key == "" {
			return nil, &Error{File: t.path, Flag: o, Msg: "override must be key=value"}
		}
		var v yaml.Node
		if err := yaml.Unmarshal([]byte(value), &v); err != nil || len(v.Content) == 0 {
			v = yaml.Node{Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: value}}}
		}
		x := &expander{path: t.path, budget: MaxNodes}
		val, err := x.expand(v.Content[0], 0)
		if err != nil {
			e := err.(*Error)
			e.Line, e.Flag, e.Key = 0, o, key
			return nil, e
		}
		clearLines(val)
		if err := t.set(key, val, origin{key: key, flag: o}); err != nil {
			return nil, &Error{File: t.path, Flag: o, Key: key, Msg: err.Error(), Err: err}
		}
		flags = append(flags, flagSet{key, o})
	}
	return flags, nil
}

// atNode places an error about node n of the base (taken out of its root),
// or a value inside it: on the flag that set n, if one did.
func (t *tree) atNode(n *yaml.Node, err error) error {
	e, ok := err.(*Error)
	if !ok {
		e = &Error{Line: n.Line, Msg: err.Error(), Err: err}
	}
	e.File = t.path
	if o, ok := t.origins[n]; ok && o.flag != "" {
		e.Line, e.Flag = 0, o.flag
	}
	return e
}

// seeds decodes the seeds (default [1]): a non-empty list, no seed twice.
func (t *tree) seeds(n *yaml.Node) ([]uint64, error) {
	if n == nil {
		return []uint64{1}, nil
	}
	var seeds []uint64
	if err := decodeStrict(n, &seeds, "seeds"); err != nil {
		return nil, t.atNode(n, err)
	}
	if len(seeds) == 0 {
		return nil, t.atNode(n, &Error{Line: n.Line, Key: "seeds", Msg: "empty list: give at least one seed"})
	}
	first := make(map[uint64]int, len(seeds))
	for i, s := range seeds {
		if j, ok := first[s]; ok {
			return nil, t.atNode(n, &Error{Line: n.Content[i].Line, Key: fmt.Sprintf("seeds[%d]", i), Msg: fmt.Sprintf("seed %d is listed twice (as seeds[%d] too)", s, j)})
		}
		first[s] = i
	}
	return seeds, nil
}

// checkBase checks the keys and value types of the base, --set values
// included, before variants and axes replace any of them: a malformed
// value is an error even where every variant sets its key anew. (Task
// parameters are checked in each variant, against its task.)
func (t *tree) checkBase() error {
	body := clone(t.root)
	if tn := find(body, "task"); tn != nil && tn.Kind == yaml.MappingNode {
		take(tn, "params")
	}
	cfg := Defaults()
	if err := decodeStrict(body, &cfg, ""); err != nil {
		return t.relocate(err)
	}
	return nil
}

// named is a variant's name and tree.
type named struct {
	name string
	t    *tree
}

// setter is a key a variant or an ablation axis sets, and where.
type setter struct {
	key   string // dotted key in the configuration: "rollout.params"
	where string // "variants[0].set.rollout.params", "ablate.train.lr"
	line  int
}

// variants builds each explicit variant, the base with its own settings
// (in the order of their keys), or the base alone when there are none.
func (t *tree) variants(vs *yaml.Node) ([]named, []setter, error) {
	if vs == nil {
		return []named{{"", t}}, nil, nil
	}
	if vs.Kind != yaml.SequenceNode || len(vs.Content) == 0 {
		return nil, nil, t.atNode(vs, &Error{Line: vs.Line, Key: "variants", Msg: "must be a non-empty list of {name, set}"})
	}
	var out []named
	var setters []setter
	for i, vn := range vs.Content {
		key := fmt.Sprintf("variants[%d]", i)
		var v struct {
			Name string               `yaml:"name"`
			Set  map[string]yaml.Node `yaml:"set"`
		}
		if err := decodeStrict(vn, &v, key); err != nil {
			return nil, nil, t.atNode(vs, err)
		}
		if v.Name == "" {
			return nil, nil, t.atNode(vs, &Error{Line: vn.Line, Key: key + ".name", Msg: "a variant needs a name"})
		}
		vt := t.clone()
		for _, kv := range sortedPairs(find(vn, "set")) {
			s := setter{key: kv[0].Value, where: key + ".set." + kv[0].Value, line: kv[0].Line}
			if err := vt.set(s.key, kv[1], origin{key: s.where, line: s.line}); err != nil {
				return nil, nil, t.atNode(vs, &Error{Line: s.line, Key: s.where, Msg: err.Error(), Err: err})
			}
			setters = append(setters, s)
		}
		out = append(out, named{v.Name, vt})
	}
	return out, setters, nil
}

// sortedPairs returns the key and value nodes of mapping n, by key.
func sortedPairs(n *yaml.Node) [][2]*yaml.Node {
	var pairs [][2]*yaml.Node
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		pairs = append(pairs, [2]*yaml.Node{n.Content[i], n.Content[i+1]})
	}
	slices.SortStableFunc(pairs, func(a, b [2]*yaml.Node) int { return cmp.Compare(a[0].Value, b[0].Value) })
	return pairs
}

// axis is an ablation axis: a dotted key, the line of that key and its
// values.
type axis struct {
	key    string
	line   int
	values []*yaml.Node
}

// axes reads the ablation axes, each a dotted key and a non-empty list of
// values.
func (t *tree) axes(n *yaml.Node) ([]axis, []setter, error) {
	if n == nil {
		return nil, nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, nil, t.atNode(n, &Error{Line: n.Line, Key: "ablate", Msg: "must map dotted keys to lists of values"})
	}
	var axes []axis
	var setters []setter
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, vals := n.Content[i], n.Content[i+1]
		where := "ablate." + k.Value
		if vals.Kind != yaml.SequenceNode {
			return nil, nil, t.atNode(n, &Error{Line: k.Line, Key: where, Msg: "must be a list of values"})
		}
		if len(vals.Content) == 0 {
			return nil, nil, t.atNode(n, &Error{Line: k.Line, Key: where, Msg: "empty axis: give at least one value"})
		}
		axes = append(axes, axis{k.Value, k.Line, vals.Content})
		setters = append(setters, setter{key: k.Value, where: where, line: k.Line})
	}
	return axes, setters, nil
}

// checkConflicts refuses a --set of a key that a variant or an ablation
// axis also sets (the same key, or one a prefix of the other): the variant
// or axis would silently replace it.
func checkConflicts(path string, flags []flagSet, setters []setter) error {
	for _, f := range flags {
		for _, s := range setters {
			if f.key == s.key || strings.HasPrefix(f.key, s.key+".") || strings.HasPrefix(s.key, f.key+".") {
				return &Error{File: path, Flag: f.arg, Key: f.key,
					Msg: fmt.Sprintf("conflicts with %s at %s:%d, which would replace it in its variants", s.where, path, s.line)}
			}
		}
	}
	return nil
}

// expand makes the grid of every base × every value of every axis, axes
// varying fastest last; variants are named by their axis values.
func expand(path string, bases []named, axes []axis) ([]named, error) {
	var expanded []named
	for _, b := range bases {
		grid := []named{b}
		for _, ax := range axes {
			var next []named
			for _, g := range grid {
				for _, val := range ax.values {
					vt := g.t.clone()
					where := "ablate." + ax.key
					if err := vt.set(ax.key, val, origin{key: where, line: val.Line}); err != nil {
						return nil, &Error{File: path, Line: val.Line, Key: where, Msg: err.Error(), Err: err}
					}
					label := lastPart(ax.key) + "=" + scalarText(val)
					next = append(next, named{joinName(g.name, label), vt})
				}
			}
			grid = next
		}
		expanded = append(expanded, grid...)
	}
	return expanded, nil
}

// resolveAll resolves every variant; names must be distinct. Each
// variant that holds eval prompts out (eval.exclude_seeds) draws the eval
// prompts of its runs at seeds, so that a task with too few eval problems
// left is refused here, before anything is written.
func resolveAll(path string, expanded []named, defaultName string, seeds []uint64) ([]Variant, error) {
	var out []Variant
	for _, e := range expanded {
		cfg, err := resolve(e.t, defaultName)
		if err != nil {
			return nil, err
		}
		if err := checkHeldOut(e.t, cfg, seeds); err != nil {
			return nil, err
		}
		name := e.name
		if name == "" {
			name = "base"
		}
		if slices.ContainsFunc(out, func(v Variant) bool { return v.Name == name }) {
			return nil, &Error{File: path, Key: "variants", Msg: fmt.Sprintf("two variants are named %q", name)}
		}
		out = append(out, Variant{Name: name, Config: cfg})
	}
	return out, nil
}

// setBaseline sets the file's name and baseline (default: the first
// variant's).
func (f *File) setBaseline(t *tree, n *yaml.Node) error {
	f.Name = f.Variants[0].Config.Name
	f.Baseline = f.Variants[0].Name
	if n == nil {
		return nil
	}
	if n.Kind != yaml.ScalarNode {
		return t.atNode(n, &Error{Line: n.Line, Key: "baseline", Msg: fmt.Sprintf("want a variant's name, got %s", describe(n))})
	}
	f.Baseline = n.Value
	if slices.ContainsFunc(f.Variants, func(v Variant) bool { return v.Name == f.Baseline }) {
		return nil
	}
	names := make([]string, len(f.Variants))
	for i, v := range f.Variants {
		names[i] = v.Name
	}
	return t.atNode(n, &Error{Line: n.Line, Key: "baseline", Msg: fmt.Sprintf("no variant is named %q (variants: %s)", f.Baseline, strings.Join(names, ", "))})
}

// checkReplaced validates the base's strategy and strategy parameters that
// every variant replaces, with the base's strategy: they reach no run, but a
// misspelt parameter or an unknown strategy is still an error rather than
// silently dropped. (The ones that reach a run are validated there, against
// that run's strategy.)
func (t *tree) checkReplaced(expanded []named) error {
	replaced := func(key string) bool {
		want, ok := t.originAt(key)
		return ok && !slices.ContainsFunc(expanded, func(e named) bool {
			got, ok := e.t.originAt(key)
			return ok && got == want
		})
	}
	strategy := Defaults().Rollout.Strategy
	if n := find(find(t.root, "rollout"), "strategy"); n != nil && n.Kind == yaml.ScalarNode {
		strategy = n.Value
	}
	params := map[string]string{}
	for _, kv := range sortedPairs(find(find(t.root, "rollout"), "params")) {
		if key := "rollout.params." + kv[0].Value; replaced(key) {
			params[kv[0].Value] = kv[1].Value
		}
	}
	if len(params) == 0 && !replaced("rollout.strategy") {
		return nil
	}
	if _, err := (Rollout{Strategy: strategy, Params: params}).NewStrategy(); err != nil {
		return strategyFail(t, err)
	}
	return nil
}

// originAt is the origin of the value at the dotted key ("" if the file's
// base), and whether there is one.
func (t *tree) originAt(key string) (origin, bool) {
	var o origin
	n := t.root
	for _, p := range strings.Split(key, ".") {
		_, v := findPair(n, p)
		if v == nil {
			return o, false
		}
		if vo, ok := t.origins[v]; ok {
			o = vo
		}
		n = v
	}
	return o, true
}

// checkHeldOut draws every eval prompt of cfg's runs at seeds when cfg
// holds eval prompts out (eval.exclude_seeds): an error names that key.
func checkHeldOut(t *tree, cfg Experiment, seeds []uint64) error {
	if len(cfg.Eval.ExcludeSeeds) == 0 {
		return nil
	}
	tk, err := task.New(cfg.Task.Name, cfg.Task.Params)
	if err != nil {
		return t.fail("task.params", err, "%v", err)
	}
	et, err := cfg.Eval.Task(tk)
	for _, s := range seeds {
		for i := 0; err == nil && i < cfg.Eval.Prompts; i++ {
			_, err = et.Prompt(task.Eval, s, i)
		}
	}
	if err != nil {
		return t.fail("eval.exclude_seeds", err, "%s", strings.TrimPrefix(err.Error(), "eval.exclude_seeds: "))
	}
	return nil
}
