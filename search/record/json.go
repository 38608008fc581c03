package record

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/rollout-rl/rollout/search/record/codec"
)

var nan32 = math.Float32frombits(0x7fc00000)

// AppendJSON appends g as one JSON object, the one encoding of a group that
// every command prints:
//
//	{"prompt", "prompt_tokens", "prompt_id", "strategy",
//	 "budget": {"limit", "generated_tokens", "prefill_tokens", "decode_tokens",
//	            "flops", "skipped_branches", "unheld_tokens", "unspent"},
//	 "missing_forks", "filtered",
//	 "nodes": [{"id", "parent", "fork_at", "iteration", "fork_score", "finish",
//	            "tokens", "logprobs", "entropies"}],
//	 "leaves": [{"node", "text", "reward", "terms": {name: value}, "reason",
//	             "advantages"}]}
//
// unheld_tokens (Usage.UnheldTokens) is left out when 0, as for every
// local group. A root's parent and fork_at, a limit of 0 and the unspent budget without a
// limit, a missing fork score or finish reason, an unscored reward and
// non-finite floats are null. Floats are written in their shortest form
// that reads back to the same value, so the encoding round-trips exactly.
func (g *Group) AppendJSON(b []byte) []byte {
	b = append(b, `{"prompt":`...)
	b = codec.AppendJSONString(b, g.Prompt)
	b = append(b, `,"prompt_tokens":[`...)
	b = appendInts(b, g.PromptTokens)
	b = append(b, `],"prompt_id":`...)
	b = strconv.AppendUint(b, g.PromptID, 10)
	b = append(b, `,"strategy":`...)
	b = codec.AppendJSONString(b, g.Strategy)
	u := &g.Usage
	b = append(b, `,"budget":{"limit":`...)
	b = appendPositive(b, u.Budget)
	b = append(b, `,"generated_tokens":`...)
	b = strconv.AppendInt(b, u.GeneratedTokens, 10)
	b = append(b, `,"prefill_tokens":`...)
	b = strconv.AppendInt(b, u.PrefillTokens, 10)
	b = append(b, `,"decode_tokens":`...)
	b = strconv.AppendInt(b, u.DecodeTokens, 10)
	b = append(b, `,"flops":`...)
	b = strconv.AppendInt(b, u.FLOPs, 10)
	b = append(b, `,"skipped_branches":`...)
	b = strconv.AppendInt(b, int64(u.SkippedBranches), 10)
	if u.UnheldTokens != 0 {
		b = append(b, `,"unheld_tokens":`...)
		b = strconv.AppendInt(b, u.UnheldTokens, 10)
	}
	b = append(b, `,"unspent":`...)
	if u.Budget > 0 {
		b = strconv.AppendInt(b, u.Unspent(), 10)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `},"missing_forks":`...)
	b = strconv.AppendInt(b, int64(g.MissingForks), 10)
	b = append(b, `,"filtered":`...)
	b = strconv.AppendBool(b, g.Filtered)
	b = append(b, `,"nodes":[`...)
	for i := range g.Nodes {
		if i > 0 {
			b = append(b, ',')
		}
		b = g.Nodes[i].appendJSON(b)
	}
	b = append(b, `],"leaves":[`...)
	for i := range g.Leaves {
		if i > 0 {
			b = append(b, ',')
		}
		b = g.Leaves[i].appendJSON(b)
	}
	return append(b, "]}"...)
}

func (n *Node) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, int64(n.ID), 10)
	if n.Parent < 0 {
		b = append(b, `,"parent":null,"fork_at":null`...)
	} else {
		b = append(b, `,"parent":`...)
		b = strconv.AppendInt(b, int64(n.Parent), 10)
		b = append(b, `,"fork_at":`...)
		b = strconv.AppendInt(b, int64(n.ForkAt), 10)
	}
	b = append(b, `,"iteration":`...)
	b = strconv.AppendInt(b, int64(n.Iteration), 10)
	b = append(b, `,"fork_score":`...)
	if n.HasForkScore {
		b = codec.AppendJSONFloat(b, n.ForkScore)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"finish":`...)
	if n.Finish == "" {
		b = append(b, "null"...)
	} else {
		b = codec.AppendJSONString(b, string(n.Finish))
	}
	b = append(b, `,"tokens":[`...)
	b = appendInts(b, n.Tokens)
	b = append(b, `],"logprobs":[`...)
	b = codec.AppendFloats(b, n.LogProbs, ',', true)
	b = append(b, `],"entropies":[`...)
	b = codec.AppendFloats(b, n.Entropies, ',', true)
	return append(b, "]}"...)
}

func (l *Leaf) appendJSON(b []byte) []byte {
	b = append(b, `{"node":`...)
	b = strconv.AppendInt(b, int64(l.Node), 10)
	b = append(b, `,"text":`...)
	b = codec.AppendJSONString(b, l.Text)
	b = append(b, `,"reward":`...)
	if l.Scored {
		b = codec.AppendJSONFloat(b, l.Reward)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"terms":{`...)
	for k, t := range l.Terms {
		if k > 0 {
			b = append(b, ',')
		}
		b = codec.AppendJSONString(b, t.Name)
		b = append(b, ':')
		b = codec.AppendJSONFloat(b, t.Value)
	}
	b = append(b, `},"reason":`...)
	b = codec.AppendJSONString(b, l.Reason)
	b = append(b, `,"advantages":[`...)
	b = codec.AppendFloats(b, l.Advantages, ',', true)
	return append(b, "]}"...)
}

// WriteJSON writes g's JSON object (AppendJSON) and a newline.
func (g *Group) WriteJSON(w io.Writer) error {
	b := g.AppendJSON(nil)
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write group as JSON: %w", err)
	}
	return nil
}

