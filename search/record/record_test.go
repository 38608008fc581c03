package record

import (
	"encoding/binary"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// treeGroup is a hand-made tree: root r (4 tokens), child a forks at 2,
// child b of a forks at 1; leaves at r, a and b.
func treeGroup() Group {
	return Group{
		Prompt: "3 4 7 → 21", PromptTokens: []int{1, 9, 3, 2}, PromptID: 7, Strategy: "entropy_tree",
		Usage:        Usage{Budget: 100, GeneratedTokens: 9, PrefillTokens: 5, DecodeTokens: 7, FLOPs: 123, SkippedBranches: 1},
		MissingForks: 2,
		Nodes: []Node{
			{ID: 0, Parent: -1, Finish: FinishEOS, Tokens: []int{1, 2, 3, 4}, LogProbs: []float32{-.1, -.2, -.3, -.4}, Entropies: []float32{.1, .2, .3, .4}},
			{ID: 1, Parent: 0, ForkAt: 2, Iteration: 1, ForkScore: 0.3, HasForkScore: true, Finish: FinishLength, Tokens: []int{5, 6, 7}, LogProbs: []float32{-.5, -.6, -.7}, Entropies: []float32{.5, .6, .7}},
			{ID: 2, Parent: 1, ForkAt: 1, Iteration: 1, ForkScore: 1.25, HasForkScore: true, Finish: FinishEOS, Tokens: []int{8, 9}, LogProbs: []float32{-.8, -.9}, Entropies: []float32{.8, .9}},
		},
		Leaves: []Leaf{
			{Node: 0, Text: "r", Reward: 0, Scored: true, Reason: "wrong", Advantages: []float64{-1, -1, -1, -1}},
			{Node: 1, Text: "a", Reward: 1, Scored: true, Terms: []Term{{"verifier", 1}, {"length", -0.3}}, Reason: "exact", Advantages: []float64{.5, .5, .5, .5, .5}},
			{Node: 2, Text: "b\t\"q\"", Reward: 1, Scored: true, Reason: "exact", Advantages: []float64{.5, .5, .7, .7, .7}},
		},
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(g *Group)
		want   string
	}{
		{"valid tree", func(g *Group) {}, ""},
		{"segment child at the parent's end", func(g *Group) {
			g.Nodes[1].ForkAt = 4
			g.Leaves[1].Advantages = make([]float64, 7)
			g.Leaves[2].Advantages = make([]float64, 7)
		}, ""},
		{"duplicate id", func(g *Group) { g.Nodes[2].ID = 1 }, "appears twice"},
		{"missing parent", func(g *Group) { g.Nodes[2].Parent = 7 }, "parent 7 is not an earlier node"},
		{"cycle", func(g *Group) { g.Nodes[0].Parent = 2 }, "parent 2 is not an earlier node"},
		{"own parent", func(g *Group) { g.Nodes[1].Parent = 1 }, "parent 1 is not an earlier node"},
		{"fork past the end", func(g *Group) { g.Nodes[1].ForkAt = 5 }, "fork_at 5 outside"},
		{"root with fork", func(g *Group) { g.Nodes[0].ForkAt = 1 }, "a root with fork_at 1"},
		{"short logprobs", func(g *Group) { g.Nodes[1].LogProbs = g.Nodes[1].LogProbs[:1] }, "3 tokens, 1 logprobs"},
		{"leaf on missing node", func(g *Group) { g.Leaves[0].Node = 9 }, "leaf 0: node 9"},
		{"advantages of the wrong length", func(g *Group) { g.Leaves[2].Advantages = g.Leaves[2].Advantages[:4] }, "4 advantages for a path of 5 tokens"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := treeGroup()
			tc.change(&g)
			err := g.Validate()
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("err %v, want %q", err, tc.want)
			}
		})
	}
}

