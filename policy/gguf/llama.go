package gguf

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/rollout-rl/rollout/policy"
)

// fileType is general.file_type: the type of most tensors (ggml's
// LLAMA_FTYPE numbering).
func fileType(t Type) uint32 {
	switch t {
	case F16:
		return 1
	case Q8_0:
		return 7
	}
	return 0 // all F32
}

// specialTokens are the texts of the special ids 0..3 (PAD, BOS, EOS, SEP).
var specialTokens = []string{"<pad>", "<bos>", "<eos>", "<sep>"}

// Token types of tokenizer.ggml.token_type (llama.cpp's numbering).
const (
	tokenNormal  = 1
	tokenControl = 3
)

// byteToRune is GPT-2's byte-to-unicode map: the bytes that are printable
// Latin-1 characters stand for themselves, the others (controls, space,
// soft hyphen…) for the code points from U+0100 on, in byte order. A
// "gpt2" tokenizer spells every token through it.
var byteToRune = func() (m [256]rune) {
	next := rune(256)
	for b := range 256 {
		if b >= '!' && b <= '~' || b >= 0xa1 && b <= 0xac || b >= 0xae {
			m[b] = rune(b)
		} else {
			m[b] = next
			next++
		}
	}
	return m
}()

// Export converts a policy and its tokenizer to a GGUF file that llama.cpp
// loads as a Llama model: the llama.* hyperparameters, the vocabulary as a
// "gpt2" (byte-level BPE) tokenizer without merges, so that llama.cpp
// tokenizes text into the policy's character ids (special tokens PAD, BOS,
// EOS, SEP as control tokens; no BOS added), and the weights under
// llama.cpp's names. Matrices are stored as typ (F32, F16 or Q8_0), norm
// weights as F32. The query and key rows of each head are permuted from
// the rotate-half pairing (i, i+d/2) of Hugging Face's Llama to the
// adjacent pairing (2i, 2i+1) that llama.cpp's RoPE uses, as llama.cpp's
// Hugging Face converter does. The alphabet must be ASCII (one byte per
// character), as the bundled tasks' is.
func Export(m *policy.Model, tok *policy.Tokenizer, typ Type, name string) (*File, error) {
	c := m.Config
	if tok.VocabSize() != c.VocabSize {
		return nil, fmt.Errorf("gguf export: tokenizer has %d tokens, model vocab_size %d", tok.VocabSize(), c.VocabSize)
	}
	if _, err := typ.DataSize(c.Dim); err != nil {
		return nil, fmt.Errorf("gguf export: hidden_size %d as %s: %w", c.Dim, typ, err)
	}
	if _, err := typ.DataSize(c.Hidden); err != nil {
		return nil, fmt.Errorf("gguf export: intermediate_size %d as %s: %w", c.Hidden, typ, err)
	}
	tokens := append([]string(nil), specialTokens...)
	types := []int32{tokenControl, tokenControl, tokenControl, tokenControl}
	for i, r := range tok.Alphabet() {
		if r >= 0x80 {
			return nil, fmt.Errorf("gguf export: the vocabulary's character %q (id %d) is not ASCII: only one-byte characters can be tokens without merges", r, i+4)
		}
		tokens = append(tokens, string(byteToRune[r]))
		types = append(types, tokenNormal)
	}
	f := &File{Metadata: []KV{
		{"general.architecture", "llama"},
		{"general.name", name},
		{"general.file_type", fileType(typ)},
		{"llama.vocab_size", uint32(c.VocabSize)},
		{"llama.context_length", uint32(c.MaxSeq)},
		{"llama.embedding_length", uint32(c.Dim)},
		{"llama.block_count", uint32(c.Layers)},
		{"llama.feed_forward_length", uint32(c.Hidden)},
		{"llama.attention.head_count", uint32(c.Heads)},
		{"llama.attention.head_count_kv", uint32(c.KVHeads)},
		{"llama.rope.freq_base", float32(c.RopeTheta)},
		{"llama.rope.dimension_count", uint32(c.HeadDim())},
		{"llama.attention.layer_norm_rms_epsilon", float32(c.NormEps)},
		{"tokenizer.ggml.model", "gpt2"},
		{"tokenizer.ggml.pre", "default"},
		{"tokenizer.ggml.tokens", tokens},
		{"tokenizer.ggml.token_type", types},
		{"tokenizer.ggml.merges", []string{}},
		{"tokenizer.ggml.bos_token_id", uint32(policy.BOS)},
		{"tokenizer.ggml.eos_token_id", uint32(policy.EOS)},
		{"tokenizer.ggml.padding_token_id", uint32(policy.PAD)},
		{"tokenizer.ggml.add_bos_token", false},
		{"tokenizer.ggml.add_eos_token", false},
	}}
	if typ != F32 {
		f.Metadata = append(f.Metadata, KV{"general.quantization_version", uint32(2)})
	}
	for _, p := range m.NamedParams() {
		gname, perm, err := tensorName(p.Name)
		if err != nil {
			return nil, fmt.Errorf("gguf export: %w", err)
		}
		v := p.Values()
		if perm {
			v = permuteRoPE(v, p.Shape[0], c.Heads, false)
		}
		t := Tensor{Name: gname, Type: typ}
		for i := len(p.Shape) - 1; i >= 0; i-- {
			t.Dims = append(t.Dims, uint64(p.Shape[i]))
		}
		if len(p.Shape) == 1 {
			t.Type = F32
		}
		if t.Data, err = Encode(t.Type, v); err != nil {
			return nil, fmt.Errorf("gguf export: tensor %s: %w", p.Name, err)
		}
		f.Tensors = append(f.Tensors, t)
	}
	return f, nil
}

