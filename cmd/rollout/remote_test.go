package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/serve"
)

// serveTiny serves a random tiny policy on loopback in-process and returns
// its URL and the completion tokens its answers reported, summed.
func serveTiny(t *testing.T) (string, *atomic.Int64) {
	t.Helper()
	return serveTinyWith(t, serve.Guard{})
}

// serveTinyWith is serveTiny behind a guard.
func serveTinyWith(t *testing.T, g serve.Guard) (string, *atomic.Int64) {
	t.Helper()
	cfg, err := policy.Size("tiny")
	if err != nil {
		t.Fatal(err)
	}
	m, err := policy.NewModel(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := serve.New(policy.NewEngine(m), policy.DefaultTokenizer(), serve.Options{ModelName: "tiny", Guard: g})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Run(ctx); close(done) }()
	var used atomic.Int64
	h := srv.Handler()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		var resp struct {
			Usage struct {
				CompletionTokens int64 `json:"completion_tokens"`
			} `json:"usage"`
		}
		if json.Unmarshal(rec.Body.Bytes(), &resp) == nil {
			used.Add(resp.Usage.CompletionTokens)
		}
		w.WriteHeader(rec.Code)
		io.Copy(w, rec.Body)
	}))
	t.Cleanup(func() { hs.Close(); cancel(); <-done })
	return hs.URL, &used
}

