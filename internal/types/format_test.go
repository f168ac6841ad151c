package types

import (
	"testing"

	"github.com/sluice-db/sluice/internal/sqlerr"
)

// parseFormatCase: ParseDatum(in, t) then FormatDatum must give want, the
// text Postgres 15 prints for the same literal (DateStyle ISO, TimeZone
// UTC, IntervalStyle postgres).
type parseFormatCase struct {
	t    Type
	in   string
	want string
}

var parseFormatCases = []parseFormatCase{
	{TBool, "true", "t"}, {TBool, " YES ", "t"}, {TBool, "tr", "t"}, {TBool, "on", "t"},
	{TBool, "1", "t"}, {TBool, "f", "f"}, {TBool, "of", "f"}, {TBool, "No", "f"}, {TBool, "0", "f"},

	{TInt16, " +5 ", "5"}, {TInt16, "-32768", "-32768"}, {TInt32, "2147483647", "2147483647"},
	{TInt64, "-9223372036854775808", "-9223372036854775808"}, {TInt32, "007", "7"},

	{TFloat64, "1e+20", "1e+20"}, {TFloat64, "123456789012", "123456789012"},
	{TFloat64, "0.1", "0.1"}, {TFloat64, "1e-5", "1e-05"}, {TFloat64, "0.0001", "0.0001"},
	{TFloat64, "1e15", "1e+15"}, {TFloat64, "100000000000000", "100000000000000"},
	{TFloat64, "1.5e300", "1.5e+300"}, {TFloat64, "-0", "-0"}, {TFloat64, "1e-310", "1e-310"},
	{TFloat64, "inf", "Infinity"}, {TFloat64, "-INFINITY", "-Infinity"}, {TFloat64, " nan ", "NaN"},
	{TFloat64, ".5", "0.5"}, {TFloat64, "5.", "5"}, {TFloat64, "2.5E-7", "2.5e-07"},
	{TFloat32, "1e6", "1e+06"}, {TFloat32, "123456", "123456"}, {TFloat32, "0.1", "0.1"},
	{TFloat32, "3.14159265358979", "3.1415927"}, {TFloat32, "16777217", "1.6777216e+07"},
	{TFloat32, "-Infinity", "-Infinity"},

	{TDecimal, "1.50", "1.50"}, {TDecimal, "1E+3", "1000"}, {TDecimal, "1.5e1", "15"},
	{TDecimal, "1.50e1", "15.0"}, {TDecimal, "1e-3", "0.001"}, {TDecimal, "-0.00", "0.00"},
	{TDecimal, " 12 ", "12"}, {TDecimal, ".5", "0.5"}, {TDecimal, "5.", "5"},
	{TDecimal, "NaN", "NaN"}, {TDecimal, "infinity", "Infinity"}, {TDecimal, "-inf", "-Infinity"},
	{TDecimal, "-123456789012345678901234567890.000001", "-123456789012345678901234567890.000001"},

	{TVarchar, " a b ", " a b "}, {TVarchar, "", ""},

	{TBytea, `\x0aFF`, `\x0aff`}, {TBytea, "abc", `\x616263`}, {TBytea, `a\\b`, `\x615c62`},
	{TBytea, `\001\377`, `\x01ff`}, {TBytea, `\x`, `\x`}, {TBytea, `\x 01 02`, `\x0102`},

	{TDate, "2024-02-29", "2024-02-29"}, {TDate, " 20240229 ", "2024-02-29"},
	{TDate, "0044-03-15 BC", "0044-03-15 BC"}, {TDate, "2024-02-29 13:00", "2024-02-29"},
	{TDate, "infinity", "infinity"}, {TDate, "-infinity", "-infinity"}, {TDate, "epoch", "1970-01-01"},
	{TDate, "4714-11-24 BC", "4714-11-24 BC"}, {TDate, "1-1-1", "2001-01-01"}, {TDate, "99-01-08", "1999-01-08"}, {TDate, "00-01-08", "2000-01-08"},
	{TDate, "0001-01-01", "0001-01-01"}, {TDate, "044-03-15", "0044-03-15"}, {TDate, "10000-01-01", "10000-01-01"},
	{TDate, "5874897-12-31", "5874897-12-31"}, {TDate, "1900-02-28", "1900-02-28"},

	{TTime, "13:05", "13:05:00"}, {TTime, "13:05:07.120", "13:05:07.12"}, {TTime, "24:00", "24:00:00"},
	{TTime, "00:00:00.0000005", "00:00:00.000001"}, {TTime, "2024-01-01 10:00:00", "10:00:00"},
	{TTime, "10:00 pm", "22:00:00"}, {TTime, "12:30am", "00:30:00"}, {TTime, "allballs", "00:00:00"},
	{TTime, "23:59:59.999999", "23:59:59.999999"}, {TTime, "10:00:00+05", "10:00:00"},

	{TTimestamp, "2015-07-15 00:00:01.001", "2015-07-15 00:00:01.001"},
	{TTimestamp, "2015-07-15T00:00:01", "2015-07-15 00:00:01"},
	{TTimestamp, "2015-07-15", "2015-07-15 00:00:00"},
	{TTimestamp, "2015-07-15 00:00:00.9999995", "2015-07-15 00:00:01"},
	{TTimestamp, "2015-07-15 10:00+05", "2015-07-15 10:00:00"},
	{TTimestamp, "2024-12-31 24:00", "2025-01-01 00:00:00"},
	{TTimestamp, "0044-03-15 12:00 BC", "0044-03-15 12:00:00 BC"},
	{TTimestamp, "1969-12-31 23:59:59.5", "1969-12-31 23:59:59.5"},
	{TTimestamp, "infinity", "infinity"}, {TTimestamp, "epoch", "1970-01-01 00:00:00"},
	{TTimestamp, "20150715 102030", "2015-07-15 10:20:30"},
	// Postgres's whole range (issue 9: Sluice stopped at 294247 AD).
	{TTimestamp, "294276-12-31 23:59:59.999999", "294276-12-31 23:59:59.999999"},
	{TTimestamp, "4714-11-24 00:00:00 BC", "4714-11-24 00:00:00 BC"},
	{TTimestamptz, "294276-12-31 23:59:59.999999+00", "294276-12-31 23:59:59.999999+00"},

	{TTimestamptz, "2002-02-02 02:00:00+00", "2002-02-02 02:00:00+00"},
	{TTimestamptz, "2002-02-02 07:00:00+05", "2002-02-02 02:00:00+00"},
	{TTimestamptz, "2002-02-02 07:30+05:30", "2002-02-02 02:00:00+00"},
	{TTimestamptz, "2002-02-01 18:00:00-0800", "2002-02-02 02:00:00+00"},
	{TTimestamptz, "2002-02-02T02:00:00Z", "2002-02-02 02:00:00+00"},
	{TTimestamptz, "2002-02-02 02:00 UTC", "2002-02-02 02:00:00+00"},
	{TTimestamptz, "2002-02-02 02:00", "2002-02-02 02:00:00+00"},
	{TTimestamptz, "2002-02-02 00:00:00 -02", "2002-02-02 02:00:00+00"},
	{TTimestamptz, "2000-01-01 00:00+01", "1999-12-31 23:00:00+00"},
	{TTimestamptz, "0044-03-15 12:00+00 BC", "0044-03-15 12:00:00+00 BC"},
	{TTimestamptz, "-infinity", "-infinity"},

	{TInterval, "1 year 2 mons 3 days 04:05:06.789", "1 year 2 mons 3 days 04:05:06.789"},
	{TInterval, "-1 days +02:00:00", "-1 days +02:00:00"},
	{TInterval, "0", "00:00:00"}, {TInterval, "1 day", "1 day"},
	{TInterval, "21 days 23:59:59", "21 days 23:59:59"},
	{TInterval, "2 hours 30 minutes", "02:30:00"}, {TInterval, "1 d", "1 day"},
	{TInterval, "24 h", "24:00:00"}, {TInterval, "24h", "24:00:00"}, {TInterval, "3 mons", "3 mons"},
	{TInterval, "1 year", "1 year"}, {TInterval, "-1 week", "-7 days"},
	{TInterval, "1.5 days", "1 day 12:00:00"}, {TInterval, "01:01:01", "01:01:01"},
	{TInterval, "1 day 02:00:00", "1 day 02:00:00"}, {TInterval, "@ 1 minute ago", "-00:01:00"},
	{TInterval, "P1Y2M3DT4H5M6S", "1 year 2 mons 3 days 04:05:06"},
	{TInterval, "PT1.5S", "00:00:01.5"}, {TInterval, "P2W", "14 days"},
	{TInterval, "1.5 years", "1 year 6 mons"}, {TInterval, "1.5 months", "1 mon 15 days"},
	{TInterval, "-1 year -2 mons", "-1 years -2 mons"}, {TInterval, "1 day -01:00:00", "1 day -01:00:00"},
	{TInterval, "1 mon -1 days", "1 mon -1 days"}, {TInterval, "-1 mons 1 day", "-1 mons +1 day"},
	{TInterval, "100:00:00", "100:00:00"}, {TInterval, "5", "00:00:05"},
	{TInterval, "1-2", "1 year 2 mons"}, {TInterval, "1 12:00:00", "1 day 12:00:00"},
	{TInterval, "2 years ago", "-2 years"}, {TInterval, "1 day 2 hours 3 minutes 4.5 seconds", "1 day 02:03:04.5"},
	{TInterval, "-178956970 years -8 mons", "-178956970 years -8 mons"},
	{TInterval, "-2562047788:00:54.775808", "-2562047788:00:54.775808"},
	{TInterval, "1 century 1 decade", "110 years"}, {TInterval, "10 ms 5 us", "00:00:00.010005"},
	{TInterval, "-01:30", "-01:30:00"}, {TInterval, "0.5 week", "3 days 12:00:00"},
}

