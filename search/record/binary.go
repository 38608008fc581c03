package record

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/rollout-rl/rollout/search/record/codec"
)

// The binary encoding of a group: varints for integers, raw little-endian
// IEEE floats for float arrays, after one format byte. Format 1 is the
// encoding of stores written before the record kept prompt tokens, fork
// scores, finish reasons, decode counts, missing forks and reward terms;
// Decode still reads it, leaving those fields unknown (zero, no fork score,
// an empty finish reason). Format 3 adds Usage.UnheldTokens after the
// missing forks; AppendBinary writes it only for a group with unheld tokens
// (a remote group), so the records of local groups stay in format 2, byte
// for byte as before.
const (
	formatV1     = 1
	formatV2     = 2
	formatUnheld = 3
	formatNewest = formatUnheld
)

// ErrTruncated reports a binary record that ends early or is malformed:
// codec's error, shared with the store's other records.
var ErrTruncated = codec.ErrTruncated

// flag bits of the binary encoding.
const (
	flagFiltered     = 1 << 0
	flagHasForkScore = 1 << 0
	flagScored       = 1 << 0
)

// AppendBinary appends g's binary encoding to b (encoding.BinaryAppender).
func (g *Group) AppendBinary(b []byte) ([]byte, error) {
	f := byte(formatV2)
	if g.Usage.UnheldTokens != 0 {
		f = formatUnheld
	}
	b = append(b, f)
	b = codec.AppendString(b, g.Prompt)
	b = binary.AppendUvarint(b, uint64(len(g.PromptTokens)))
	for _, t := range g.PromptTokens {
		b = binary.AppendVarint(b, int64(t))
	}
	b = binary.AppendUvarint(b, g.PromptID)
	b = codec.AppendString(b, g.Strategy)
	u := &g.Usage
	for _, v := range [...]int64{u.Budget, u.GeneratedTokens, u.PrefillTokens, u.DecodeTokens, u.FLOPs, int64(u.SkippedBranches), int64(g.MissingForks)} {
		b = binary.AppendVarint(b, v)
	}
	if f == formatUnheld {
		b = binary.AppendVarint(b, g.Usage.UnheldTokens)
	}
	b = append(b, boolFlag(g.Filtered, flagFiltered))
	b = binary.AppendUvarint(b, uint64(len(g.Nodes)))
	for i := range g.Nodes {
		n := &g.Nodes[i]
		for _, v := range [...]int{n.ID, n.Parent, n.ForkAt, n.Iteration} {
			b = binary.AppendVarint(b, int64(v))
		}
		b = append(b, boolFlag(n.HasForkScore, flagHasForkScore))
		if n.HasForkScore {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(n.ForkScore))
		}
		b = codec.AppendString(b, string(n.Finish))
		b = binary.AppendUvarint(b, uint64(len(n.Tokens)))
		for _, t := range n.Tokens {
			b = binary.AppendVarint(b, int64(t))
		}
		b = codec.AppendFloat32s(b, n.LogProbs)
		b = codec.AppendFloat32s(b, n.Entropies)
	}
	b = binary.AppendUvarint(b, uint64(len(g.Leaves)))
	for i := range g.Leaves {
		l := &g.Leaves[i]
		b = binary.AppendVarint(b, int64(l.Node))
		b = codec.AppendString(b, l.Text)
		b = append(b, boolFlag(l.Scored, flagScored))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(l.Reward))
		b = binary.AppendUvarint(b, uint64(len(l.Terms)))
		for _, t := range l.Terms {
			b = codec.AppendString(b, t.Name)
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(t.Value))
		}
		b = codec.AppendString(b, l.Reason)
		b = codec.AppendRuns(b, l.Advantages)
	}
	return b, nil
}

// SizeBound is an upper bound of the length of g's binary encoding.
func (g *Group) SizeBound() int {
	n := 1 + 3*10 + len(g.Prompt) + len(g.Strategy) + 10*len(g.PromptTokens) + 8*10 + 1 + 10
	for i := range g.Nodes {
		nd := &g.Nodes[i]
		n += 4*10 + 1 + 8 + 10 + len(nd.Finish) + 3*10 + 10*len(nd.Tokens) + 4*(len(nd.LogProbs)+len(nd.Entropies))
	}
	for i := range g.Leaves {
		l := &g.Leaves[i]
		n += 10 + 10 + len(l.Text) + 1 + 8 + 10 + 10 + len(l.Reason) + 10 + 18*len(l.Advantages)
		for _, t := range l.Terms {
			n += 10 + len(t.Name) + 8
		}
	}
	return n
}

func boolFlag(v bool, bit byte) byte {
	if v {
		return bit
	}
	return 0
}

