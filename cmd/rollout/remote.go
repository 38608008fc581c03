package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/policy/openai"
	"github.com/rollout-rl/rollout/search/remote"
)

// remoteFlags are the flags of a policy behind an OpenAI-compatible
// completions server (`--policy URL --model NAME`).
type remoteFlags struct {
	url, model  string
	timeout     time.Duration
	concurrency int
	retries     int
}

// add defines the flags on cmd.
func (r *remoteFlags) add(cmd *cobra.Command) {
	f := cmd.Flags()
	f.StringVar(&r.url, "policy", "", "sample from the policy behind this OpenAI-compatible server (http://host:port) instead of a checkpoint")
	f.StringVar(&r.model, "model", "", "the served model of --policy (default: the server's only one)")
	f.DurationVar(&r.timeout, "timeout", 120*time.Second, "with --policy: time limit of one request")
	f.IntVar(&r.concurrency, "concurrency", 8, "with --policy: most requests in flight at once")
	f.IntVar(&r.retries, "retries", 4, "with --policy: retries of a request after a 429, a 5xx or a connection error (backoff doubling from 0.5 s)")
}

// check refuses the remote flags without --policy, and --checkpoint with
// it.
func (r *remoteFlags) check(cmd *cobra.Command) error {
	if r.url == "" {
		for _, name := range []string{"model", "timeout", "concurrency", "retries"} {
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
	return nil
}

// dial connects to the server of --policy.
func (r *remoteFlags) dial(ctx context.Context) (*remote.Sampler, error) {
	retries := r.retries
	if retries == 0 {
		retries = -1 // openai.Options: negative is none
	}
	s, err := remote.Dial(ctx, openai.Options{BaseURL: r.url, Timeout: r.timeout, Concurrency: r.concurrency, Retries: retries}, r.model)
	if errors.Is(err, remote.ErrModel) {
		return nil, usageError{fmt.Errorf("--model: %w", err)}
	}
	if err != nil {
		return nil, fmt.Errorf("--policy: %w", err)
	}
	return s, nil
}
