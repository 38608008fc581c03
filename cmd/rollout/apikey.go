package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rollout-rl/rollout/policy/serve"
)

// apiKeyEnv is the environment variable `rollout serve` and `rollout ui`
// read their API key from.
const apiKeyEnv = "ROLLOUT_API_KEY"

// keyFlag is the key a server requires: from --api-key-file, else from
// $ROLLOUT_API_KEY, else none. There is no flag taking the key itself,
// which would show in the process list and the shell's history.
type keyFlag struct{ file string }

// add defines --api-key-file on cmd.
func (k *keyFlag) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&k.file, "api-key-file", "", "require this file's content (one line) as the API key of every request (default: $"+apiKeyEnv+" if set, else no key)")
}

// load returns the key, or "" when none is configured.
func (k *keyFlag) load() (string, error) {
	if k.file == "" {
		return strings.TrimSpace(os.Getenv(apiKeyEnv)), nil
	}
	b, err := os.ReadFile(k.file)
	if err != nil {
		return "", usageError{fmt.Errorf("--api-key-file %s: %w", k.file, err)}
	}
	key := strings.TrimSpace(string(b))
	switch {
	case key == "":
		return "", usageError{fmt.Errorf("--api-key-file %s: the file is empty", k.file)}
	case strings.ContainsAny(key, "\r\n\t "):
		return "", usageError{fmt.Errorf("--api-key-file %s: the key must be one line without spaces", k.file)}
	}
	return key, nil
}

// guard is the check a server on addr makes: Host header on loopback (no
// DNS rebinding), the key when one is configured. It warns on w when the
// server is reachable from other machines, saying what they can reach.
func guard(w io.Writer, addr, key, exposes string, browser bool) serve.Guard {
	where := serve.Exposure(addr)
	switch {
	case where != "" && key == "":
		fmt.Fprintf(w, "warning: --addr %s: listening on %s, not only on this machine: anyone who reaches it can %s (set $%s or --api-key-file to require a key)\n", addr, where, exposes, apiKeyEnv)
	case where != "":
		fmt.Fprintf(w, "warning: --addr %s: listening on %s over plain HTTP: the key and the answers cross the network unencrypted (put a TLS proxy in front)\n", addr, where)
	}
	return serve.Guard{LoopbackOnly: where == "", Key: key, Browser: browser}
}
