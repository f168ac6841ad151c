package types

import (
	"strconv"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// Text formats, step by step:
//
//  1. ParseDatum dispatches on the SQL type to one input function per
//     family: format_number.go (bool, integers, floats), decimal.go
//     (numeric), format_bytea.go, datetime_parse.go + datetime_input.go
//     (date, time, timestamp, timestamptz share one lexer), and
//     interval_parse.go + interval_iso.go.
//  2. Each input function accepts what the Postgres 15 input function of
//     the same type accepts (the common forms; see each file) and fails
//     with the SQLSTATE and message Postgres would send.
//  3. FormatDatumAppend dispatches on the Go type of the datum and appends
//     Postgres's output text (datetime_format.go, interval.go, ...) to a
//     caller's buffer without allocating for fixed-size types; FormatDatum
//     wraps it for callers that want a string.
//  4. Output is always valid input for the same type and reads back as an
//     equal value (format_prop_test.go checks this over each type's range).

// FormatDatum renders d in Postgres's text output format for type t
// (DateStyle ISO, TimeZone UTC, IntervalStyle postgres, extra_float_digits
// 1). NULL renders as "NULL" (pgwire sends NULL out of band and never calls
// this for it).
func FormatDatum(d Datum, t Type) string {
	if s, ok := d.(string); ok {
		return s // varchar needs no copy
	}
	var buf [64]byte
	return string(FormatDatumAppend(buf[:0], d, t))
}

// FormatDatumAppend appends the text output form of d to dst and returns
// the extended buffer. pgwire calls it with one reused buffer per row so
// that a result set does not allocate a string per value.
func FormatDatumAppend(dst []byte, d Datum, t Type) []byte {
	switch x := d.(type) {
	case nil:
		return append(dst, "NULL"...)
	case bool:
		if x {
			return append(dst, 't')
		}
		return append(dst, 'f')
	case int64:
		return strconv.AppendInt(dst, x, 10)
	case float64:
		return appendFloat(dst, x, t.ID == Float32)
	case *apd.Decimal:
		return appendDecimal(dst, x)
	case string:
		return append(dst, x...)
	case []byte:
		return appendBytea(dst, x)
	case DDate:
		return appendDate(dst, x)
	case DTime:
		return appendTime(dst, x)
	case DTimestamp:
		return appendTimestamp(dst, int64(x), false)
	case DTimestamptz:
		return appendTimestamp(dst, int64(x), true)
	case DInterval:
		return appendInterval(dst, x)
	case DArray:
		return appendArray(dst, x, t.ElemType())
	}
	// A Datum of a Go type outside the fixed set is a bug in the caller.
	panic("types: FormatDatumAppend of unknown datum type")
}

// ParseDatum parses s, written in Postgres's text input format (what a
// quoted literal or a COPY text field holds), as a value of type t. Errors
// are *sqlerr.Error with the SQLSTATE Postgres would report. An Unknown
// type keeps the text as is, as Postgres does for an untyped literal.
func ParseDatum(s string, t Type) (Datum, error) {
	switch t.ID {
	case Bool:
		return parseBool(s)
	case Int16, Int32, Int64:
		return parseInt(s, t)
	case Float32, Float64:
		return parseFloat(s, t.ID == Float32)
	case Decimal:
		return parseDecimal(s)
	case Varchar, Unknown:
		return s, nil
	case Bytea:
		return parseBytea(s)
	case Date:
		return parseDate(s)
	case Time:
		return parseTime(s)
	case Timestamp:
		return parseTimestamp(s)
	case Timestamptz:
		return parseTimestamptz(s)
	case Interval:
		return parseInterval(s)
	case Array:
		if t.Valid() {
			return parseArray(s, t.ElemType())
		}
	}
	return nil, sqlerr.Errorf(sqlerr.FeatureNotSupported, "cannot parse values of %s", t)
}

// errSyntax is Postgres's "invalid input syntax" error for a type whose
// name in the message is typeName.
func errSyntax(typeName, s string) error {
	return sqlerr.Errorf(sqlerr.InvalidTextRepresentation,
		"invalid input syntax for type %s: \"%s\"", typeName, s)
}

// errRange is Postgres's error for a number that does not fit its type.
func errRange(typeName, s string) error {
	return sqlerr.Errorf(sqlerr.NumericValueOutOfRange,
		"value \"%s\" is out of range for type %s", s, typeName)
}
