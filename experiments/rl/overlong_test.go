package rl

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/rollout-rl/rollout/experiments/config/field"
	"github.com/rollout-rl/rollout/experiments/task"
	"github.com/rollout-rl/rollout/policy"
	"github.com/rollout-rl/rollout/search"
)

// DAPO's soft overlong punishment, on lengths computed by hand: L_max 20,
// L_cache 4, so lengths up to 16 go free and the penalty falls by 1/4 a
// token to −1 at the cap.
func TestSoftOverlongPenalty(t *testing.T) {
	for _, tc := range []struct {
		length, maxLen, cache int
		want                  float64
	}{
		{1, 20, 4, 0}, {16, 20, 4, 0}, {17, 20, 4, -0.25}, {18, 20, 4, -0.5}, {19, 20, 4, -0.75},
		{20, 20, 4, -1}, {21, 20, 4, -1}, {40, 20, 4, -1},
		{10, 10, 10, -1}, {1, 10, 10, -0.1}, {9, 10, 1, 0}, {10, 10, 1, -1},
	} {
		if got := SoftOverlongPenalty(tc.length, tc.maxLen, tc.cache); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("length %d, L_max %d, L_cache %d: penalty %v, want %v", tc.length, tc.maxLen, tc.cache, got, tc.want)
		}
	}
}

// The overlong settings are checked, naming the key and the value.
func TestOverlongValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		set   func(*Config)
		key   string
		value any
	}{
		{"unknown mode", func(c *Config) { c.Overlong = "drop" }, "train.overlong", "drop"},
		{"penalty without cache", func(c *Config) { c.Overlong = OverlongPenalty }, "train.overlong_cache", 0},
		{"negative cache", func(c *Config) { c.OverlongCache = -3 }, "train.overlong_cache", -3},
	} {
		c := DefaultConfig()
		tc.set(&c)
		var fe *field.Error
		if err := c.Validate(); !errors.As(err, &fe) || fe.Key != tc.key || fe.Value != tc.value {
			t.Errorf("%s: error %v, want a field error on %s = %v", tc.name, err, tc.key, tc.value)
		}
	}
	for _, o := range []Overlong{"", OverlongTruncate, OverlongFilter} {
		c := DefaultConfig()
		c.Overlong = o
		if err := c.Validate(); err != nil {
			t.Errorf("overlong %q: %v", o, err)
		}
	}
}

// leaf is a hand-made root of the given length, finished as said.
func leaf(n int, finish search.Finish) *search.Node {
	nd := &search.Node{Tokens: make([]int, n), LogProbs: make([]float32, n), Entropies: make([]float32, n), Finish: finish}
	for i := range nd.Tokens {
		nd.Tokens[i] = 10 // "0"... any character of the alphabet
	}
	return nd
}