// tensorName maps a Hugging Face Llama tensor name to llama.cpp's, and
// says whether its rows are permuted for RoPE (queries and keys).
func tensorName(hf string) (string, bool, error) {
	switch hf {
	case "model.embed_tokens.weight":
		return "token_embd.weight", false, nil
	case "model.norm.weight":
		return "output_norm.weight", false, nil
	case "lm_head.weight":
		return "output.weight", false, nil
	}
	var layer int
	var rest string
	if n, _ := fmt.Sscanf(hf, "model.layers.%d.%s", &layer, &rest); n == 2 {
		names := map[string]string{
			"input_layernorm.weight":          "attn_norm.weight",
			"self_attn.q_proj.weight":         "attn_q.weight",
			"self_attn.k_proj.weight":         "attn_k.weight",
			"self_attn.v_proj.weight":         "attn_v.weight",
			"self_attn.o_proj.weight":         "attn_output.weight",
			"post_attention_layernorm.weight": "ffn_norm.weight",
			"mlp.gate_proj.weight":            "ffn_gate.weight",
			"mlp.up_proj.weight":              "ffn_up.weight",
			"mlp.down_proj.weight":            "ffn_down.weight",
		}
		if g, ok := names[rest]; ok {
			return fmt.Sprintf("blk.%d.%s", layer, g), strings.HasPrefix(rest, "self_attn.q_") || strings.HasPrefix(rest, "self_attn.k_"), nil
		}
	}
	return "", false, fmt.Errorf("tensor %s has no llama.cpp name", hf)
}

// permuteRoPE reorders the rows of w (rows × cols, rows = heads·d): within
// each head, row i and row i+d/2 (rotate-half pairs) become rows 2i and
// 2i+1 (adjacent pairs); inverse undoes it.
func permuteRoPE(w []float32, rows, heads int, inverse bool) []float32 {
	cols := len(w) / rows
	d := rows / heads
	out := make([]float32, len(w))
	for h := range heads {
		for j := range 2 {
			for i := range d / 2 {
				hf, ll := h*d+j*d/2+i, h*d+2*i+j
				src, dst := hf, ll
				if inverse {
					src, dst = ll, hf
				}
				copy(out[dst*cols:(dst+1)*cols], w[src*cols:(src+1)*cols])
			}
		}
	}
	return out
}

// maxContext is the longest context_length Import accepts (its rotary
// tables grow with it).
const maxContext = 1 << 17

