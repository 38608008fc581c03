package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/serve"
	"github.com/rollout-rl/rollout/tracking"
	"github.com/rollout-rl/rollout/tracking/ui"
)

// defaultUIAddr is where `rollout ui` listens unless --addr says otherwise:
// loopback only.
const defaultUIAddr = "127.0.0.1:8080"

func newUICmd() *cobra.Command {
	var store, addr string
	var key keyFlag
	cmd := &cobra.Command{
		Use:   "ui [--store PATH] [--addr 127.0.0.1:8080]",
		Short: "Serve a read-only web dashboard of the store: experiments, reports, curves, runs and rollout trees",
		Long: `Serves a web dashboard of the store on --addr (loopback by default): the
experiments; each experiment's comparison table (as rollout report, at
final, best, step:N, tokens:T — offering its token marks — or
train_flops:F) and curves (as rollout plot: the budget axis by default,
95% bands, paired differences from the baseline, runs grouped by or
filtered on any resolved config key, smoothing over the raw mean,
another experiment's curves beside, notes on what a curve leaves out),
a config diff between variants or runs; each run's config, notes
(rollout note), metrics, evaluations and a table of a step's sampled
responses with rewards and advantages; and a viewer of rollout trees.
A page's state is in its URL (reload or share it). Pages of running
experiments update every 2 s.
JSON endpoints under /api/ serve the same data. The dashboard only reads:
it opens the store read-only for each request, as a snapshot while a run
writes it, and never blocks the writer. Stop it with Ctrl-C.

On loopback (the default) it answers requests to localhost or a loopback
address only. With a key (the file of --api-key-file, else
$ROLLOUT_API_KEY) every request must carry it: as "Authorization: Bearer
KEY" from scripts, or as the password a browser asks for (any user name).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			path := storePath(store)
			if _, err := os.Stat(path); err != nil {
				return storeOpenError(store, err)
			}
			apiKey, err := key.load()
			if err != nil {
				return err
			}
			h, err := newUIHandler(path)
			if err != nil {
				return err
			}
			defer h.Close()
			served := guard(cmd.ErrOrStderr(), addr, apiKey, "read the whole store", true).Wrap(h)
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return usageError{fmt.Errorf("--addr %s: %w", addr, err)}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			fmt.Fprintf(cmd.OutOrStdout(), "serving %s on http://%s/%s (Ctrl-C stops)\n", path, ln.Addr(), keyNote(apiKey))
			return serveUI(ctx, ln, served, cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVar(&store, "store", "", "store file (default $ROLLOUT_STORE or rollout.db)")
	cmd.Flags().StringVar(&addr, "addr", defaultUIAddr, "address to listen on; anything but a loopback address exposes the store to the network")
	key.add(cmd)
	return cmd
}

// newUIHandler is the dashboard over the store at path, with the report
// defaults of `rollout report` and the policy tokenizer's token text.
func newUIHandler(path string) (*ui.Handler, error) {
	tok := policy.DefaultTokenizer()
	return ui.New(ui.Options{
		Open: func() (*tracking.Store, error) {
			// During a run: a snapshot of metrics and groups, not of the
			// runs' resume state, which the dashboard never shows.
			st, err := tracking.Open(path, tracking.Options{ReadOnly: true, Scope: &tracking.ReadScope{Metrics: true, Groups: true}})
			if err != nil {
				return nil, fmt.Errorf("dashboard: %w", err)
			}
			return st, nil
		},
		Report: reportOptions(),
		TokenText: func(id int) string {
			if s, err := tok.Decode([]int{id}); err == nil {
				return s
			}
			return tok.DisplayText([]int{id})
		},
	})
}

// uiMaxConnections is the most connections the dashboard holds open.
const uiMaxConnections = 256

// serveUI serves h on ln until ctx is done, then lets requests in flight
// finish (up to 5 s). A request is read within 30 s (headers within 10 s)
// and answered within 5 min; an idle connection is closed after 60 s; at
// most uiMaxConnections are open at once.
func serveUI(ctx context.Context, ln net.Listener, h http.Handler, errw io.Writer) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 5 * time.Minute, IdleTimeout: 60 * time.Second, MaxHeaderBytes: 64 << 10}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(serve.LimitListener(ln, uiMaxConnections)) }()
	select {
	case err := <-done:
		return fmt.Errorf("dashboard on %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	fmt.Fprintln(errw, "stopping the dashboard")
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shut); err != nil {
		return fmt.Errorf("dashboard on %s: stopping: %w", ln.Addr(), err)
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("dashboard on %s: %w", ln.Addr(), err)
	}
	return nil
}
