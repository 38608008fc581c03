package record

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
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

// ErrTruncated reports a binary record that ends early or is malformed.
var ErrTruncated = errors.New("truncated group record")

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
	b = appendBytes(b, g.Prompt)
	b = binary.AppendUvarint(b, uint64(len(g.PromptTokens)))
	for _, t := range g.PromptTokens {
		b = binary.AppendVarint(b, int64(t))
	}
	b = binary.AppendUvarint(b, g.PromptID)
	b = appendBytes(b, g.Strategy)
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
		b = appendBytes(b, string(n.Finish))
		b = binary.AppendUvarint(b, uint64(len(n.Tokens)))
		for _, t := range n.Tokens {
			b = binary.AppendVarint(b, int64(t))
		}
		b = appendFloats(b, n.LogProbs)
		b = appendFloats(b, n.Entropies)
	}
	b = binary.AppendUvarint(b, uint64(len(g.Leaves)))
	for i := range g.Leaves {
		l := &g.Leaves[i]
		b = binary.AppendVarint(b, int64(l.Node))
		b = appendBytes(b, l.Text)
		b = append(b, boolFlag(l.Scored, flagScored))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(l.Reward))
		b = binary.AppendUvarint(b, uint64(len(l.Terms)))
		for _, t := range l.Terms {
			b = appendBytes(b, t.Name)
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(t.Value))
		}
		b = appendBytes(b, l.Reason)
		b = appendRuns(b, l.Advantages)
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

func appendBytes(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

func appendFloats(b []byte, fs []float32) []byte {
	b = binary.AppendUvarint(b, uint64(len(fs)))
	for _, f := range fs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return b
}

// appendRuns appends xs as runs of equal values (advantages are constant
// along a segment): the number of runs, then per run its length and value.
func appendRuns(b []byte, xs []float64) []byte {
	runs := 0
	for i := range xs {
		if i == 0 || math.Float64bits(xs[i]) != math.Float64bits(xs[i-1]) {
			runs++
		}
	}
	b = binary.AppendUvarint(b, uint64(runs))
	for i := 0; i < len(xs); {
		j := i + 1
		for j < len(xs) && math.Float64bits(xs[j]) == math.Float64bits(xs[i]) {
			j++
		}
		b = binary.AppendUvarint(b, uint64(j-i))
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(xs[i]))
		i = j
	}
	return b
}

// Decode reads a binary encoding (AppendBinary's formats 2 and 3, or
// format 1 of older stores) into g, reusing g's slices where it can. Malformed data is an
// error wrapping ErrTruncated, never a panic. The structure is not
// validated: call Validate for that.
func Decode(data []byte, g *Group) error {
	d := Reader{b: data}
	f := d.Byte("format")
	if d.err == nil && (f < formatV1 || f > formatNewest) {
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
		d.node(&g.Nodes[i], f)
		tokens += len(g.Nodes[i].Tokens)
	}
	nl := d.Count("leaf count", 12)
	g.Leaves = slices.Grow(g.Leaves[:0], nl)[:nl]
	for i := range g.Leaves {
		d.leaf(&g.Leaves[i], f, tokens)
	}
	if d.err != nil {
		return fmt.Errorf("decode group: %w", d.err)
	}
	if len(d.b) != 0 {
		return fmt.Errorf("decode group: %d bytes after the record: %w", len(d.b), ErrTruncated)
	}
	return nil
}

func (d *Reader) node(n *Node, f byte) {
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
	n.LogProbs = d.floats("logprobs", n.LogProbs)
	n.Entropies = d.floats("entropies", n.Entropies)
}

func (d *Reader) leaf(l *Leaf, f byte, maxPath int) {
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
		d.f32 = d.floats("advantages", d.f32)
		l.Advantages = slices.Grow(l.Advantages[:0], len(d.f32))[:len(d.f32)]
		for i, a := range d.f32 {
			l.Advantages[i] = float64(a)
		}
	} else {
		l.Advantages = d.runs("advantages", l.Advantages, maxPath)
	}
}

// Reader reads the binary encodings of rollout's records — varints, raw
// little-endian floats, length-prefixed strings — as Decode does for groups
// and the store does for its metric records. The first error sticks and
// later reads return zero values, so reading corrupt data never panics;
// errors wrap ErrTruncated.
type Reader struct {
	b   []byte
	err error
	f32 []float32 // scratch
}

// NewReader returns a Reader of b.
func NewReader(b []byte) *Reader { return &Reader{b: b} }

// Err is the first error met, nil if none.
func (d *Reader) Err() error { return d.err }

// Len is the number of bytes not read yet.
func (d *Reader) Len() int { return len(d.b) }

func (d *Reader) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: reading %s", ErrTruncated, what)
	}
	d.b = nil
}

// Byte reads one byte; what names it in an error.
func (d *Reader) Byte(what string) byte {
	if len(d.b) < 1 {
		d.fail(what)
		return 0
	}
	c := d.b[0]
	d.b = d.b[1:]
	return c
}

// Varint reads a signed varint.
func (d *Reader) Varint(what string) int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

// Uvarint reads an unsigned varint.
func (d *Reader) Uvarint(what string) uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return v
}

// Count reads a length and checks that at least minSize·length bytes
// remain, so a corrupt length cannot make a caller allocate much.
func (d *Reader) Count(what string, minSize int) int {
	v, n := binary.Uvarint(d.b)
	if n <= 0 || v > uint64(len(d.b)-n)/uint64(max(minSize, 1)) {
		d.fail(what)
		return 0
	}
	d.b = d.b[n:]
	return int(v)
}

// Bytes reads a length-prefixed byte string, as a view of the input.
func (d *Reader) Bytes(what string) []byte {
	n := d.Count(what, 1)
	s := d.b[:n:n]
	d.b = d.b[n:]
	return s
}

// String reads a length-prefixed string.
func (d *Reader) String(what string) string { return string(d.Bytes(what)) }

// Float64 reads a little-endian IEEE float64.
func (d *Reader) Float64(what string) float64 {
	if len(d.b) < 8 {
		d.fail(what)
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
	d.b = d.b[8:]
	return v
}

// runs reads appendRuns' encoding into dst, of at most maxLen values.
func (d *Reader) runs(what string, dst []float64, maxLen int) []float64 {
	dst = dst[:0]
	n := d.Count(what, 9)
	for range n {
		k := d.Uvarint(what)
		v := math.Float64frombits(binary.LittleEndian.Uint64(d.take(what, 8)))
		if d.err != nil || k == 0 || k > uint64(maxLen) || uint64(len(dst))+k > uint64(maxLen) {
			d.fail(what)
			return dst[:0]
		}
		for range k {
			dst = append(dst, v)
		}
	}
	return dst
}

// take returns the next n bytes (zeros after an error).
func (d *Reader) take(what string, n int) []byte {
	if len(d.b) < n {
		d.fail(what)
		return make([]byte, n)
	}
	s := d.b[:n]
	d.b = d.b[n:]
	return s
}

func (d *Reader) floats(what string, dst []float32) []float32 {
	n := d.Count(what, 4)
	if d.err != nil {
		return dst[:0]
	}
	dst = slices.Grow(dst[:0], n)[:n]
	for i := range dst {
		dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(d.b[4*i:]))
	}
	d.b = d.b[4*n:]
	return dst
}