func TestParseFormat(t *testing.T) {
	for _, c := range parseFormatCases {
		d, err := ParseDatum(c.in, c.t)
		if err != nil {
			t.Errorf("ParseDatum(%q, %s): %v", c.in, c.t, err)
			continue
		}
		if err := CheckDatum(d, c.t); err != nil {
			t.Errorf("ParseDatum(%q, %s): %v", c.in, c.t, err)
			continue
		}
		if got := FormatDatum(d, c.t); got != c.want {
			t.Errorf("%s %q: got %q, want %q", c.t, c.in, got, c.want)
		}
		if got := string(FormatDatumAppend([]byte("x"), d, c.t)); got != "x"+c.want {
			t.Errorf("%s %q: FormatDatumAppend got %q", c.t, c.in, got)
		}
		// Postgres output is valid input that means the same value.
		again, err := ParseDatum(c.want, c.t)
		if err != nil {
			t.Errorf("%s: output %q does not parse: %v", c.t, c.want, err)
		} else if Compare(d, again) != 0 {
			t.Errorf("%s: output %q reads back as %v, not %v", c.t, c.want, again, d)
		}
	}
}

type parseErrorCase struct {
	t    Type
	in   string
	code sqlerr.Code
	msg  string // the full message, when the case pins it
}

var parseErrorCases = []parseErrorCase{
	{TBool, "maybe", sqlerr.InvalidTextRepresentation, `invalid input syntax for type boolean: "maybe"`},
	{TBool, "o", sqlerr.InvalidTextRepresentation, ""}, {TBool, "", sqlerr.InvalidTextRepresentation, ""},
	{TInt32, "x", sqlerr.InvalidTextRepresentation, `invalid input syntax for type integer: "x"`},
	{TInt16, "99999", sqlerr.NumericValueOutOfRange, `value "99999" is out of range for type smallint`},
	{TInt64, "9223372036854775808", sqlerr.NumericValueOutOfRange, ""},
	{TInt32, "", sqlerr.InvalidTextRepresentation, ""}, {TInt32, "1.5", sqlerr.InvalidTextRepresentation, ""},
	{TInt32, "+-1", sqlerr.InvalidTextRepresentation, ""}, {TInt32, "1 2", sqlerr.InvalidTextRepresentation, ""},
	{TFloat64, "1e400", sqlerr.NumericValueOutOfRange, `"1e400" is out of range for type double precision`},
	{TFloat64, "1e-400", sqlerr.NumericValueOutOfRange, ""},
	{TFloat32, "1e39", sqlerr.NumericValueOutOfRange, `"1e39" is out of range for type real`},
	{TFloat64, "abc", sqlerr.InvalidTextRepresentation, `invalid input syntax for type double precision: "abc"`},
	{TFloat64, "1_0", sqlerr.InvalidTextRepresentation, ""}, {TFloat64, "0x10", sqlerr.InvalidTextRepresentation, ""},
	{TFloat64, ".", sqlerr.InvalidTextRepresentation, ""}, {TFloat64, "1e", sqlerr.InvalidTextRepresentation, ""},
	{TDecimal, "abc", sqlerr.InvalidTextRepresentation, `invalid input syntax for type numeric: "abc"`},
	{TDecimal, "1e1001", sqlerr.InvalidTextRepresentation, ""}, {TDecimal, "", sqlerr.InvalidTextRepresentation, ""},
	{TDecimal, "sNaN", sqlerr.InvalidTextRepresentation, ""}, {TDecimal, "1e999999999999", sqlerr.InvalidTextRepresentation, ""},
	{TBytea, `\x0`, sqlerr.InvalidParameterValue, "invalid hexadecimal data: odd number of digits"},
	{TBytea, `\xzz`, sqlerr.InvalidParameterValue, `invalid hexadecimal digit: "z"`},
	{TBytea, `a\b`, sqlerr.InvalidTextRepresentation, "invalid input syntax for type bytea"},
	{TBytea, `\400`, sqlerr.InvalidTextRepresentation, ""},
	{TDate, "2024-02-30", sqlerr.DatetimeFieldOverflow, `date/time field value out of range: "2024-02-30"`},
	{TDate, "2023-02-29", sqlerr.DatetimeFieldOverflow, ""}, {TDate, "2024-13-01", sqlerr.DatetimeFieldOverflow, ""},
	{TDate, "0000-01-01", sqlerr.DatetimeFieldOverflow, ""},
	{TDate, "abc", sqlerr.InvalidDatetimeFormat, `invalid input syntax for type date: "abc"`},
	{TDate, "4714-11-23 BC", sqlerr.DatetimeFieldOverflow, `date out of range: "4714-11-23 BC"`},
	{TDate, "", sqlerr.InvalidDatetimeFormat, ""}, {TDate, "12:00", sqlerr.InvalidDatetimeFormat, ""},
	{TDate, "2024-01-01 25:00", sqlerr.DatetimeFieldOverflow, ""}, {TDate, "now", sqlerr.FeatureNotSupported, ""},
	{TTime, "24:00:01", sqlerr.DatetimeFieldOverflow, ""}, {TTime, "25:00", sqlerr.DatetimeFieldOverflow, ""},
	{TTime, "12:60", sqlerr.DatetimeFieldOverflow, ""}, {TTime, "2024-01-01", sqlerr.InvalidDatetimeFormat, ""},
	{TTime, "12:00:00.", sqlerr.InvalidDatetimeFormat, ""}, {TTime, "13:00 pm", sqlerr.DatetimeFieldOverflow, ""},
	{TTime, "x", sqlerr.InvalidDatetimeFormat, `invalid input syntax for type time: "x"`},
	{TTimestamp, "2024-02-30 00:00", sqlerr.DatetimeFieldOverflow, ""},
	{TTimestamp, "2024-01-01 12:00:00 12:00:00", sqlerr.InvalidDatetimeFormat, ""},
	{TTimestamp, "294277-01-01", sqlerr.DatetimeFieldOverflow, `timestamp out of range: "294277-01-01"`},
	{TTimestamptz, "294276-12-31 23:59:59.999999-01", sqlerr.DatetimeFieldOverflow, `timestamp out of range: "294276-12-31 23:59:59.999999-01"`},
	{TTimestamp, "allballs", sqlerr.InvalidDatetimeFormat, ""},
	{TTimestamptz, "2002-02-02 02:00+16", "22009", `time zone displacement out of range: "2002-02-02 02:00+16"`},
	{TTimestamptz, "2002-02-02 02:00 Mars/Olympus", sqlerr.InvalidDatetimeFormat,
		`invalid input syntax for type timestamp with time zone: "2002-02-02 02:00 Mars/Olympus"`},
	{TTimestamptz, "2002-02-02 02:00+05 +06", sqlerr.InvalidDatetimeFormat, ""},
	{TInterval, "1 day 2 days", sqlerr.InvalidDatetimeFormat, ""},
	{TInterval, "abc", sqlerr.InvalidDatetimeFormat, `invalid input syntax for type interval: "abc"`},
	{TInterval, "1 fortnight", sqlerr.InvalidDatetimeFormat, ""}, {TInterval, "", sqlerr.InvalidDatetimeFormat, ""},
	{TInterval, "day", sqlerr.InvalidDatetimeFormat, ""}, {TInterval, "P", sqlerr.InvalidDatetimeFormat, ""},
	{TInterval, "P1H", sqlerr.InvalidDatetimeFormat, ""}, {TInterval, "1 hour 01:00:00", sqlerr.InvalidDatetimeFormat, ""},
	{TInterval, "3000000000 days", sqlerr.IntervalFieldOverflow, `interval field value out of range: "3000000000 days"`},
	{TInterval, "178956971 years", sqlerr.IntervalFieldOverflow, ""},
	{TInterval, "99999999999999999999 us", sqlerr.IntervalFieldOverflow, ""},
	{TInterval, "2562047789:00:00", sqlerr.IntervalFieldOverflow, ""},
	{TInterval, "01:61:00", sqlerr.IntervalFieldOverflow, ""},
}

