package search_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/search"
	"github.com/rollout-rl/rollout/search/record"
)

// letters renders token i as the i-th letter of the alphabet (mod 26).
func letters(tokens []int) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte(byte('a' + t%26))
	}
	return b.String()
}

func renderedExample(t *testing.T) *search.Group {
	g := workedExample()
	for _, n := range g.Nodes() {
		n.LogProbs = make([]float32, len(n.Tokens))
		n.Entropies = make([]float32, len(n.Tokens))
		for i := range n.Tokens {
			n.LogProbs[i] = -0.25 * float32(i+1)
			n.Entropies[i] = 0.5 * float32(i)
		}
		n.Finish = search.FinishEOS
	}
	g.Nodes()[1].ForkScore, g.Nodes()[1].HasForkScore = 1.0, true
	g.Nodes()[2].ForkScore, g.Nodes()[2].HasForkScore = 1.5, true
	g.Nodes()[1].Iteration, g.Nodes()[2].Iteration, g.Nodes()[4].Iteration = 1, 2, 1
	g.Usage = search.Usage{Budget: 40, GeneratedTokens: 18, PrefillTokens: 2, DecodeTokens: 13, FLOPs: 1234}
	if err := search.SetAdvantages(g, search.DrGRPO{}); err != nil {
		t.Fatal(err)
	}
	return g
}

const goldenText = `prompt "bc"
strategy entropy_tree: 2 trees, 5 leaves, 3 forks, 5 unique responses
budget: generated 18 (limit 40), prefill 2, decode 13, FLOPs 1234
tree 0
  #0 it 0, 6 tok, eos, reward 1 (correct): "abcdef"
    @2 score 1.000 → #1 it 1, 4 tok, eos, reward 0 (wrong): "ab|klmn"
      @2 score 1.500 → #2 it 2, 3 tok, eos, reward 1 (correct): "abkl|uvw"
tree 1
  #3 it 0, 3 tok, eos, reward 1 (correct): "efg"
    @1 → #4 it 1, 2 tok, eos, reward 0 (wrong): "e|op"
`

const goldenJSON = `{"prompt":"bc","prompt_tokens":[1,2],"prompt_id":0,"strategy":"entropy_tree","budget":{"limit":40,"generated_tokens":18,"prefill_tokens":2,"decode_tokens":13,"flops":1234,"skipped_branches":0,"unspent":22},"missing_forks":0,"filtered":false,"nodes":[{"id":0,"parent":null,"fork_at":null,"iteration":0,"fork_score":null,"finish":"eos","tokens":[0,1,2,3,4,5],"logprobs":[-0.25,-0.5,-0.75,-1,-1.25,-1.5],"entropies":[0,0.5,1,1.5,2,2.5]},{"id":1,"parent":0,"fork_at":2,"iteration":1,"fork_score":1,"finish":"eos","tokens":[10,11,12,13],"logprobs":[-0.25,-0.5,-0.75,-1],"entropies":[0,0.5,1,1.5]},{"id":2,"parent":1,"fork_at":2,"iteration":2,"fork_score":1.5,"finish":"eos","tokens":[20,21,22],"logprobs":[-0.25,-0.5,-0.75],"entropies":[0,0.5,1]},{"id":3,"parent":null,"fork_at":null,"iteration":0,"fork_score":null,"finish":"eos","tokens":[30,31,32],"logprobs":[-0.25,-0.5,-0.75],"entropies":[0,0.5,1]},{"id":4,"parent":3,"fork_at":1,"iteration":1,"fork_score":null,"finish":"eos","tokens":[40,41],"logprobs":[-0.25,-0.5],"entropies":[0,0.5]}],"leaves":[{"node":0,"text":"abcdef","reward":1,"terms":{},"reason":"correct","advantages":[0.4,0.4,0.4,0.4,0.4,0.4]},{"node":1,"text":"abklmn","reward":0,"terms":{},"reason":"wrong","advantages":[-0.6,-0.6,-0.6,-0.6,-0.6,-0.6]},{"node":2,"text":"abkluvw","reward":1,"terms":{},"reason":"correct","advantages":[0.4,0.4,0.4,0.4,0.4,0.4,0.4]},{"node":3,"text":"efg","reward":1,"terms":{},"reason":"correct","advantages":[0.4,0.4,0.4]},{"node":4,"text":"eop","reward":0,"terms":{},"reason":"wrong","advantages":[-0.6,-0.6,-0.6]}]}
`

func TestRecordText(t *testing.T) {
	var b bytes.Buffer
	if err := renderedExample(t).Record("bc", letters).WriteText(&b, letters); err != nil {
		t.Fatal(err)
	}
	if b.String() != goldenText {
		t.Errorf("text:\n%s\nwant:\n%s", b.String(), goldenText)
	}
}

func TestRecordJSON(t *testing.T) {
	var b bytes.Buffer
	if err := renderedExample(t).Record("bc", letters).WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if b.String() != goldenJSON {
		t.Errorf("JSON:\n%s\nwant:\n%s", b.String(), goldenJSON)
	}
}

