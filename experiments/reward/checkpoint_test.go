package reward

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nlpodyssey/safetensors"
	"github.com/nlpodyssey/spago/mat"

	"github.com/rollout-rl/rollout/policy"
)

// trainedLooking returns a small model with a non-trivial head.
func trainedLooking(t *testing.T) *Model {
	m := smallModel(t, 4)
	for i := range mat.Data[float32](m.Weight) {
		mat.Data[float32](m.Weight)[i] = float32(i%7)*0.3 - 1
	}
	mat.Data[float32](m.Bias)[0] = 0.25
	return m
}

var roundTripPairs = []Pair{{"12+34", "06 04=46"}, {"99+99", "18 19=198"}, {"10+10", "=20"}}

func sameScores(t *testing.T, a, b *Model) {
	t.Helper()
	sa, err := a.Scores(roundTripPairs)
	if err != nil {
		t.Fatal(err)
	}
	sb, err := b.Scores(roundTripPairs)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(sa, sb) {
		t.Errorf("scores %v after the round trip, %v before", sb, sa)
	}
	pa, pb := a.Params(), b.Params()
	if len(pa) != len(pb) {
		t.Fatalf("%d parameters after the round trip, %d before", len(pb), len(pa))
	}
	for i := range pa {
		if !slices.Equal(mat.Data[float32](pa[i]), mat.Data[float32](pb[i])) {
			t.Errorf("parameter %d changed in the round trip", i)
		}
	}
}

// saveLoad saves m to a new directory, loads it back and checks that the
// loaded model scores as m does; it returns the directory and the model.
func saveLoad(t *testing.T, m *Model) (string, *Model) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "rm")
	if err := Save(dir, m); err != nil {
		t.Fatal(err)
	}
	got, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	sameScores(t, m, got)
	return dir, got
}

func TestSaveLoadRoundTrip(t *testing.T) {
	m := trainedLooking(t)
	dir, _ := saveLoad(t, m)
	// The body alone is a policy checkpoint.
	if _, _, err := policy.Load(dir); err != nil {
		t.Errorf("policy.Load of a reward model directory: %v", err)
	}
	// The head file holds exactly score.weight [1, dim] and score.bias [1].
	raw, err := os.ReadFile(filepath.Join(dir, ScoreFile))
	if err != nil {
		t.Fatal(err)
	}
	st, err := safetensors.Deserialize(raw)
	if err != nil {
		t.Fatal(err)
	}
	names := st.Names()
	slices.Sort(names)
	if !slices.Equal(names, []string{ScoreBias, ScoreWeight}) {
		t.Errorf("%s holds %v", ScoreFile, names)
	}
	if tv, _ := st.Tensor(ScoreWeight); !slices.Equal(tv.Shape(), []uint64{1, uint64(smallConfig.Dim)}) {
		t.Errorf("score.weight shape %v", tv.Shape())
	}
}

func TestEncodeDecodeWeightsRoundTrip(t *testing.T) {
	m := trainedLooking(t)
	b, err := EncodeWeights(m)
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeWeights(smallConfig, policy.DefaultTokenizer(), b)
	if err != nil {
		t.Fatal(err)
	}
	sameScores(t, m, got)
}

func TestLoadErrors(t *testing.T) {
	m := trainedLooking(t)
	policyDir := filepath.Join(t.TempDir(), "policy")
	if err := policy.Save(policyDir, m.Body, m.Tokenizer); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(policyDir); err == nil || !strings.Contains(err.Error(), "not a reward model") {
		t.Errorf("Load of a policy checkpoint: %v, want a 'not a reward model' error", err)
	}

	// A head of the wrong width.
	bad := filepath.Join(t.TempDir(), "bad")
	if err := Save(bad, m); err != nil {
		t.Fatal(err)
	}
	w, err := f32View(ScoreWeight, make([]float32, 8), 1, 8)
	if err != nil {
		t.Fatal(err)
	}
	bias, err := f32View(ScoreBias, []float32{0}, 1)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := safetensors.Serialize(map[string]safetensors.TensorView{ScoreWeight: w, ScoreBias: bias}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bad, ScoreFile), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), "score.weight has shape [1 8], want [1 32]") {
		t.Errorf("Load with a mis-shaped head: %v", err)
	}

	// A blob without the head.
	body, err := policy.EncodeWeights(m.Body)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeWeights(smallConfig, m.Tokenizer, body); err == nil || !strings.Contains(err.Error(), "score.weight is missing") {
		t.Errorf("DecodeWeights without a head: %v", err)
	}
	if _, err := DecodeWeights(smallConfig, m.Tokenizer, []byte("junk")); err == nil {
		t.Error("DecodeWeights of junk: no error")
	}
}
