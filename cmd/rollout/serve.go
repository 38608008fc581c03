package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/serve"
)

func newServeCmd() *cobra.Command {
	var addr, name, ckpt string
	var int8 bool
	var opts serve.Options
	cmd := &cobra.Command{
		Use:   "serve --checkpoint DIR [--addr 127.0.0.1:8000]",
		Short: "Serve a checkpoint over an OpenAI-compatible completions API (/v1/models, /v1/completions)",
		Long: `Serve a checkpoint over an OpenAI-compatible completions API until interrupted.

Requests decoded at the same time share the engine's forward passes. A text
prompt is read as the policy reads it (BOS, the characters, SEP); a response
ends at EOS or max_tokens. The server listens on loopback unless --addr says
otherwise, and has no authentication: expose it only on a trusted network.
The checkpoint is --checkpoint DIR, as in every command that reads one (a
directory given as the argument, "rollout serve DIR", is accepted too).`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, _, err := net.SplitHostPort(addr); err != nil {
				return usageError{fmt.Errorf("--addr %q: %w", addr, err)}
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
			srv, err := serve.New(policy.NewEngine(m, engOpts...), tok, opts)
			if err != nil {
				return err
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("serve: %w", err)
			}
			warnIfExposed(cmd.ErrOrStderr(), ln.Addr())
			fmt.Fprintf(cmd.OutOrStdout(), "serving %s on http://%s/v1 (interrupt to stop)\n", name, ln.Addr())
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
	return cmd
}

// warnIfExposed warns when the server listens beyond loopback.
func warnIfExposed(w io.Writer, a net.Addr) {
	if tcp, ok := a.(*net.TCPAddr); ok && tcp.IP.IsLoopback() {
		return
	}
	fmt.Fprintf(w, "warning: listening on %s, beyond loopback: anyone who can reach it can use the model (there is no authentication)\n", a)
}
