package reward

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/nlpodyssey/safetensors"
	"github.com/nlpodyssey/spago/mat"

	"github.com/rollout-rl/rollout/policy"
)

// Names of the head's tensors and of the file that holds them in a
// checkpoint directory.
const (
	ScoreWeight = "score.weight" // [1, hidden_size]
	ScoreBias   = "score.bias"   // [1]
	ScoreFile   = "score.safetensors"
)

// Save writes the reward model to dir: the body as a policy checkpoint
// (model.safetensors, config.json, vocab.json: loadable by policy.Load) and
// the head as score.safetensors (score.weight, score.bias).
func Save(dir string, m *Model) error {
	if err := policy.Save(dir, m.Body, m.Tokenizer); err != nil {
		return fmt.Errorf("save reward model: %w", err)
	}
	views, err := m.headViews()
	if err != nil {
		return fmt.Errorf("save reward model %s: %w", dir, err)
	}
	b, err := safetensors.Serialize(views, m.metadata())
	if err != nil {
		return fmt.Errorf("save reward model %s: %w", dir, err)
	}
	path := filepath.Join(dir, ScoreFile)
	if err := os.WriteFile(path+".tmp", b, 0o644); err != nil {
		return fmt.Errorf("save reward model: %w", err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		return fmt.Errorf("save reward model: %w", err)
	}
	return nil
}

// Load reads a reward model written by Save.
func Load(dir string) (*Model, error) {
	body, tok, err := policy.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("load reward model: %w", err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, ScoreFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("load reward model: %s has no %s: a policy checkpoint, not a reward model", dir, ScoreFile)
	}
	if err != nil {
		return nil, fmt.Errorf("load reward model: %w", err)
	}
	st, err := safetensors.Deserialize(raw)
	if err != nil {
		return nil, fmt.Errorf("load reward model %s: %w", filepath.Join(dir, ScoreFile), err)
	}
	m := &Model{Body: body, Tokenizer: tok}
	if err := m.readHead(st, false); err != nil {
		return nil, fmt.Errorf("load reward model %s: %w", filepath.Join(dir, ScoreFile), err)
	}
	if m.Scoring, err = readScoring(raw); err != nil {
		return nil, fmt.Errorf("load reward model %s: %w", filepath.Join(dir, ScoreFile), err)
	}
	return m, nil
}

// EncodeWeights serialises the whole reward model as one safetensors blob:
// the body's tensors under their Hugging Face Llama names, plus
// score.weight and score.bias.
func EncodeWeights(m *Model) ([]byte, error) {
	raw, err := policy.EncodeWeights(m.Body)
	if err != nil {
		return nil, fmt.Errorf("encode reward model: %w", err)
	}
	st, err := safetensors.Deserialize(raw)
	if err != nil {
		return nil, fmt.Errorf("encode reward model: %w", err)
	}
	views, err := m.headViews()
	if err != nil {
		return nil, fmt.Errorf("encode reward model: %w", err)
	}
	for _, t := range st.Tensors() {
		views[t.Name] = t.TensorView
	}
	return safetensors.Serialize(views, m.metadata())
}

// DecodeWeights builds a reward model of body shape cfg from a blob written
// by EncodeWeights, with tok as its tokenizer. A missing, extra or
// mis-shaped tensor is an error naming it.
func DecodeWeights(cfg policy.Config, tok *policy.Tokenizer, b []byte) (*Model, error) {
	st, err := safetensors.Deserialize(b)
	if err != nil {
		return nil, fmt.Errorf("decode reward model: %w", err)
	}
	if tok == nil || tok.VocabSize() != cfg.VocabSize {
		return nil, fmt.Errorf("decode reward model: tokenizer does not match vocab_size %d", cfg.VocabSize)
	}
	m := &Model{Tokenizer: tok}
	if err := m.readHead(st, true); err != nil {
		return nil, fmt.Errorf("decode reward model: %w", err)
	}
	if m.Scoring, err = readScoring(b); err != nil {
		return nil, fmt.Errorf("decode reward model: %w", err)
	}
	if len(m.Weight.Value().Shape()) != 2 || m.Weight.Value().Shape()[1] != cfg.Dim {
		return nil, fmt.Errorf("decode reward model: tensor %s has shape %v, want [1 %d]", ScoreWeight, m.Weight.Value().Shape(), cfg.Dim)
	}
	body := make(map[string]safetensors.TensorView)
	for _, t := range st.Tensors() {
		if t.Name != ScoreWeight && t.Name != ScoreBias {
			body[t.Name] = t.TensorView
		}
	}
	raw, err := safetensors.Serialize(body, nil)
	if err != nil {
		return nil, fmt.Errorf("decode reward model: %w", err)
	}
	if m.Body, err = policy.DecodeWeights(cfg, raw); err != nil {
		return nil, fmt.Errorf("decode reward model: %w", err)
	}
	return m, nil
}

// ScoringKey is the safetensors metadata key that names a reward model's
// scoring (Scoring.String) in its head file; absent: the head.
const ScoringKey = "scoring"

// metadata is the safetensors metadata of the model's head file.
func (m *Model) metadata() map[string]string {
	md := map[string]string{"format": "pt"}
	if m.Scoring != HeadScore {
		md[ScoringKey] = m.Scoring.String()
	}
	return md
}

// readScoring reads the scoring from a safetensors blob's metadata.
func readScoring(raw []byte) (Scoring, error) {
	_, md, err := safetensors.ReadMetadata(raw)
	if err != nil {
		return 0, err
	}
	name, ok := md.Metadata()[ScoringKey]
	if !ok {
		return HeadScore, nil
	}
	return ParseScoring(name)
}

// headViews returns the head's tensors as safetensors views.
func (m *Model) headViews() (map[string]safetensors.TensorView, error) {
	w, err := f32View(ScoreWeight, mat.Data[float32](m.Weight.Value()), 1, uint64(m.Body.Config.Dim))
	if err != nil {
		return nil, err
	}
	b, err := f32View(ScoreBias, mat.Data[float32](m.Bias.Value()), 1)
	if err != nil {
		return nil, err
	}
	return map[string]safetensors.TensorView{ScoreWeight: w, ScoreBias: b}, nil
}

func f32View(name string, v []float32, shape ...uint64) (safetensors.TensorView, error) {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	tv, err := safetensors.NewTensorView(safetensors.F32, shape, b)
	if err != nil {
		return tv, fmt.Errorf("tensor %s: %w", name, err)
	}
	return tv, nil
}

// readHead sets the head from st's score.weight and score.bias. When
// others is false, any other tensor in st is an error. The weight's width
// must match the body when m.Body is set.
func (m *Model) readHead(st safetensors.SafeTensors, others bool) error {
	w, err := readF32(st, ScoreWeight)
	if err != nil {
		return err
	}
	b, err := readF32(st, ScoreBias)
	if err != nil {
		return err
	}
	if len(w.shape) != 2 || w.shape[0] != 1 || (m.Body != nil && w.shape[1] != m.Body.Config.Dim) {
		want := "[1 hidden_size]"
		if m.Body != nil {
			want = fmt.Sprintf("[1 %d]", m.Body.Config.Dim)
		}
		return fmt.Errorf("tensor %s has shape %v, want %s", ScoreWeight, w.shape, want)
	}
	if !slices.Equal(b.shape, []int{1}) {
		return fmt.Errorf("tensor %s has shape %v, want [1]", ScoreBias, b.shape)
	}
	if !others {
		for _, name := range st.Names() {
			if name != ScoreWeight && name != ScoreBias {
				return fmt.Errorf("unexpected tensor %s", name)
			}
		}
	}
	m.Weight = newParam(w.data, 1, w.shape[1])
	m.Bias = newParam(b.data, 1, 1)
	return nil
}

type f32Tensor struct {
	shape []int
	data  []float32
}

func readF32(st safetensors.SafeTensors, name string) (f32Tensor, error) {
	tv, ok := st.Tensor(name)
	if !ok {
		return f32Tensor{}, fmt.Errorf("tensor %s is missing", name)
	}
	if tv.DType() != safetensors.F32 {
		return f32Tensor{}, fmt.Errorf("tensor %s has dtype %s, want F32", name, tv.DType())
	}
	var t f32Tensor
	for _, s := range tv.Shape() {
		t.shape = append(t.shape, int(s))
	}
	raw := tv.Data()
	t.data = make([]float32, len(raw)/4)
	for i := range t.data {
		t.data[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	return t, nil
}
