package main

import (
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/serve"
)

func newServeCmd() *cobra.Command {
	var addr, name, ckpt string
	var int8 bool
	var opts serve.Options
	var key keyFlag
	cmd := &cobra.Command{
		Use:   "serve --checkpoint DIR [--addr 127.0.0.1:8000]",
		Short: "Serve a checkpoint over an OpenAI-compatible completions API (/v1/models, /v1/completions)",
		Long: `Serve a checkpoint over an OpenAI-compatible completions API until interrupted.

Requests decoded at the same time share the engine's forward passes. A text
prompt is read as the policy reads it (BOS, the characters, SEP); a response
ends at EOS or max_tokens.

The server listens on loopback unless --addr says otherwise; there it
answers requests to localhost or a loopback address only. With a key (the
file of --api-key-file, else $ROLLOUT_API_KEY) every request must carry
"Authorization: Bearer KEY" (401 otherwise), as OpenAI clients send it.
Each request is bounded (prompts × n within --max-batch, every prompt plus
max_tokens within the model's context), the server holds at most --queue +
--max-batch requests (429 beyond), a request is dropped when its client
goes away or after --request-timeout, and bodies must be JSON.

The checkpoint is --checkpoint DIR, as in every command that reads one (a
directory given as the argument, "rollout serve DIR", is accepted too).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, _, err := net.SplitHostPort(addr); err != nil {
				return usageError{fmt.Errorf("--addr %q: %w", addr, err)}
			}
			if opts.RequestTimeout <= 0 {
				return usageError{fmt.Errorf("--request-timeout %v: want a positive duration", opts.RequestTimeout)}
			}
			apiKey, err := key.load()
			if err != nil {
				return err
			}
			flag := "--checkpoint"
			switch {
			case len(args) == 1 && ckpt != "" && filepath.Clean(args[0]) != filepath.Clean(ckpt):
				return usageError{fmt.Errorf("--checkpoint %s and the argument %s: give one checkpoint", ckpt, args[0])}
			case len(args) == 1:
				flag, ckpt = "CHECKPOINT", args[0]
			case ckpt == "":
				return usageError{fmt.Errorf("--checkpoint DIR: name the checkpoint to serve")}
			}
			m, tok, err := loadCheckpoint(flag, ckpt)
			if err != nil {
				return err
			}
			var engOpts []policy.EngineOption
			if int8 {
				engOpts = append(engOpts, policy.WithInt8())
			}
			if name == "" {
				abs, err := filepath.Abs(ckpt)
				if err != nil {
					return err
				}
				name = filepath.Base(abs)
			}
			opts.ModelName = name
			opts.Guard = guard(cmd.ErrOrStderr(), addr, apiKey, "use the model", false)
			srv, err := serve.New(policy.NewEngine(m, engOpts...), tok, opts)
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("serve: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "serving %s on http://%s/v1%s (interrupt to stop)\n", name, ln.Addr(), keyNote(apiKey))
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return srv.Serve(ctx, ln)
		},
	}
	f := cmd.Flags()
	f.StringVar(&ckpt, "checkpoint", "", "policy checkpoint directory to serve (or give it as the argument)")
	f.StringVar(&addr, "addr", "127.0.0.1:8000", "address to listen on (host:port; port 0 picks a free one)")
	f.StringVar(&name, "model-name", "", "model id clients name (default: the checkpoint directory's name)")
	f.IntVar(&opts.QueueSize, "queue", 64, "requests that may wait for room in the batch before 429")
	f.IntVar(&opts.MaxBatch, "max-batch", 64, "most sequences decoded together")
	f.BoolVar(&int8, "int8", false, "decode with int8 weights")
	f.DurationVar(&opts.RequestTimeout, "request-timeout", 5*time.Minute, "drop a request not answered within this time, queueing included (503)")
	key.add(cmd)
	return cmd
}

// keyNote says in a server's first line that it requires a key.
func keyNote(key string) string {
	if key == "" {
		return ""
	}
	return ", API key required"
}
