// Package gguf reads and writes GGUF files (version 3), the model format of
// llama.cpp and the tools built on it (ollama, LM Studio, node-llama-cpp),
// and converts rollout's Llama policies to and from it (Export, Import).
//
// A GGUF file is a header (magic "GGUF", version, tensor and metadata
// counts), typed key-value metadata, tensor descriptions (name, shape with
// the fastest-varying dimension first, element type, offset) and the tensor
// data, each tensor aligned to General.Alignment bytes (32 unless the
// metadata says otherwise). Everything is little endian.
package gguf

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// Magic is the first four bytes of every GGUF file.
const Magic = "GGUF"

// Version is the GGUF version this package writes (and the only one it reads).
const Version = 3

// DefaultAlignment is the alignment of tensor data when the metadata has no
// general.alignment key.
const DefaultAlignment = 32

// Type is a tensor's element type, numbered as ggml numbers them.
type Type uint32

// The tensor types this package writes and reads.
const (
	F32  Type = 0 // float32
	F16  Type = 1 // IEEE binary16
	Q8_0 Type = 8 // blocks of 32: one binary16 scale and 32 int8 values
)

// String is the type's ggml name.
func (t Type) String() string {
	switch t {
	case F32:
		return "F32"
	case F16:
		return "F16"
	case Q8_0:
		return "Q8_0"
	}
	return fmt.Sprintf("type %d", uint32(t))
}

// ParseType returns the type named name (F32, F16, Q8_0, any case).
func ParseType(name string) (Type, error) {
	for _, t := range []Type{F32, F16, Q8_0} {
		if strings.EqualFold(name, t.String()) {
			return t, nil
		}
	}
	return 0, fmt.Errorf("unknown tensor type %q (known: f32, f16, q8_0)", name)
}

// block returns the number of elements in a block of type t and the bytes
// a block takes.
func (t Type) block() (elems, size int, ok bool) {
	switch t {
	case F32:
		return 1, 4, true
	case F16:
		return 1, 2, true
	case Q8_0:
		return q8Block, q8BlockBytes, true
	}
	return 0, 0, false
}

// DataSize is the number of bytes of n elements of type t; n must be a
// multiple of the type's block size.
func (t Type) DataSize(n int) (int, error) {
	elems, size, ok := t.block()
	if !ok {
		return 0, fmt.Errorf("unsupported tensor type %s", t)
	}
	if n%elems != 0 {
		return 0, fmt.Errorf("%d elements are not a whole number of %s blocks of %d", n, t, elems)
	}
	return n / elems * size, nil
}

// Metadata value types, as GGUF numbers them.
const (
	typeUint8   = 0
	typeInt8    = 1
	typeUint16  = 2
	typeInt16   = 3
	typeUint32  = 4
	typeInt32   = 5
	typeFloat32 = 6
	typeBool    = 7
	typeString  = 8
	typeArray   = 9
	typeUint64  = 10
	typeInt64   = 11
	typeFloat64 = 12
)

// KV is one metadata entry. Value is one of uint8, int8, uint16, int16,
// uint32, int32, uint64, int64, float32, float64, bool, string, or a slice
// of one of them (an array).
type KV struct {
	Key   string
	Value any
}

// Tensor is one tensor: Dims lists its shape with the fastest-varying
// dimension first (a [rows, cols] row-major matrix has Dims {cols, rows}),
// and Data holds its elements encoded as Type says.
type Tensor struct {
	Name string
	Dims []uint64
	Type Type
	Data []byte
}

// Elems is the number of elements of the tensor.
func (t Tensor) Elems() int {
	n := 1
	for _, d := range t.Dims {
		n *= int(d)
	}
	return n
}

// File is the content of a GGUF file: its metadata in file order and its
// tensors.
type File struct {
	Metadata []KV
	Tensors  []Tensor
}

// Get returns the value of the metadata key, and whether it is there.
func (f *File) Get(key string) (any, bool) {
	for _, kv := range f.Metadata {
		if kv.Key == key {
			return kv.Value, true
		}
	}
	return nil, false
}

