package codec

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/sluice-db/sluice/internal/types"
)

// Value encoding of a row (not order preserving, exact):
//
//	null bitmap: ceil(n/8) bytes, bit i%8 of byte i/8 set = column i NULL
//	then, for each non-NULL column in order, its compact form:
//	  bool                   1 byte
//	  ints, date/time types  zigzag varint
//	  floats                 8 bytes little-endian IEEE bits (exact, NaN payload kept)
//	  numeric                see appendValueDecimal
//	  varchar, bytea         uvarint length, bytes
//	  interval               zigzag varints months, days, micros
//
// The column types are not stored: the reader must know them (the catalog
// does).

// EncodeValue appends the value encoding of row, typed by ts, to dst. A
// datum of the wrong Go type is an error; on error dst is returned unchanged.
func EncodeValue(dst []byte, row types.Row, ts []types.Type) ([]byte, error) {
	if len(row) != len(ts) {
		return dst, fmt.Errorf("codec: row has %d columns, types %d", len(row), len(ts))
	}
	start := len(dst)
	nb := (len(ts) + 7) / 8
	for range nb {
		dst = append(dst, 0)
	}
	var err error
	for i, d := range row {
		if d == nil {
			dst[start+i/8] |= 1 << (i % 8)
			continue
		}
		if dst, err = appendValueDatum(dst, d, ts[i]); err != nil {
			return dst[:start], fmt.Errorf("codec: value column %d: %w", i, err)
		}
	}
	return dst, nil
}

func appendValueDatum(dst []byte, d types.Datum, t types.Type) ([]byte, error) {
	switch t.ID {
	case types.Bool:
		if v, ok := d.(bool); ok {
			return appendKeyBool(dst, v), nil
		}
	case types.Int16, types.Int32, types.Int64:
		if v, ok := d.(int64); ok {
			return binary.AppendVarint(dst, v), nil
		}
	case types.Float32, types.Float64:
		if v, ok := d.(float64); ok {
			return binary.LittleEndian.AppendUint64(dst, math.Float64bits(v)), nil
		}
	case types.Decimal:
		if v, ok := d.(*decimal); ok && v != nil {
			return appendValueDecimal(dst, v)
		}
	case types.Varchar:
		if v, ok := d.(string); ok {
			return append(binary.AppendUvarint(dst, uint64(len(v))), v...), nil
		}
	case types.Bytea:
		if v, ok := d.([]byte); ok {
			return append(binary.AppendUvarint(dst, uint64(len(v))), v...), nil
		}
	case types.Array:
		return appendValueArray(dst, d, t)
	default:
		return appendValueTemporal(dst, d, t)
	}
	return dst, wrongDatum(d, t)
}

func appendValueTemporal(dst []byte, d types.Datum, t types.Type) ([]byte, error) {
	switch t.ID {
	case types.Date:
		if v, ok := d.(types.DDate); ok {
			return binary.AppendVarint(dst, int64(v)), nil
		}
	case types.Time:
		if v, ok := d.(types.DTime); ok {
			return binary.AppendVarint(dst, int64(v)), nil
		}
	case types.Timestamp:
		if v, ok := d.(types.DTimestamp); ok {
			return binary.AppendVarint(dst, int64(v)), nil
		}
	case types.Timestamptz:
		if v, ok := d.(types.DTimestamptz); ok {
			return binary.AppendVarint(dst, int64(v)), nil
		}
	case types.Interval:
		if v, ok := d.(types.DInterval); ok {
			dst = binary.AppendVarint(dst, int64(v.Months))
			dst = binary.AppendVarint(dst, int64(v.Days))
			return binary.AppendVarint(dst, v.Micros), nil
		}
	}
	return dst, wrongDatum(d, t)
}

// DecodeValue decodes a row written by EncodeValue with the same types. The
// round trip is exact (numeric scale, interval fields, float bits). Bytes
// and strings are copied, never aliasing src. Any malformed input —
// truncated, trailing bytes, NULL bits past the last column, out-of-range
// values — is an error wrapping ErrCorrupt.
func DecodeValue(src []byte, ts []types.Type) (types.Row, error) {
	nb := (len(ts) + 7) / 8
	if len(src) < nb {
		return nil, fmt.Errorf("%w: value shorter than its null bitmap", ErrCorrupt)
	}
	if extra := len(ts) % 8; extra != 0 && src[nb-1]>>extra != 0 {
		return nil, fmt.Errorf("%w: null bit past the last column", ErrCorrupt)
	}
	r := valueReader{b: src[nb:]}
	row := make(types.Row, len(ts))
	for i, t := range ts {
		if src[i/8]&(1<<(i%8)) != 0 {
			continue
		}
		d, err := r.datum(t)
		if err != nil {
			return nil, fmt.Errorf("codec: value column %d (%s): %w", i, t, err)
		}
		row[i] = d
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes after value", ErrCorrupt, len(r.b))
	}
	return row, nil
}
