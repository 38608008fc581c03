package gguf_test

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/gguf"
)

// envNodeLlamaCpp names the directory in which node-llama-cpp is installed
// (it holds node_modules/node-llama-cpp). When it is set, the llama.cpp
// test must run: a missing node or package fails it instead of skipping.
const envNodeLlamaCpp = "ROLLOUT_NODE_LLAMA_CPP"

// llamaCase is one case of testdata/llamacpp.mjs and its answer.
type llamaCase struct {
	Text     string `json:"text"`
	Sequence []int  `json:"sequence"`
	Prompt   []int  `json:"prompt"`
	MaxNew   int    `json:"max_new"`
	Vocab    int    `json:"vocab"`
}

type llamaAnswer struct {
	Tokens []int       `json:"tokens"`
	Text   string      `json:"text"`
	Probs  [][]float64 `json:"probs"`
	Greedy []int       `json:"greedy"`
}

// nodeLlamaCpp returns node's path and node-llama-cpp's directory, or
// skips the test (fails it when envNodeLlamaCpp is set).
func nodeLlamaCpp(t *testing.T) (node, dir string) {
	t.Helper()
	dir = os.Getenv(envNodeLlamaCpp)
	miss := t.Skipf
	if dir != "" {
		miss = t.Fatalf
	} else {
		t.Skipf("%s is not set: set it to a directory where `npm i -E node-llama-cpp@3.21.1` ran to compare with llama.cpp (.ci/run does)", envNodeLlamaCpp)
	}
	node, err := exec.LookPath("node")
	if err != nil {
		miss("%s=%s but no node on PATH: %v", envNodeLlamaCpp, dir, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "node-llama-cpp", "package.json")); err != nil {
		miss("%s=%s: node-llama-cpp is not installed there: %v", envNodeLlamaCpp, dir, err)
	}
	return node, dir
}

// testModel is a small random policy whose long context holds every
// task's prompts, with weights drawn 8× wider than at initialisation so
// that its next-token distributions are far from uniform (a wrong weight
// layout shows as large differences).
func testModel(t *testing.T) (*policy.Model, *policy.Tokenizer) {
	t.Helper()
	cfg := policy.Config{VocabSize: 64, Dim: 64, Hidden: 128, Layers: 2, Heads: 4, KVHeads: 4, MaxSeq: 512, NormEps: 1e-5, RopeTheta: 10000}
	m, err := policy.NewModel(cfg, 7)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m.NamedParams() {
		if len(p.Shape) == 2 {
			for i, v := range p.Values() {
				p.Values()[i] = 8 * v
			}
		}
	}
	return m, policy.DefaultTokenizer()
}

// llamaCases are two eval prompts of every bundled task, each with its
// demonstration (the sequence whose distributions are compared is BOS,
// prompt, SEP, demonstration) and rollout's greedy continuation.
func llamaCases(t *testing.T, m *policy.Model, tok *policy.Tokenizer) ([]llamaCase, [][]int) {
	t.Helper()
	const maxNew = 24
	var cases []llamaCase
	var greedy [][]int
	e := policy.NewEngine(m)
	for _, name := range task.Names() {
		params, err := task.DefaultParams(name)
		if err != nil {
			t.Fatal(err)
		}
		tk, err := task.New(name, params)
		if err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			p, err := tk.Prompt(task.Eval, 1, i)
			if err != nil {
				t.Fatal(err)
			}
			prompt, err := tok.EncodePrompt(p.Text)
			if err != nil {
				t.Fatal(err)
			}
			demo, err := tok.Encode(p.Demo)
			if err != nil {
				t.Fatal(err)
			}
			seq := append(slices.Clone(prompt), demo...)
			if len(seq) > m.Config.MaxSeq || len(prompt)+maxNew > m.Config.MaxSeq {
				seq = seq[:m.Config.MaxSeq]
			}
			root, err := e.Prefill(prompt, policy.Stream{Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			s, err := policy.Generate(e, root, 1, policy.Sampling{Temperature: 0}, 1, len(prompt)+maxNew)
			root.Release()
			if err != nil {
				t.Fatal(err)
			}
			cases = append(cases, llamaCase{Text: p.Text, Sequence: seq, Prompt: prompt, MaxNew: maxNew, Vocab: m.Config.VocabSize})
			greedy = append(greedy, s[0].IDs)
		}
	}
	return cases, greedy
}

// runLlamaCpp writes f and the cases and runs them through llama.cpp.
func runLlamaCpp(t *testing.T, node, dir string, f *gguf.File, cases []llamaCase, settings string) []llamaAnswer {
	t.Helper()
	tmp := t.TempDir()
	var b bytes.Buffer
	if _, err := f.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	model := filepath.Join(tmp, "model.gguf")
	raw, _ := json.Marshal(cases)
	if err := os.WriteFile(model, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tmp, "cases.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "testdata/llamacpp.mjs", dir, model, filepath.Join(tmp, "cases.json"), settings)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	start := time.Now()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node testdata/llamacpp.mjs: %v\n%s", err, stderr.String())
	}
	t.Logf("llama.cpp ran %d cases in %.1fs", len(cases), time.Since(start).Seconds())
	var answers []llamaAnswer
	if err := json.Unmarshal(out, &answers); err != nil || len(answers) != len(cases) {
		t.Fatalf("node testdata/llamacpp.mjs: %d answers for %d cases (%v)\n%.500s", len(answers), len(cases), err, out)
	}
	return answers
}

