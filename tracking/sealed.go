// This file: the checksum every stored record carries (seal, unseal).

package tracking

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"

	bolt "go.etcd.io/bbolt"
)

// Every value this package stores under a key of the store (experiment,
// run, metric, group chunk and resume state reference records; schema
// version 2 on) is sealed: its payload followed by the CRC-32C
// (Castagnoli) of the record's key and payload, 4 bytes little endian.
// Every read unseals the value before decoding it, so a flipped bit
// anywhere in a record, or a record under another key, is an error
// (ErrChecksum, inside a *DamagedError) naming the record rather than
// data. A new kind of record adopts it by writing with putSealed (or
// putJSON) and reading with unseal (or decodeJSON); nothing else changes.

// sealSize is the length of the checksum after a sealed record's payload.
const sealSize = 4

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrChecksum is matched (errors.Is) by the error of a read that found a
// record whose checksum does not match its content: the file is damaged.
var ErrChecksum = errors.New("record fails its checksum")

// sealSum is the checksum of a record: CRC-32C of its key, then its payload.
func sealSum(key, payload []byte) uint32 {
	return crc32.Update(crc32.Checksum(key, castagnoli), castagnoli, payload)
}

// seal appends the checksum of key and payload to payload and returns
// the stored value.
func seal(key, payload []byte) []byte {
	return binary.LittleEndian.AppendUint32(payload, sealSum(key, payload))
}

// unseal verifies a stored value against its key and returns its payload
// (a sub-slice of value). A mismatch wraps ErrChecksum.
func unseal(key, value []byte) ([]byte, error) {
	if len(value) < sealSize {
		return nil, fmt.Errorf("%w: %d bytes, shorter than its checksum", ErrChecksum, len(value))
	}
	payload := value[:len(value)-sealSize]
	stored := binary.LittleEndian.Uint32(value[len(payload):])
	if sum := sealSum(key, payload); sum != stored {
		return nil, fmt.Errorf("%w (CRC-32C %08x, stored %08x)", ErrChecksum, sum, stored)
	}
	return payload, nil
}

// putSealed stores payload under key, sealed. payload's spare capacity
// may be used.
func putSealed(b *bolt.Bucket, key, payload []byte) error {
	return b.Put(key, seal(key, payload))
}

// putJSON stores v as JSON under key, sealed.
func putJSON(b *bolt.Bucket, key string, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding %q: %w", key, err)
	}
	if err := putSealed(b, []byte(key), raw); err != nil {
		return fmt.Errorf("writing %q: %w", key, err)
	}
	return nil
}

// decodeJSON unseals the value stored under key and decodes its JSON
// into v.
func decodeJSON(key, value []byte, v any) error {
	payload, err := unseal(key, value)
	if err != nil {
		return err
	}
	return json.Unmarshal(payload, v)
}
