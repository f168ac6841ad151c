package types

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/cockroachdb/apd/v3"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

// Modifier is a column's type modifier, Postgres's typmod: numeric(p, s)
// or varchar(n). It is not part of Type (a Type compares with ==, and
// expressions compute with plain numeric and text); it is enforced where
// a value is stored into a column, and by explicit casts.
type Modifier struct {
	// Precision and Scale of numeric(p, s); Precision 0 means none.
	Precision int32 `json:",omitempty"`
	Scale     int32 `json:",omitempty"`
	// Length of varchar(n); 0 means none.
	Length int32 `json:",omitempty"`
	// Frac is the fractional-second digits of timestamp(p), timestamptz(p)
	// and time(p), when HasFrac.
	Frac    int32 `json:",omitempty"`
	HasFrac bool  `json:",omitempty"`
	// IntervalFields is an interval's qualifier (interval_fields.go), 0
	// for none; an interval's precision is Frac.
	IntervalFields int32 `json:",omitempty"`
}

// Postgres's numeric typmod limits.
const (
	MaxNumericPrecision = 1000
	minNumericScale     = -1000
	maxNumericScale     = 1000
	maxVarcharLength    = 10485760
)

// NewNumericModifier checks numeric(p, s) as Postgres does (22023).
func NewNumericModifier(p, s int32) (Modifier, error) {
	if p < 1 || p > MaxNumericPrecision {
		return Modifier{}, sqlerr.Errorf(sqlerr.Code("22023"), "NUMERIC precision %d must be between 1 and %d", p, MaxNumericPrecision)
	}
	if s < minNumericScale || s > maxNumericScale {
		return Modifier{}, sqlerr.Errorf(sqlerr.Code("22023"), "NUMERIC scale %d must be between %d and %d", s, minNumericScale, maxNumericScale)
	}
	return Modifier{Precision: p, Scale: s}, nil
}

// NewLengthModifier checks varchar(n) (22023).
func NewLengthModifier(n int32) (Modifier, error) {
	if n < 1 || n > maxVarcharLength {
		return Modifier{}, sqlerr.Errorf(sqlerr.Code("22023"), "length for type varchar must be between 1 and %d", maxVarcharLength)
	}
	return Modifier{Length: n}, nil
}

// NewFracModifier checks the precision of timestamp(p) and time(p): 0 to 6
// digits (Postgres lowers a larger one to 6 with a warning).
func NewFracModifier(p int32) (Modifier, error) {
	if p < 0 {
		return Modifier{}, sqlerr.Errorf(sqlerr.Code("22023"), "TIMESTAMP(%d) precision must not be negative", p)
	}
	return Modifier{Frac: min(p, 6), HasFrac: true}, nil
}

// IsZero reports whether m modifies nothing.
func (m Modifier) IsZero() bool { return m == Modifier{} }

// TypeString prints t with the modifier, as Postgres's format_type does.
func (m Modifier) TypeString(t Type) string {
	switch {
	case m.Precision > 0 && t.ID == Decimal:
		return fmt.Sprintf("numeric(%d,%d)", m.Precision, m.Scale)
	case m.Length > 0 && t.ID == Varchar:
		return fmt.Sprintf("character varying(%d)", m.Length)
	case t.ID == Interval:
		return intervalTypeString(m)
	case m.HasFrac:
		name, rest, _ := strings.Cut(t.String(), " ")
		return fmt.Sprintf("%s(%d) %s", name, m.Frac, rest)
	}
	return t.String()
}

// Apply enforces m on d of type t. explicit is a cast (varchar(n)
// truncates); otherwise it is a store into a column (too long is 22001).
// numeric(p, s) rounds to s places, half away from zero, and refuses a
// value that then needs more than p digits (22003).
func (m Modifier) Apply(d Datum, t Type, explicit bool) (Datum, error) {
	if d == nil || m.IsZero() {
		return d, nil
	}
	switch {
	case t.ID == Decimal && m.Precision > 0:
		return roundToTypmod(d.(*apd.Decimal), m.Precision, m.Scale)
	case t.ID == Varchar && m.Length > 0:
		return limitLength(d.(string), m.Length, explicit)
	case t.ID == Interval:
		iv := truncateInterval(d.(DInterval), m.IntervalFields)
		if m.HasFrac {
			iv = roundIntervalFrac(iv, m.Frac)
		}
		return iv, nil
	case m.HasFrac:
		return roundFrac(d, m.Frac), nil
	}
	return d, nil
}

// roundFrac rounds a time value's microseconds to frac digits, half away
// from zero, as Postgres's AdjustTimestampForTypmod does.
func roundFrac(d Datum, frac int32) Datum {
	unit := int64(1)
	for i := frac; i < 6; i++ {
		unit *= 10
	}
	r := func(us int64) int64 {
		if us >= 0 {
			return (us + unit/2) / unit * unit
		}
		return -((-us + unit/2) / unit * unit)
	}
	switch v := d.(type) {
	case DTimestamp:
		return DTimestamp(r(int64(v)))
	case DTimestamptz:
		return DTimestamptz(r(int64(v)))
	case DTime:
		return DTime(r(int64(v)))
	}
	return d
}

func roundToTypmod(x *apd.Decimal, p, s int32) (*apd.Decimal, error) {
	if x.Form != apd.Finite {
		if x.Form == apd.NaN {
			return x, nil
		}
		return nil, sqlerr.Errorf(sqlerr.NumericValueOutOfRange, "numeric field overflow: a field with precision %d, scale %d cannot hold an infinite value", p, s)
	}
	c := DecimalContext()
	c.Precision = uint32(max(int64(x.NumDigits())+int64(x.Exponent)+int64(max(s, 0))+2, 1))
	d := new(apd.Decimal)
	if _, err := c.Quantize(d, x, -s); err != nil {
		return nil, overflowErr(p, s)
	}
	// Digits left of the point after rounding must fit in p - s.
	if !d.IsZero() && int64(d.NumDigits())+int64(d.Exponent) > int64(p-s) {
		return nil, overflowErr(p, s)
	}
	if d.IsZero() {
		d.Negative = false
	}
	return d, nil
}

func overflowErr(p, s int32) error {
	return sqlerr.Errorf(sqlerr.NumericValueOutOfRange,
		"numeric field overflow: a field with precision %d, scale %d must round to an absolute value less than 10^%d", p, s, p-s)
}

func limitLength(v string, n int32, explicit bool) (string, error) {
	if utf8.RuneCountInString(v) <= int(n) {
		return v, nil
	}
	cut := 0
	for k := int32(0); k < n; k++ {
		_, size := utf8.DecodeRuneInString(v[cut:])
		cut += size
	}
	// As in Postgres, a store may drop excess trailing spaces silently.
	if !explicit && strings.TrimRight(v[cut:], " ") != "" {
		return "", sqlerr.Errorf(sqlerr.Code("22001"), "value too long for type character varying(%d)", n)
	}
	return v[:cut], nil
}
