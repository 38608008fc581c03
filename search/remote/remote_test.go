package remote

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/policy/openai"
	"github.com/rollout-rl/rollout/policy/serve"
	"github.com/rollout-rl/rollout/search"
)

// served is a rollout serve handler over a tiny random model on loopback,
// recording every completions request and the usage it answered.
type served struct {
	url string
	tok *policy.Tokenizer

	mu         sync.Mutex
	prompts    []json.RawMessage
	completion int64 // usage.completion_tokens summed over answers
}

func startServe(t *testing.T) *served { return startServeAs(t, "rollout", false) }

// startServeAs is startServe whose /v1/models names another owner, with
// vLLM's /tokenize when tokenize is set.
func startServeAs(t *testing.T, owner string, tokenize bool) *served {
	t.Helper()
	cfg := policy.Config{VocabSize: 64, Dim: 16, Hidden: 32, Layers: 1, Heads: 2, KVHeads: 2, MaxSeq: 32, NormEps: 1e-5, RopeTheta: 10000}
	m, err := policy.NewModel(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	tok := policy.DefaultTokenizer()
	srv, err := serve.New(policy.NewEngine(m), tok, serve.Options{ModelName: "tiny"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Run(ctx); close(done) }()
	s := &served{tok: tok}
	h := srv.Handler()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Path == "/tokenize" && tokenize {
			var req struct{ Prompt string }
			_ = json.Unmarshal(body, &req)
			ids, err := tok.EncodePrompt(req.Prompt)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			_ = json.NewEncoder(w).Encode(map[string]any{"tokens": ids, "count": len(ids)})
			return
		}
		if r.URL.Path == "/v1/models" {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, r)
			w.Write(bytes.Replace(rec.Body.Bytes(), []byte(`"owned_by":"rollout"`), []byte(`"owned_by":"`+owner+`"`), 1))
			return
		}
		var req struct {
			Prompt json.RawMessage `json:"prompt"`
		}
		_ = json.Unmarshal(body, &req)
		r.Body = io.NopCloser(bytes.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		var resp struct {
			Usage openai.Usage `json:"usage"`
		}
		_ = json.Unmarshal(rec.Body.Bytes(), &resp)
		s.mu.Lock()
		if r.URL.Path == "/v1/completions" {
			s.prompts = append(s.prompts, req.Prompt)
		}
		s.completion += int64(resp.Usage.CompletionTokens)
		s.mu.Unlock()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(func() {
		hs.Close()
		cancel()
		<-done
	})
	s.url = hs.URL
	return s
}

func (s *served) sampler(t *testing.T, ids bool, budget int64) *Sampler {
	t.Helper()
	c, err := openai.New(openai.Options{BaseURL: s.url})
	if err != nil {
		t.Fatal(err)
	}
	return &Sampler{Client: c, Model: "tiny", Temperature: 1, TopP: 1, MaxTokens: 12, Budget: budget, Seed: 3,
		TopLogprobs: 5, Vocab: 64, PromptIDs: ids, TokenIDs: ids}
}

func (s *served) prompt(t *testing.T, text string, id uint64) Prompt {
	t.Helper()
	ids, err := s.tok.EncodePrompt(text)
	if err != nil {
		t.Fatal(err)
	}
	return Prompt{Text: text, Tokens: ids, ID: id}
}

// Remote groups against rollout serve: valid trees of the local shape,
// whose generated tokens are the server's usage, within the budget.
func TestAgainstServe(t *testing.T) {
	cases := []struct {
		name      string
		strategy  string
		params    map[string]string
		ids       bool
		budget    int64
		leaves    int // per group, when the budget does not bind
		skipped   int // per group, when the budget binds (0: some)
		answerEnd bool
	}{
		{name: "flat", strategy: "flat", params: map[string]string{"n": "4"}, ids: true, leaves: 4},
		{name: "entropy tree", strategy: "entropy_tree", params: map[string]string{"m": "2", "n": "2", "l": "1", "t": "2"}, ids: true, leaves: 2 * (1 + 2*2)},
		{name: "surprisal, two iterations", strategy: "entropy_tree", params: map[string]string{"m": "1", "n": "1", "l": "2", "t": "2", "score": "surprisal"}, ids: true, leaves: 1 + 2 + 2},
		{name: "random tree", strategy: "random_tree", params: map[string]string{"m": "2", "n": "1", "l": "1", "t": "1"}, ids: true, leaves: 4},
		{name: "text prompts", strategy: "entropy_tree", params: map[string]string{"m": "2", "n": "1", "l": "1", "t": "2"}, leaves: 2 * 3},
		{name: "flat budget covers two of four", strategy: "flat", params: map[string]string{"n": "4"}, ids: true, budget: 30, leaves: 2, skipped: 2},
		{name: "budget", strategy: "entropy_tree", params: map[string]string{"m": "2", "n": "2", "l": "1", "t": "2"}, ids: true, budget: 40},
		{name: "answer start", strategy: "entropy_tree", params: map[string]string{"m": "2", "n": "2", "l": "1", "t": "1"}, ids: true, answerEnd: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := startServe(t)
			s := srv.sampler(t, tc.ids, tc.budget)
			st, err := search.NewStrategy(tc.strategy, tc.params)
			if err != nil {
				t.Fatal(err)
			}
			prompts := []Prompt{srv.prompt(t, "12+34", 0), srv.prompt(t, "7+8", 1)}
			if tc.answerEnd {
				for i := range prompts {
					prompts[i].AnswerStart = func(string) int { return 2 } // only index 1 may fork
				}
			}
			groups, err := s.Generate(context.Background(), st, prompts)
			if err != nil {
				t.Fatal(err)
			}
			var generated int64
			for i, g := range groups {
				generated += g.Usage.GeneratedTokens
				checkGroup(t, g, s, tc.budget)
				if g.PromptID != prompts[i].ID || g.Strategy != st.Name() {
					t.Errorf("group %d: prompt id %d, strategy %q", i, g.PromptID, g.Strategy)
				}
				if tc.leaves > 0 && len(g.Leaves())+g.MissingForks*tcT(tc.params) != tc.leaves {
					t.Errorf("group %d: %d leaves and %d missing forks, want %d leaves", i, len(g.Leaves()), g.MissingForks, tc.leaves)
				}
				if tc.skipped > 0 && g.Usage.SkippedBranches != tc.skipped {
					t.Errorf("group %d: %d skipped branches, want %d", i, g.Usage.SkippedBranches, tc.skipped)
				}
				if tc.budget > 0 && g.Usage.SkippedBranches == 0 {
					t.Errorf("group %d: budget %d skipped nothing (%d tokens)", i, tc.budget, g.Usage.GeneratedTokens)
				}
				if tc.answerEnd {
					for _, n := range g.Nodes() {
						if n.Parent != nil && n.Start != 1 {
							t.Errorf("group %d: node %d forked at response index %d, at or after the answer start 2", i, n.ID, n.Start)
						}
					}
				}
			}
			if generated != srv.completion {
				t.Errorf("groups generated %d tokens, the server reported %d", generated, srv.completion)
			}
			if !tc.ids {
				checkTextForks(t, srv, groups, prompts, s)
			}
		})
	}
}

func tcT(params map[string]string) int {
	if params["t"] == "2" {
		return 2
	}
	return 1
}

// checkGroup checks a group's record, its forks and its budget.
func checkGroup(t *testing.T, g *search.Group, s *Sampler, budget int64) {
	t.Helper()
	r := g.Record("p", s.Text)
	if err := r.Validate(); err != nil {
		t.Fatalf("record: %v", err)
	}
	if budget > 0 && g.Usage.GeneratedTokens > budget {
		t.Errorf("generated %d tokens over the budget %d", g.Usage.GeneratedTokens, budget)
	}
	if g.Usage.Budget != budget {
		t.Errorf("limit %d, want %d", g.Usage.Budget, budget)
	}
	// One EOS convention: the nodes hold what the server returned, the
	// unheld count the EOS tokens it counted but left out (one per response
	// ended by EOS, since rollout serve gets no stop strings here).
	eos := 0
	for _, n := range g.Nodes() {
		if n.Finish == search.FinishEOS {
			eos++
		}
	}
	if held := r.HeldTokens(); held+g.Usage.UnheldTokens != g.Usage.GeneratedTokens || len(s.Stop) == 0 && g.Usage.UnheldTokens != int64(eos) {
		t.Errorf("generated %d tokens: %d held by the nodes, %d unheld; %d responses ended by EOS", g.Usage.GeneratedTokens, held, g.Usage.UnheldTokens, eos)
	}
	for _, n := range g.Nodes() {
		if len(n.LogProbs) != len(n.Tokens) || len(n.Entropies) != len(n.Tokens) {
			t.Errorf("node %d: %d tokens, %d logprobs, %d entropies", n.ID, len(n.Tokens), len(n.LogProbs), len(n.Entropies))
		}
		if n.Start+len(n.Tokens) > s.MaxTokens {
			t.Errorf("node %d: response of %d tokens, over %d", n.ID, n.Start+len(n.Tokens), s.MaxTokens)
		}
		if n.Parent == nil {
			continue
		}
		if !n.HasForkScore || n.ForkAt < 1 || n.ForkAt >= len(n.Parent.Tokens)-1 {
			t.Errorf("node %d: fork at %d of %d tokens (score %v)", n.ID, n.ForkAt, len(n.Parent.Tokens), n.HasForkScore)
		}
	}
	for _, n := range g.Nodes() {
		for _, e := range n.Entropies {
			if e < 0 {
				t.Errorf("node %d: negative entropy %g", n.ID, e)
			}
		}
	}
	leaves := g.Leaves()
	for i, n := range leaves {
		n.SetOutcome(float64(i%2), "test")
	}
	if err := search.SetAdvantages(g, search.TreeRL{}); err != nil {
		t.Errorf("advantages: %v", err)
	}
}

// checkTextForks checks that a fork sent as text is the prompt text and
// the text of the parent's first tokens.
func checkTextForks(t *testing.T, srv *served, groups []*search.Group, prompts []Prompt, s *Sampler) {
	t.Helper()
	want := map[string]bool{}
	for i, g := range groups {
		for _, n := range g.Nodes() {
			if n.Parent != nil {
				want[prompts[i].Text+s.Text(n.Parent.Response()[:n.Start])] = true
			}
		}
	}
	got := map[string]bool{}
	for _, p := range srv.prompts {
		var text string
		if json.Unmarshal(p, &text) == nil && !strings.Contains(text, "+34\x00") {
			got[text] = true
		}
	}
	for w := range want {
		if !got[w] {
			t.Errorf("no request had the fork prompt %q (sent: %v)", w, got)
		}
	}
}

// The same seed gives the same groups, record for record.
func TestDeterministic(t *testing.T) {
	srv := startServe(t)
	st, err := search.NewStrategy("entropy_tree", map[string]string{"m": "2", "n": "2", "l": "1", "t": "2"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for range 2 {
		s := srv.sampler(t, true, 0)
		groups, err := s.Generate(context.Background(), st, []Prompt{srv.prompt(t, "12+34", 5)})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := groups[0].Record("12+34", s.Text).WriteText(&b, s.Text); err != nil {
			t.Fatal(err)
		}
		out = append(out, b.String())
	}
	if out[0] != out[1] {
		t.Errorf("two runs differ:\n%s\n%s", out[0], out[1])
	}
}

// Server errors reach the caller naming the server, the request and the
// status; strategies without a remote form are refused.
func TestErrors(t *testing.T) {
	srv := startServe(t)
	s := srv.sampler(t, true, 0)
	s.Model = "other"
	_, err := s.Generate(context.Background(), search.Flat{N: 2}, []Prompt{srv.prompt(t, "1+1", 0)})
	if err == nil || !strings.Contains(err.Error(), srv.url+"/v1/completions: 404 Not Found") || !strings.Contains(err.Error(), "prompt 0: roots (n = 2)") {
		t.Errorf("error %v", err)
	}
	_, err = s.Generate(context.Background(), search.SegmentTree{S: 2, B: 2, W: 4}, []Prompt{srv.prompt(t, "1+1", 0)})
	if err == nil || !strings.Contains(err.Error(), `"segment_tree" has no remote form`) {
		t.Errorf("error %v", err)
	}
	s.Model = "tiny"
	s.Budget = 5
	_, err = s.Generate(context.Background(), search.Flat{N: 2}, []Prompt{srv.prompt(t, "1+1", 0)})
	if err == nil || !strings.Contains(err.Error(), "budget = 5 is smaller than one max-length response") {
		t.Errorf("error %v", err)
	}
}

// A server whose usage counts fewer completion tokens than it returned
// (here rollout serve with usage.completion_tokens rewritten to 1) is an
// error naming both counts: its groups could not keep generated = held +
// unheld.
func TestUsageBelowTokens(t *testing.T) {
	srv := startServe(t)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := http.Post(srv.url+r.URL.Path, "application/json", r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		var body map[string]any
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		if u, ok := body["usage"].(map[string]any); ok {
			u["completion_tokens"] = 1
		}
		_ = json.NewEncoder(w).Encode(body)
	}))
	defer hs.Close()
	s := srv.sampler(t, true, 0)
	c, err := openai.New(openai.Options{BaseURL: hs.URL})
	if err != nil {
		t.Fatal(err)
	}
	s.Client = c
	_, err = s.Generate(context.Background(), search.Flat{N: 2}, []Prompt{srv.prompt(t, "1+1", 0)})
	if err == nil || !strings.Contains(err.Error(), "usage.completion_tokens 1, fewer than the") {
		t.Errorf("error %v", err)
	}
}

// Against vLLM (here rollout serve under vLLM's name) Dial asks for token
// ids back and sends prompts and forks as ids when /tokenize is there, as
// text otherwise; against other servers everything is text.
func TestDialOwners(t *testing.T) {
	cases := []struct {
		owner               string
		tokenize            bool
		promptIDs, tokenIDs bool
		sentPrompt          string
	}{
		{owner: "vllm", tokenize: true, promptIDs: true, tokenIDs: true, sentPrompt: "[1,5,41,5,3]"},
		{owner: "vllm", tokenIDs: true, sentPrompt: `"1+1"`},
		{owner: "llamacpp", sentPrompt: `"1+1"`},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s tokenize %v", tc.owner, tc.tokenize), func(t *testing.T) {
			srv := startServeAs(t, tc.owner, tc.tokenize)
			s, err := Dial(context.Background(), openai.Options{BaseURL: srv.url}, "")
			if err != nil {
				t.Fatal(err)
			}
			if s.PromptIDs != tc.promptIDs || s.TokenIDs != tc.tokenIDs {
				t.Fatalf("prompt ids %v, token ids %v; want %v, %v", s.PromptIDs, s.TokenIDs, tc.promptIDs, tc.tokenIDs)
			}
			s.MaxTokens = 10
			st := search.EntropyTree{M: 2, N: 1, L: 1, T: 1, Score: search.ScoreSurprisal}
			groups, err := s.Generate(context.Background(), st, []Prompt{{Text: "1+1"}})
			if err != nil {
				t.Fatal(err)
			}
			if err := groups[0].Record("1+1", s.Text).Validate(); err != nil {
				t.Error(err)
			}
			if string(srv.prompts[0]) != tc.sentPrompt {
				t.Errorf("sent the prompt as %s, want %s", srv.prompts[0], tc.sentPrompt)
			}
			for _, n := range groups[0].Nodes() {
				if n.Parent == nil {
					continue
				}
				prefix := n.Parent.Response()[:n.Start]
				var want string
				if tc.promptIDs {
					b, _ := json.Marshal(append([]int{1, 5, 41, 5, 3}, prefix...))
					want = string(b)
				} else {
					b, _ := json.Marshal("1+1" + s.Text(prefix))
					want = string(b)
				}
				found := false
				for _, p := range srv.prompts {
					found = found || string(p) == want
				}
				if !found {
					t.Errorf("node %d: no fork request sent %s (sent %s)", n.ID, want, srv.prompts)
				}
			}
		})
	}
}

