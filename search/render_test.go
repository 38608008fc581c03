package search_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/search"
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
	g.Usage = search.Usage{Limit: 40, GeneratedTokens: 18, PrefillTokens: 2, DecodeTokens: 13, FLOPs: 1234}
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

const goldenJSON = `{"prompt":"bc","strategy":"entropy_tree","budget":{"limit":40,"generated_tokens":18,"prefill_tokens":2,"flops":1234},"nodes":[{"id":0,"parent":null,"fork_at":null,"iteration":0,"tokens":[0,1,2,3,4,5],"logprobs":[-0.25,-0.5,-0.75,-1,-1.25,-1.5],"entropies":[0,0.5,1,1.5,2,2.5]},{"id":1,"parent":0,"fork_at":2,"iteration":1,"tokens":[10,11,12,13],"logprobs":[-0.25,-0.5,-0.75,-1],"entropies":[0,0.5,1,1.5]},{"id":2,"parent":1,"fork_at":2,"iteration":2,"tokens":[20,21,22],"logprobs":[-0.25,-0.5,-0.75],"entropies":[0,0.5,1]},{"id":3,"parent":null,"fork_at":null,"iteration":0,"tokens":[30,31,32],"logprobs":[-0.25,-0.5,-0.75],"entropies":[0,0.5,1]},{"id":4,"parent":3,"fork_at":1,"iteration":1,"tokens":[40,41],"logprobs":[-0.25,-0.5],"entropies":[0,0.5]}],"leaves":[{"node":0,"text":"abcdef","reward":1,"reason":"correct","advantages":[0.4,0.4,0.4,0.4,0.4,0.4]},{"node":1,"text":"abklmn","reward":0,"reason":"wrong","advantages":[-0.6,-0.6,-0.6,-0.6,-0.6,-0.6]},{"node":2,"text":"abkluvw","reward":1,"reason":"correct","advantages":[0.4,0.4,0.4,0.4,0.4,0.4,0.4]},{"node":3,"text":"efg","reward":1,"reason":"correct","advantages":[0.4,0.4,0.4]},{"node":4,"text":"eop","reward":0,"reason":"wrong","advantages":[-0.6,-0.6,-0.6]}]}
`

func TestWriteText(t *testing.T) {
	var b bytes.Buffer
	if err := renderedExample(t).WriteText(&b, letters); err != nil {
		t.Fatal(err)
	}
	if b.String() != goldenText {
		t.Errorf("text:\n%s\nwant:\n%s", b.String(), goldenText)
	}
}

func TestWriteJSON(t *testing.T) {
	var b bytes.Buffer
	if err := renderedExample(t).WriteJSON(&b, letters); err != nil {
		t.Fatal(err)
	}
	if b.String() != goldenJSON {
		t.Errorf("json:\n%s\nwant:\n%s", b.String(), goldenJSON)
	}
	var v map[string]any
	if err := json.Unmarshal(b.Bytes(), &v); err != nil {
		t.Fatal(err)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	s := newSampler(t, hashDist(0.3, 0.3))
	groups := generate(t, search.EntropyTree{M: 2, N: 2, L: 2, T: 2, Score: search.ScoreEntropy}, request(s, prompts(2), 12))
	for _, g := range groups {
		for _, l := range g.Leaves() {
			l.SetOutcome(float64(l.ID%2), "r")
		}
		if err := search.SetAdvantages(g, search.TreeRL{Reweight: true}); err != nil {
			t.Fatal(err)
		}
		data, err := json.Marshal(g.Record())
		if err != nil {
			t.Fatal(err)
		}
		var rec search.GroupRecord
		if err := json.Unmarshal(data, &rec); err != nil {
			t.Fatal(err)
		}
		back, err := rec.Group()
		if err != nil {
			t.Fatal(err)
		}
		var a, b bytes.Buffer
		_ = g.WriteText(&a, nil)
		_ = back.WriteText(&b, nil)
		_ = g.WriteJSON(&a, nil)
		_ = back.WriteJSON(&b, nil)
		if a.String() != b.String() {
			t.Errorf("round trip changed the group:\n%s\n%s", a.String(), b.String())
		}
	}
	bad := search.GroupRecord{Nodes: []search.NodeRecord{{Parent: 0}}}
	if _, err := bad.Group(); err == nil {
		t.Error("node that is its own parent: no error")
	}
}
