package types

import "fmt"

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
	numIDs
)

// Type is a SQL data type. It is a small value type so it can be compared
// with ==; parameters (varchar length, numeric precision) are enforced when a
// value is cast and are not carried here.
type Type struct {
	ID ID
}

// Convenient Type values.
var (
	TUnknown     = Type{Unknown}
	TBool        = Type{Bool}
	TInt16       = Type{Int16}
	TInt32       = Type{Int32}
	TInt64       = Type{Int64}
	TFloat32     = Type{Float32}
	TFloat64     = Type{Float64}
	TDecimal     = Type{Decimal}
	TVarchar     = Type{Varchar}
	TBytea       = Type{Bytea}
	TDate        = Type{Date}
	TTime        = Type{Time}
	TTimestamp   = Type{Timestamp}
	TTimestamptz = Type{Timestamptz}
	TInterval    = Type{Interval}
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
}

// String returns the Postgres name of the type.
func (t Type) String() string {
	if t.ID < numIDs {
		return typeNames[t.ID]
	}
	return fmt.Sprintf("type(%d)", t.ID)
}

// Valid reports whether the type is one Sluice knows.
func (t Type) Valid() bool { return t.ID < numIDs }

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

// ParseTypeName resolves a Postgres type name (lower case) to a Type.
func ParseTypeName(name string) (Type, bool) {
	t, ok := typeAliases[name]
	return t, ok
}
