package tracking

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/rollout-rl/rollout/search/record"
	"github.com/rollout-rl/rollout/search/record/codec"
)

// The binary encoding of a step's metrics: varints for integers, raw
// little-endian IEEE floats, after a format byte so later versions can
// change it. Groups are encoded by package record (record.Group.AppendBinary).
const metricsFormat = 1

var errTruncated = errors.New("truncated record")

// stepKey is the big-endian step number: keys sort by step.
func stepKey(step int) []byte {
	return binary.BigEndian.AppendUint64(make([]byte, 0, 12), uint64(step))
}

// groupKey is the step followed by the big-endian group index.
func groupKey(step, index int) []byte {
	return binary.BigEndian.AppendUint32(stepKey(step), uint32(index))
}

// parseGroupKey splits a groups-bucket key.
func parseGroupKey(k []byte) (step, index int, err error) {
	if len(k) != 12 {
		return 0, 0, fmt.Errorf("group key of %d bytes, want 12", len(k))
	}
	return int(binary.BigEndian.Uint64(k)), int(binary.BigEndian.Uint32(k[8:])), nil
}

// encodeMetrics encodes a step's metric record, names sorted.
func encodeMetrics(rec *StepRecord) []byte {
	names := make([]string, 0, len(rec.Metrics))
	size := 32
	for k := range rec.Metrics {
		names = append(names, k)
		size += len(k) + 10
	}
	slices.Sort(names)
	b := make([]byte, 0, size)
	b = append(b, metricsFormat)
	b = binary.AppendVarint(b, rec.Tokens)
	b = binary.AppendVarint(b, int64(rec.Elapsed))
	b = binary.AppendUvarint(b, uint64(len(names)))
	for _, k := range names {
		b = codec.AppendString(b, k)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(rec.Metrics[k]))
	}
	return b
}

// metricsHeader decodes the fixed part of a metric record and returns a
// decoder positioned at the name/value pairs and their count.
func metricsHeader(data []byte) (tokens int64, elapsed time.Duration, d *codec.Reader, n int, err error) {
	d = codec.NewReader(data)
	if f := d.Byte("format"); d.Err() == nil && f != metricsFormat {
		return 0, 0, d, 0, fmt.Errorf("metric record format %d, this version reads %d", f, metricsFormat)
	}
	tokens = d.Varint("tokens")
	elapsed = time.Duration(d.Varint("elapsed"))
	n = d.Count("metric count", 9)
	if d.Err() != nil {
		return 0, 0, d, 0, fmt.Errorf("decoding metrics: %w", d.Err())
	}
	return tokens, elapsed, d, n, nil
}

// metricsPayload verifies the sealed metric record v of key k (a
// stepKey) and returns its step and payload.
func metricsPayload(k, v []byte) (step int, payload []byte, err error) {
	if len(k) != 8 {
		return 0, nil, fmt.Errorf("metric key %x: want 8 bytes: %w", k, errCorrupt)
	}
	step = int(binary.BigEndian.Uint64(k))
	if payload, err = unseal(k, v); err != nil {
		return step, nil, fmt.Errorf("step %d: metric record: %w", step, err)
	}
	return step, payload, nil
}

// decodeMetrics decodes a full metric record: the sealed value v of key k.
func decodeMetrics(k, v []byte) (StepMetrics, error) {
	step, data, err := metricsPayload(k, v)
	if err != nil {
		return StepMetrics{}, err
	}
	tokens, elapsed, d, n, err := metricsHeader(data)
	if err != nil {
		return StepMetrics{}, fmt.Errorf("step %d: %w", step, err)
	}
	m := StepMetrics{Step: step, Tokens: tokens, Elapsed: elapsed, Values: make(map[string]float64, n)}
	for range n {
		k := d.String("metric name")
		m.Values[k] = d.Float64("metric value")
	}
	if d.Err() != nil {
		return StepMetrics{}, fmt.Errorf("decoding metrics of step %d: %w", step, d.Err())
	}
	return m, nil
}

// lookupMetrics finds the wanted metrics in a record (the sealed value v
// of key k) without building a map: found[i] reports whether names[i] is
// present, vals[i] its value.
func lookupMetrics(k, v []byte, names []string, vals []float64, found []bool) (step int, tokens int64, elapsed time.Duration, err error) {
	step, data, err := metricsPayload(k, v)
	if err != nil {
		return step, 0, 0, err
	}
	tokens, elapsed, d, n, err := metricsHeader(data)
	if err != nil {
		return step, 0, 0, fmt.Errorf("step %d: %w", step, err)
	}
	clear(found)
	for range n {
		k := d.Bytes("metric name")
		v := d.Float64("metric value")
		for i, name := range names {
			if string(k) == name {
				vals[i], found[i] = v, true
			}
		}
	}
	if d.Err() != nil {
		return step, 0, 0, fmt.Errorf("step %d: decoding metrics: %w", step, d.Err())
	}
	return step, tokens, elapsed, nil
}

// Groups are stored in chunks: consecutive groups of a step packed into
// one value of about chunkTarget bytes, keyed by the step and the index of
// the chunk's first group. Big values fill bbolt's overflow pages with
// little waste (a group of ~9 KB alone would waste a quarter of its pages)
// and make a step's commit a few large puts.
//
// A chunk is stored compressed (format 2): the format byte, the length of
// the format-1 payload as a uvarint and that payload through DEFLATE at its
// fastest level. Log-probs and entropies of a peaked policy repeat their
// bytes, and leaf texts repeat the tokens: the quickstart's groups take
// 16.6 bytes a sampled token as format 1 and about 6 compressed. Stores of
// schema version 1 may hold chunks of format 1: Migrate compresses them.
const (
	chunkFormat           = 1
	chunkFormatCompressed = 2
	chunkTarget           = 1 << 20
	// chunkMaxRaw bounds a compressed chunk's stated payload length, so
	// that a damaged length cannot make a reader allocate without bound.
	chunkMaxRaw = 1 << 30
)

