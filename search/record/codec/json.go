package codec

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// AppendFloats appends xs separated by sep, each in the shortest decimal
// form that reads back to the same value; non-finite values are null when
// json is true and NaN/±Inf otherwise (as in CSV). A value equal to the one
// before it (advantages are constant per segment) copies that one's digits
// instead of formatting again.
func AppendFloats[F float32 | float64](b []byte, xs []F, sep byte, json bool) []byte {
	prec := 64
	if _, ok := any(xs).([]float32); ok {
		prec = 32
	}
	prevBits, ps, pe := uint64(0), 0, -1
	for i, x := range xs {
		if i > 0 {
			b = append(b, sep)
		}
		if bits := math.Float64bits(float64(x)); pe >= 0 && bits == prevBits {
			b = append(b, b[ps:pe]...)
			continue
		} else {
			prevBits = bits
		}
		ps = len(b)
		if json {
			b = appendJSONFloat(b, float64(x), prec)
		} else {
			b = strconv.AppendFloat(b, float64(x), 'g', -1, prec)
		}
		pe = len(b)
	}
	return b
}

// AppendJSONFloat appends x as JSON: null when not finite, an integer
// when it is one, else its shortest form.
func AppendJSONFloat(b []byte, x float64) []byte { return appendJSONFloat(b, x, 64) }

// appendJSONFloat is AppendJSONFloat at the given precision (32 or 64
// bits).
func appendJSONFloat(b []byte, x float64, bits int) []byte {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return append(b, "null"...)
	}
	if x == math.Trunc(x) && math.Abs(x) < 1e15 {
		return strconv.AppendInt(b, int64(x), 10)
	}
	return strconv.AppendFloat(b, x, 'g', -1, bits)
}

// AppendJSONString appends s as a JSON string; invalid UTF-8 becomes
// U+FFFD.
func AppendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
