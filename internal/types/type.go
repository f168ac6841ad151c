package types

import (
	"fmt"
	"strings"
)

// ID names a SQL data type.
type ID uint8

// The SQL types Sluice supports. The zero ID is Unknown (an untyped NULL
// literal before binding).
const (
	Unknown ID = iota
	Bool
	Int16
	Int32
	Int64
	Float32
	Float64
	Decimal
	Varchar
	Bytea
	Date
	Time
	Timestamp
	Timestamptz
	Interval
	// Array is a one-dimensional array; Type.Elem names the element type.
	Array
	numIDs
)

// Type is a SQL data type. It is a small value type so it can be compared
// with ==; parameters (varchar length, numeric precision) are enforced when a
// value is cast and are not carried here. Elem is the element type of an
// Array and zero for every other type, so integer[] == integer[] and
// integer[] != text[] with plain ==.
type Type struct {
	ID   ID
	Elem ID `json:",omitempty"`
}

// Convenient Type values.
var (
	TUnknown     = Type{ID: Unknown}
	TBool        = Type{ID: Bool}
	TInt16       = Type{ID: Int16}
	TInt32       = Type{ID: Int32}
	TInt64       = Type{ID: Int64}
	TFloat32     = Type{ID: Float32}
	TFloat64     = Type{ID: Float64}
	TDecimal     = Type{ID: Decimal}
	TVarchar     = Type{ID: Varchar}
	TBytea       = Type{ID: Bytea}
	TDate        = Type{ID: Date}
	TTime        = Type{ID: Time}
	TTimestamp   = Type{ID: Timestamp}
	TTimestamptz = Type{ID: Timestamptz}
	TInterval    = Type{ID: Interval}
)

var typeNames = [numIDs]string{
	Unknown:     "unknown",
	Bool:        "boolean",
	Int16:       "smallint",
	Int32:       "integer",
	Int64:       "bigint",
	Float32:     "real",
	Float64:     "double precision",
	Decimal:     "numeric",
	Varchar:     "character varying",
	Bytea:       "bytea",
	Date:        "date",
	Time:        "time without time zone",
	Timestamp:   "timestamp without time zone",
	Timestamptz: "timestamp with time zone",
	Interval:    "interval",
	Array:       "array",
}

// String returns the Postgres name of the type.
func (t Type) String() string {
	if t.ID == Array {
		return t.ElemType().String() + "[]"
	}
	if t.ID < numIDs {
		return typeNames[t.ID]
	}
	return fmt.Sprintf("type(%d)", t.ID)
}

// Valid reports whether the type is one Sluice knows: a scalar type, or an
// array of a known scalar type other than unknown (arrays do not nest).
func (t Type) Valid() bool {
	if t.ID == Array {
		return t.Elem != Unknown && t.Elem != Array && t.Elem < numIDs
	}
	return t.ID < numIDs && t.Elem == 0
}

// ArrayOf returns the type of one-dimensional arrays of elem.
func ArrayOf(elem Type) Type { return Type{ID: Array, Elem: elem.ID} }

// IsArray reports whether t is an array type.
func (t Type) IsArray() bool { return t.ID == Array }

// ElemType returns the element type of an array type (unknown for others).
func (t Type) ElemType() Type {
	if t.ID != Array {
		return TUnknown
	}
	return Type{ID: t.Elem}
}

// IsInteger reports whether the type is smallint, integer or bigint.
func (t Type) IsInteger() bool { return t.ID == Int16 || t.ID == Int32 || t.ID == Int64 }

// IsFloat reports whether the type is real or double precision.
func (t Type) IsFloat() bool { return t.ID == Float32 || t.ID == Float64 }

// IsNumeric reports whether the type is any number type.
func (t Type) IsNumeric() bool { return t.IsInteger() || t.IsFloat() || t.ID == Decimal }

// IntRange returns the inclusive range of an integer type.
func (t Type) IntRange() (lo, hi int64) {
	switch t.ID {
	case Int16:
		return -1 << 15, 1<<15 - 1
	case Int32:
		return -1 << 31, 1<<31 - 1
	default:
		return -1 << 63, 1<<63 - 1
	}
}

// typeAliases maps the spellings Postgres accepts to types.
var typeAliases = map[string]Type{
	"boolean": TBool, "bool": TBool,
	"smallint": TInt16, "int2": TInt16,
	"integer": TInt32, "int": TInt32, "int4": TInt32,
	"bigint": TInt64, "int8": TInt64,
	"real": TFloat32, "float4": TFloat32,
	"double precision": TFloat64, "float8": TFloat64, "double": TFloat64, "float": TFloat64,
	"numeric": TDecimal, "decimal": TDecimal,
	"varchar": TVarchar, "character varying": TVarchar, "text": TVarchar, "string": TVarchar,
	"char": TVarchar, "character": TVarchar, "bpchar": TVarchar, "name": TVarchar,
	"bytea": TBytea,
	"date":  TDate,
	"time":  TTime, "time without time zone": TTime,
	"timestamp": TTimestamp, "timestamp without time zone": TTimestamp,
	"timestamptz": TTimestamptz, "timestamp with time zone": TTimestamptz,
	"interval": TInterval,
}

// ParseTypeName resolves a Postgres type name (lower case) to a Type. A
// trailing "[]" (or Postgres's leading underscore, _int4) names the array
// type of the element.
func ParseTypeName(name string) (Type, bool) {
	if elem, ok := strings.CutSuffix(name, "[]"); ok {
		return parseArrayOf(strings.TrimSpace(elem))
	}
	if elem, ok := strings.CutPrefix(name, "_"); ok {
		return parseArrayOf(elem)
	}
	t, ok := typeAliases[name]
	return t, ok
}

func parseArrayOf(elem string) (Type, bool) {
	t, ok := typeAliases[elem]
	if !ok || t.ID == Unknown {
		return Type{}, false
	}
	return ArrayOf(t), true
}