// Decode reads a binary encoding (AppendBinary's formats 2 and 3, or
// format 1 of older stores) into g, reusing g's slices where it can. Malformed data is an
// error wrapping ErrTruncated, never a panic. The structure is not
// validated: call Validate for that.
func Decode(data []byte, g *Group) error {
	d := codec.NewReader(data)
	f := d.Byte("format")
	if d.Err() == nil && (f < formatV1 || f > formatNewest) {
		return fmt.Errorf("group record of format %d: this version reads formats %d to %d (a newer version of rollout wrote it)", f, formatV1, formatNewest)
	}
	g.Prompt = d.String("prompt")
	g.PromptTokens = g.PromptTokens[:0]
	g.PromptID, g.MissingForks = 0, 0
	g.Usage = Usage{}
	if f == formatV1 {
		g.Strategy = d.String("strategy")
		g.Usage.Budget = d.Varint("budget limit")
		g.Usage.GeneratedTokens = d.Varint("generated tokens")
		g.Usage.PrefillTokens = d.Varint("prefill tokens")
		g.Usage.FLOPs = d.Varint("flops")
	} else {
		nt := d.Count("prompt token count", 1)
		g.PromptTokens = slices.Grow(g.PromptTokens, nt)[:nt]
		for j := range g.PromptTokens {
			g.PromptTokens[j] = int(d.Varint("prompt token"))
		}
		g.PromptID = d.Uvarint("prompt id")
		g.Strategy = d.String("strategy")
		g.Usage.Budget = d.Varint("budget limit")
		g.Usage.GeneratedTokens = d.Varint("generated tokens")
		g.Usage.PrefillTokens = d.Varint("prefill tokens")
		g.Usage.DecodeTokens = d.Varint("decode tokens")
		g.Usage.FLOPs = d.Varint("flops")
		g.Usage.SkippedBranches = int(d.Varint("skipped branches"))
		g.MissingForks = int(d.Varint("missing forks"))
		if f == formatUnheld {
			g.Usage.UnheldTokens = d.Varint("unheld tokens")
		}
	}
	g.Filtered = d.Byte("filtered")&flagFiltered != 0
	nn := d.Count("node count", 7)
	g.Nodes = slices.Grow(g.Nodes[:0], nn)[:nn]
	tokens := 0 // no path is longer than all tokens together
	for i := range g.Nodes {
		readNode(d, &g.Nodes[i], f)
		tokens += len(g.Nodes[i].Tokens)
	}
	nl := d.Count("leaf count", 12)
	g.Leaves = slices.Grow(g.Leaves[:0], nl)[:nl]
	var scratch []float32
	for i := range g.Leaves {
		scratch = readLeaf(d, &g.Leaves[i], f, tokens, scratch)
	}
	if d.Err() != nil {
		return fmt.Errorf("decode group: %w", d.Err())
	}
	if d.Len() != 0 {
		return fmt.Errorf("decode group: %d bytes after the record: %w", d.Len(), ErrTruncated)
	}
	return nil
}

func readNode(d *codec.Reader, n *Node, f byte) {
	n.ID = int(d.Varint("node id"))
	n.Parent = int(d.Varint("node parent"))
	n.ForkAt = int(d.Varint("node fork_at"))
	n.Iteration = int(d.Varint("node iteration"))
	n.ForkScore, n.HasForkScore, n.Finish = 0, false, ""
	if f != formatV1 {
		if d.Byte("node flags")&flagHasForkScore != 0 {
			n.ForkScore, n.HasForkScore = d.Float64("fork score"), true
		}
		n.Finish = Finish(d.String("finish"))
	}
	nt := d.Count("token count", 1)
	n.Tokens = slices.Grow(n.Tokens[:0], nt)[:nt]
	for j := range n.Tokens {
		n.Tokens[j] = int(d.Varint("token"))
	}
	n.LogProbs = d.Float32s("logprobs", n.LogProbs)
	n.Entropies = d.Float32s("entropies", n.Entropies)
}

// readLeaf reads a leaf; scratch is memory for format 1's float32
// advantages, returned for the next leaf.
func readLeaf(d *codec.Reader, l *Leaf, f byte, maxPath int, scratch []float32) []float32 {
	l.Node = int(d.Varint("leaf node"))
	l.Text = d.String("leaf text")
	l.Scored = true
	if f != formatV1 {
		l.Scored = d.Byte("leaf flags")&flagScored != 0
	}
	l.Reward = d.Float64("leaf reward")
	l.Terms = l.Terms[:0]
	if f != formatV1 {
		nt := d.Count("term count", 9)
		for range nt {
			name := d.String("term name")
			l.Terms = append(l.Terms, Term{Name: name, Value: d.Float64("term value")})
		}
	}
	if len(l.Terms) == 0 {
		l.Terms = nil
	}
	l.Reason = d.String("leaf reason")
	if f == formatV1 {
		scratch = d.Float32s("advantages", scratch)
		l.Advantages = slices.Grow(l.Advantages[:0], len(scratch))[:len(scratch)]
		for i, a := range scratch {
			l.Advantages[i] = float64(a)
		}
	} else {
		l.Advantages = d.Runs("advantages", l.Advantages, maxPath)
	}
	return scratch
}
