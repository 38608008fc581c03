package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for a writer and a reader goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// serveCmd runs `rollout serve` on a new tiny checkpoint with extra
// arguments, and returns its base URL, its standard error and a function
// that interrupts it and checks that it stopped cleanly.
func serveCmd(t *testing.T, extra ...string) (string, *syncBuffer, func()) {
	t.Helper()
	return serveCkpt(t, func(dir string) []string { return []string{dir} }, extra...)
}

// serveCkpt is serveCmd with the checkpoint named as ckptArgs says (as
// the argument, or with --checkpoint).
func serveCkpt(t *testing.T, ckptArgs func(dir string) []string, extra ...string) (string, *syncBuffer, func()) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ckpt")
	if code, _, errOut := rollout(t, "model", "init", "--size", "tiny", "--out", dir); code != 0 {
		t.Fatalf("model init: %s", errOut)
	}
	root := newRootCmd()
	var out, errOut syncBuffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(append(append([]string{"serve"}, ckptArgs(dir)...), extra...))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	addrRE := regexp.MustCompile(`serving ckpt on (http://[^ ]+/v1)`)
	var base string
	for deadline := time.Now().Add(time.Minute); base == "" && time.Now().Before(deadline); { // a guard against a hang, not a time limit
		if m := addrRE.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		}
		time.Sleep(5 * time.Millisecond)
	}
	if base == "" {
		cancel()
		t.Fatalf("no address printed: stdout %q, stderr %q", out.String(), errOut.String())
	}
	return base, &errOut, func() {
		t.Helper()
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve returned %v after cancel", err)
			}
		case <-time.After(time.Minute): // a guard against a hang, not a time limit
			t.Fatal("serve did not stop after cancel")
		}
	}
}