// MarshalJSON returns AppendJSON's encoding.
func (g *Group) MarshalJSON() ([]byte, error) { return g.AppendJSON(nil), nil }

// groupJSON, nodeJSON and leafJSON read the encoding back.
type groupJSON struct {
	Prompt       string     `json:"prompt"`
	PromptTokens []int      `json:"prompt_tokens"`
	PromptID     uint64     `json:"prompt_id"`
	Strategy     string     `json:"strategy"`
	Usage        usageJSON  `json:"budget"`
	MissingForks int        `json:"missing_forks"`
	Filtered     bool       `json:"filtered"`
	Nodes        []nodeJSON `json:"nodes"`
	Leaves       []leafJSON `json:"leaves"`
}

type usageJSON struct {
	Budget          *int64 `json:"limit"`
	GeneratedTokens int64  `json:"generated_tokens"`
	PrefillTokens   int64  `json:"prefill_tokens"`
	DecodeTokens    int64  `json:"decode_tokens"`
	FLOPs           int64  `json:"flops"`
	SkippedBranches int    `json:"skipped_branches"`
	UnheldTokens    int64  `json:"unheld_tokens"`
}

type nodeJSON struct {
	ID        int        `json:"id"`
	Parent    *int       `json:"parent"`
	ForkAt    *int       `json:"fork_at"`
	Iteration int        `json:"iteration"`
	ForkScore *float64   `json:"fork_score"`
	Finish    *string    `json:"finish"`
	Tokens    []int      `json:"tokens"`
	LogProbs  []*float32 `json:"logprobs"`
	Entropies []*float32 `json:"entropies"`
}

type leafJSON struct {
	Node       int             `json:"node"`
	Text       string          `json:"text"`
	Reward     *float64        `json:"reward"`
	Terms      json.RawMessage `json:"terms"`
	Reason     string          `json:"reason"`
	Advantages []*float64      `json:"advantages"`
}

// UnmarshalJSON reads AppendJSON's encoding (null floats read as NaN) and
// validates the group's structure.
func (g *Group) UnmarshalJSON(data []byte) error {
	var in groupJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return fmt.Errorf("read group JSON: %w", err)
	}
	out := Group{
		Prompt: in.Prompt, PromptTokens: in.PromptTokens, PromptID: in.PromptID, Strategy: in.Strategy,
		Usage: Usage{GeneratedTokens: in.Usage.GeneratedTokens, PrefillTokens: in.Usage.PrefillTokens,
			DecodeTokens: in.Usage.DecodeTokens, FLOPs: in.Usage.FLOPs, SkippedBranches: in.Usage.SkippedBranches,
			UnheldTokens: in.Usage.UnheldTokens},
		MissingForks: in.MissingForks, Filtered: in.Filtered,
		Nodes: make([]Node, len(in.Nodes)), Leaves: make([]Leaf, len(in.Leaves)),
	}
	if in.Usage.Budget != nil {
		out.Usage.Budget = *in.Usage.Budget
	}
	for i, n := range in.Nodes {
		o := Node{ID: n.ID, Parent: -1, Iteration: n.Iteration, Tokens: n.Tokens,
			LogProbs: fromNullable(n.LogProbs, nan32), Entropies: fromNullable(n.Entropies, nan32)}
		if n.Parent != nil {
			o.Parent = *n.Parent
		}
		if n.ForkAt != nil {
			o.ForkAt = *n.ForkAt
		}
		if n.ForkScore != nil {
			o.ForkScore, o.HasForkScore = *n.ForkScore, true
		}
		if n.Finish != nil {
			o.Finish = Finish(*n.Finish)
		}
		out.Nodes[i] = o
	}
	for i, l := range in.Leaves {
		o := Leaf{Node: l.Node, Text: l.Text, Reason: l.Reason, Advantages: fromNullable(l.Advantages, math.NaN())}
		if l.Reward != nil {
			o.Reward, o.Scored = *l.Reward, true
		}
		terms, err := readTerms(l.Terms)
		if err != nil {
			return fmt.Errorf("read group JSON: leaf %d: %w", i, err)
		}
		o.Terms = terms
		out.Leaves[i] = o
	}
	if err := out.Validate(); err != nil {
		return fmt.Errorf("read group JSON: %w", err)
	}
	*g = out
	return nil
}

// readTerms reads a JSON object of terms, keeping the order of its keys.
func readTerms(raw json.RawMessage) ([]Term, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("terms: want an object")
	}
	var out []Term
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("terms: %w", err)
		}
		name, _ := tok.(string)
		var v *float64
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("terms: %s: %w", name, err)
		}
		t := Term{Name: name, Value: math.NaN()}
		if v != nil {
			t.Value = *v
		}
		out = append(out, t)
	}
	return out, nil
}

func fromNullable[F float32 | float64](xs []*F, nan F) []F {
	if xs == nil {
		return nil
	}
	out := make([]F, len(xs))
	for i, x := range xs {
		if x == nil {
			out[i] = nan
		} else {
			out[i] = *x
		}
	}
	return out
}

func appendPositive(b []byte, x int64) []byte {
	if x <= 0 {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, x, 10)
}

func appendInts(b []byte, xs []int) []byte {
	for i, x := range xs {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	}
	return b
}
