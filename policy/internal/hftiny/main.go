// Command hftiny writes policy's Hugging Face reference checkpoint,
// testdata/hf_tiny: a tiny Llama with seeded random weights (norm weights
// around 1, others of std 0.25, so that the logits are far from uniform)
// and the token sequences whose logits the reference computes. Run by
//
//	go generate ./policy
//
// then policy/testdata/hf_llama_reference.py (PyTorch) writes the reference
// logits, hf_tiny/logits.json, that TestMatchesHuggingFaceLlama compares
// against.
package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/nlpodyssey/spago/mat"

	"github.com/rollout-rl/rollout/policy"
)

// config is the shape of the reference model.
var config = policy.Config{VocabSize: 64, Dim: 32, Hidden: 48, Layers: 2, Heads: 4, KVHeads: 4, MaxSeq: 16, NormEps: 1e-5, RopeTheta: 10000}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: hftiny DIR (go generate ./policy writes policy/testdata/hf_tiny)")
		os.Exit(2)
	}
	if err := write(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "hftiny:", err)
		os.Exit(1)
	}
}

// write saves the reference checkpoint and its sequences.json into dir.
func write(dir string) error {
	const seed = 42
	m, err := policy.NewModel(config, seed)
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	for _, p := range m.NamedParams() {
		v := mat.Data[float32](p.Param.Value())
		for i := range v {
			if len(p.Shape) == 1 {
				v[i] = float32(1 + 0.3*rng.NormFloat64())
			} else {
				v[i] = float32(0.25 * rng.NormFloat64())
			}
		}
	}
	if err := policy.Save(dir, m, policy.DefaultTokenizer()); err != nil {
		return err
	}
	rng = rand.New(rand.NewPCG(4, 2))
	seqs := make([][]int, 3)
	for i := range seqs {
		n := 5 + rng.IntN(config.MaxSeq-5+1)
		for range n {
			seqs[i] = append(seqs[i], 4+rng.IntN(config.VocabSize-4))
		}
	}
	b, err := json.Marshal(seqs)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "sequences.json"), b, 0o644); err != nil {
		return fmt.Errorf("write sequences: %w", err)
	}
	return nil
}