// softmax is the next-token distribution of logits, in float64.
func softmax(logits []float32) []float64 {
	hi := math.Inf(-1)
	for _, l := range logits {
		hi = max(hi, float64(l))
	}
	p := make([]float64, len(logits))
	var sum float64
	for i, l := range logits {
		p[i] = math.Exp(float64(l) - hi)
		sum += p[i]
	}
	for i := range p {
		p[i] /= sum
	}
	return p
}

// An exported policy runs in llama.cpp as in rollout: llama.cpp's
// tokenizer gives rollout's token ids for prompts of every task and
// decodes them back, its next-token distributions equal the softmax of the
// logits `rollout model logits` prints (float32: within 1e-4 at every
// position, 2e-3 with node-llama-cpp's default float16 KV cache; Q8_0:
// those of the policy with the file's dequantized weights, within 5e-2, as
// llama.cpp also rounds activations to 8 bits), and, in float32, its
// greedy continuations are rollout's.
func TestLlamaCppAgrees(t *testing.T) {
	node, dir := nodeLlamaCpp(t)
	m, tok := testModel(t)
	for _, tc := range []struct {
		typ      gguf.Type
		settings string // of testdata/llamacpp.mjs
		tol      float64
		// greedy says whether greedy continuations must be identical:
		// llama.cpp's Q8_0 products round activations to 8 bits too, which
		// this deliberately sharp model turns into other choices within a
		// few tokens.
		greedy bool
	}{
		{gguf.F32, "exact", 1e-4, true},
		// node-llama-cpp's defaults round keys and values to float16 in
		// the KV cache, which moves this model's probabilities by up to 7e-4.
		{gguf.F32, "defaults", 2e-3, true},
		{gguf.Q8_0, "exact", 5e-2, false},
	} {
		t.Run(tc.typ.String()+"/"+tc.settings, func(t *testing.T) {
			f, err := gguf.Export(m, tok, tc.typ, "test")
			if err != nil {
				t.Fatal(err)
			}
			ref := m
			if tc.typ != gguf.F32 {
				if ref, _, err = gguf.Import(f); err != nil {
					t.Fatal(err)
				}
			}
			cases, greedy := llamaCases(t, ref, tok)
			answers := runLlamaCpp(t, node, dir, f, cases, tc.settings)
			e := policy.NewEngine(ref)
			var worst float64
			bad, agree, total := 0, 0, 0
			for i, c := range cases {
				a := answers[i]
				if want, _ := tok.Encode(c.Text); !slices.Equal(a.Tokens, want) || a.Text != c.Text {
					t.Errorf("case %d %q: llama.cpp tokenizes to %v and back to %q, rollout to %v", i, c.Text, a.Tokens, a.Text, want)
				}
				logits, err := e.Logits(c.Sequence)
				if err != nil {
					t.Fatal(err)
				}
				if len(a.Probs) != len(logits) {
					t.Fatalf("case %d: llama.cpp gave %d positions, want %d", i, len(a.Probs), len(logits))
				}
				for pos, l := range logits {
					want := softmax(l)
					for id, p := range want {
						d := math.Abs(a.Probs[pos][id] - p)
						worst = max(worst, d)
						if d > tc.tol {
							if bad++; bad > 1 {
								continue
							}
							t.Errorf("case %d %q position %d token %d: llama.cpp p=%.6g, rollout %.6g (tolerance %g)", i, c.Text, pos, id, a.Probs[pos][id], p, tc.tol)
						}
					}
				}
				same := 0
				for same < min(len(a.Greedy), len(greedy[i])) && a.Greedy[same] == greedy[i][same] {
					same++
				}
				agree += same
				total += len(greedy[i])
				if tc.greedy && !slices.Equal(a.Greedy, greedy[i]) {
					t.Errorf("case %d %q: greedy continuation\nllama.cpp %v\nrollout   %v", i, c.Text, a.Greedy, greedy[i])
				}
			}
			if bad > 0 {
				t.Errorf("%d probabilities differ by more than %g", bad, tc.tol)
			}
			t.Logf("%s, %s settings: largest probability difference %.3g over %d cases; greedy continuations agree on %d of %d tokens before they first differ", tc.typ, tc.settings, worst, len(cases), agree, total)
		})
	}
}
