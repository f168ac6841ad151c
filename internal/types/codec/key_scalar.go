package codec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/sluice-db/sluice/internal/types"
)

// Ascending encodings of the fixed-width types and of strings.
//
// Every integer width (and every date/time type, which are integers) uses
// the same 8 bytes, so a smallint key and a bigint key of equal value are
// byte-equal and keys survive a column being widened.

const signBit = 1 << 63

func appendKeyBool(dst []byte, v bool) []byte {
	if v {
		return append(dst, 1)
	}
	return append(dst, 0)
}

// appendKeyInt writes v big-endian with the sign bit flipped, which turns
// two's complement order into unsigned byte order.
func appendKeyInt(dst []byte, v int64) []byte {
	return binary.BigEndian.AppendUint64(dst, uint64(v)^signBit)
}

// canonicalNaN is the one NaN bit pattern keys use (positive quiet NaN), so
// that every NaN encodes, compares and hashes alike.
const canonicalNaN = 0x7FF8000000000000

// appendKeyFloat maps IEEE bits to an unsigned order: negatives have every
// bit inverted (larger magnitude → smaller), non-negatives get the sign bit
// set. -0 is folded into 0 and NaN into canonicalNaN, which lands above
// +Inf, as Postgres orders it.
func appendKeyFloat(dst []byte, v float64) []byte {
	var b uint64
	switch {
	case math.IsNaN(v):
		b = canonicalNaN
	case v == 0:
		b = 0
	default:
		b = math.Float64bits(v)
	}
	if b&signBit != 0 {
		b = ^b
	} else {
		b |= signBit
	}
	return binary.BigEndian.AppendUint64(dst, b)
}

func floatFromKey(u uint64) float64 {
	if u&signBit != 0 {
		return math.Float64frombits(u &^ signBit)
	}
	return math.Float64frombits(^u)
}

// Strings escape 0x00 as 0x00 0xFF and end with 0x00 0x01. The terminator
// sorts below every escaped or plain continuation byte, so a string sorts
// before its extensions, and no encoding is a prefix of another.
const (
	escByte  = 0x00
	escZero  = 0xFF
	escTerm  = 0x01
	termSize = 2
)

func appendKeyString(dst []byte, s string) []byte {
	for {
		i := indexZero(s)
		if i < 0 {
			break
		}
		dst = append(dst, s[:i]...)
		dst = append(dst, escByte, escZero)
		s = s[i+1:]
	}
	dst = append(dst, s...)
	return append(dst, escByte, escTerm)
}

func appendKeyBytes(dst []byte, b []byte) []byte {
	for {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			break
		}
		dst = append(dst, b[:i]...)
		dst = append(dst, escByte, escZero)
		b = b[i+1:]
	}
	dst = append(dst, b...)
	return append(dst, escByte, escTerm)
}

func indexZero(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return i
		}
	}
	return -1
}

// keyReader reads one column's value bytes, undoing the DESC inversion on
// the fly (inv is 0xFF for DESC, 0 for ASC) so decoding never copies the
// input first.
type keyReader struct {
	b   []byte
	inv byte
}

func short(what string) error {
	return fmt.Errorf("%w: key ends inside %s", ErrCorrupt, what)
}

func (r *keyReader) byte() (byte, error) {
	if len(r.b) == 0 {
		return 0, short("value")
	}
	c := r.b[0] ^ r.inv
	r.b = r.b[1:]
	return c, nil
}

func (r *keyReader) uint64() (uint64, error) {
	if len(r.b) < 8 {
		return 0, short("fixed-width value")
	}
	u := binary.BigEndian.Uint64(r.b)
	if r.inv != 0 {
		u = ^u
	}
	r.b = r.b[8:]
	return u, nil
}

func (r *keyReader) int64() (int64, error) {
	u, err := r.uint64()
	return int64(u ^ signBit), err
}

func (r *keyReader) bool() (types.Datum, error) {
	c, err := r.byte()
	if err != nil {
		return nil, err
	}
	if c > 1 {
		return nil, fmt.Errorf("%w: bool byte %#x", ErrCorrupt, c)
	}
	return c == 1, nil
}

func (r *keyReader) intIn(t types.Type) (types.Datum, error) {
	v, err := r.int64()
	if err != nil {
		return nil, err
	}
	if lo, hi := t.IntRange(); v < lo || v > hi {
		return nil, fmt.Errorf("%w: %d out of range for %s", ErrCorrupt, v, t)
	}
	return v, nil
}

func (r *keyReader) float() (types.Datum, error) {
	u, err := r.uint64()
	if err != nil {
		return nil, err
	}
	return floatFromKey(u), nil
}

// escaped decodes an escaped string into a fresh slice (never aliasing the
// input, which may be a store buffer that is reused).
func (r *keyReader) escaped() ([]byte, error) {
	esc := escByte ^ r.inv
	out := make([]byte, 0, 16)
	for {
		i := bytes.IndexByte(r.b, esc)
		if i < 0 || i+1 >= len(r.b) {
			return nil, short("string")
		}
		out = appendXor(out, r.b[:i], r.inv)
		next := r.b[i+1] ^ r.inv
		r.b = r.b[i+termSize:]
		switch next {
		case escTerm:
			return out, nil
		case escZero:
			out = append(out, 0)
		default:
			return nil, fmt.Errorf("%w: bad string escape %#x", ErrCorrupt, next)
		}
	}
}

func appendXor(dst, src []byte, x byte) []byte {
	if x == 0 {
		return append(dst, src...)
	}
	for _, c := range src {
		dst = append(dst, c^x)
	}
	return dst
}
