package policy

import (
	"fmt"
	"strings"
)

// Config is the shape of a Llama-style transformer. Its JSON form is the
// Hugging Face LlamaConfig subset that a PyTorch user needs to load a
// checkpoint with transformers' LlamaForCausalLM.
type Config struct {
	VocabSize    int     `json:"vocab_size"`
	Dim          int     `json:"hidden_size"`
	Hidden       int     `json:"intermediate_size"`
	Layers       int     `json:"num_hidden_layers"`
	Heads        int     `json:"num_attention_heads"`
	KVHeads      int     `json:"num_key_value_heads"`
	MaxSeq       int     `json:"max_position_embeddings"`
	NormEps      float64 `json:"rms_norm_eps"`
	RopeTheta    float64 `json:"rope_theta"`
	Architecture string  `json:"-"`
}

// Sizes returns the named reference sizes: tiny (vocab 64, dim 128, 4
// layers, 4 heads, hidden 384, max seq 64; 0.87 M parameters), small
// (dim 256, 6 layers, 8 heads, hidden 768, max seq 128; 5.1 M) and medium
// (dim 512, 8 layers, 8 heads, hidden 1536, max seq 256; 27 M), each about
// five times the one before, so a result can be read as a trend over size.
func Sizes() map[string]Config {
	return map[string]Config{
		"tiny":   {VocabSize: 64, Dim: 128, Hidden: 384, Layers: 4, Heads: 4, KVHeads: 4, MaxSeq: 64, NormEps: 1e-5, RopeTheta: 10000},
		"small":  {VocabSize: 64, Dim: 256, Hidden: 768, Layers: 6, Heads: 8, KVHeads: 8, MaxSeq: 128, NormEps: 1e-5, RopeTheta: 10000},
		"medium": {VocabSize: 64, Dim: 512, Hidden: 1536, Layers: 8, Heads: 8, KVHeads: 8, MaxSeq: 256, NormEps: 1e-5, RopeTheta: 10000},
	}
}

// Size returns the named reference size ("tiny", "small" or "medium").
func Size(name string) (Config, error) {
	c, ok := Sizes()[name]
	if !ok {
		return Config{}, fmt.Errorf("unknown model size %q (known: tiny, small, medium)", name)
	}
	return c, nil
}

// HeadDim is the width of one attention head.
func (c Config) HeadDim() int { return c.Dim / c.Heads }

// Validate reports the first field that makes the shape unusable.
func (c Config) Validate() error {
	var bad []string
	check := func(ok bool, msg string) {
		if !ok {
			bad = append(bad, msg)
		}
	}
	check(c.VocabSize > 4, fmt.Sprintf("vocab_size %d must exceed the 4 special tokens", c.VocabSize))
	check(c.Dim > 0, fmt.Sprintf("hidden_size %d must be positive", c.Dim))
	check(c.Hidden > 0, fmt.Sprintf("intermediate_size %d must be positive", c.Hidden))
	check(c.Layers > 0, fmt.Sprintf("num_hidden_layers %d must be positive", c.Layers))
	check(c.Heads > 0 && c.Dim%max(c.Heads, 1) == 0, fmt.Sprintf("num_attention_heads %d must divide hidden_size %d", c.Heads, c.Dim))
	check(c.Heads > 0 && (c.Dim/max(c.Heads, 1))%2 == 0, fmt.Sprintf("head size %d must be even for rotary embeddings", c.Dim/max(c.Heads, 1)))
	check(c.KVHeads == c.Heads, fmt.Sprintf("num_key_value_heads %d must equal num_attention_heads %d (grouped-query attention is not supported)", c.KVHeads, c.Heads))
	check(c.MaxSeq > 1, fmt.Sprintf("max_position_embeddings %d must exceed 1", c.MaxSeq))
	check(c.NormEps > 0, fmt.Sprintf("rms_norm_eps %g must be positive", c.NormEps))
	check(c.RopeTheta > 0, fmt.Sprintf("rope_theta %g must be positive", c.RopeTheta))
	if len(bad) > 0 {
		return fmt.Errorf("model config: %s", strings.Join(bad, "; "))
	}
	return nil
}

// MatmulParams is the number of weights in matrix products per token:
// attention q,k,v,o, the SwiGLU FFN and the output head.
func (c Config) MatmulParams() int64 {
	perLayer := 4*c.Dim*c.Dim + 3*c.Dim*c.Hidden
	return int64(c.Layers*perLayer + c.Dim*c.VocabSize)
}

// ForwardFLOPs is the forward cost of one token attending to ctx positions,
// counting 2 FLOPs per multiply-add over the matrix products only (as
// the performance anchors in results/performance.md do): 2·matmul params + 4·layers·dim·ctx.
func (c Config) ForwardFLOPs(ctx int) int64 {
	return 2*c.MatmulParams() + 4*int64(c.Layers)*int64(c.Dim)*int64(ctx)
}

// NumParams is the total number of parameters, norms and embeddings included.
func (c Config) NumParams() int64 {
	return c.MatmulParams() + int64(c.VocabSize*c.Dim) + int64(c.Layers*2*c.Dim+c.Dim)
}
