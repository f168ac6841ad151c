package codec

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-db/sluice/internal/types"
)

// valueReader consumes the value encoding front to back.
type valueReader struct{ b []byte }

func (r *valueReader) datum(t types.Type) (types.Datum, error) {
	switch t.ID {
	case types.Bool:
		return r.bool()
	case types.Int16, types.Int32, types.Int64:
		return r.intIn(t)
	case types.Float32, types.Float64:
		return r.float()
	case types.Decimal:
		return r.decimal()
	case types.Varchar:
		s, err := r.string()
		if err != nil {
			return nil, err
		}
		return s, nil
	case types.Bytea:
		return r.bytes()
	case types.Date:
		v, err := r.varintIn(math.MinInt32, math.MaxInt32)
		return types.DDate(v), err
	case types.Time:
		v, err := r.varint()
		return types.DTime(v), err
	case types.Timestamp:
		v, err := r.varint()
		return types.DTimestamp(v), err
	case types.Timestamptz:
		v, err := r.varint()
		return types.DTimestamptz(v), err
	case types.Interval:
		return r.interval()
	case types.Array:
		return r.array(t)
	}
	return nil, fmt.Errorf("codec: no value encoding for %s", t)
}

func (r *valueReader) bool() (types.Datum, error) {
	if len(r.b) == 0 || r.b[0] > 1 {
		return nil, fmt.Errorf("%w: bad bool", ErrCorrupt)
	}
	v := r.b[0] == 1
	r.b = r.b[1:]
	return v, nil
}

func (r *valueReader) varint() (int64, error) {
	v, n := binary.Varint(r.b)
	if n <= 0 {
		return 0, fmt.Errorf("%w: bad varint", ErrCorrupt)
	}
	r.b = r.b[n:]
	return v, nil
}

func (r *valueReader) varintIn(lo, hi int64) (int64, error) {
	v, err := r.varint()
	if err == nil && (v < lo || v > hi) {
		err = fmt.Errorf("%w: %d out of range", ErrCorrupt, v)
	}
	return v, err
}

func (r *valueReader) uvarint() (uint64, error) {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		return 0, fmt.Errorf("%w: bad uvarint", ErrCorrupt)
	}
	r.b = r.b[n:]
	return v, nil
}

func (r *valueReader) intIn(t types.Type) (types.Datum, error) {
	lo, hi := t.IntRange()
	v, err := r.varintIn(lo, hi)
	if err != nil {
		return nil, err
	}
	return v, nil
}

func (r *valueReader) float() (types.Datum, error) {
	v, err := r.float64()
	if err != nil {
		return nil, err
	}
	return v, nil
}

func (r *valueReader) float64() (float64, error) {
	if len(r.b) < 8 {
		return 0, fmt.Errorf("%w: short float", ErrCorrupt)
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(r.b))
	r.b = r.b[8:]
	return v, nil
}

// string reads a length-prefixed string, copying it once (through a
// []byte it would be copied twice).
func (r *valueReader) string() (string, error) {
	n, err := r.uvarint()
	if err != nil {
		return "", err
	}
	if n > uint64(len(r.b)) {
		return "", fmt.Errorf("%w: length %d past end", ErrCorrupt, n)
	}
	s := string(r.b[:n])
	r.b = r.b[n:]
	return s, nil
}

// bytes reads a length-prefixed byte string into a fresh slice.
func (r *valueReader) bytes() ([]byte, error) {
	n, err := r.uvarint()
	if err != nil {
		return nil, err
	}
	if n > uint64(len(r.b)) {
		return nil, fmt.Errorf("%w: length %d past end", ErrCorrupt, n)
	}
	out := make([]byte, n)
	copy(out, r.b)
	r.b = r.b[n:]
	return out, nil
}

func (r *valueReader) interval() (types.Datum, error) {
	v, err := r.intervalValue()
	if err != nil {
		return nil, err
	}
	return v, nil
}

func (r *valueReader) intervalValue() (types.DInterval, error) {
	m, err := r.varintIn(math.MinInt32, math.MaxInt32)
	if err != nil {
		return types.DInterval{}, err
	}
	d, err := r.varintIn(math.MinInt32, math.MaxInt32)
	if err != nil {
		return types.DInterval{}, err
	}
	us, err := r.varint()
	if err != nil {
		return types.DInterval{}, err
	}
	return types.DInterval{Months: int32(m), Days: int32(d), Micros: us}, nil
}

// Numeric values: a header byte (form in bits 0–1, negative in bit 2,
// coefficient-as-bytes in bit 3), the exponent as a zigzag varint, then the
// coefficient as a uvarint when it fits in 64 bits, else as a uvarint
// length and big-endian magnitude bytes. Every field of apd.Decimal is kept,
// so scale (1.00 vs 1.0), -0 and NaN payloads survive.
const (
	decFormMask = 0x03
	decNegBit   = 0x04
	decBigBit   = 0x08
)

func appendValueDecimal(dst []byte, d *decimal) ([]byte, error) {
	if d.Form > apd.NaN || d.Coeff.Sign() < 0 {
		return dst, fmt.Errorf("codec: malformed numeric (form %d, coefficient sign %d)", d.Form, d.Coeff.Sign())
	}
	h := byte(d.Form) & decFormMask
	if d.Negative {
		h |= decNegBit
	}
	big := !d.Coeff.IsUint64()
	if big {
		h |= decBigBit
	}
	dst = append(dst, h)
	dst = binary.AppendVarint(dst, int64(d.Exponent))
	if !big {
		return binary.AppendUvarint(dst, d.Coeff.Uint64()), nil
	}
	b := d.Coeff.Bytes()
	dst = binary.AppendUvarint(dst, uint64(len(b)))
	return append(dst, b...), nil
}

func (r *valueReader) decimal() (types.Datum, error) {
	d := new(decimal)
	if err := r.decimalInto(d); err != nil {
		return nil, err
	}
	return d, nil
}

// decimalInto reads a numeric into d, which must be zero.
func (r *valueReader) decimalInto(d *decimal) error {
	if len(r.b) == 0 || r.b[0]&^(decFormMask|decNegBit|decBigBit) != 0 {
		return fmt.Errorf("%w: bad numeric header", ErrCorrupt)
	}
	h := r.b[0]
	r.b = r.b[1:]
	e, err := r.varintIn(math.MinInt32, math.MaxInt32)
	if err != nil {
		return err
	}
	d.Form, d.Negative, d.Exponent = apd.Form(h&decFormMask), h&decNegBit != 0, int32(e)
	if h&decBigBit == 0 {
		u, err := r.uvarint()
		if err != nil {
			return err
		}
		d.Coeff.SetUint64(u)
		return nil
	}
	b, err := r.bytes()
	if err != nil {
		return err
	}
	d.Coeff.SetBytes(b)
	return nil
}
