package types

import (
	"math"
	"testing"

	"github.com/cockroachdb/apd/v3"
	"pgregory.net/rapid"
)

// genDatum draws a random non-NULL value of type t, covering each type's
// whole range and its special values.
func genDatum(t Type) *rapid.Generator[Datum] {
	return rapid.Custom(func(rt *rapid.T) Datum {
		switch t.ID {
		case Bool:
			return rapid.Bool().Draw(rt, "b")
		case Int16, Int32, Int64:
			lo, hi := t.IntRange()
			return rapid.Int64Range(lo, hi).Draw(rt, "i")
		case Float32:
			return float64(math.Float32frombits(rapid.Uint32().Draw(rt, "f32")))
		case Float64:
			return math.Float64frombits(rapid.Uint64().Draw(rt, "f64"))
		case Decimal:
			return genDecimal(rt)
		case Varchar:
			return rapid.String().Draw(rt, "s")
		case Bytea:
			return rapid.SliceOf(rapid.Byte()).Draw(rt, "bytes")
		case Date:
			return DDate(rapid.OneOf(rapid.Int64Range(minDateDays, maxDateDays),
				rapid.SampledFrom(edgeDays()),
				rapid.SampledFrom([]int64{int64(DateInfinity), int64(DateNegInfinity)})).Draw(rt, "date"))
		case Time:
			return DTime(rapid.Int64Range(0, int64(MicrosPerDayTime)).Draw(rt, "time"))
		case Timestamp:
			return DTimestamp(genTimestampMicros(rt))
		case Timestamptz:
			return DTimestamptz(genTimestampMicros(rt))
		case Interval:
			return DInterval{
				Months: rapid.Int32().Draw(rt, "months"),
				Days:   rapid.Int32().Draw(rt, "days"),
				Micros: rapid.Int64().Draw(rt, "micros"),
			}
		}
		panic("no generator for " + t.String())
	})
}

func genTimestampMicros(rt *rapid.T) int64 {
	return rapid.OneOf(
		rapid.Int64Range(MinTimestampMicros, EndTimestampMicros-1),
		// Near 1970 and 2000, where most real data is, with sub-second parts.
		rapid.Int64Range(-5e15, 5e15),
		rapid.SampledFrom([]int64{math.MaxInt64, math.MinInt64}),
		rapid.Custom(func(rt *rapid.T) int64 {
			day := rapid.SampledFrom(edgeDays()[:4]).Draw(rt, "edge")
			return (day-TimestampEpochDays)*MicrosPerDay + rapid.Int64Range(0, MicrosPerDay-1).Draw(rt, "clock")
		}),
	).Draw(rt, "ts")
}

// edgeDays are the days where calendar code tends to break: around 1 BC /
// 1 AD (year 0 prints as 0001 BC), the epoch, leap days, and the ends of
// the supported ranges.
func edgeDays() []int64 {
	return []int64{
		daysFromCivil(0, 12, 31), daysFromCivil(1, 1, 1), daysFromCivil(-1, 1, 1),
		-1, 0, daysFromCivil(2000, 2, 29), daysFromCivil(1900, 3, 1),
		minDateDays, maxDateDays, maxTimestampDays - 1,
	}
}

func genDecimal(rt *rapid.T) *apd.Decimal {
	switch rapid.IntRange(0, 9).Draw(rt, "form") {
	case 0:
		return &apd.Decimal{Form: apd.NaN}
	case 1:
		return &apd.Decimal{Form: apd.Infinite, Negative: rapid.Bool().Draw(rt, "neg")}
	}
	d := apd.New(rapid.Int64().Draw(rt, "coeff"), -rapid.Int32Range(0, 40).Draw(rt, "scale"))
	if d.IsZero() {
		d.Negative = false
	}
	return d
}

var allTypes = []Type{TBool, TInt16, TInt32, TInt64, TFloat32, TFloat64, TDecimal, TVarchar,
	TBytea, TDate, TTime, TTimestamp, TTimestamptz, TInterval}

// TestFormatParseRoundTrip: whatever FormatDatum prints, ParseDatum reads
// back as an equal value, for every type over its whole range.
func TestFormatParseRoundTrip(t *testing.T) {
	for _, typ := range allTypes {
		t.Run(typ.String(), func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				d := genDatum(typ).Draw(rt, "d")
				s := FormatDatum(d, typ)
				back, err := ParseDatum(s, typ)
				if err != nil {
					rt.Fatalf("%v printed as %q does not parse: %v", d, s, err)
				}
				if Compare(d, back) != 0 {
					rt.Fatalf("%v printed as %q reads back as %v", d, s, back)
				}
				if typ.ID == Interval && back != d {
					rt.Fatalf("interval %+v printed as %q reads back as %+v", d, s, back)
				}
				if s2 := FormatDatum(back, typ); s2 != s {
					rt.Fatalf("%q reformats as %q", s, s2)
				}
			})
		})
	}
}

// FuzzParseDatum: no input panics, and anything that parses prints as
// text that parses back to an equal value.
func FuzzParseDatum(f *testing.F) {
	for _, c := range parseFormatCases {
		f.Add(c.in, uint8(c.t.ID))
	}
	for _, c := range parseErrorCases {
		f.Add(c.in, uint8(c.t.ID))
	}
	f.Fuzz(func(t *testing.T, s string, id uint8) {
		typ := Type{ID: ID(id % uint8(numIDs))}
		d, err := ParseDatum(s, typ)
		if err != nil {
			return
		}
		out := FormatDatum(d, typ)
		back, err := ParseDatum(out, typ)
		if err != nil {
			t.Fatalf("%q parsed as %s prints as %q, which does not parse: %v", s, typ, out, err)
		}
		if Compare(d, back) != 0 {
			t.Fatalf("%q parsed as %s prints as %q, which reads back differently", s, typ, out)
		}
	})
}