// complete posts a completion request with an Authorization header (none
// when auth is empty) and returns the status and body.
func complete(t *testing.T, url, auth, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The server starts on a checkpoint given as --checkpoint, as in every
// command, or as the argument; answers; and stops when cancelled.
func TestServeAnswersAndStops(t *testing.T) {
	for name, ckptArgs := range map[string]func(string) []string{
		"flag":     func(dir string) []string { return []string{"--checkpoint", dir} },
		"argument": func(dir string) []string { return []string{dir} },
	} {
		t.Run(name, func(t *testing.T) {
			base, errOut, stop := serveCkpt(t, ckptArgs, "--addr", "127.0.0.1:0")
			if strings.Contains(errOut.String(), "warning") {
				t.Errorf("loopback address warned about: %q", errOut.String())
			}
			code, body := complete(t, base+"/completions", "", `{"model": "ckpt", "prompt": "12+34", "max_tokens": 5, "seed": 1}`)
			if code != http.StatusOK || !strings.Contains(body, `"object":"text_completion"`) {
				t.Errorf("completion: status %d: %s", code, body)
			}
			stop()
		})
	}
}

// With $ROLLOUT_API_KEY, or a key file, rollout serve answers 401 without
// the key and 200 with it; on loopback it refuses other Host headers.
func TestServeKey(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(keyFile, []byte("file-key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(apiKeyEnv, "env-key")
	for _, tc := range []struct {
		name string
		args []string
		key  string
	}{
		{"environment", nil, "env-key"},
		{"file over environment", []string{"--api-key-file", keyFile}, "file-key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, _, stop := serveCmd(t, append([]string{"--addr", "127.0.0.1:0"}, tc.args...)...)
			defer stop()
			req := `{"prompt": "1+1", "max_tokens": 2}`
			if code, body := complete(t, base+"/completions", "", req); code != http.StatusUnauthorized || !strings.Contains(body, `"code":"invalid_api_key"`) {
				t.Errorf("no key: status %d: %s", code, body)
			}
			if code, body := complete(t, base+"/completions", "Bearer wrong", req); code != http.StatusUnauthorized {
				t.Errorf("wrong key: status %d: %s", code, body)
			}
			if code, body := complete(t, base+"/completions", "Bearer "+tc.key, req); code != http.StatusOK {
				t.Errorf("key: status %d: %s", code, body)
			}
			rebound := strings.Replace(base, "127.0.0.1", "localhost", 1)
			if code, body := complete(t, rebound+"/completions", "Bearer "+tc.key, req); code != http.StatusOK {
				t.Errorf("localhost: status %d: %s", code, body)
			}
			hreq, _ := http.NewRequest("GET", base+"/models", nil)
			hreq.Host = "attacker.example"
			hreq.Header.Set("Authorization", "Bearer "+tc.key)
			resp, err := http.DefaultClient.Do(hreq)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusForbidden {
				t.Errorf("Host attacker.example: status %d", resp.StatusCode)
			}
		})
	}
}

// A server reachable from other machines is warned about, saying what it
// exposes and how to protect it.
func TestGuardWarnings(t *testing.T) {
	for _, tc := range []struct {
		addr, key string
		loopback  bool
		warn      string
	}{
		{"127.0.0.1:8000", "", true, ""},
		{"[::1]:8000", "k", true, ""},
		{"localhost:8000", "", true, ""},
		{"0.0.0.0:8000", "", false, "listening on every network interface, not only on this machine: anyone who reaches it can use the model (set $ROLLOUT_API_KEY or --api-key-file"},
		{":8000", "k", false, "over plain HTTP: the key and the answers cross the network unencrypted"},
		{"192.168.1.5:8000", "", false, "listening on 192.168.1.5, not only"},
	} {
		var b bytes.Buffer
		g := guard(&b, tc.addr, tc.key, "use the model", false)
		if g.LoopbackOnly != tc.loopback || g.Key != tc.key || !strings.Contains(b.String(), tc.warn) || (tc.warn == "") != (b.Len() == 0) {
			t.Errorf("%s, key %q: guard %+v, warning %q; want loopback only %v, a warning with %q", tc.addr, tc.key, g, b.String(), tc.loopback, tc.warn)
		}
	}
}

func TestServeBadInput(t *testing.T) {
	dir := t.TempDir()
	if code, _, errOut := rollout(t, "serve", dir, "--addr", "nonsense"); code != 2 || !strings.Contains(errOut, `--addr "nonsense"`) {
		t.Errorf("bad --addr: exit %d, %q", code, errOut)
	}
	if code, _, errOut := rollout(t, "serve", filepath.Join(dir, "missing")); code != 2 || !strings.Contains(errOut, "CHECKPOINT "+filepath.Join(dir, "missing")+": no checkpoint there") {
		t.Errorf("missing checkpoint: exit %d, %q", code, errOut)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--checkpoint", filepath.Join(dir, "missing")}, "--checkpoint " + filepath.Join(dir, "missing") + ": no checkpoint there"},
		{[]string{"serve"}, "--checkpoint DIR: name the checkpoint to serve"},
		{[]string{"serve", "a", "--checkpoint", "b"}, "--checkpoint b and the argument a: give one checkpoint"},
	} {
		if code, _, errOut := rollout(t, tc.args...); code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
	empty := filepath.Join(dir, "empty")
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want string }{
		{filepath.Join(dir, "none"), "--api-key-file " + filepath.Join(dir, "none") + ": open"},
		{empty, "--api-key-file " + empty + ": the file is empty"},
	} {
		for _, command := range []string{"serve", "ui"} {
			args := []string{command, "--api-key-file", tc.file}
			if command == "serve" {
				args = append(args, dir)
			} else {
				args = append(args, "--store", uiStore(t))
			}
			if code, _, errOut := rollout(t, args...); code != 2 || !strings.Contains(errOut, tc.want) {
				t.Errorf("%s --api-key-file %s: exit %d, %q; want 2 and %q", command, tc.file, code, errOut, tc.want)
			}
		}
	}
}