func TestPath(t *testing.T) {
	g := treeGroup()
	tests := []struct {
		node   int
		tokens []int
		lp     []float32
	}{
		{0, []int{1, 2, 3, 4}, []float32{-.1, -.2, -.3, -.4}},
		{1, []int{1, 2, 5, 6, 7}, []float32{-.1, -.2, -.5, -.6, -.7}},
		{2, []int{1, 2, 5, 8, 9}, []float32{-.1, -.2, -.5, -.8, -.9}},
	}
	for _, tc := range tests {
		tok, lp, ent, err := g.Path(tc.node, nil, nil, nil)
		if err != nil || !reflect.DeepEqual(tok, tc.tokens) || !reflect.DeepEqual(lp, tc.lp) || len(ent) != len(tok) {
			t.Errorf("node %d: %v %v %v %v", tc.node, tok, lp, ent, err)
		}
	}
	bad := treeGroup()
	bad.Nodes[2].ForkAt = 9
	if _, _, _, err := bad.Path(2, nil, nil, nil); err == nil {
		t.Error("fork past the parent's end accepted")
	}
	bad = treeGroup()
	bad.Nodes[0].Parent = 2
	if _, _, _, err := bad.Path(2, nil, nil, nil); err == nil {
		t.Error("cycle accepted")
	}
	if g.Forks() != 2 || g.Trees() != 1 || g.UniqueResponses() != 3 {
		t.Errorf("forks %d, trees %d, unique %d; want 2, 1, 3", g.Forks(), g.Trees(), g.UniqueResponses())
	}
}

func TestBinaryRoundTrip(t *testing.T) {
	g := treeGroup()
	g.Filtered = true
	g.Leaves[0].Scored = false
	enc, err := g.AppendBinary(nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(enc) > g.SizeBound() {
		t.Errorf("encoding of %d bytes exceeds the bound %d", len(enc), g.SizeBound())
	}
	var out Group
	if err := Decode(enc, &out); err != nil || !reflect.DeepEqual(out, g) {
		t.Errorf("round trip: %v\n%+v\nwant\n%+v", err, out, g)
	}
	// Decoding into a used group reuses its slices and leaves nothing behind.
	other := treeGroup()
	other.Nodes = other.Nodes[:1]
	other.Leaves = other.Leaves[:1]
	enc2, _ := other.AppendBinary(nil)
	if err := Decode(enc2, &out); err != nil || !reflect.DeepEqual(out, other) {
		t.Errorf("decode into a used group: %v\n%+v\nwant\n%+v", err, out, other)
	}
	for n := range len(enc) {
		var out Group
		if err := Decode(enc[:n], &out); err == nil {
			t.Fatalf("truncated to %d of %d bytes: no error", n, len(enc))
		}
	}
	if err := Decode(append(enc, 0), &out); err == nil {
		t.Error("trailing byte: no error")
	}
	enc[0] = 9
	if err := Decode(enc, &out); err == nil || !strings.Contains(err.Error(), "format 9") {
		t.Errorf("unknown format: %v", err)
	}
}

// encodeV1 writes a group in format 1, the encoding of stores written
// before this package existed (kept here to test that they still read).
func encodeV1(g *Group) []byte {
	str := func(b []byte, s string) []byte { return append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	f32 := func(b []byte, xs []float32) []byte {
		b = binary.AppendUvarint(b, uint64(len(xs)))
		for _, x := range xs {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(x))
		}
		return b
	}
	b := []byte{formatV1}
	b = str(b, g.Prompt)
	b = str(b, g.Strategy)
	for _, v := range []int64{g.Usage.Budget, g.Usage.GeneratedTokens, g.Usage.PrefillTokens, g.Usage.FLOPs} {
		b = binary.AppendVarint(b, v)
	}
	b = append(b, boolFlag(g.Filtered, 1))
	b = binary.AppendUvarint(b, uint64(len(g.Nodes)))
	for _, n := range g.Nodes {
		for _, v := range []int{n.ID, n.Parent, n.ForkAt, n.Iteration} {
			b = binary.AppendVarint(b, int64(v))
		}
		b = binary.AppendUvarint(b, uint64(len(n.Tokens)))
		for _, t := range n.Tokens {
			b = binary.AppendVarint(b, int64(t))
		}
		b = f32(b, n.LogProbs)
		b = f32(b, n.Entropies)
	}
	b = binary.AppendUvarint(b, uint64(len(g.Leaves)))
	for _, l := range g.Leaves {
		b = binary.AppendVarint(b, int64(l.Node))
		b = str(b, l.Text)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(l.Reward))
		b = str(b, l.Reason)
		adv := make([]float32, len(l.Advantages))
		for i, a := range l.Advantages {
			adv[i] = float32(a)
		}
		b = f32(b, adv)
	}
	return b
}

