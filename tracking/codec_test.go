package tracking

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/rollout-rl/rollout/search/record"
)

// Group chunks are written compressed (format 2), sealed, and read back
// exactly; chunks of format 1, as schema-1 stores hold them, are refused
// (Migrate compresses them); a damaged chunk, sealed after its damage (so
// that only decoding can tell) or before (so that the checksum tells), is
// an error that the store reports as damage.
func TestChunkFormats(t *testing.T) {
	groups := []record.Group{flatGroup(1, 8, 40), treeGroup(), flatGroup(2, 3, 7)}
	var codec chunkCodec
	chunks := codec.encodeChunks(groups)
	if len(chunks) != 1 || chunks[0].data[0] != chunkFormatCompressed {
		t.Fatalf("encoded %d chunks of format %d, want one of format %d", len(chunks), chunks[0].data[0], chunkFormatCompressed)
	}
	compressed := chunks[0].data
	// The same chunk as format 1: the format byte and the groups.
	plain := []byte{chunkFormat}
	for i := range groups {
		enc, _ := groups[i].AppendBinary(nil)
		plain = append(plain, byte(len(enc)), byte(len(enc)>>8), byte(len(enc)>>16), byte(len(enc)>>24))
		plain = append(plain, enc...)
	}
	if len(compressed) >= len(plain) {
		t.Errorf("compressed chunk of %d bytes, format 1 takes %d", len(compressed), len(plain))
	}
	badLength := append([]byte{chunkFormatCompressed, 0xff, 0xff, 0xff, 0xff, 0x7f}, compressed[2:]...)
	for _, tc := range []struct {
		name    string
		data    []byte
		want    []record.Group
		corrupt bool
	}{
		{"format 2", compressed, groups, false},
		{"format 1", plain, nil, true},
		{"format 2 cut short", compressed[:len(compressed)/2], nil, true},
		{"format 2 stating a length beyond the bound", badLength, nil, true},
		{"format 2 with its data flipped", flip(compressed, len(compressed)/2), nil, true},
		{"empty", nil, nil, true},
		{"format 2 flipped after sealing", compressed, nil, true},
	} {
		var got []record.Group
		k := groupKey(3, 0)
		stored := seal(k, bytes.Clone(tc.data))
		if strings.Contains(tc.name, "after sealing") {
			stored = flip(stored, 7)
		}
		err := codec.eachInChunk(k, 0, stored, func(i int, enc []byte) error {
			var g record.Group
			if err := record.Decode(enc, &g); err != nil {
				return err
			}
			got = append(got, g)
			return nil
		})
		if tc.corrupt {
			s := &Store{path: "x.db"}
			if err == nil || !errors.Is(s.recordError(err), ErrDamaged) {
				t.Errorf("%s: %v, want an error the store reports as damage", tc.name, err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %d groups, %v; want the %d groups written", tc.name, len(got), err, len(tc.want))
		}
	}
}

func flip(b []byte, at int) []byte {
	c := append([]byte(nil), b...)
	c[at] ^= 0x5a
	c[at+1] ^= 0xa5
	return c
}