// Tensor returns the tensor named name, and whether it is there.
func (f *File) Tensor(name string) (Tensor, bool) {
	for _, t := range f.Tensors {
		if t.Name == name {
			return t, true
		}
	}
	return Tensor{}, false
}

// alignment is general.alignment, or DefaultAlignment without it.
func (f *File) alignment() (int, error) {
	v, ok := f.Get("general.alignment")
	if !ok {
		return DefaultAlignment, nil
	}
	a, ok := v.(uint32)
	if !ok || a == 0 || a%8 != 0 {
		return 0, fmt.Errorf("general.alignment %v: want a positive multiple of 8 (uint32)", v)
	}
	return int(a), nil
}

// WriteTo writes the file in GGUF version 3. A tensor whose data does not
// match its type and shape, or a metadata value of another Go type than KV
// lists, is an error naming it.
func (f *File) WriteTo(w io.Writer) (int64, error) {
	align, err := f.alignment()
	if err != nil {
		return 0, err
	}
	var b bytes.Buffer
	b.WriteString(Magic)
	put(&b, uint32(Version))
	put(&b, uint64(len(f.Tensors)))
	put(&b, uint64(len(f.Metadata)))
	for _, kv := range f.Metadata {
		putString(&b, kv.Key)
		if err := putValue(&b, kv.Value, true); err != nil {
			return 0, fmt.Errorf("gguf: metadata %s: %w", kv.Key, err)
		}
	}
	offset := 0
	for _, t := range f.Tensors {
		n, err := t.Type.DataSize(t.Elems())
		if err != nil {
			return 0, fmt.Errorf("gguf: tensor %s: %w", t.Name, err)
		}
		if n != len(t.Data) {
			return 0, fmt.Errorf("gguf: tensor %s: %d bytes of data, its shape %v of %s needs %d", t.Name, len(t.Data), t.Dims, t.Type, n)
		}
		putString(&b, t.Name)
		put(&b, uint32(len(t.Dims)))
		for _, d := range t.Dims {
			put(&b, d)
		}
		put(&b, uint32(t.Type))
		put(&b, uint64(offset))
		offset = pad(offset+n, align)
	}
	b.Write(make([]byte, pad(b.Len(), align)-b.Len()))
	for _, t := range f.Tensors {
		b.Write(t.Data)
		b.Write(make([]byte, pad(len(t.Data), align)-len(t.Data)))
	}
	n, err := w.Write(b.Bytes())
	return int64(n), err
}

// pad rounds n up to a multiple of align.
func pad(n, align int) int { return (n + align - 1) / align * align }

func put(b *bytes.Buffer, v any) { binary.Write(b, binary.LittleEndian, v) }

func putString(b *bytes.Buffer, s string) {
	put(b, uint64(len(s)))
	b.WriteString(s)
}

// putValue writes a metadata value, preceded by its type when typed.
func putValue(b *bytes.Buffer, v any, typed bool) error {
	tag := func(t uint32) {
		if typed {
			put(b, t)
		}
	}
	switch v := v.(type) {
	case uint8:
		tag(typeUint8)
		put(b, v)
	case int8:
		tag(typeInt8)
		put(b, v)
	case uint16:
		tag(typeUint16)
		put(b, v)
	case int16:
		tag(typeInt16)
		put(b, v)
	case uint32:
		tag(typeUint32)
		put(b, v)
	case int32:
		tag(typeInt32)
		put(b, v)
	case uint64:
		tag(typeUint64)
		put(b, v)
	case int64:
		tag(typeInt64)
		put(b, v)
	case float32:
		tag(typeFloat32)
		put(b, v)
	case float64:
		tag(typeFloat64)
		put(b, v)
	case bool:
		tag(typeBool)
		put(b, v)
	case string:
		tag(typeString)
		putString(b, v)
	case []uint8:
		return putArray(b, typeUint8, v, typed)
	case []int8:
		return putArray(b, typeInt8, v, typed)
	case []uint16:
		return putArray(b, typeUint16, v, typed)
	case []int16:
		return putArray(b, typeInt16, v, typed)
	case []uint32:
		return putArray(b, typeUint32, v, typed)
	case []int32:
		return putArray(b, typeInt32, v, typed)
	case []uint64:
		return putArray(b, typeUint64, v, typed)
	case []int64:
		return putArray(b, typeInt64, v, typed)
	case []float32:
		return putArray(b, typeFloat32, v, typed)
	case []float64:
		return putArray(b, typeFloat64, v, typed)
	case []bool:
		return putArray(b, typeBool, v, typed)
	case []string:
		return putArray(b, typeString, v, typed)
	default:
		return fmt.Errorf("value %v of type %T has no GGUF type", v, v)
	}
	return nil
}

