package pretrain

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/rollout-rl/rollout/experiments/config/field"
)

// TestModelJSON checks the JSON forms of a model: a size alone is its
// name (so cache keys and run ids of configurations naming a size are as
// before), anything else the full mapping, and both read back.
func TestModelJSON(t *testing.T) {
	long := ModelSize("small")
	long.MaxSeq = 384
	for _, c := range []struct {
		m    Model
		want string
	}{
		{ModelSize("tiny"), `"tiny"`},
		{ModelSize("small"), `"small"`},
		{long, `{"size":"small","dim":256,"layers":6,"heads":8,"hidden":768,"max_seq":384}`},
	} {
		b, err := json.Marshal(c.m)
		if err != nil || string(b) != c.want {
			t.Errorf("Marshal(%+v) = %s (%v), want %s", c.m, b, err, c.want)
		}
		var back Model
		if err := json.Unmarshal(b, &back); err != nil || back != c.m {
			t.Errorf("Unmarshal(%s) = %+v (%v), want %+v", b, back, err, c.m)
		}
	}
	var m Model
	if err := json.Unmarshal([]byte(`{"size":"small","max_seq":384}`), &m); err != nil || m != long {
		t.Errorf("a partial mapping read as %+v (%v), want %+v", m, err, long)
	}
	if err := json.Unmarshal([]byte(`{"heads":2}`), &m); err != nil || m.Size != "tiny" || m.Heads != 2 || m.Dim != 128 {
		t.Errorf("a mapping without size read as %+v (%v), want tiny with 2 heads", m, err)
	}
	if err := json.Unmarshal([]byte(`[1]`), &m); err == nil {
		t.Error("a list read as a model")
	}
	// The summary of a checkpoint cached before models had dimensions.
	const old = `{"model":"tiny","steps":1000,"batch_size":32,"lr":0.001,"flawed_share":0.3,"eval_prompts":200,"seed":0}`
	b, _ := json.Marshal(DefaultConfig())
	if string(b) != old {
		t.Errorf("default config is %s, was %s: cache keys changed", b, old)
	}
}

func TestModelValidate(t *testing.T) {
	odd := ModelSize("tiny")
	odd.Dim, odd.Heads = 120, 8
	for _, c := range []struct {
		m   Model
		key string
	}{
		{ModelSize("huge"), "m.size"},
		{Model{Size: "tiny"}, "m.dim"},
		{func() Model { m := ModelSize("tiny"); m.Heads = 3; return m }(), "m.heads"},
		{odd, "m.heads"},
		{func() Model { m := ModelSize("tiny"); m.MaxSeq = 1; return m }(), "m.max_seq"},
		{func() Model { m := ModelSize("small"); m.Hidden = 0; return m }(), "m.hidden"},
	} {
		var fe *field.Error
		if err := c.m.Validate("m"); !errors.As(err, &fe) || fe.Key != c.key {
			t.Errorf("Validate(%+v) = %v, want a field error on %s", c.m, err, c.key)
		}
		if _, err := c.m.Config(); err == nil {
			t.Errorf("Config(%+v) gave no error", c.m)
		}
	}
	m := Model{Size: "small", Dim: 192, Layers: 3, Heads: 6, Hidden: 512, MaxSeq: 300}
	pc, err := m.Config()
	if err != nil {
		t.Fatal(err)
	}
	if pc.Dim != 192 || pc.Layers != 3 || pc.Heads != 6 || pc.KVHeads != 6 || pc.Hidden != 512 || pc.MaxSeq != 300 || pc.VocabSize != 64 {
		t.Errorf("policy config %+v", pc)
	}
	if s := m.String(); s != "small(dim=192 layers=3 heads=6 hidden=512 max_seq=300)" {
		t.Errorf("String() = %q", s)
	}
	if s := ModelSize("tiny").String(); s != "tiny" {
		t.Errorf("String() = %q", s)
	}
}
