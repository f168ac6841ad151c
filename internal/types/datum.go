package types

import (
	"fmt"

	"github.com/cockroachdb/apd/v3"
)

// Datum is one SQL value. Its dynamic Go type is fixed by its SQL type:
//
//	Bool                   bool
//	Int16, Int32, Int64    int64 (range checked against the SQL type)
//	Float32, Float64       float64 (real values are rounded through float32)
//	Decimal                *apd.Decimal (never mutated after creation)
//	Varchar                string
//	Bytea                  []byte (never mutated after creation)
//	Date                   DDate
//	Time                   DTime
//	Timestamp              DTimestamp
//	Timestamptz            DTimestamptz
//	Interval               DInterval
//	Array                  DArray (elements of the element type)
//
// SQL NULL is the nil Datum, whatever the type.
type Datum = any

// Row is one row of datums, in column order.
type Row []Datum

// DDate is a date: days since 1970-01-01.
type DDate int32

// DTime is a time of day: microseconds since midnight.
type DTime int64

// DTimestamp is a timestamp without time zone: microseconds since
// 2000-01-01 00:00:00, Postgres's epoch (so its range, to 294276 AD, fits
// an int64, and its binary wire format is the value itself).
type DTimestamp int64

// DTimestamptz is an instant: microseconds since 2000-01-01 00:00:00 UTC.
type DTimestamptz int64

// DInterval is a Postgres interval: months, days and microseconds kept apart,
// because a month is not a fixed number of days.
type DInterval struct {
	Months int32
	Days   int32
	Micros int64
}

// Microseconds per unit, as Postgres counts them for intervals.
const (
	MicrosPerSecond = int64(1_000_000)
	MicrosPerMinute = 60 * MicrosPerSecond
	MicrosPerHour   = 60 * MicrosPerMinute
	MicrosPerDay    = 24 * MicrosPerHour
	DaysPerMonth    = 30
)

// CheckDatum reports an error if d is not a valid Go value for type t.
// nil (NULL) is valid for every type.
func CheckDatum(d Datum, t Type) error {
	if d == nil {
		return nil
	}
	ok := false
	switch t.ID {
	case Bool:
		_, ok = d.(bool)
	case Int16, Int32, Int64:
		_, ok = d.(int64)
	case Float32, Float64:
		_, ok = d.(float64)
	case Decimal:
		_, ok = d.(*apd.Decimal)
	case Varchar:
		_, ok = d.(string)
	case Bytea:
		_, ok = d.([]byte)
	case Date:
		_, ok = d.(DDate)
	case Time:
		_, ok = d.(DTime)
	case Timestamp:
		_, ok = d.(DTimestamp)
	case Timestamptz:
		_, ok = d.(DTimestamptz)
	case Interval:
		_, ok = d.(DInterval)
	case Array:
		ok = checkArray(d, t.ElemType())
	}
	if !ok {
		return fmt.Errorf("datum %T is not a valid %s value", d, t)
	}
	return nil
}