// ScoreWithPenalty adds the penalty of each leaf's length to its verifier reward and
// records it as the term "overlong"; without a penalty nothing changes.
func TestScoreAddsOverlongPenalty(t *testing.T) {
	tk, err := task.New("add", task.AddParams{Digits: 2, Scratchpad: true})
	if err != nil {
		t.Fatal(err)
	}
	p, err := tk.Prompt(task.Train, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	est, _ := search.NewEstimator("grpo")
	lengths := []int{4, 7, 8, 10}
	want := []float64{0, -0.25, -0.5, -1} // L_max 10, L_cache 4: free up to 6, then −1/4 a token
	g := search.NewGroup([]int{1, 2}, "flat", []*search.Node{leaf(4, search.FinishEOS), leaf(7, search.FinishEOS), leaf(8, search.FinishEOS), leaf(10, search.FinishLength)})
	pen := func(n int) float64 { return SoftOverlongPenalty(n, 10, 4) }
	if err := ScoreWithPenalty(tk, nil, policy.DefaultTokenizer().ResponseText, p, g, est, pen); err != nil {
		t.Fatal(err)
	}
	for i, l := range g.Leaves() {
		if l.Reward != want[i] || len(l.Terms) != 2 || l.Terms[1].Name != "overlong" || l.Terms[1].Value != want[i] || l.Terms[0].Value != 0 {
			t.Errorf("leaf of length %d: reward %v terms %v, want %v (verifier 0, overlong %v)", lengths[i], l.Reward, l.Terms, want[i], want[i])
		}
	}
	if g.Leaves()[0].Advantages[0] <= g.Leaves()[3].Advantages[0] {
		t.Error("the shortest response's advantage is not above the truncated one's")
	}
	g2 := search.NewGroup([]int{1, 2}, "flat", []*search.Node{leaf(4, search.FinishEOS), leaf(10, search.FinishLength)})
	if err := Score(tk, nil, policy.DefaultTokenizer(), p, g2, est); err != nil {
		t.Fatal(err)
	}
	for _, l := range g2.Leaves() {
		if l.Reward != 0 || l.Terms != nil {
			t.Errorf("without a penalty: reward %v terms %v, want 0 and none", l.Reward, l.Terms)
		}
	}
}

// Overlong filtering drops exactly the leaves cut at the cap from the
// training sequences (and their FLOPs); truncate and penalty keep them.
func TestOverlongFilterMasksTruncatedLeaves(t *testing.T) {
	g := search.NewGroup([]int{1, 2}, "flat", []*search.Node{leaf(3, search.FinishEOS), leaf(5, search.FinishLength), leaf(4, search.FinishEOS), leaf(5, search.FinishLength)})
	for _, l := range g.Leaves() {
		l.Advantages = make([]float64, len(l.Tokens))
	}
	batch := []staleGroup{{group: g}}
	for _, tc := range []struct {
		mode Overlong
		lens []int
	}{
		{OverlongTruncate, []int{3, 5, 4, 5}}, {"", []int{3, 5, 4, 5}}, {OverlongPenalty, []int{3, 5, 4, 5}}, {OverlongFilter, []int{3, 4}},
	} {
		seqs := trainingSequences(batch, tc.mode)
		var lens []int
		for _, s := range seqs {
			lens = append(lens, len(s.seq)-s.promptLen)
		}
		if len(lens) != len(tc.lens) || (len(lens) > 0 && !equalInts(lens, tc.lens)) {
			t.Errorf("overlong %q: trained response lengths %v, want %v", tc.mode, lens, tc.lens)
		}
	}
	if len(g.Leaves()) != 4 {
		t.Fatal("filtering changed the group's leaves")
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// rollout.max_tokens reaches the sampling request and the budget
// accounting: no response is longer than the cap, responses cut there
// count in response_length/clip_ratio, a group's longest cost shrinks, and
// with overlong filtering the cut responses are masked out of the update.
func TestMaxTokensCapsRollouts(t *testing.T) {
	const capLen = 3
	full := smallSetup(t, Config{Steps: 1, PromptsPerStep: 2, FilterGroups: false})
	capped := smallSetup(t, Config{Steps: 1, PromptsPerStep: 2, FilterGroups: false, TotalTokens: 100})
	capped.MaxTokens = capLen
	req, err := capped.Request(0, nil, nil)
	if err != nil || req.MaxTokens != capLen {
		t.Fatalf("request max tokens %d (%v), want %d", req.MaxTokens, err, capLen)
	}
	loop, err := New(capped)
	if err != nil {
		t.Fatal(err)
	}
	if loop.groupMax != 4*capLen {
		t.Errorf("a group's longest cost %d, want 4 leaves × %d", loop.groupMax, capLen)
	}
	res, err := loop.Step(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, sg := range res.Groups {
		for _, l := range sg.Group.Leaves() {
			if n := l.Start + len(l.Tokens); n > capLen {
				t.Fatalf("a response of %d tokens under a cap of %d", n, capLen)
			}
		}
	}
	if res.Metrics["response_length/clip_ratio"] == 0 {
		t.Error("no response counted as cut at a cap of 3 tokens (two-digit addition needs more)")
	}
	if _, err := New(full); err != nil {
		t.Fatal(err)
	}

	filter := smallSetup(t, Config{Steps: 1, PromptsPerStep: 2, FilterGroups: false, Overlong: OverlongFilter})
	filter.MaxTokens = 1 // only EOS fits: nearly every response is cut
	loop, err = New(filter)
	if err != nil {
		t.Fatal(err)
	}
	res, err = loop.Step(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	cut := res.Metrics["response_length/clip_ratio"] * res.Metrics["tree/leaves"]
	if res.Metrics["overlong/masked"] != cut || cut == 0 {
		t.Errorf("overlong/masked %v, want the %v cut leaves", res.Metrics["overlong/masked"], cut)
	}

	for _, tc := range []struct {
		name string
		set  func(*Setup)
	}{
		{"cap above the task's", func(s *Setup) { s.MaxTokens = s.Task.MaxResponseLen() + 2 }},
		{"cache above the cap", func(s *Setup) {
			s.MaxTokens, s.Train.Overlong, s.Train.OverlongCache = 4, OverlongPenalty, 5
		}},
	} {
		s := smallSetup(t, Config{Steps: 1})
		tc.set(&s)
		if _, err := New(s); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
}
