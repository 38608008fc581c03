// Package codec holds the byte-level encodings that rollout's stored and
// printed records share, so that package record (groups) and package
// tracking (the store's metric, state and reference records) write and
// read them one way:
//
//   - binary: varints, raw little-endian IEEE floats, length-prefixed
//     strings and runs of equal floats, written by the Append functions and
//     read back by a Reader that never panics on corrupt input;
//   - JSON: strings and floats appended without reflection, floats in
//     their shortest form that reads back to the same value (AppendJSON…,
//     AppendFloats).
//
// It is a package of its own, not an internal one, because the two
// importers have no common ancestor below the module root, and the
// module's top-level layout has no internal/ directory. It imports nothing
// of the project.
package codec

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// ErrTruncated reports a binary record that ends early or is malformed.
var ErrTruncated = errors.New("truncated record")

// AppendString appends s with its uvarint length before it.
func AppendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// AppendFloat32s appends the uvarint length of fs, then each value as a
// little-endian IEEE float32.
func AppendFloat32s(b []byte, fs []float32) []byte {
	b = binary.AppendUvarint(b, uint64(len(fs)))
	for _, f := range fs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return b
}

// AppendRuns appends xs as runs of equal values (bit for bit): the
// uvarint number of runs, then per run its uvarint length and its value
// as a little-endian float64. Advantages, constant along a segment of a
// tree, take a few bytes per segment.
func AppendRuns(b []byte, xs []float64) []byte {
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

// Reader reads the binary encodings of this package from a byte slice.
// Every read names what it reads for the error. The first error sticks
// and later reads return zero values, so reading corrupt data never
// panics; errors wrap ErrTruncated.
type Reader struct {
	b   []byte
	err error
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

// Byte reads one byte.
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
	if !d.skip(what, n) {
		return 0
	}
	return v
}

// Uvarint reads an unsigned varint.
func (d *Reader) Uvarint(what string) uint64 {
	v, n := binary.Uvarint(d.b)
	if !d.skip(what, n) {
		return 0
	}
	return v
}

// skip moves past the n bytes a varint decoder read, or fails when it
// found none (n ≤ 0: too short or overflowing).
func (d *Reader) skip(what string, n int) bool {
	if n <= 0 {
		d.fail(what)
		return false
	}
	d.b = d.b[n:]
	return true
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

// Bytes reads a length-prefixed byte string (AppendString), as a view of
// the input.
func (d *Reader) Bytes(what string) []byte {
	n := d.Count(what, 1)
	s := d.b[:n:n]
	d.b = d.b[n:]
	return s
}

// String reads a length-prefixed string (AppendString).
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

// Float32s reads AppendFloat32s' encoding into dst's memory.
func (d *Reader) Float32s(what string, dst []float32) []float32 {
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

// Runs reads AppendRuns' encoding into dst's memory; more than maxLen
// values in all is an error.
func (d *Reader) Runs(what string, dst []float64, maxLen int) []float64 {
	dst = dst[:0]
	n := d.Count(what, 9)
	for range n {
		k := d.Uvarint(what)
		v := d.Float64(what)
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
