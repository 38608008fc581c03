package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/gguf"
)

func newModelCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "model", Short: "Create and inspect policy checkpoints"}
	cmd.AddCommand(newModelInitCmd(), newModelLogitsCmd(), newModelSampleCmd(), newModelExportCmd())
	return cmd
}

// checkOutDir refuses to write a checkpoint into an existing file or a
// non-empty directory unless force: files of another checkpoint left
// there would mix with the new one.
func checkOutDir(dir string, force bool) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("--out %s: %w", dir, err)
	case !fi.IsDir():
		return usageError{fmt.Errorf("--out %s: exists and is not a directory", dir)}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("--out %s: %w", dir, err)
	}
	if len(entries) > 0 && !force {
		return usageError{fmt.Errorf("--out %s: directory is not empty (it holds %s…): choose another or add --force to overwrite", dir, entries[0].Name())}
	}
	return nil
}

// loadCheckpoint loads the policy checkpoint a command names (what says
// how: "--checkpoint" or "DIR"); a directory without a checkpoint is the
// user's input (exit 2).
func loadCheckpoint(what, dir string) (*policy.Model, *policy.Tokenizer, error) {
	if dir == "" {
		return nil, nil, usageError{fmt.Errorf("%s: a checkpoint directory is required", what)}
	}
	m, tok, err := policy.Load(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, usageError{fmt.Errorf("%s %s: no checkpoint there (rollout model init or rollout pretrain writes one): %w", what, dir, err)}
	}
	return m, tok, err
}

func newModelInitCmd() *cobra.Command {
	var size, out string
	var seed uint64
	var force bool
	cmd := &cobra.Command{
		Use:   "init --size tiny|small --seed N --out DIR [--force]",
		Short: "Write a randomly initialised checkpoint (weights ~ N(0, 0.02²), norm weights 1)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg, err := policy.Size(size)
			if err != nil {
				return usageError{fmt.Errorf("--size: %w", err)}
			}
			if out == "" {
				return usageError{fmt.Errorf("--out: a directory is required")}
			}
			if err := checkOutDir(out, force); err != nil {
				return err
			}
			m, err := policy.NewModel(cfg, seed)
			if err != nil {
				return err
			}
			if err := policy.Save(out, m, policy.DefaultTokenizer()); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: %s model, %d parameters, seed %d\n", out, size, cfg.NumParams(), seed)
			return nil
		},
	}
	cmd.Flags().StringVar(&size, "size", "tiny", "model size: tiny, small or medium")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "initialisation seed")
	cmd.Flags().StringVar(&out, "out", "", "checkpoint directory to write (new or empty)")
	cmd.Flags().BoolVar(&force, "force", false, "write into a non-empty --out directory, overwriting its checkpoint files")
	return cmd
}

func newModelLogitsCmd() *cobra.Command {
	var ckpt, text string
	cmd := &cobra.Command{
		Use:   "logits --checkpoint DIR --prompt TEXT",
		Short: "Print the token ids of BOS and TEXT and, per position, the next-token logits (JSON)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			m, tok, err := loadCheckpoint("--checkpoint", ckpt)
			if err != nil {
				return err
			}
			ids, err := tok.Encode(text)
			if err != nil {
				return usageError{fmt.Errorf("--prompt: %w", err)}
			}
			ids = append([]int{policy.BOS}, ids...)
			logits, err := policy.NewEngine(m).Logits(ids)
			if err != nil {
				return usageError{fmt.Errorf("--prompt: %w", err)}
			}
			return writeJSON(cmd.OutOrStdout(), map[string]any{"tokens": ids, "logits": logits})
		},
	}
	checkpointFlag(cmd, &ckpt)
	cmd.Flags().StringVar(&text, "prompt", "", "text to run through the model (BOS is prepended, no SEP appended)")
	return cmd
}

