package codec

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/sluice-db/sluice/internal/types"
)

// ErrCorrupt is wrapped by every decoding error caused by malformed input,
// so callers can tell a damaged key or value from a caller mistake.
var ErrCorrupt = errors.New("codec: corrupt encoding")

// Order of one key column. Zero value = ASC NULLS LAST (Postgres default for
// ASC); DESC default in PG is NULLS FIRST, callers set it.
type Order struct {
	Desc       bool
	NullsFirst bool
}

// Column markers. They are chosen in the final (post-DESC) byte space, so
// the NULL position is exactly what NullsFirst says whatever the direction;
// only the value bytes after a valueMarker are inverted for DESC.
const (
	nullFirstMarker = 0x00
	valueMarker     = 0x01
	nullLastMarker  = 0x02
)

// EncodeKey appends the memcomparable encoding of row (typed by ts) to dst:
// bytes.Compare of two encodings equals the SQL order under orders (nil = all
// ASC NULLS LAST), column by column, consistent with types.Compare. A prefix
// of columns encodes to a byte prefix of the full key, so to build a prefix
// scan bound pass row[:k], ts[:k], orders[:k].
//
// len(row) must equal len(ts) and orders must be nil or at least as long as
// ts. A datum of the wrong Go type is an error, never a panic; on error the
// returned slice is dst unchanged.
func EncodeKey(dst []byte, row types.Row, ts []types.Type, orders []Order) ([]byte, error) {
	if err := checkShape(len(row), ts, orders); err != nil {
		return dst, err
	}
	start := len(dst)
	var err error
	for i, t := range ts {
		if dst, err = appendKeyColumn(dst, row[i], t, orderAt(orders, i)); err != nil {
			return dst[:start], fmt.Errorf("codec: key column %d: %w", i, err)
		}
	}
	return dst, nil
}

// DecodeKey decodes len(ts) key columns from the front of src and returns
// them with the bytes that follow.
//
// Key decoding is lossy in the same places the order is: a numeric comes
// back normalized (1.00 → 1, trailing fractional zeros dropped, -0 → 0), an
// interval comes back as the canonical interval of its span (months of 30
// days, then days, then microseconds, all of one sign), a float -0 comes back
// as 0 and every NaN as the canonical NaN. Values that must round-trip
// exactly are also stored with EncodeValue.
func DecodeKey(src []byte, ts []types.Type, orders []Order) (row types.Row, rest []byte, err error) {
	if err := checkShape(len(ts), ts, orders); err != nil {
		return nil, src, err
	}
	row = make(types.Row, len(ts))
	for i, t := range ts {
		if row[i], src, err = decodeKeyColumn(src, t, orderAt(orders, i)); err != nil {
			return nil, src, fmt.Errorf("codec: key column %d (%s): %w", i, t, err)
		}
	}
	return row, src, nil
}

func checkShape(n int, ts []types.Type, orders []Order) error {
	if n != len(ts) {
		return fmt.Errorf("codec: row has %d columns, types %d", n, len(ts))
	}
	if orders != nil && len(orders) < len(ts) {
		return fmt.Errorf("codec: %d orders for %d key columns", len(orders), len(ts))
	}
	return nil
}

func orderAt(orders []Order, i int) Order {
	if orders == nil {
		return Order{}
	}
	return orders[i]
}

// appendKeyColumn appends one column: its marker, then (for a non-NULL) the
// value's ascending encoding, inverted byte by byte for DESC. Inversion
// reverses the order because every value encoding is prefix-free and
// canonical: two different values first differ at a byte both contain.
func appendKeyColumn(dst []byte, d types.Datum, t types.Type, o Order) ([]byte, error) {
	if d == nil {
		if o.NullsFirst {
			return append(dst, nullFirstMarker), nil
		}
		return append(dst, nullLastMarker), nil
	}
	dst = append(dst, valueMarker)
	start := len(dst)
	dst, err := appendKeyDatum(dst, d, t)
	if err != nil {
		return dst[:start-1], err
	}
	if o.Desc {
		invert(dst[start:])
	}
	return dst, nil
}

// AppendKeyInt64 appends the key encoding of one non-NULL integer column
// under o: the bytes EncodeKey writes for it, without boxing v.
func AppendKeyInt64(dst []byte, v int64, o Order) []byte {
	dst = append(dst, valueMarker)
	start := len(dst)
	dst = appendKeyInt(dst, v)
	if o.Desc {
		invert(dst[start:])
	}
	return dst
}

