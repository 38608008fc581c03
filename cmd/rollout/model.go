package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/policy"
)

func newModelCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "model", Short: "Create and inspect policy checkpoints"}
	cmd.AddCommand(newModelInitCmd(), newModelLogitsCmd(), newModelSampleCmd())
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
	cmd.Flags().StringVar(&size, "size", "tiny", "model size: tiny or small")
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

// checkpointFlag adds --checkpoint, the flag every command that reads a
// policy checkpoint names it by.
func checkpointFlag(cmd *cobra.Command, dir *string) {
	cmd.Flags().StringVar(dir, "checkpoint", "", "policy checkpoint directory (model.safetensors, config.json, vocab.json)")
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	return enc.Encode(v)
}
