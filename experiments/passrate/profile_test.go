package passrate

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/search/record/recordtest"
)

// The hand-made tree: root r (4 tokens, reward 0), a forks off r at 2
// (reward 1: the outcome changed), b forks off a at 1, position 3 of the
// response (reward 1: unchanged).
func TestAddForks(t *testing.T) {
	p := NewProfile()
	g := recordtest.Tree()
	if err := p.AddForks("random", &g); err != nil {
		t.Fatal(err)
	}
	if err := p.AddForks("random", &g); err != nil {
		t.Fatal(err)
	}
	wantForks, wantFlips := []int64{0, 0, 2, 2}, []int64{0, 0, 2, 0}
	if !slices.Equal(p.Forks["random"], wantForks) || !slices.Equal(p.Flips["random"], wantFlips) {
		t.Errorf("forks %v, flips %v; want %v, %v", p.Forks["random"], p.Flips["random"], wantForks, wantFlips)
	}
	xs, rates := p.FlipRate("random", 2, 1)
	if len(xs) != 2 || xs[1] != 2.5 || !math.IsNaN(rates[0]) || rates[1] != 0.5 {
		t.Errorf("flip rate in bins of 2: %v at %v, want NaN and 0.5 at 0.5 and 2.5", rates, xs)
	}
	if _, rates := p.FlipRate("random", 2, 5); !math.IsNaN(rates[1]) {
		t.Errorf("a bin of 4 forks with at least 5 wanted: %v, want NaN", rates[1])
	}
}

func TestAddIID(t *testing.T) {
	p := NewProfile()
	g := recordtest.Flat(2, 3, 4)
	text := func(id int) string { return string(rune('a' + id%26)) }
	if err := p.AddIID(&g, text); err != nil {
		t.Fatal(err)
	}
	mean := p.MeanEntropy()
	if len(mean) != 4 || p.Count[0] != 3 || p.MeanLength() != 4 {
		t.Fatalf("positions %d, count %v, mean length %v; want 4, 3 responses of 4", len(mean), p.Count, p.MeanLength())
	}
	for j := range 4 {
		want := 0.0
		for _, nd := range g.Nodes {
			want += float64(nd.Entropies[j])
		}
		if math.Abs(mean[j]-want/3) > 1e-6 {
			t.Errorf("position %d: mean entropy %v, want %v", j, mean[j], want/3)
		}
	}
	share := 0.0
	for _, c := range p.Classes() {
		share += c.Share
	}
	if cs := p.Classes(); cs[0].Share < cs[len(cs)-1].Share || math.Abs(share-1) > 1e-9 {
		t.Errorf("classes %+v: want them by share, largest first, summing to 1", cs)
	}
}

func TestProfileBadInput(t *testing.T) {
	tree := recordtest.Tree()
	orphan := recordtest.Tree()
	orphan.Nodes[1].Parent = 2 // b comes after a
	short := recordtest.Flat(1, 2, 3)
	short.Nodes[1].Entropies = short.Nodes[1].Entropies[:2]
	noLeaf := recordtest.Tree()
	noLeaf.Leaves = noLeaf.Leaves[:2]
	text := func(int) string { return "x" }
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"a tree as i.i.d.", NewProfile().AddIID(&tree, text), "node 1 is a branch"},
		{"entropies missing", NewProfile().AddIID(&short, text), "node 1 has 2 entropies for 3 tokens"},
		{"parent after child", NewProfile().AddForks("entropy", &orphan), "node 1 comes before its parent 2"},
		{"node without leaf", NewProfile().AddForks("entropy", &noLeaf), "node 2 or its parent 1 ends no leaf"},
	} {
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, tc.err, tc.want)
		}
	}
}

func TestAddSplit(t *testing.T) {
	p := NewProfile()
	g := recordtest.Flat(2, 3, 4)
	text := func(id int) string { return string(rune('a' + id%26)) }
	at := func(r string) int {
		if len(r) != 4 {
			t.Fatalf("answerStart of %q, want the 4 characters of a response", r)
		}
		return 1 // the answer begins after the first character
	}
	if err := p.AddSplit(&g, at, text); err != nil {
		t.Fatal(err)
	}
	var reason, answer float64
	for _, nd := range g.Nodes {
		reason += float64(nd.Entropies[0])
		for _, h := range nd.Entropies[1:] {
			answer += float64(h)
		}
	}
	if p.ReasoningCount != 3 || p.AnswerCount != 9 {
		t.Fatalf("counts %d and %d, want 3 reasoning and 9 answer positions", p.ReasoningCount, p.AnswerCount)
	}
	if math.Abs(p.MeanReasoningEntropy()-reason/3) > 1e-6 || math.Abs(p.MeanAnswerEntropy()-answer/9) > 1e-6 {
		t.Errorf("means %v and %v, want %v and %v", p.MeanReasoningEntropy(), p.MeanAnswerEntropy(), reason/3, answer/9)
	}
	tree := recordtest.Tree()
	if err := NewProfile().AddSplit(&tree, at, text); err == nil {
		t.Error("a tree group split without an error")
	}
	if (&Profile{}).MeanReasoningEntropy() != 0 {
		t.Error("an empty profile's reasoning entropy is not 0")
	}
}
