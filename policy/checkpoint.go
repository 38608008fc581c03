package policy

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/nlpodyssey/safetensors"
)

// Checkpoint file names inside a checkpoint directory.
const (
	WeightsFile = "model.safetensors"
	ConfigFile  = "config.json"
	VocabFile   = "vocab.json"
)

// hfConfig is config.json: Hugging Face's LlamaConfig fields.
type hfConfig struct {
	Architectures     []string `json:"architectures"`
	ModelType         string   `json:"model_type"`
	HiddenAct         string   `json:"hidden_act"`
	TieWordEmbeddings bool     `json:"tie_word_embeddings"`
	TorchDtype        string   `json:"torch_dtype"`
	BOSTokenID        int      `json:"bos_token_id"`
	EOSTokenID        int      `json:"eos_token_id"`
	PadTokenID        int      `json:"pad_token_id"`
	AttentionBias     bool     `json:"attention_bias"`
	MLPBias           bool     `json:"mlp_bias"`
	Config
}

// vocabJSON is vocab.json: the tokenizer's characters in id order.
type vocabJSON struct {
	Special  []string `json:"special_tokens"` // ids 0..3
	Alphabet string   `json:"alphabet"`       // ids 4.. in order
}

// Save writes the model and tokenizer to dir (created if needed) as
// model.safetensors with Hugging Face Llama tensor names, config.json and
// vocab.json.
func Save(dir string, m *Model, tok *Tokenizer) error {
	if tok.VocabSize() != m.Config.VocabSize {
		return fmt.Errorf("save %s: tokenizer has %d tokens, model vocab_size %d", dir, tok.VocabSize(), m.Config.VocabSize)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("save checkpoint: %w", err)
	}
	weights, err := EncodeWeights(m)
	if err != nil {
		return fmt.Errorf("save %s: %w", dir, err)
	}
	cfg, err := json.MarshalIndent(hfConfig{
		Architectures: []string{"LlamaForCausalLM"}, ModelType: "llama", HiddenAct: "silu",
		TorchDtype: "float32", BOSTokenID: BOS, EOSTokenID: EOS, PadTokenID: PAD, Config: m.Config,
	}, "", "  ")
	if err != nil {
		return fmt.Errorf("save %s: %w", dir, err)
	}
	vocab, err := json.MarshalIndent(vocabJSON{Special: []string{"<pad>", "<bos>", "<eos>", "<sep>"}, Alphabet: tok.Alphabet()}, "", "  ")
	if err != nil {
		return fmt.Errorf("save %s: %w", dir, err)
	}
	for name, b := range map[string][]byte{WeightsFile: weights, ConfigFile: append(cfg, '\n'), VocabFile: append(vocab, '\n')} {
		if err := writeFileAtomic(filepath.Join(dir, name), b); err != nil {
			return fmt.Errorf("save checkpoint: %w", err)
		}
	}
	return nil
}

// writeFileAtomic writes through a temporary file and a rename, so a crash
// never leaves a half-written file under the final name.
func writeFileAtomic(path string, b []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// Load reads a checkpoint directory written by Save (or by a PyTorch user
// with the same names and shapes).
func Load(dir string) (*Model, *Tokenizer, error) {
	raw, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		return nil, nil, fmt.Errorf("load checkpoint: %w", err)
	}
	var hc hfConfig
	if err := json.Unmarshal(raw, &hc); err != nil {
		return nil, nil, fmt.Errorf("load checkpoint %s: %w", filepath.Join(dir, ConfigFile), err)
	}
	if hc.TieWordEmbeddings || hc.AttentionBias || hc.MLPBias || (hc.HiddenAct != "" && hc.HiddenAct != "silu") {
		return nil, nil, fmt.Errorf("load checkpoint %s: only untied, bias-free, silu Llama models are supported", filepath.Join(dir, ConfigFile))
	}
	if err := hc.Config.Validate(); err != nil {
		return nil, nil, fmt.Errorf("load checkpoint %s: %w", filepath.Join(dir, ConfigFile), err)
	}
	raw, err = os.ReadFile(filepath.Join(dir, VocabFile))
	if err != nil {
		return nil, nil, fmt.Errorf("load checkpoint: %w", err)
	}
	var vj vocabJSON
	if err := json.Unmarshal(raw, &vj); err != nil {
		return nil, nil, fmt.Errorf("load checkpoint %s: %w", filepath.Join(dir, VocabFile), err)
	}
	tok, err := NewTokenizer(vj.Alphabet)
	if err != nil {
		return nil, nil, fmt.Errorf("load checkpoint %s: %w", filepath.Join(dir, VocabFile), err)
	}
	if tok.VocabSize() != hc.VocabSize {
		return nil, nil, fmt.Errorf("load checkpoint %s: vocab.json has %d tokens but config.json says vocab_size %d", dir, tok.VocabSize(), hc.VocabSize)
	}
	raw, err = os.ReadFile(filepath.Join(dir, WeightsFile))
	if err != nil {
		return nil, nil, fmt.Errorf("load checkpoint: %w", err)
	}
	m, err := DecodeWeights(hc.Config, raw)
	if err != nil {
		return nil, nil, fmt.Errorf("load checkpoint %s: %w", filepath.Join(dir, WeightsFile), err)
	}
	return m, tok, nil
}

