package pgwire

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// Postgres's binary dates count days from 2000-01-01; Sluice's from 1970.
// (Timestamps count from 2000 in both.)
const pgEpochDays = types.TimestampEpochDays

const (
	formatText   int16 = 0
	formatBinary int16 = 1
)

const codeCharacterNotInRepertoire sqlerr.Code = "22021"

// appendValue appends the wire form of a non-NULL d, of column type t sent
// as oid, in format (text or binary).
func appendValue(dst []byte, d types.Datum, t types.Type, oid uint32, format int16) ([]byte, error) {
	if format == formatText {
		return types.FormatDatumAppend(dst, d, t), nil
	}
	return appendBinary(dst, d, oid)
}

// appendBinary appends d in the format of Postgres's send function for
// oid. Integers take the width of oid so that an int64 datum can be sent
// as int2, int4, oid or int8.
func appendBinary(dst []byte, d types.Datum, oid uint32) ([]byte, error) {
	switch x := d.(type) {
	case bool:
		if x {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case int64:
		return appendBinaryInt(dst, x, oid), nil
	case float64:
		if oid == OIDFloat4 {
			return binary.BigEndian.AppendUint32(dst, math.Float32bits(float32(x))), nil
		}
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(x)), nil
	case *apd.Decimal:
		return appendNumeric(dst, x), nil
	case string:
		return append(dst, x...), nil
	case []byte:
		return append(dst, x...), nil
	case types.DDate:
		return binary.BigEndian.AppendUint32(dst, uint32(dateToPG(x))), nil
	case types.DTime:
		return binary.BigEndian.AppendUint64(dst, uint64(x)), nil
	case types.DTimestamp:
		return binary.BigEndian.AppendUint64(dst, uint64(x)), nil // both count from 2000
	case types.DTimestamptz:
		return binary.BigEndian.AppendUint64(dst, uint64(x)), nil // both count from 2000
	case types.DInterval:
		dst = binary.BigEndian.AppendUint64(dst, uint64(x.Micros))
		dst = binary.BigEndian.AppendUint32(dst, uint32(x.Days))
		return binary.BigEndian.AppendUint32(dst, uint32(x.Months)), nil
	case types.DArray:
		return appendBinaryArray(dst, x, oid)
	}
	return dst, fmt.Errorf("pgwire: cannot send datum of Go type %T", d)
}

func appendBinaryInt(dst []byte, x int64, oid uint32) []byte {
	switch oid {
	case OIDInt2:
		return binary.BigEndian.AppendUint16(dst, uint16(x))
	case OIDInt4, OIDOid:
		return binary.BigEndian.AppendUint32(dst, uint32(x))
	}
	return binary.BigEndian.AppendUint64(dst, uint64(x))
}

// The infinities use the same sentinels in Sluice and Postgres, so they
// are not shifted between epochs.
func dateToPG(d types.DDate) int32 {
	if !d.IsFinite() {
		return int32(d)
	}
	return int32(d) - pgEpochDays
}

func dateFromPG(v int32) types.DDate {
	if v == math.MinInt32 || v == math.MaxInt32 {
		return types.DDate(v)
	}
	return types.DDate(v + pgEpochDays)
}

// decodeParam decodes one bound parameter value (non-NULL) of type t sent
// in format. Errors carry the SQLSTATE Postgres uses (22P02 for bad text,
// 22P03 for bad binary, 22021 for invalid UTF-8).
func decodeParam(b []byte, t types.Type, format int16) (types.Datum, error) {
	if format == formatText {
		s := string(b)
		if err := checkText(s); err != nil {
			return nil, err
		}
		return types.ParseDatum(s, t)
	}
	return decodeBinary(b, t)
}

func decodeBinary(b []byte, t types.Type) (types.Datum, error) {
	switch t.ID {
	case types.Bool:
		if len(b) != 1 {
			return nil, errBinary(t, b)
		}
		return b[0] != 0, nil
	case types.Int16, types.Int32, types.Int64:
		return decodeBinaryInt(b, t)
	case types.Float32, types.Float64:
		return decodeBinaryFloat(b, t)
	case types.Decimal:
		return decodeNumeric(b)
	case types.Varchar, types.Unknown:
		s := string(b)
		return s, checkText(s)
	case types.Bytea:
		return append([]byte{}, b...), nil // b aliases the read buffer
	case types.Array:
		return decodeBinaryArray(b, t)
	case types.Date:
		if len(b) != 4 {
			return nil, errBinary(t, b)
		}
		return dateFromPG(int32(binary.BigEndian.Uint32(b))), nil
	}
	return decodeBinary64(b, t)
}

// decodeBinary64 decodes the types whose binary form is built on int64.
func decodeBinary64(b []byte, t types.Type) (types.Datum, error) {
	switch t.ID {
	case types.Time:
		if len(b) != 8 {
			return nil, errBinary(t, b)
		}
		us := int64(binary.BigEndian.Uint64(b))
		if us < 0 || us > types.MicrosPerDay {
			return nil, sqlerr.New(sqlerr.InvalidBinaryRepresentation, "time out of range")
		}
		return types.DTime(us), nil
	case types.Timestamp, types.Timestamptz:
		if len(b) != 8 {
			return nil, errBinary(t, b)
		}
		us := int64(binary.BigEndian.Uint64(b)) // both count from 2000
		if (us < types.MinTimestampMicros || us >= types.EndTimestampMicros) && us != math.MinInt64 && us != math.MaxInt64 {
			return nil, sqlerr.New(sqlerr.DatetimeFieldOverflow, "timestamp out of range")
		}
		if t.ID == types.Timestamp {
			return types.DTimestamp(us), nil
		}
		return types.DTimestamptz(us), nil
	case types.Interval:
		if len(b) != 16 {
			return nil, errBinary(t, b)
		}
		return types.DInterval{
			Micros: int64(binary.BigEndian.Uint64(b)),
			Days:   int32(binary.BigEndian.Uint32(b[8:])),
			Months: int32(binary.BigEndian.Uint32(b[12:])),
		}, nil
	}
	return nil, sqlerr.Errorf(sqlerr.FeatureNotSupported, "binary parameters of type %s are not supported", t)
}

// decodeBinaryInt accepts any integer width and checks the range of t, so a
// client that sends int8 for an int4 parameter gets a range error, not a
// framing one.
func decodeBinaryInt(b []byte, t types.Type) (types.Datum, error) {
	var v int64
	switch len(b) {
	case 2:
		v = int64(int16(binary.BigEndian.Uint16(b)))
	case 4:
		v = int64(int32(binary.BigEndian.Uint32(b)))
	case 8:
		v = int64(binary.BigEndian.Uint64(b))
	default:
		return nil, errBinary(t, b)
	}
	if lo, hi := t.IntRange(); v < lo || v > hi {
		return nil, sqlerr.Errorf(sqlerr.NumericValueOutOfRange, "%s out of range", t)
	}
	return v, nil
}

func decodeBinaryFloat(b []byte, t types.Type) (types.Datum, error) {
	var v float64
	switch len(b) {
	case 4:
		v = float64(math.Float32frombits(binary.BigEndian.Uint32(b)))
	case 8:
		v = math.Float64frombits(binary.BigEndian.Uint64(b))
	default:
		return nil, errBinary(t, b)
	}
	if t.ID == types.Float32 {
		v = float64(float32(v))
	}
	return v, nil
}

func errBinary(t types.Type, b []byte) error {
	return sqlerr.Errorf(sqlerr.InvalidBinaryRepresentation,
		"incorrect binary data format: %d bytes for type %s", len(b), t)
}