// Supports accepts the strategies with a remote form and refuses the
// others, as Generate does, without a server.
func TestSupports(t *testing.T) {
	for _, tc := range []struct {
		strategy string
		params   map[string]string
		wantErr  string
	}{
		{strategy: "flat", params: map[string]string{"n": "4"}},
		{strategy: "entropy_tree", params: map[string]string{"m": "2", "t": "2"}},
		{strategy: "random_tree", params: map[string]string{"m": "2"}},
		{strategy: "segment_tree", wantErr: `strategy "segment_tree" has no remote form`},
	} {
		st, err := search.NewStrategy(tc.strategy, tc.params)
		if err != nil {
			t.Fatal(err)
		}
		err = Supports(st)
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)) {
			t.Errorf("%s: Supports = %v, want %q", tc.strategy, err, tc.wantErr)
		}
	}
}

// Dial recognises rollout serve and sends its prompts as token ids.
func TestDial(t *testing.T) {
	srv := startServe(t)
	cases := []struct {
		model   string
		wantErr string
	}{
		{model: "tiny"},
		{model: ""},
		{model: "qwen", wantErr: `does not serve the model "qwen" (it serves: tiny)`},
	}
	for _, tc := range cases {
		t.Run(tc.model, func(t *testing.T) {
			s, err := Dial(context.Background(), openai.Options{BaseURL: srv.url}, tc.model)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), srv.url) || !errors.Is(err, ErrModel) {
					t.Fatalf("error %v, want ErrModel, %q naming %s", err, tc.wantErr, srv.url)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !s.PromptIDs || !s.TokenIDs || s.Model != "tiny" || s.Vocab != 64 {
				t.Fatalf("sampler %+v, want token ids for rollout serve", s)
			}
			s.MaxTokens = 8
			groups, err := s.Generate(context.Background(), search.Flat{N: 2}, []Prompt{{Text: "1+1"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := groups[0].Prompt; len(got) != 5 || got[0] != policy.BOS || got[4] != policy.SEP {
				t.Errorf("group prompt %v, want BOS 1+1 SEP", got)
			}
			if last := srv.prompts[len(srv.prompts)-1]; string(last) != "[1,5,41,5,3]" {
				t.Errorf("sent prompt %s, want the ids of BOS 1+1 SEP", last)
			}
		})
	}
}

// Check accepts the strategies with a remote form and refuses the others
// and invalid parameters, as Generate would, without a client.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		st   search.Strategy
		want string // "" for none
	}{
		{search.Flat{N: 3}, ""},
		{&search.Flat{N: 3}, ""},
		{search.EntropyTree{M: 1, N: 2, L: 1, T: 1, Score: search.ScoreEntropy}, ""},
		{search.EntropyTree{M: 1, N: 2, L: 1, T: 1, Score: search.ScoreRandom, As: "random_tree"}, ""},
		{search.Flat{N: 0}, "n = 0"},
		{search.SegmentTree{S: 4, B: 2, W: 2}, `strategy "segment_tree" has no remote form`},
	} {
		err := (&Sampler{}).Check(tc.st)
		if (tc.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s %+v: error %v, want %q", tc.st.Name(), tc.st, err, tc.want)
		}
	}
}
