package gguf_test

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/gguf"
)

func encode(t *testing.T, f *gguf.File) []byte {
	t.Helper()
	var b bytes.Buffer
	if _, err := f.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Every metadata type and tensor type written comes back as written, with
// the header and alignment GGUF version 3 prescribes.
func TestWriteReadRoundTrip(t *testing.T) {
	q, err := gguf.Encode(gguf.Q8_0, make([]float32, 64))
	if err != nil {
		t.Fatal(err)
	}
	f := &gguf.File{
		Metadata: []gguf.KV{
			{"u8", uint8(7)}, {"i8", int8(-7)}, {"u16", uint16(700)}, {"i16", int16(-700)},
			{"u32", uint32(70000)}, {"i32", int32(-70000)}, {"u64", uint64(1 << 40)}, {"i64", int64(-1 << 40)},
			{"f32", float32(1.5)}, {"f64", 2.25}, {"yes", true}, {"s", "héllo"},
			{"strings", []string{"a", "", "ċ"}}, {"ints", []int32{1, -2}}, {"empty", []string{}},
		},
		Tensors: []gguf.Tensor{
			{Name: "a", Dims: []uint64{3}, Type: gguf.F32, Data: make([]byte, 12)},
			{Name: "b", Dims: []uint64{32, 2}, Type: gguf.Q8_0, Data: q},
			{Name: "c", Dims: []uint64{5}, Type: gguf.F16, Data: []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}},
		},
	}
	raw := encode(t, f)
	if string(raw[:4]) != "GGUF" || raw[4] != 3 {
		t.Fatalf("header % x", raw[:8])
	}
	got, err := gguf.Read(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Metadata, f.Metadata) {
		t.Errorf("metadata\ngot  %v\nwant %v", got.Metadata, f.Metadata)
	}
	for i, tn := range got.Tensors {
		w := f.Tensors[i]
		if tn.Name != w.Name || !slices.Equal(tn.Dims, w.Dims) || tn.Type != w.Type || !bytes.Equal(tn.Data, w.Data) {
			t.Errorf("tensor %d: got %+v, want %+v", i, tn, w)
		}
		if off := len(raw) - cap(tn.Data); off%gguf.DefaultAlignment != 0 {
			t.Errorf("tensor %s starts at byte %d, not aligned to %d", tn.Name, off, gguf.DefaultAlignment)
		}
	}
}

// Q8_0 is ggml's block format: a binary16 scale max|x|/127 and the values
// divided by it, rounded half away from zero.
func TestQ8_0(t *testing.T) {
	v := make([]float32, 32)
	for i := range v {
		v[i] = float32(i-16) / 4 // -4 … 3.75
	}
	b, err := gguf.Encode(gguf.Q8_0, v)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 34 {
		t.Fatalf("%d bytes for one block, want 34", len(b))
	}
	// d = 4/127 = 0.031496…, as binary16 0x2808 (0.0314941…).
	if d := uint16(b[0]) | uint16(b[1])<<8; d != 0x2808 {
		t.Errorf("scale bits %#04x, want 0x2808", d)
	}
	want := []int8{-127, -119, -111, -103, -95, -87, -79, -71, -64, -56, -48, -40, -32, -24, -16, -8, 0, 8, 16, 24, 32, 40, 48, 56, 64, 71, 79, 87, 95, 103, 111, 119}
	for i, w := range want {
		if got := int8(b[2+i]); got != w {
			t.Errorf("q[%d] = %d, want %d", i, got, w)
		}
	}
	back, err := gguf.Decode(gguf.Q8_0, b, 32)
	if err != nil {
		t.Fatal(err)
	}
	for i := range v {
		if math.Abs(float64(back[i]-v[i])) > 4.0/127/2+1e-3 {
			t.Errorf("value %d: %g decoded as %g", i, v[i], back[i])
		}
	}
	if _, err := gguf.Encode(gguf.Q8_0, make([]float32, 33)); err == nil || !strings.Contains(err.Error(), "33 elements") {
		t.Errorf("33 values as Q8_0: %v", err)
	}
}