func putArray[E any](b *bytes.Buffer, elem uint32, v []E, typed bool) error {
	if !typed {
		return errors.New("nested arrays are not supported")
	}
	put(b, uint32(typeArray))
	put(b, elem)
	put(b, uint64(len(v)))
	for _, e := range v {
		if err := putValue(b, e, false); err != nil {
			return err
		}
	}
	return nil
}

// Read parses a GGUF version 3 file. Every error says what it was reading
// and at which byte offset.
func Read(data []byte) (*File, error) {
	r := &reader{b: data}
	if len(data) < 4 || string(data[:4]) != Magic {
		return nil, errors.New("gguf: not a GGUF file (no GGUF magic)")
	}
	r.off = 4
	if v := r.u32("version"); r.err == nil && v != Version {
		return nil, fmt.Errorf("gguf: version %d, only version %d is supported", v, Version)
	}
	nt := r.u64("tensor count")
	nkv := r.u64("metadata count")
	if r.err != nil {
		return nil, r.err
	}
	// Each entry takes at least 8 bytes: counts beyond that are corrupt.
	if nt > uint64(len(data)) || nkv > uint64(len(data)) {
		return nil, fmt.Errorf("gguf: %d tensors and %d metadata entries cannot fit in %d bytes", nt, nkv, len(data))
	}
	f := &File{}
	for range nkv {
		key := r.str("metadata key")
		typ := r.u32("metadata type of " + key)
		v := r.value(key, typ, true)
		if r.err != nil {
			return nil, r.err
		}
		f.Metadata = append(f.Metadata, KV{key, v})
	}
	align, err := f.alignment()
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	offsets := make([]uint64, nt)
	for i := range nt {
		var t Tensor
		t.Name = r.str("tensor name")
		nd := r.u32("dimension count of " + t.Name)
		if r.err == nil && (nd == 0 || nd > 4) {
			return nil, fmt.Errorf("gguf: tensor %s has %d dimensions, want 1 to 4", t.Name, nd)
		}
		for range nd {
			t.Dims = append(t.Dims, r.u64("shape of "+t.Name))
		}
		t.Type = Type(r.u32("type of " + t.Name))
		offsets[i] = r.u64("offset of " + t.Name)
		if r.err != nil {
			return nil, r.err
		}
		f.Tensors = append(f.Tensors, t)
	}
	start := pad(r.off, align)
	for i := range f.Tensors {
		t := &f.Tensors[i]
		// Every type takes at least a byte per element, so a tensor of
		// more elements than the file has bytes is corrupt.
		elems := uint64(1)
		for _, d := range t.Dims {
			if d == 0 || d > uint64(len(data)) || elems*d > uint64(len(data)) {
				return nil, fmt.Errorf("gguf: tensor %s has shape %v, more elements than the file's %d bytes hold", t.Name, t.Dims, len(data))
			}
			elems *= d
		}
		n, err := t.Type.DataSize(t.Elems())
		if err != nil {
			return nil, fmt.Errorf("gguf: tensor %s: %w", t.Name, err)
		}
		lo := uint64(start) + offsets[i]
		if offsets[i]%uint64(align) != 0 || lo > uint64(len(data)) || uint64(len(data))-lo < uint64(n) {
			return nil, fmt.Errorf("gguf: tensor %s: %d bytes at offset %d lie outside the file's %d bytes or are not aligned to %d", t.Name, n, lo, len(data), align)
		}
		t.Data = data[lo : lo+uint64(n)]
	}
	return f, nil
}

// reader decodes little-endian values, keeping the first error.
type reader struct {
	b   []byte
	off int
	err error
}