func TestParseErrors(t *testing.T) {
	for _, c := range parseErrorCases {
		d, err := ParseDatum(c.in, c.t)
		if err == nil {
			t.Errorf("ParseDatum(%q, %s) = %v, want error %s", c.in, c.t, d, c.code)
			continue
		}
		e, ok := sqlerr.As(err)
		if !ok {
			t.Errorf("ParseDatum(%q, %s): %v is not a *sqlerr.Error", c.in, c.t, err)
			continue
		}
		if e.Code != c.code {
			t.Errorf("ParseDatum(%q, %s): code %s (%v), want %s", c.in, c.t, e.Code, err, c.code)
		}
		if c.msg != "" && e.Message != c.msg {
			t.Errorf("ParseDatum(%q, %s): message %q, want %q", c.in, c.t, e.Message, c.msg)
		}
	}
}

// TestFormatDatumAppendAllocs: pgwire formats every value of a result set
// into one reused buffer; fixed-size types must not allocate.
func TestFormatDatumAppendAllocs(t *testing.T) {
	vals := []struct {
		d Datum
		t Type
	}{
		{true, TBool}, {int64(-12345), TInt64}, {0.1, TFloat64}, {1e300, TFloat64},
		{DDate(19782), TDate}, {DTime(45296789000), TTime},
		{DTimestamp(1709211907123456), TTimestamp}, {DTimestamptz(-1709211907123456), TTimestamptz},
		{DInterval{Months: 14, Days: -3, Micros: 14706789000}, TInterval}, {[]byte("abc"), TBytea},
	}
	buf := make([]byte, 0, 128)
	for _, v := range vals {
		n := testing.AllocsPerRun(50, func() { buf = FormatDatumAppend(buf[:0], v.d, v.t) })
		if n != 0 {
			t.Errorf("%s %q: %v allocations", v.t, buf, n)
		}
	}
}

func BenchmarkFormatDatumAppend(b *testing.B) {
	vals := []Datum{int64(123456), 3.25, DTimestamptz(1709211907123456), DInterval{Days: 3, Micros: 1}}
	ts := []Type{TInt64, TFloat64, TTimestamptz, TInterval}
	buf := make([]byte, 0, 128)
	for b.Loop() {
		for i, v := range vals {
			buf = FormatDatumAppend(buf[:0], v, ts[i])
		}
	}
}