// A float32 export imports back to the same weights and vocabulary; a
// Q8_0 one to weights within half a quantization step.
func TestExportImport(t *testing.T) {
	cfg, _ := policy.Size("tiny")
	m, err := policy.NewModel(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	tok := policy.DefaultTokenizer()
	for _, typ := range []gguf.Type{gguf.F32, gguf.Q8_0} {
		f, err := gguf.Export(m, tok, typ, "tiny")
		if err != nil {
			t.Fatal(err)
		}
		back, err := gguf.Read(encode(t, f))
		if err != nil {
			t.Fatal(err)
		}
		m2, tok2, err := gguf.Import(back)
		if err != nil {
			t.Fatal(err)
		}
		if tok2.Alphabet() != tok.Alphabet() || m2.Config != m.Config {
			t.Fatalf("%s: imported %+v %q", typ, m2.Config, tok2.Alphabet())
		}
		for i, p := range m.NamedParams() {
			got := m2.NamedParams()[i].Values()
			for j, v := range p.Values() {
				if d := math.Abs(float64(got[j] - v)); typ == gguf.F32 && d != 0 || d > 0.5*0.1/127 {
					t.Fatalf("%s: %s[%d] = %g, imported %g", typ, p.Name, j, v, got[j])
				}
			}
		}
		if q, _ := back.Tensor("blk.0.attn_q.weight"); q.Type != typ || !slices.Equal(q.Dims, []uint64{128, 128}) {
			t.Errorf("%s: attn_q %v %v", typ, q.Type, q.Dims)
		}
		if n, _ := back.Tensor("blk.0.attn_norm.weight"); n.Type != gguf.F32 {
			t.Errorf("%s: norms stored as %s, want F32", typ, n.Type)
		}
	}
}

// Files that are not GGUF version 3, or that end early, are errors that
// say what was being read; the vocabulary must be ASCII characters.
func TestErrors(t *testing.T) {
	cfg, _ := policy.Size("tiny")
	m, _ := policy.NewModel(cfg, 1)
	f, err := gguf.Export(m, policy.DefaultTokenizer(), gguf.F32, "tiny")
	if err != nil {
		t.Fatal(err)
	}
	raw := encode(t, f)
	v2 := slices.Clone(raw)
	v2[4] = 2
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"not gguf", []byte("PK\x03\x04 a zip"), "not a GGUF file"},
		{"version 2", v2, "version 2"},
		{"header cut", raw[:100], "file ends after 100 bytes"},
		{"data cut", raw[:len(raw)-100], "lie outside the file"},
	} {
		if _, err := gguf.Read(tc.data); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	tok, _ := policy.NewTokenizer("0123456789abcdefghijklmnopqrstuvwxyz +-*/=()<>,.:;|?!#_[]\n%é")
	if _, err := gguf.Export(m, tok, gguf.F32, "tiny"); err == nil || !strings.Contains(err.Error(), `'é' (id 63) is not ASCII`) {
		t.Errorf("non-ASCII vocabulary: %v", err)
	}
	if _, err := gguf.ParseType("q4_k"); err == nil || !strings.Contains(err.Error(), `"q4_k"`) {
		t.Errorf("ParseType(q4_k): %v", err)
	}
}

// smallFile is a Q8_0 export of a policy of a few thousand bytes.
func smallFile(t testing.TB) []byte {
	cfg := policy.Config{VocabSize: 8, Dim: 32, Hidden: 32, Layers: 1, Heads: 2, KVHeads: 2, MaxSeq: 4, NormEps: 1e-5, RopeTheta: 10000}
	m, _ := policy.NewModel(cfg, 1)
	tok, _ := policy.NewTokenizer("abcd")
	file, err := gguf.Export(m, tok, gguf.Q8_0, "small")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := file.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// Read and Import never panic on a damaged file: every truncation and
// 2000 files with corrupted bytes give a file or an error.
func TestReadDamaged(t *testing.T) {
	raw := smallFile(t)
	f, err := gguf.Read(raw)
	if err != nil {
		t.Fatal(err)
	}
	end := 0 // where the last tensor's data ends; padding follows
	for _, tn := range f.Tensors {
		end = max(end, len(raw)-cap(tn.Data)+len(tn.Data))
	}
	for n := range end {
		if _, err := gguf.Read(raw[:n]); err == nil {
			t.Errorf("the first %d of %d bytes read without error", n, len(raw))
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		b := slices.Clone(raw)
		for range 1 + rng.IntN(3) {
			b[rng.IntN(len(b))] = byte(rng.IntN(256))
		}
		if f, err := gguf.Read(b); err == nil {
			gguf.Import(f)
		}
	}
}

// Read never panics, whatever the bytes: it returns a file or an error.
func FuzzRead(f *testing.F) {
	f.Add(smallFile(f))
	f.Add([]byte("GGUF\x03\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if g, err := gguf.Read(data); err == nil {
			gguf.Import(g)
		}
	})
}

// Export a policy as a float32 GGUF file that llama.cpp loads.
func ExampleExport() {
	cfg, _ := policy.Size("tiny")
	m, _ := policy.NewModel(cfg, 1)
	f, err := gguf.Export(m, policy.DefaultTokenizer(), gguf.F32, "tiny")
	if err != nil {
		panic(err)
	}
	var b bytes.Buffer
	if _, err := f.WriteTo(&b); err != nil {
		panic(err)
	}
	arch, _ := f.Get("general.architecture")
	tokens, _ := f.Get("tokenizer.ggml.tokens")
	fmt.Println(arch, len(f.Tensors), "tensors,", b.Len() > 4*int(cfg.NumParams()))
	fmt.Printf("%q\n", tokens.([]string)[:6])
	// Output:
	// llama 39 tensors, true
	// ["<pad>" "<bos>" "<eos>" "<sep>" "0" "1"]
}
