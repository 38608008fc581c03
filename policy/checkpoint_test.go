package policy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nlpodyssey/safetensors"
)

func TestCheckpointRoundTripIsBitExact(t *testing.T) {
	cfg := testConfig
	cfg.VocabSize = 64
	m := randomModel(t, cfg, 11)
	dir := t.TempDir()
	if err := Save(dir, m, DefaultTokenizer()); err != nil {
		t.Fatal(err)
	}
	got, tok, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Config != m.Config {
		t.Fatalf("config %+v, want %+v", got.Config, m.Config)
	}
	if tok.Alphabet() != DefaultAlphabet {
		t.Fatalf("alphabet %q", tok.Alphabet())
	}
	for i, p := range m.NamedParams() {
		a, b := data(p.Param), data(got.NamedParams()[i].Param)
		for j := range a {
			if a[j] != b[j] {
				t.Fatalf("%s[%d]: saved %v, loaded %v", p.Name, j, a[j], b[j])
			}
		}
	}
	var hc map[string]any
	raw, _ := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err := json.Unmarshal(raw, &hc); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]any{"model_type": "llama", "hidden_size": 32.0, "rope_theta": 10000.0, "tie_word_embeddings": false, "hidden_act": "silu"} {
		if hc[key] != want {
			t.Errorf("config.json %s = %v, want %v", key, hc[key], want)
		}
	}
}

func TestLoadRejectsMalformedCheckpoints(t *testing.T) {
	cfg := testConfig
	cfg.VocabSize = 64
	m := randomModel(t, cfg, 12)
	good, err := EncodeWeights(m)
	if err != nil {
		t.Fatal(err)
	}
	// rewrite re-serialises the good tensors after edit changes the map.
	rewrite := func(edit func(map[string]safetensors.TensorView)) []byte {
		st, err := safetensors.Deserialize(good)
		if err != nil {
			t.Fatal(err)
		}
		views := map[string]safetensors.TensorView{}
		for _, nt := range st.Tensors() {
			views[nt.Name] = nt.TensorView
		}
		edit(views)
		b, err := safetensors.Serialize(views, nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		name    string
		weights []byte
		want    string
	}{
		{"missing", rewrite(func(v map[string]safetensors.TensorView) { delete(v, "model.layers.1.mlp.up_proj.weight") }), "tensor model.layers.1.mlp.up_proj.weight is missing"},
		{"extra", rewrite(func(v map[string]safetensors.TensorView) {
			v["model.layers.9.self_attn.q_proj.weight"] = v["model.norm.weight"]
		}), "unexpected tensors model.layers.9.self_attn.q_proj.weight"},
		{"misshaped", rewrite(func(v map[string]safetensors.TensorView) {
			w := v["lm_head.weight"]
			tv, _ := safetensors.NewTensorView(safetensors.F32, []uint64{32, 64}, w.Data())
			v["lm_head.weight"] = tv
		}), "tensor lm_head.weight has shape [32 64], want [64 32]"},
		{"garbage", []byte("not a safetensors file"), "read safetensors"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := Save(dir, m, DefaultTokenizer()); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, WeightsFile), tc.weights, 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, err := Load(dir)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
	t.Run("config mismatch", func(t *testing.T) {
		dir := t.TempDir()
		if err := Save(dir, m, DefaultTokenizer()); err != nil {
			t.Fatal(err)
		}
		raw, _ := os.ReadFile(filepath.Join(dir, ConfigFile))
		bad := strings.Replace(string(raw), `"intermediate_size": 48`, `"intermediate_size": 40`, 1)
		os.WriteFile(filepath.Join(dir, ConfigFile), []byte(bad), 0o644)
		if _, _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "mlp.gate_proj.weight has shape [48 32], want [40 32]") {
			t.Fatalf("error %v", err)
		}
	})
	t.Run("missing directory", func(t *testing.T) {
		if _, _, err := Load(filepath.Join(t.TempDir(), "nope")); err == nil || !strings.Contains(err.Error(), "config.json") {
			t.Fatalf("error %v", err)
		}
	})
}