// rollout sample and ttc with --policy against rollout serve on loopback,
// and their refusals and failures. (A table of cases, hence the length.)
func TestRemoteSampleAndTTC(t *testing.T) {
	url, used := serveTiny(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + ln.Addr().String()
	ln.Close()
	cases := []struct {
		name     string
		args     []string
		code     int
		contains []string // in stdout (exit 0) or stderr
	}{
		{name: "tree as JSON", args: []string{"sample", "--policy", url, "--model", "tiny", "--task", "add", "--strategy", "entropy_tree",
			"--strategy-param", "m=2", "--strategy-param", "t=2", "--budget", "400", "--format", "json"}, contains: []string{`"strategy":"entropy_tree"`}},
		{name: "flat as text", args: []string{"sample", "--policy", url, "--task", "add", "--strategy", "flat", "--strategy-param", "n=3", "--prompt", "12+34"},
			contains: []string{"strategy flat: 3 trees, 3 leaves", `prompt "12+34"`}},
		{name: "ttc", args: []string{"ttc", "--policy", url, "--task", "add", "--n", "1,3", "--prompts", "2", "--format", "json"},
			contains: []string{`"method":"best_of_n"`, `"method":"tree_majority"`}},
		{name: "checkpoint and policy", args: []string{"sample", "--policy", url, "--checkpoint", "x"}, code: 2, contains: []string{"--checkpoint and --policy"}},
		{name: "model without policy", args: []string{"ttc", "--model", "tiny", "--checkpoint", "x"}, code: 2, contains: []string{"--model: only with --policy"}},
		{name: "not a URL", args: []string{"sample", "--policy", "localhost:8000"}, code: 2, contains: []string{`--policy "localhost:8000": want the server's URL`}},
		{name: "top-k", args: []string{"ttc", "--policy", url, "--top-k", "5"}, code: 2, contains: []string{"--top-k and --policy"}},
		{name: "segment tree", args: []string{"sample", "--policy", url, "--strategy", "segment_tree"}, code: 2, contains: []string{`rollout.strategy segment_tree with --policy`, `"segment_tree" has no remote form`}},
		{name: "unknown model", args: []string{"sample", "--policy", url, "--model", "qwen"}, code: 2, contains: []string{`--model: ` + url + ` does not serve the model "qwen" (it serves: tiny)`}},
		{name: "no server", args: []string{"sample", "--policy", deadURL, "--retries", "1"}, code: 1, contains: []string{deadURL + "/v1/models", "(after 2 attempts)"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := used.Load()
			code, out, errOut := rollout(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: stdout %q, stderr %q", code, tc.code, out, errOut)
			}
			text := out
			if tc.code != 0 {
				text = errOut
			}
			for _, w := range tc.contains {
				if !strings.Contains(text, w) {
					t.Errorf("output %q does not contain %q", text, w)
				}
			}
			if tc.name != "tree as JSON" {
				return
			}
			var rec struct {
				Budget struct {
					Limit           int64 `json:"limit"`
					GeneratedTokens int64 `json:"generated_tokens"`
					UnheldTokens    int64 `json:"unheld_tokens"`
				} `json:"budget"`
				Nodes []struct {
					Tokens []int  `json:"tokens"`
					Finish string `json:"finish"`
				} `json:"nodes"`
				Leaves []struct {
					Advantages []float64 `json:"advantages"`
					Reason     string    `json:"reason"`
				} `json:"leaves"`
			}
			if err := json.NewDecoder(bytes.NewReader([]byte(out))).Decode(&rec); err != nil {
				t.Fatal(err)
			}
			if got, want := rec.Budget.GeneratedTokens, used.Load()-before; got != want || got > rec.Budget.Limit {
				t.Errorf("budget: generated %d (limit %d), the server reported %d", got, rec.Budget.Limit, want)
			}
			// The budget is the nodes' tokens plus the EOS tokens the
			// server counted but did not return, one per response it ended.
			held, eos := int64(0), int64(0)
			for _, n := range rec.Nodes {
				held += int64(len(n.Tokens))
				if n.Finish == "eos" {
					eos++
				}
			}
			if held+rec.Budget.UnheldTokens != rec.Budget.GeneratedTokens || rec.Budget.UnheldTokens != eos {
				t.Errorf("budget: generated %d, nodes hold %d, unheld %d, %d responses ended by EOS", rec.Budget.GeneratedTokens, held, rec.Budget.UnheldTokens, eos)
			}
			if len(rec.Nodes) < 2 || len(rec.Leaves) != len(rec.Nodes) || rec.Leaves[0].Reason == "" {
				t.Errorf("record of %d nodes, leaves %+v", len(rec.Nodes), rec.Leaves)
			}
		})
	}
}

// --policy sends the key of $OPENAI_API_KEY (or of --api-key-env's
// variable) to a server that requires one; a server's error text reaches
// the terminal with its control characters escaped.
func TestRemoteKey(t *testing.T) {
	url, _ := serveTinyWith(t, serve.Guard{Key: "k3y"})
	hostile := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error": {"message": "\u001b[2J\u001b[31mowned\u001b[0m"}}`)
	}))
	defer hostile.Close()
	sample := []string{"sample", "--policy", url, "--task", "add", "--strategy", "flat", "--strategy-param", "n=2", "--prompt", "1+2"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		code int
		want string
	}{
		{"no key", map[string]string{"OPENAI_API_KEY": ""}, sample, 1, url + "/v1/models: 401 Unauthorized: this server requires an API key: send it as the header \"Authorization: Bearer KEY\" (a key is read from $OPENAI_API_KEY; --api-key-env names another variable)"},
		{"wrong key", map[string]string{"OPENAI_API_KEY": "nope"}, sample, 1, "401 Unauthorized: incorrect API key provided"},
		{"OPENAI_API_KEY", map[string]string{"OPENAI_API_KEY": "k3y"}, sample, 0, "strategy flat: 2 trees"},
		{"--api-key-env", map[string]string{"OPENAI_API_KEY": "", "MY_KEY": "k3y"}, append(sample, "--api-key-env", "MY_KEY"), 0, "strategy flat: 2 trees"},
		{"--api-key-env unset", map[string]string{"MY_KEY": ""}, append(sample, "--api-key-env", "MY_KEY"), 2, "--api-key-env MY_KEY: the variable is not set"},
		{"--max-answer-mib 0", nil, append(sample, "--max-answer-mib", "0"), 2, "--max-answer-mib 0: want 1 to 1048576"},
		{"--api-key-env without --policy", nil, []string{"sample", "--api-key-env", "X"}, 2, "--api-key-env: only with --policy"},
		{"escape codes", nil, []string{"sample", "--policy", hostile.URL, "--task", "add"}, 1, `400 Bad Request: \x1b[2J\x1b[31mowned\x1b[0m`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			code, out, errOut := rollout(t, tc.args...)
			text := out
			if tc.code != 0 {
				text = errOut
			}
			if code != tc.code || !strings.Contains(text, tc.want) || strings.ContainsRune(errOut, 0x1b) {
				t.Errorf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, out, errOut, tc.code, tc.want)
			}
		})
	}
}

// A key about to cross the network over plain HTTP is warned about.
func TestRemoteKeyWarning(t *testing.T) {
	t.Setenv("ROLLOUT_TEST_KEY", "k")
	for _, tc := range []struct {
		url  string
		warn bool
	}{
		{"http://127.0.0.1:8000", false},
		{"http://localhost:8000", false},
		{"http://[::1]", false},
		{"https://api.example.com/v1", false},
		{"http://api.example.com/v1", true},
		{"http://10.0.0.5:8000", true},
	} {
		var b bytes.Buffer
		r := remoteFlags{url: tc.url, keyEnv: "ROLLOUT_TEST_KEY"}
		if key := r.apiKey(&b); key != "k" || strings.Contains(b.String(), "sent over plain HTTP") != tc.warn {
			t.Errorf("%s: key %q, warning %q; want a warning: %v", tc.url, key, b.String(), tc.warn)
		}
	}
}