// errCorrupt reports a record that cannot be what rollout wrote: a
// compressed chunk that does not decompress to the length it states, a
// key of the wrong shape.
var errCorrupt = errors.New("corrupt record")

// groupChunk is one encoded chunk and the index of its first group.
type groupChunk struct {
	first int
	data  []byte
}

// encodeChunks packs the groups into chunks: format byte, then per group a
// little-endian uint32 length and the group's encoding.
func (c *chunkCodec) encodeChunks(groups []record.Group) []groupChunk {
	size := 0
	for i := range groups {
		size += groups[i].SizeBound() + 4
	}
	arena := make([]byte, 0, size+(size/chunkTarget+1))
	var chunks []groupChunk
	start, first := -1, 0
	for i := range groups {
		if start < 0 {
			start, first = len(arena), i
			arena = append(arena, chunkFormat)
		}
		lenAt := len(arena)
		arena = append(arena, 0, 0, 0, 0)
		arena, _ = groups[i].AppendBinary(arena) // appending cannot fail
		binary.LittleEndian.PutUint32(arena[lenAt:], uint32(len(arena)-lenAt-4))
		if len(arena)-start >= chunkTarget || i == len(groups)-1 {
			chunks = append(chunks, groupChunk{first: first, data: c.compressChunk(arena[start:])})
			start = -1
		}
	}
	return chunks
}

// chunkCodec keeps DEFLATE compressors and decompressors for reuse: a new
// compressor allocates and clears about 1 MB, more than a step's groups
// take to compress. The zero value is ready; it is safe for concurrent use.
type chunkCodec struct {
	writers, readers sync.Pool
}

// compressChunk turns a format-1 chunk into a format-2 one.
func (c *chunkCodec) compressChunk(raw []byte) []byte {
	payload := raw[1:]
	out := bytes.NewBuffer(make([]byte, 0, 16+len(payload)/2))
	out.WriteByte(chunkFormatCompressed)
	out.Write(binary.AppendUvarint(nil, uint64(len(payload))))
	w, _ := c.writers.Get().(*flate.Writer)
	if w == nil {
		w, _ = flate.NewWriter(out, flate.BestSpeed) // the level is valid
	} else {
		w.Reset(out)
	}
	w.Write(payload) // writes to a bytes.Buffer do not fail
	w.Close()
	c.writers.Put(w)
	return out.Bytes()
}

// decompressor returns a reader of the DEFLATE stream in b, and a function
// that hands it back for reuse.
func (c *chunkCodec) decompressor(b []byte) (io.Reader, func()) {
	src := bytes.NewReader(b)
	r, _ := c.readers.Get().(io.ReadCloser)
	if r == nil {
		r = flate.NewReader(src)
	} else if err := r.(flate.Resetter).Reset(src, nil); err != nil {
		r = flate.NewReader(src)
	}
	return r, func() { c.readers.Put(r) }
}

// chunkPayload returns the length-prefixed groups of a (format 2) chunk,
// decompressed.
func (c *chunkCodec) chunkPayload(data []byte) ([]byte, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("group chunk: %w", errTruncated)
	}
	if data[0] != chunkFormatCompressed {
		return nil, fmt.Errorf("group chunk of format %d, want %d: %w", data[0], chunkFormatCompressed, errCorrupt)
	}
	n, k := binary.Uvarint(data[1:])
	if k <= 0 || n > chunkMaxRaw {
		return nil, fmt.Errorf("compressed group chunk: payload length: %w", errCorrupt)
	}
	payload := make([]byte, n)
	r, done := c.decompressor(data[1+k:])
	defer done()
	if _, err := io.ReadFull(r, payload); err != nil {
		return nil, fmt.Errorf("compressed group chunk of %d bytes: %w (%v)", n, errCorrupt, err)
	}
	if extra, _ := r.Read(make([]byte, 1)); extra > 0 {
		return nil, fmt.Errorf("compressed group chunk: more than the %d bytes it states: %w", n, errCorrupt)
	}
	return payload, nil
}

// eachInChunk verifies a stored chunk (the sealed value v of key k, a
// groupKey whose first group is first) and calls fn with the index and
// encoding of each of its groups.
func (c *chunkCodec) eachInChunk(k []byte, first int, v []byte, fn func(index int, enc []byte) error) error {
	data, err := unseal(k, v)
	if err != nil {
		return fmt.Errorf("group chunk from group %d: %w", first, err)
	}
	return c.eachInPayload(first, data, fn)
}

// eachInPayload calls fn with the index and encoding of every group of an
// unsealed chunk.
func (c *chunkCodec) eachInPayload(first int, data []byte, fn func(index int, enc []byte) error) error {
	data, err := c.chunkPayload(data)
	if err != nil {
		return err
	}
	for i := first; len(data) > 0; i++ {
		if len(data) < 4 {
			return fmt.Errorf("group chunk: %w", errTruncated)
		}
		n := int(binary.LittleEndian.Uint32(data))
		if n > len(data)-4 {
			return fmt.Errorf("group chunk: group %d of %d bytes: %w", i, n, errTruncated)
		}
		if err := fn(i, data[4:4+n]); err != nil {
			return err
		}
		data = data[4+n:]
	}
	return nil
}