func (r *reader) take(n uint64, what string) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)-r.off) {
		r.err = fmt.Errorf("gguf: %s at byte %d: file ends after %d bytes", what, r.off, len(r.b))
		return nil
	}
	s := r.b[r.off : r.off+int(n)]
	r.off += int(n)
	return s
}

func (r *reader) u32(what string) uint32 {
	if s := r.take(4, what); s != nil {
		return binary.LittleEndian.Uint32(s)
	}
	return 0
}

func (r *reader) u64(what string) uint64 {
	if s := r.take(8, what); s != nil {
		return binary.LittleEndian.Uint64(s)
	}
	return 0
}

func (r *reader) str(what string) string {
	n := r.u64(what)
	return string(r.take(n, what))
}

// value reads a metadata value of type typ (arrays only when array is set).
func (r *reader) value(key string, typ uint32, array bool) any {
	fixed := func(n uint64) []byte { return r.take(n, "value of "+key) }
	switch typ {
	case typeUint8, typeInt8, typeBool:
		s := fixed(1)
		if s == nil {
			return nil
		}
		switch typ {
		case typeUint8:
			return s[0]
		case typeInt8:
			return int8(s[0])
		}
		return s[0] != 0
	case typeUint16, typeInt16:
		s := fixed(2)
		if s == nil {
			return nil
		}
		if typ == typeUint16 {
			return binary.LittleEndian.Uint16(s)
		}
		return int16(binary.LittleEndian.Uint16(s))
	case typeUint32, typeInt32, typeFloat32:
		s := fixed(4)
		if s == nil {
			return nil
		}
		u := binary.LittleEndian.Uint32(s)
		switch typ {
		case typeUint32:
			return u
		case typeInt32:
			return int32(u)
		}
		return math.Float32frombits(u)
	case typeUint64, typeInt64, typeFloat64:
		s := fixed(8)
		if s == nil {
			return nil
		}
		u := binary.LittleEndian.Uint64(s)
		switch typ {
		case typeUint64:
			return u
		case typeInt64:
			return int64(u)
		}
		return math.Float64frombits(u)
	case typeString:
		return r.str("value of " + key)
	case typeArray:
		if !array {
			r.fail(fmt.Errorf("gguf: metadata %s: nested arrays are not supported", key))
			return nil
		}
		elem := r.u32("array type of " + key)
		n := r.u64("array length of " + key)
		if r.err == nil && n > uint64(len(r.b)-r.off) {
			r.fail(fmt.Errorf("gguf: metadata %s: array of %d elements at byte %d runs past the end", key, n, r.off))
		}
		return readArray(r, key, elem, n)
	}
	r.fail(fmt.Errorf("gguf: metadata %s: unknown value type %d at byte %d", key, typ, r.off))
	return nil
}

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

// readArray reads n elements of type elem into a typed slice.
func readArray(r *reader, key string, elem uint32, n uint64) any {
	if r.err != nil {
		return nil
	}
	switch elem {
	case typeUint8:
		return arrayOf[uint8](r, key, elem, n)
	case typeInt8:
		return arrayOf[int8](r, key, elem, n)
	case typeUint16:
		return arrayOf[uint16](r, key, elem, n)
	case typeInt16:
		return arrayOf[int16](r, key, elem, n)
	case typeUint32:
		return arrayOf[uint32](r, key, elem, n)
	case typeInt32:
		return arrayOf[int32](r, key, elem, n)
	case typeUint64:
		return arrayOf[uint64](r, key, elem, n)
	case typeInt64:
		return arrayOf[int64](r, key, elem, n)
	case typeFloat32:
		return arrayOf[float32](r, key, elem, n)
	case typeFloat64:
		return arrayOf[float64](r, key, elem, n)
	case typeBool:
		return arrayOf[bool](r, key, elem, n)
	case typeString:
		return arrayOf[string](r, key, elem, n)
	}
	r.fail(fmt.Errorf("gguf: metadata %s: unsupported array element type %d", key, elem))
	return nil
}

func arrayOf[E any](r *reader, key string, elem uint32, n uint64) []E {
	out := make([]E, 0, n)
	for range n {
		v := r.value(key, elem, false)
		if r.err != nil {
			return nil
		}
		out = append(out, v.(E))
	}
	return out
}