// EncodeWeights serialises the model's parameters as safetensors (float32,
// little endian, Hugging Face Llama names).
func EncodeWeights(m *Model) ([]byte, error) {
	views := make(map[string]safetensors.TensorView)
	for _, p := range m.NamedParams() {
		v := data(p.Param)
		b := make([]byte, 4*len(v))
		for i, f := range v {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
		}
		shape := make([]uint64, len(p.Shape))
		for i, s := range p.Shape {
			shape[i] = uint64(s)
		}
		tv, err := safetensors.NewTensorView(safetensors.F32, shape, b)
		if err != nil {
			return nil, fmt.Errorf("tensor %s: %w", p.Name, err)
		}
		views[p.Name] = tv
	}
	return safetensors.Serialize(views, map[string]string{"format": "pt"})
}

// DecodeWeights builds a model of shape cfg from safetensors bytes. A
// missing, extra, mis-typed or mis-shaped tensor is an error naming it.
func DecodeWeights(cfg Config, b []byte) (*Model, error) {
	m, err := NewModel(cfg, 0)
	if err != nil {
		return nil, err
	}
	if err := m.SetWeights(b); err != nil {
		return nil, err
	}
	return m, nil
}

// SetWeights overwrites the model's parameters in place with safetensors
// bytes of the same shape (as EncodeWeights writes them); engines over the
// model see the new weights. On error the model is left unchanged.
func (m *Model) SetWeights(b []byte) error {
	st, err := safetensors.Deserialize(b)
	if err != nil {
		return fmt.Errorf("read safetensors: %w", err)
	}
	want := make(map[string]bool)
	var views []safetensors.TensorView
	for _, p := range m.NamedParams() {
		want[p.Name] = true
		tv, ok := st.Tensor(p.Name)
		if !ok {
			return fmt.Errorf("tensor %s is missing", p.Name)
		}
		if tv.DType() != safetensors.F32 {
			return fmt.Errorf("tensor %s has dtype %s, want F32", p.Name, tv.DType())
		}
		shape := make([]int, len(tv.Shape()))
		for i, s := range tv.Shape() {
			shape[i] = int(s)
		}
		if !slices.Equal(shape, p.Shape) {
			return fmt.Errorf("tensor %s has shape %v, want %v", p.Name, shape, p.Shape)
		}
		views = append(views, tv)
	}
	var extra []string
	for _, name := range st.Names() {
		if !want[name] {
			extra = append(extra, name)
		}
	}
	if len(extra) > 0 {
		slices.Sort(extra)
		return fmt.Errorf("unexpected tensors %s", strings.Join(extra, ", "))
	}
	for i, p := range m.NamedParams() {
		v := data(p.Param)
		raw := views[i].Data()
		for j := range v {
			v[j] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*j:]))
		}
	}
	return nil
}

// The Hugging Face reference checkpoint of TestMatchesHuggingFaceLlama
// (testdata/hf_llama_reference.py then writes its reference logits).
//go:generate go run ./internal/hftiny testdata/hf_tiny
