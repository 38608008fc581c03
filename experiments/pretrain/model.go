package pretrain

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/rollout-rl/rollout/experiments/config/field"
	"github.com/rollout-rl/rollout/policy"
)

// Model is the shape of the policy a configuration asks for: a named size
// (policy.Sizes: tiny, small, medium) and its dimensions, each of which may be set
// apart from the size's.
//
// In YAML and JSON it is written either as the size's name alone,
//
//	model: small
//
// or as a mapping whose keys not given take the size's values (size
// defaults to tiny):
//
//	model: {size: small, max_seq: 384}
//	model: {dim: 192, layers: 4, heads: 6, hidden: 512, max_seq: 256}
//
// It is written back as the plain name when its dimensions are exactly the
// size's (so `model: small` and `model: {size: small}` resolve to the same
// text), and otherwise as the full mapping.
type Model struct {
	// Size is the named size the dimensions start from. Default tiny.
	Size string `yaml:"size" json:"size"`
	// Dim is the hidden size (hidden_size).
	Dim int `yaml:"dim" json:"dim"`
	// Layers is the number of transformer blocks (num_hidden_layers).
	Layers int `yaml:"layers" json:"layers"`
	// Heads is the number of attention heads (num_attention_heads); it
	// divides Dim into heads of an even width (rotary embeddings).
	Heads int `yaml:"heads" json:"heads"`
	// Hidden is the width of the feed-forward layer (intermediate_size).
	Hidden int `yaml:"hidden" json:"hidden"`
	// MaxSeq is the longest sequence in positions
	// (max_position_embeddings): it must hold BOS, the task's longest
	// prompt, SEP, its longest response and EOS.
	MaxSeq int `yaml:"max_seq" json:"max_seq"`
}

// ModelSize returns the named size with its dimensions filled in; an
// unknown name gives a Model with the name alone, which Validate rejects.
func ModelSize(name string) Model {
	m := Model{Size: name}
	if c, ok := policy.Sizes()[name]; ok {
		m.Dim, m.Layers, m.Heads, m.Hidden, m.MaxSeq = c.Dim, c.Layers, c.Heads, c.Hidden, c.MaxSeq
	}
	return m
}

// plain reports whether m is exactly its named size.
func (m Model) plain() bool { return m == ModelSize(m.Size) }

// String is the size's name when m is exactly that size, else the name and
// every dimension.
func (m Model) String() string {
	if m.plain() {
		return m.Size
	}
	return fmt.Sprintf("%s(dim=%d layers=%d heads=%d hidden=%d max_seq=%d)", m.Size, m.Dim, m.Layers, m.Heads, m.Hidden, m.MaxSeq)
}

// Validate reports the first unusable setting as a *field.Error whose key
// is prefix and the setting's name ("model.heads"); an unknown size is
// reported on prefix.size.
func (m Model) Validate(prefix string) error {
	key := func(k string) string { return prefix + "." + k }
	if _, ok := policy.Sizes()[m.Size]; !ok {
		names := make([]string, 0, 2)
		for n := range policy.Sizes() {
			names = append(names, n)
		}
		sort.Strings(names)
		return &field.Error{Key: key("size"), Value: m.Size, Msg: "unknown model size (known: " + strings.Join(names, ", ") + ")"}
	}
	for _, f := range []struct {
		name string
		v    int
		min  int
	}{{"dim", m.Dim, 1}, {"layers", m.Layers, 1}, {"heads", m.Heads, 1}, {"hidden", m.Hidden, 1}, {"max_seq", m.MaxSeq, 2}} {
		if f.v < f.min {
			return &field.Error{Key: key(f.name), Value: f.v, Msg: fmt.Sprintf("want ≥ %d", f.min)}
		}
	}
	if m.Dim%m.Heads != 0 {
		return &field.Error{Key: key("heads"), Value: m.Heads, Msg: fmt.Sprintf("must divide dim %d", m.Dim)}
	}
	if hd := m.Dim / m.Heads; hd%2 != 0 {
		return &field.Error{Key: key("heads"), Value: m.Heads, Msg: fmt.Sprintf("gives heads of width %d = dim %d / heads; rotary embeddings need an even width", hd, m.Dim)}
	}
	return nil
}

// Config is the policy.Config of m: its size's, with m's dimensions.
func (m Model) Config() (policy.Config, error) {
	if err := m.Validate("model"); err != nil {
		return policy.Config{}, err
	}
	c, _ := policy.Size(m.Size)
	c.Dim, c.Layers, c.Heads, c.KVHeads, c.Hidden, c.MaxSeq = m.Dim, m.Layers, m.Heads, m.Heads, m.Hidden, m.MaxSeq
	if err := c.Validate(); err != nil {
		return policy.Config{}, err
	}
	return c, nil
}

// modelFields is Model without its methods, for decoding and encoding the
// mapping form.
type modelFields Model

// UnmarshalYAML reads the plain name or the mapping form (see Model).
func (m *Model) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		var name string
		if err := n.Decode(&name); err != nil {
			return err
		}
		*m = ModelSize(name)
		return nil
	}
	var sized struct {
		Size *string `yaml:"size"`
	}
	if err := n.Decode(&sized); err != nil {
		return err
	}
	size := "tiny"
	if sized.Size != nil {
		size = *sized.Size
	}
	f := modelFields(ModelSize(size))
	if err := n.Decode(&f); err != nil {
		return err
	}
	*m = Model(f)
	return nil
}

// MarshalYAML writes the plain name when m is exactly its size.
func (m Model) MarshalYAML() (any, error) {
	if m.plain() {
		return m.Size, nil
	}
	return modelFields(m), nil
}

// UnmarshalJSON reads the plain name or the mapping form.
func (m *Model) UnmarshalJSON(b []byte) error {
	var name string
	if err := json.Unmarshal(b, &name); err == nil {
		*m = ModelSize(name)
		return nil
	}
	var sized struct {
		Size *string `json:"size"`
	}
	if err := json.Unmarshal(b, &sized); err != nil {
		return err
	}
	size := "tiny"
	if sized.Size != nil {
		size = *sized.Size
	}
	f := modelFields(ModelSize(size))
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*m = Model(f)
	return nil
}

// MarshalJSON writes the plain name when m is exactly its size, so run ids
// and cache keys of configurations that name a size alone do not change.
func (m Model) MarshalJSON() ([]byte, error) {
	if m.plain() {
		return json.Marshal(m.Size)
	}
	return json.Marshal(modelFields(m))
}
