package codec_test

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/rollout-rl/rollout/search/record/codec"
)

// record is one of each binary encoding, in a fixed order.
type record struct {
	b     byte
	i     int64
	u     uint64
	s     string
	f     float64
	f32s  []float32
	runs  []float64
	count int
}

func (r record) append(b []byte) []byte {
	b = append(b, r.b)
	b = binary.AppendVarint(b, r.i)
	b = binary.AppendUvarint(b, r.u)
	b = codec.AppendString(b, r.s)
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.f))
	b = codec.AppendFloat32s(b, r.f32s)
	b = codec.AppendRuns(b, r.runs)
	return binary.AppendUvarint(b, uint64(r.count))
}

func read(d *codec.Reader) record {
	return record{b: d.Byte("b"), i: d.Varint("i"), u: d.Uvarint("u"), s: d.String("s"), f: d.Float64("f"),
		f32s: d.Float32s("f32s", nil), runs: d.Runs("runs", nil, 100), count: d.Count("count", 0)}
}

func TestBinaryRoundTrip(t *testing.T) {
	for _, r := range []record{
		{},
		{b: 7, i: -300, u: 1 << 40, s: "héllo", f: math.Inf(-1), f32s: []float32{1.5, -0, float32(math.NaN())}, runs: []float64{1, 1, 1, 0.5, 0.5, 1}},
		{i: math.MinInt64, u: math.MaxUint64, s: string(make([]byte, 300)), runs: []float64{-2}},
	} {
		data := r.append(nil)
		d := codec.NewReader(data)
		got := read(d)
		if d.Err() != nil || d.Len() != 0 {
			t.Fatalf("%+v: error %v, %d bytes left", r, d.Err(), d.Len())
		}
		if got.b != r.b || got.i != r.i || got.u != r.u || got.s != r.s || math.Float64bits(got.f) != math.Float64bits(r.f) ||
			!slices.EqualFunc(got.f32s, r.f32s, func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) ||
			!slices.Equal(got.runs, r.runs) || got.count != r.count {
			t.Errorf("read back %+v, want %+v", got, r)
		}
	}
}

// Every truncation of a valid encoding is an error wrapping ErrTruncated
// that names the field, never a panic; reads after it return zeros.
func TestTruncated(t *testing.T) {
	data := record{b: 1, i: 2, u: 3, s: "four", f: 5, f32s: []float32{6}, runs: []float64{7, 7}}.append(nil)
	for n := range len(data) {
		d := codec.NewReader(data[:n])
		read(d)
		if !errors.Is(d.Err(), codec.ErrTruncated) {
			t.Fatalf("%d of %d bytes: error %v, want ErrTruncated", n, len(data), d.Err())
		}
		if d.Len() != 0 || d.Varint("after") != 0 || d.String("after") != "" {
			t.Errorf("%d bytes: a read after the error returned data", n)
		}
	}
}

func TestCorruptLengths(t *testing.T) {
	for _, tc := range []struct {
		name string
		data []byte
		read func(*codec.Reader)
	}{
		{"count beyond the data", binary.AppendUvarint(nil, 5), func(d *codec.Reader) { d.Count("count", 1) }},
		{"string longer than the data", codec.AppendString(nil, "abc")[:3], func(d *codec.Reader) { d.String("s") }},
		{"floats beyond the data", binary.AppendUvarint(nil, 1<<40), func(d *codec.Reader) { d.Float32s("f", nil) }},
		{"runs past maxLen", codec.AppendRuns(nil, make([]float64, 101)), func(d *codec.Reader) { d.Runs("runs", nil, 100) }},
		{"an empty run", binary.LittleEndian.AppendUint64(binary.AppendUvarint([]byte{1}, 0), 0), func(d *codec.Reader) { d.Runs("runs", nil, 100) }},
	} {
		d := codec.NewReader(tc.data)
		tc.read(d)
		if !errors.Is(d.Err(), codec.ErrTruncated) {
			t.Errorf("%s: error %v, want ErrTruncated", tc.name, d.Err())
		}
	}
}

// The JSON appenders write what encoding/json reads back to the same value.
func TestJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "quote \" backslash \\ \n\r\t \x01 \u2028\u2029", "é ✓", "bad \xff utf8"} {
		b := codec.AppendJSONString(nil, s)
		var got string
		if err := json.Unmarshal(b, &got); err != nil {
			t.Fatalf("%q: %s does not read: %v", s, b, err)
		}
		if want := string([]rune(s)); got != want {
			t.Errorf("%q: read back %q", s, got)
		}
	}
	for _, tc := range []struct {
		x    float64
		want string
	}{{0, "0"}, {-3, "-3"}, {0.1, "0.1"}, {1e20, "1e+20"}, {math.NaN(), "null"}, {math.Inf(1), "null"}} {
		if got := string(codec.AppendJSONFloat(nil, tc.x)); got != tc.want {
			t.Errorf("AppendJSONFloat(%v) = %s, want %s", tc.x, got, tc.want)
		}
	}
	xs := []float32{0.1, 0.1, float32(math.NaN()), 2}
	if got := string(codec.AppendFloats(nil, xs, ',', true)); got != "0.1,0.1,null,2" {
		t.Errorf("AppendFloats JSON = %s", got)
	}
	if got := string(codec.AppendFloats(nil, xs, ' ', false)); got != "0.1 0.1 NaN 2" {
		t.Errorf("AppendFloats CSV = %s", got)
	}
}

func ExampleReader() {
	b := codec.AppendString(nil, "loss")
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(0.25))
	d := codec.NewReader(b)
	fmt.Println(d.String("name"), d.Float64("value"), d.Err())
	d.Float64("past the end")
	fmt.Println(d.Err())
	// Output:
	// loss 0.25 <nil>
	// truncated record: reading past the end
}