// Import converts a GGUF file written by Export (or any Llama GGUF file of
// the same layout and tokenizer) back to a policy and its tokenizer,
// decoding quantized tensors to float32 and undoing the RoPE permutation.
func Import(f *File) (*policy.Model, *policy.Tokenizer, error) {
	var errs []string
	get := func(key string) any {
		v, ok := f.Get(key)
		if !ok {
			errs = append(errs, "metadata "+key+" is missing")
		}
		return v
	}
	u32 := func(key string) int {
		v := get(key)
		u, ok := v.(uint32)
		if !ok && v != nil {
			errs = append(errs, fmt.Sprintf("metadata %s is %v (%T), want uint32", key, v, v))
		}
		return int(u)
	}
	f32 := func(key string) float64 {
		v := get(key)
		x, ok := v.(float32)
		if !ok && v != nil {
			errs = append(errs, fmt.Sprintf("metadata %s is %v (%T), want float32", key, v, v))
		}
		// The shortest decimal that rounds to x: 1e-5 stays 1e-5.
		d, _ := strconv.ParseFloat(strconv.FormatFloat(float64(x), 'g', -1, 32), 64)
		return d
	}
	if a := get("general.architecture"); a != nil && a != "llama" {
		errs = append(errs, fmt.Sprintf("general.architecture %v: only llama is supported", a))
	}
	if t := get("tokenizer.ggml.model"); t != nil && t != "gpt2" {
		errs = append(errs, fmt.Sprintf("tokenizer.ggml.model %v: only gpt2 is supported", t))
	}
	tokens, ok := get("tokenizer.ggml.tokens").([]string)
	c := policy.Config{
		VocabSize: len(tokens), Dim: u32("llama.embedding_length"), Hidden: u32("llama.feed_forward_length"),
		Layers: u32("llama.block_count"), Heads: u32("llama.attention.head_count"), KVHeads: u32("llama.attention.head_count_kv"),
		MaxSeq: u32("llama.context_length"), NormEps: f32("llama.attention.layer_norm_rms_epsilon"), RopeTheta: f32("llama.rope.freq_base"),
	}
	if !ok {
		errs = append(errs, "tokenizer.ggml.tokens is not a string array")
	}
	if len(errs) > 0 {
		return nil, nil, fmt.Errorf("gguf import: %s", strings.Join(errs, "; "))
	}
	alphabet, err := alphabetOf(tokens)
	if err != nil {
		return nil, nil, fmt.Errorf("gguf import: %w", err)
	}
	tok, err := policy.NewTokenizer(alphabet)
	if err != nil {
		return nil, nil, fmt.Errorf("gguf import: %w", err)
	}
	if err := c.Validate(); err != nil {
		return nil, nil, fmt.Errorf("gguf import: %w", err)
	}
	// The tensors bound the shape before the model is allocated: a
	// damaged hyperparameter is an error, not a huge allocation.
	if c.MaxSeq > maxContext {
		return nil, nil, fmt.Errorf("gguf import: llama.context_length %d is more than %d", c.MaxSeq, maxContext)
	}
	for name, dims := range map[string][]uint64{
		"token_embd.weight":                             {uint64(c.Dim), uint64(c.VocabSize)},
		fmt.Sprintf("blk.%d.ffn_up.weight", c.Layers-1): {uint64(c.Dim), uint64(c.Hidden)},
	} {
		if t, ok := f.Tensor(name); !ok || !slices.Equal(t.Dims, dims) {
			return nil, nil, fmt.Errorf("gguf import: tensor %s missing or not of shape %v (as the metadata says)", name, dims)
		}
	}
	m, err := policy.NewModel(c, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("gguf import: %w", err)
	}
	want := map[string]bool{}
	for _, p := range m.NamedParams() {
		gname, perm, err := tensorName(p.Name)
		if err != nil {
			return nil, nil, fmt.Errorf("gguf import: %w", err)
		}
		want[gname] = true
		t, ok := f.Tensor(gname)
		if !ok {
			return nil, nil, fmt.Errorf("gguf import: tensor %s is missing", gname)
		}
		var shape []uint64
		for i := len(p.Shape) - 1; i >= 0; i-- {
			shape = append(shape, uint64(p.Shape[i]))
		}
		if !slices.Equal(t.Dims, shape) {
			return nil, nil, fmt.Errorf("gguf import: tensor %s has shape %v, want %v", gname, t.Dims, shape)
		}
		v, err := Decode(t.Type, t.Data, t.Elems())
		if err != nil {
			return nil, nil, fmt.Errorf("gguf import: tensor %s: %w", gname, err)
		}
		if perm {
			v = permuteRoPE(v, p.Shape[0], c.Heads, true)
		}
		copy(p.Values(), v)
	}
	for _, t := range f.Tensors {
		if !want[t.Name] {
			return nil, nil, fmt.Errorf("gguf import: unexpected tensor %s", t.Name)
		}
	}
	return m, tok, nil
}

// alphabetOf reads the characters of a vocabulary Export wrote: the
// special tokens, then one character per token.
func alphabetOf(tokens []string) (string, error) {
	if len(tokens) < len(specialTokens) || !slices.Equal(tokens[:len(specialTokens)], specialTokens) {
		return "", fmt.Errorf("the vocabulary does not start with the special tokens %v", specialTokens)
	}
	runeToByte := map[rune]byte{}
	for b, r := range byteToRune {
		runeToByte[r] = byte(b)
	}
	var b strings.Builder
	for i, t := range tokens[len(specialTokens):] {
		r := []rune(t)
		var c byte
		ok := len(r) == 1
		if ok {
			c, ok = runeToByte[r[0]]
		}
		if !ok || c >= 0x80 {
			return "", fmt.Errorf("token %d %q is not one ASCII character", i+len(specialTokens), t)
		}
		b.WriteByte(c)
	}
	return b.String(), nil
}
