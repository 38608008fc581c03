package gguf

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/rollout-rl/rollout/policy/internal/kernel"
)

// Q8_0 layout: each block of 32 consecutive elements of a row is a
// binary16 scale d and 32 int8 values q, the elements being d·q.
const (
	q8Block      = 32
	q8BlockBytes = 2 + q8Block
)

// Encode encodes float32 values as type t: F32 bits, binary16 rounded to
// nearest even, or Q8_0 blocks quantized as ggml's reference quantizer
// does (d = max|x|/127 rounded to binary16, q = round(x/d) half away from
// zero, computed as x·(1/d) in float32). Q8_0 needs a multiple of 32 values.
func Encode(t Type, v []float32) ([]byte, error) {
	n, err := t.DataSize(len(v))
	if err != nil {
		return nil, err
	}
	out := make([]byte, n)
	switch t {
	case F32:
		for i, f := range v {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(f))
		}
	case F16:
		h := make([]uint16, len(v))
		kernel.ToF16(h, v)
		for i, x := range h {
			binary.LittleEndian.PutUint16(out[2*i:], x)
		}
	case Q8_0:
		h := make([]uint16, 1)
		for b := 0; b < len(v)/q8Block; b++ {
			x := v[b*q8Block : (b+1)*q8Block]
			var amax float32
			for _, f := range x {
				amax = max(amax, float32(math.Abs(float64(f))))
			}
			d := amax / 127
			var id float32
			if d != 0 {
				id = 1 / d
			}
			kernel.ToF16(h, []float32{d})
			blk := out[b*q8BlockBytes : (b+1)*q8BlockBytes]
			binary.LittleEndian.PutUint16(blk, h[0])
			for i, f := range x {
				blk[2+i] = byte(int8(math.Round(float64(f * id))))
			}
		}
	}
	return out, nil
}

// Decode decodes n values of type t from b (as Encode writes them).
func Decode(t Type, b []byte, n int) ([]float32, error) {
	size, err := t.DataSize(n)
	if err != nil {
		return nil, err
	}
	if len(b) != size {
		return nil, fmt.Errorf("%d values of %s take %d bytes, got %d", n, t, size, len(b))
	}
	v := make([]float32, n)
	switch t {
	case F32:
		for i := range v {
			v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
	case F16:
		for i := range v {
			v[i] = kernel.F16ToF32(binary.LittleEndian.Uint16(b[2*i:]))
		}
	case Q8_0:
		for blk := 0; blk < n/q8Block; blk++ {
			s := b[blk*q8BlockBytes:]
			d := kernel.F16ToF32(binary.LittleEndian.Uint16(s))
			for i := range q8Block {
				v[blk*q8Block+i] = d * float32(int8(s[2+i]))
			}
		}
	}
	return v, nil
}
