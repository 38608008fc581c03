package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
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

// The server starts on a checkpoint given as --checkpoint, as in every
// command, or as the argument; answers; and stops when cancelled.
func TestServeAnswersAndStops(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ckpt")
	if code, _, errOut := rollout(t, "model", "init", "--size", "tiny", "--out", dir); code != 0 {
		t.Fatalf("model init: %s", errOut)
	}
	for name, args := range map[string][]string{"flag": {"serve", "--checkpoint", dir}, "argument": {"serve", dir}} {
		t.Run(name, func(t *testing.T) { serveAndStop(t, append(args, "--addr", "127.0.0.1:0")) })
	}
}

// serveAndStop runs rollout with args (a serve command of the checkpoint
// ckpt on a free loopback port), asks it for a completion and stops it.
func serveAndStop(t *testing.T, args []string) {
	root := newRootCmd()
	var out, errOut syncBuffer
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs(args)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- root.ExecuteContext(ctx) }()
	addrRE := regexp.MustCompile(`serving ckpt on (http://127\.0\.0\.1:[0-9]+/v1)`)
	var base string
	for deadline := time.Now().Add(10 * time.Second); base == "" && time.Now().Before(deadline); {
		if m := addrRE.FindStringSubmatch(out.String()); m != nil {
			base = m[1]
		}
		time.Sleep(5 * time.Millisecond)
	}
	if base == "" {
		t.Fatalf("no address printed: stdout %q, stderr %q", out.String(), errOut.String())
	}
	if strings.Contains(errOut.String(), "warning") {
		t.Errorf("loopback address warned about: %q", errOut.String())
	}
	resp, err := http.Post(base+"/completions", "application/json", strings.NewReader(`{"model": "ckpt", "prompt": "12+34", "max_tokens": 5, "seed": 1}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"object":"text_completion"`) {
		t.Errorf("completion: status %d: %s", resp.StatusCode, body)
	}
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
}

func TestWarnIfExposed(t *testing.T) {
	for _, tc := range []struct {
		addr net.Addr
		warn bool
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 8000}, false},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 8000}, false},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 8000}, true},
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 8000}, true},
		{&net.TCPAddr{IP: net.IPv4(192, 168, 1, 2), Port: 8000}, true},
	} {
		var b bytes.Buffer
		warnIfExposed(&b, tc.addr)
		if got := strings.Contains(b.String(), "warning: listening on "+tc.addr.String()); got != tc.warn {
			t.Errorf("%s: warning %q, want one: %v", tc.addr, b.String(), tc.warn)
		}
	}
}
