package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/policy/openai"
	"github.com/rollout-rl/rollout/policy/serve"
	"github.com/rollout-rl/rollout/search/remote"
)

// remoteFlags are the flags of a policy behind an OpenAI-compatible
// completions server (`--policy URL --model NAME`).
type remoteFlags struct {
	url, model  string
	timeout     time.Duration
	concurrency int
	retries     int
	keyEnv      string
	maxAnswer   int64
	cmd         *cobra.Command // for its standard error
}

// remoteFlagNames are the flags that only go with --policy.
var remoteFlagNames = []string{"model", "timeout", "concurrency", "retries", "api-key-env", "max-answer-mib"}

// add defines the flags on cmd.
func (r *remoteFlags) add(cmd *cobra.Command) {
	r.cmd = cmd
	f := cmd.Flags()
	f.StringVar(&r.url, "policy", "", "sample from the policy behind this OpenAI-compatible server (http://host:port) instead of a checkpoint")
	f.StringVar(&r.model, "model", "", "the served model of --policy (default: the server's only one)")
	f.DurationVar(&r.timeout, "timeout", 120*time.Second, "with --policy: time limit of one request")
	f.IntVar(&r.concurrency, "concurrency", 8, "with --policy: most requests in flight at once")
	f.IntVar(&r.retries, "retries", 4, "with --policy: retries of a request after a 429, a 500, 502, 503 or 504, a timeout or a connection error (backoff doubling from 0.5 s)")
	f.StringVar(&r.keyEnv, "api-key-env", "OPENAI_API_KEY", "with --policy: the environment variable holding the server's API key, sent as \"Authorization: Bearer KEY\" when set")
	f.Int64Var(&r.maxAnswer, "max-answer-mib", openai.DefaultMaxAnswerBytes>>20, "with --policy: largest answer read, in MiB after decompression")
}

// check refuses the remote flags without --policy, and --checkpoint with
// it.
func (r *remoteFlags) check(cmd *cobra.Command) error {
	if r.url == "" {
		for _, name := range remoteFlagNames {
			if cmd.Flags().Changed(name) {
				return usageError{fmt.Errorf("--%s: only with --policy URL", name)}
			}
		}
		return nil
	}
	if cmd.Flags().Changed("checkpoint") {
		return usageError{fmt.Errorf("--checkpoint and --policy: give one (a checkpoint is sampled locally, --policy through its server)")}
	}
	if !strings.HasPrefix(r.url, "http://") && !strings.HasPrefix(r.url, "https://") {
		return usageError{fmt.Errorf("--policy %q: want the server's URL, http://host:port", r.url)}
	}
	if r.concurrency < 1 {
		return usageError{fmt.Errorf("--concurrency %d: want at least 1", r.concurrency)}
	}
	if r.retries < 0 {
		return usageError{fmt.Errorf("--retries %d: want 0 or more", r.retries)}
	}
	if r.maxAnswer < 1 || r.maxAnswer > 1<<20 {
		return usageError{fmt.Errorf("--max-answer-mib %d: want 1 to 1048576", r.maxAnswer)}
	}
	if r.keyEnv == "" {
		return usageError{fmt.Errorf("--api-key-env: want the name of an environment variable")}
	}
	if cmd.Flags().Changed("api-key-env") && os.Getenv(r.keyEnv) == "" {
		return usageError{fmt.Errorf("--api-key-env %s: the variable is not set (or empty)", r.keyEnv)}
	}
	return nil
}

// apiKey is the key sent to the server: the variable of --api-key-env,
// "" when it is not set. It warns on w when the key would cross the
// network unencrypted.
func (r *remoteFlags) apiKey(w io.Writer) string {
	key := strings.TrimSpace(os.Getenv(r.keyEnv))
	if key == "" {
		return ""
	}
	if u, err := url.Parse(r.url); err == nil && u.Scheme == "http" && serve.Exposure(net.JoinHostPort(u.Hostname(), "80")) != "" {
		fmt.Fprintf(w, "warning: --policy %s: the API key of $%s is sent over plain HTTP, readable on the network (use https://)\n", r.url, r.keyEnv)
	}
	return key
}

// dial connects to the server of --policy.
func (r *remoteFlags) dial(ctx context.Context) (*remote.Sampler, error) {
	retries := r.retries
	if retries == 0 {
		retries = -1 // openai.Options: negative is none
	}
	s, err := remote.Dial(ctx, openai.Options{BaseURL: r.url, Timeout: r.timeout, Concurrency: r.concurrency, Retries: retries,
		APIKey: r.apiKey(r.cmd.ErrOrStderr()), MaxAnswerBytes: r.maxAnswer << 20}, r.model)
	if errors.Is(err, remote.ErrModel) {
		return nil, usageError{fmt.Errorf("--model: %w", err)}
	}
	var oe *openai.Error
	if errors.As(err, &oe) && oe.Status == http.StatusUnauthorized {
		return nil, fmt.Errorf("--policy: %w (a key is read from $%s; --api-key-env names another variable)", err, r.keyEnv)
	}
	if err != nil {
		return nil, fmt.Errorf("--policy: %w", err)
	}
	return s, nil
}