// KeyInt64 decodes what AppendKeyInt64 appended under o, which must be
// exactly src; ok is false when src is not such a key.
func KeyInt64(src []byte, o Order) (v int64, ok bool) {
	if len(src) != 9 {
		return 0, false
	}
	var b [9]byte
	copy(b[:], src)
	if o.Desc {
		invert(b[1:])
	}
	if b[0] != valueMarker {
		return 0, false
	}
	return int64(binary.BigEndian.Uint64(b[1:]) ^ signBit), true
}

func invert(b []byte) {
	for i := range b {
		b[i] = ^b[i]
	}
}

// appendKeyDatum appends the ascending encoding of a non-NULL datum.
func appendKeyDatum(dst []byte, d types.Datum, t types.Type) ([]byte, error) {
	if t.ID == types.Array {
		return appendKeyArray(dst, d, t)
	}
	return appendKeyScalar(dst, d, t)
}

// appendKeyScalar is appendKeyDatum for every type but arrays. Kept apart
// because arrays recurse, and escape analysis then lets dst escape, which
// would move HashRow's stack scratch buffer to the heap.
func appendKeyScalar(dst []byte, d types.Datum, t types.Type) ([]byte, error) {
	switch t.ID {
	case types.Bool:
		if v, ok := d.(bool); ok {
			return appendKeyBool(dst, v), nil
		}
	case types.Int16, types.Int32, types.Int64:
		if v, ok := d.(int64); ok {
			return appendKeyInt(dst, v), nil
		}
	case types.Float32, types.Float64:
		if v, ok := d.(float64); ok {
			return appendKeyFloat(dst, v), nil
		}
	case types.Decimal:
		if v, ok := d.(*decimal); ok && v != nil {
			return appendKeyDecimal(dst, v)
		}
	case types.Varchar:
		if v, ok := d.(string); ok {
			return appendKeyString(dst, v), nil
		}
	case types.Bytea:
		if v, ok := d.([]byte); ok {
			return appendKeyBytes(dst, v), nil
		}
	default:
		return appendKeyTemporal(dst, d, t)
	}
	return dst, wrongDatum(d, t)
}

// appendKeyTemporal handles the date/time types and interval.
func appendKeyTemporal(dst []byte, d types.Datum, t types.Type) ([]byte, error) {
	switch t.ID {
	case types.Date:
		if v, ok := d.(types.DDate); ok {
			return appendKeyInt(dst, int64(v)), nil
		}
	case types.Time:
		if v, ok := d.(types.DTime); ok {
			return appendKeyInt(dst, int64(v)), nil
		}
	case types.Timestamp:
		if v, ok := d.(types.DTimestamp); ok {
			return appendKeyInt(dst, int64(v)), nil
		}
	case types.Timestamptz:
		if v, ok := d.(types.DTimestamptz); ok {
			return appendKeyInt(dst, int64(v)), nil
		}
	case types.Interval:
		if v, ok := d.(types.DInterval); ok {
			return appendKeyInterval(dst, v), nil
		}
	}
	return dst, wrongDatum(d, t)
}

func wrongDatum(d types.Datum, t types.Type) error {
	return fmt.Errorf("codec: datum %T is not a valid %s value", d, t)
}

// decodeKeyColumn decodes one column written by appendKeyColumn.
func decodeKeyColumn(src []byte, t types.Type, o Order) (types.Datum, []byte, error) {
	if len(src) == 0 {
		return nil, src, fmt.Errorf("%w: key ends before column", ErrCorrupt)
	}
	switch m := src[0]; {
	case m == valueMarker:
	case m == nullFirstMarker && o.NullsFirst, m == nullLastMarker && !o.NullsFirst:
		return nil, src[1:], nil
	default:
		return nil, src, fmt.Errorf("%w: bad column marker %#x", ErrCorrupt, m)
	}
	r := keyReader{b: src[1:]}
	if o.Desc {
		r.inv = 0xFF
	}
	d, err := decodeKeyDatum(&r, t)
	if err != nil {
		return nil, src, err
	}
	return d, r.b, nil
}

func decodeKeyDatum(r *keyReader, t types.Type) (types.Datum, error) {
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
		b, err := r.escaped()
		return string(b), err
	case types.Bytea:
		return r.escaped()
	case types.Date:
		v, err := r.int64()
		if err == nil && int64(int32(v)) != v {
			err = fmt.Errorf("%w: date %d out of range", ErrCorrupt, v)
		}
		return types.DDate(v), err
	case types.Time:
		v, err := r.int64()
		return types.DTime(v), err
	case types.Timestamp:
		v, err := r.int64()
		return types.DTimestamp(v), err
	case types.Timestamptz:
		v, err := r.int64()
		return types.DTimestamptz(v), err
	case types.Interval:
		return r.interval()
	case types.Array:
		return r.array(t)
	}
	return nil, fmt.Errorf("codec: no key encoding for %s", t)
}