// render returns a record's JSON and text.
func render(t *testing.T, r *record.Group) string {
	t.Helper()
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteText(&b, letters); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestRecordRoundTrip samples groups with every strategy (random and
// surprisal forks, a budget that skips branches, a filtered group, reward
// terms), and checks that the binary and JSON encodings read back to a
// record that renders byte-identically, and that FromRecord rebuilds the
// live group exactly.
func TestRecordRoundTrip(t *testing.T) {
	s := newSampler(t, hashDist(0.3, 0.3))
	cases := []struct {
		st     search.Strategy
		budget int64
	}{
		{search.Flat{N: 4}, 0},
		{search.Flat{N: 4}, 30},
		{search.EntropyTree{M: 2, N: 2, L: 2, T: 2, Score: search.ScoreEntropy}, 0},
		{search.EntropyTree{M: 2, N: 2, L: 2, T: 2, Score: search.ScoreSurprisal}, 0},
		{search.EntropyTree{M: 2, N: 2, L: 1, T: 2, Score: search.ScoreRandom}, 40},
		{search.SegmentTree{S: 3, B: 2, W: 6}, 0},
	}
	for ci, tc := range cases {
		req := request(s, prompts(2), 12)
		req.Budget = tc.budget
		for gi, g := range generate(t, tc.st, req) {
			for _, l := range g.Leaves() {
				l.SetOutcome(float64(l.ID%2), "r")
				if gi == 1 {
					l.Terms = []record.Term{{Name: "verifier", Value: float64(l.ID % 2)}, {Name: "length", Value: -0.25}}
				}
			}
			if err := search.SetAdvantages(g, search.TreeRL{Reweight: true}); err != nil {
				t.Fatal(err)
			}
			live := g.Record("p", letters)
			live.Filtered = gi == 0
			want := render(t, live)

			bin, err := live.AppendBinary(nil)
			if err != nil {
				t.Fatal(err)
			}
			var fromBin record.Group
			if err := record.Decode(bin, &fromBin); err != nil {
				t.Fatalf("case %d: decode: %v", ci, err)
			}
			var fromJSON record.Group
			if err := fromJSON.UnmarshalJSON(live.AppendJSON(nil)); err != nil {
				t.Fatalf("case %d: %v", ci, err)
			}
			for name, r := range map[string]*record.Group{"binary": &fromBin, "JSON": &fromJSON} {
				if got := render(t, r); got != want {
					t.Errorf("case %d group %d: %s round trip changed the group:\n%s\nwant\n%s", ci, gi, name, got, want)
				}
			}
			back, err := search.FromRecord(&fromBin)
			if err != nil {
				t.Fatal(err)
			}
			rebuilt := back.Record("p", letters)
			rebuilt.Filtered = live.Filtered
			if got := render(t, rebuilt); got != want {
				t.Errorf("case %d group %d: FromRecord changed the group:\n%s\nwant\n%s", ci, gi, got, want)
			}
		}
	}
	bad := &record.Group{Nodes: []record.Node{{ID: 0, Parent: 0}}, Leaves: []record.Leaf{{Node: 0}}}
	if _, err := search.FromRecord(bad); err == nil {
		t.Error("node that is its own parent: no error")
	}
}

// A live group and its record count forks and unique responses alike (one
// count, in package record), including duplicate responses and two
// branches at one fork position.
func TestRecordCounts(t *testing.T) {
	root := &search.Node{Tokens: []int{1, 2, 3}, Finish: search.FinishEOS}
	a := &search.Node{Parent: root, ForkAt: 1, Start: 1, Tokens: []int{5, 6}, Finish: search.FinishEOS}
	b := &search.Node{Parent: root, ForkAt: 1, Start: 1, Tokens: []int{5, 6}, Finish: search.FinishEOS} // a's response again
	c := &search.Node{Parent: a, ForkAt: 1, Start: 2, Tokens: []int{7}, Finish: search.FinishLength}
	flat := &search.Node{Tokens: []int{1, 2, 3}, Finish: search.FinishEOS} // root's response again
	tests := []struct {
		name          string
		nodes         []*search.Node
		forks, unique int
	}{
		{"flat", []*search.Node{{Tokens: []int{1}}, {Tokens: []int{1}}, {Tokens: []int{2}}}, 0, 2},
		{"tree", []*search.Node{root, a, b, c, flat}, 2, 3},
	}
	for _, tc := range tests {
		g := search.NewGroup([]int{9}, "test", tc.nodes)
		r := g.Record("p", letters)
		if g.Forks() != tc.forks || r.Forks() != tc.forks || g.UniqueResponses() != tc.unique || r.UniqueResponses() != tc.unique {
			t.Errorf("%s: forks %d (record %d), unique %d (record %d); want %d and %d", tc.name, g.Forks(), r.Forks(), g.UniqueResponses(), r.UniqueResponses(), tc.forks, tc.unique)
		}
	}
}