func newModelSampleCmd() *cobra.Command {
	var ckpt, prompt string
	var n int
	var seed uint64
	cfg := policy.DefaultSampling
	cmd := &cobra.Command{
		Use:   "sample --checkpoint DIR --prompt TEXT",
		Short: "Sample responses with per-token log-probabilities and entropies",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if n < 1 {
				return usageError{fmt.Errorf("-n %d: need at least 1 sample", n)}
			}
			if err := cfg.Validate(); err != nil {
				return usageError{err}
			}
			m, tok, err := loadCheckpoint("--checkpoint", ckpt)
			if err != nil {
				return err
			}
			ids, err := tok.EncodePrompt(prompt)
			if err != nil {
				return usageError{fmt.Errorf("--prompt: %w", err)}
			}
			e := policy.NewEngine(m)
			root, err := e.Prefill(ids, policy.Stream{Seed: seed})
			if err != nil {
				return usageError{fmt.Errorf("--prompt: %w", err)}
			}
			samples, err := policy.Generate(e, root, n, cfg, seed, m.Config.MaxSeq)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			for i, s := range samples {
				text, _ := tok.Decode(s.IDs)
				fmt.Fprintf(out, "sample %d: %q\n", i, text)
				for j, t := range s.Tokens {
					piece, _ := tok.Decode([]int{t.ID})
					fmt.Fprintf(out, "  %3d %-6q logp %8.4f  entropy %.4f\n", j, piece, t.LogProb, t.Entropy)
				}
			}
			return nil
		},
	}
	checkpointFlag(cmd, &ckpt)
	cmd.Flags().StringVar(&prompt, "prompt", "", "prompt text (BOS before, SEP after)")
	cmd.Flags().IntVarP(&n, "n", "n", 1, "number of samples")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "sampling seed")
	cmd.Flags().Float64Var(&cfg.Temperature, "temperature", 1, "sampling temperature (0: greedy)")
	cmd.Flags().IntVar(&cfg.TopK, "top-k", 0, "keep the k most probable tokens (0: off)")
	cmd.Flags().Float64Var(&cfg.TopP, "top-p", 1, "nucleus sampling mass (1: off)")
	return cmd
}

func newModelExportCmd() *cobra.Command {
	var ckpt, format, typ, out, name string
	var force bool
	cmd := &cobra.Command{
		Use:   "export --checkpoint DIR --format gguf [--type f32|q8_0] --out FILE",
		Short: "Write a checkpoint as a GGUF file for llama.cpp, ollama and the tools built on them",
		Long: `Write a checkpoint as a GGUF file (version 3, Llama architecture) that
llama.cpp and the tools built on it load: the llama.* hyperparameters, the
vocabulary as a tokenizer that gives rollout's token ids (BOS is not
added: prepend token 1, and end a prompt with token 3, SEP, as rollout
does), and the weights as float32 (--type f32) or 8-bit blocks (q8_0).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "gguf" {
				return usageError{fmt.Errorf("--format %q: the only export format is gguf (a checkpoint directory already is safetensors)", format)}
			}
			t, err := gguf.ParseType(typ)
			if err != nil || t == gguf.F16 {
				return usageError{fmt.Errorf("--type %q: want f32 or q8_0", typ)}
			}
			if out == "" {
				return usageError{fmt.Errorf("--out: a file name is required")}
			}
			if _, err := os.Stat(out); err == nil && !force {
				return usageError{fmt.Errorf("--out %s: exists: choose another name or add --force to overwrite", out)}
			}
			m, tok, err := loadCheckpoint("--checkpoint", ckpt)
			if err != nil {
				return err
			}
			if name == "" {
				name = filepath.Base(filepath.Clean(ckpt))
			}
			f, err := gguf.Export(m, tok, t, name)
			if err != nil {
				return usageError{err}
			}
			var b bytes.Buffer
			if _, err := f.WriteTo(&b); err != nil {
				return err
			}
			tmp := out + ".tmp"
			if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
				return fmt.Errorf("export %s: %w", out, err)
			}
			if err := os.Rename(tmp, out); err != nil {
				return fmt.Errorf("export %s: %w", out, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: GGUF, llama architecture, %d tensors, weights %s, %d bytes\n", out, len(f.Tensors), t, b.Len())
			return nil
		},
	}
	checkpointFlag(cmd, &ckpt)
	cmd.Flags().StringVar(&format, "format", "gguf", "file format: gguf")
	cmd.Flags().StringVar(&typ, "type", "f32", "weight type: f32 or q8_0 (norm weights stay f32)")
	cmd.Flags().StringVar(&out, "out", "", "file to write")
	cmd.Flags().StringVar(&name, "name", "", "general.name of the file (default: the checkpoint directory's name)")
	cmd.Flags().BoolVar(&force, "force", false, "overwrite an existing --out file")
	return cmd
}

// checkpointFlag adds --checkpoint, the flag every command that reads a
// policy checkpoint names it by.
func checkpointFlag(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, "checkpoint", "", "policy checkpoint directory (model.safetensors, config.json, vocab.json)")
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	return enc.Encode(v)
}