func TestDecodeFormat1(t *testing.T) {
	g := treeGroup()
	var out Group
	if err := Decode(encodeV1(&g), &out); err != nil {
		t.Fatal(err)
	}
	// What format 1 did not keep is unknown; the rest reads back.
	want := treeGroup()
	want.PromptTokens, want.PromptID, want.MissingForks = nil, 0, 0
	want.Usage.DecodeTokens, want.Usage.SkippedBranches = 0, 0
	for i := range want.Nodes {
		want.Nodes[i].ForkScore, want.Nodes[i].HasForkScore, want.Nodes[i].Finish = 0, false, ""
	}
	want.Leaves[1].Terms = nil
	for i, l := range want.Leaves {
		for j, a := range l.Advantages {
			want.Leaves[i].Advantages[j] = float64(float32(a))
		}
	}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("format 1:\n%+v\nwant\n%+v", out, want)
	}
}

func TestJSONRoundTrip(t *testing.T) {
	g := treeGroup()
	g.Leaves[2].Scored, g.Leaves[2].Reward = false, 0 // an unscored reward is null
	g.Nodes[0].Finish = ""
	data, err := g.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var out Group
	if err := out.UnmarshalJSON(data); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, g) {
		t.Errorf("JSON round trip:\n%+v\nwant\n%+v", out, g)
	}
	for _, bad := range []string{`{"nodes":[{"id":0,"parent":3}]}`, `{"leaves":[{"node":1}]}`, `{"leaves":[{"node":0,"terms":[1]}]}`, `[`} {
		if err := out.UnmarshalJSON([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

func FuzzDecode(f *testing.F) {
	g := treeGroup()
	enc, _ := g.AppendBinary(nil)
	f.Add(enc)
	f.Add(encodeV1(&g))
	g.Usage.UnheldTokens = 2
	enc3, _ := g.AppendBinary(nil)
	f.Add(enc3)
	f.Fuzz(func(t *testing.T, data []byte) {
		var out Group
		if Decode(data, &out) == nil {
			_ = out.Validate()
			var b strings.Builder
			_ = out.WriteText(&b, nil)
			_ = out.AppendJSON(nil)
		}
	})
}

// A group with unheld tokens (a remote group whose server did not return
// its end-of-sequence tokens) is written in format 3 and with
// "unheld_tokens"; a group without (every local group) in format 2 and
// without the key, as before format 3 existed.
func TestUnheldTokens(t *testing.T) {
	for _, unheld := range []int64{0, 2} {
		g := treeGroup()
		g.Usage.GeneratedTokens += unheld
		g.Usage.UnheldTokens = unheld
		if got := g.HeldTokens() + g.Usage.UnheldTokens; got != g.Usage.GeneratedTokens {
			t.Errorf("unheld %d: held %d + unheld %d != generated %d", unheld, g.HeldTokens(), unheld, g.Usage.GeneratedTokens)
		}
		enc, err := g.AppendBinary(nil)
		if err != nil {
			t.Fatal(err)
		}
		wantFormat, wantKey := byte(2), false
		if unheld != 0 {
			wantFormat, wantKey = 3, true
		}
		if enc[0] != wantFormat || len(enc) > g.SizeBound() {
			t.Errorf("unheld %d: format %d (want %d), %d bytes (bound %d)", unheld, enc[0], wantFormat, len(enc), g.SizeBound())
		}
		out := treeGroup()
		out.Usage.UnheldTokens = 7 // decoding must overwrite it
		if err := Decode(enc, &out); err != nil || !reflect.DeepEqual(out, g) {
			t.Errorf("unheld %d: binary round trip: %v\n%+v\nwant\n%+v", unheld, err, out, g)
		}
		for n := range len(enc) {
			if err := Decode(enc[:n], &out); err == nil {
				t.Fatalf("unheld %d: truncated to %d of %d bytes: no error", unheld, n, len(enc))
			}
		}
		data := g.AppendJSON(nil)
		if got := strings.Contains(string(data), `"unheld_tokens":`+strconv.FormatInt(unheld, 10)+`,`); got != wantKey {
			t.Errorf("unheld %d: JSON has unheld_tokens: %v, want %v: %s", unheld, got, wantKey, data)
		}
		var back Group
		if err := back.UnmarshalJSON(data); err != nil || !reflect.DeepEqual(back, g) {
			t.Errorf("unheld %d: JSON round trip: %v\n%+v\nwant\n%+v", unheld, err, back, g)
		}
	}
}
