package types

import (
	"testing"

	"github.com/sluice-db/sluice/internal/sqlerr"

	"pgregory.net/rapid"
)

// TestParseAppendMatchesParseDatum: for every type, a value's text form
// and arbitrary text parse through ParseAppend to what ParseDatum gives,
// or fail as it does (same SQLSTATE), leaving the column as it was.
func TestParseAppendMatchesParseDatum(t *testing.T) {
	ts := []Type{TBool, TInt16, TInt32, TInt64, TFloat32, TFloat64, TDecimal, TVarchar, TBytea,
		TDate, TTime, TTimestamp, TTimestamptz, TInterval}
	rapid.Check(t, func(rt *rapid.T) {
		typ := rapid.SampledFrom(ts).Draw(rt, "type")
		s := rapid.OneOf(
			rapid.Custom(func(rt *rapid.T) string { return FormatDatum(genDatum(typ).Draw(rt, "d"), typ) }),
			rapid.SampledFrom([]string{"", " 12 ", "+7", "--1", "9223372036854775808", "40000", "2024-02-30",
				"infinity", "-infinity", "epoch", "abc"}),
			rapid.Custom(func(rt *rapid.T) string { // a zone offset matters to timestamptz only
				return FormatDatum(DTimestamp(genTimestampMicros(rt)), TTimestamp) +
					rapid.SampledFrom([]string{"+02", "-05:30", " UTC", "Z"}).Draw(rt, "zone")
			}),
			rapid.String(),
		).Draw(rt, "text")
		for _, typ := range ts { // every type reads the same text
			checkParseAppend(rt, typ, s)
		}
	})
}

func checkParseAppend(rt *rapid.T, typ Type, s string) {
	want, wantErr := ParseDatum(s, typ)
	col := MustColumn(typ, 0)
	col.Append(nil) // a row before, to see that a failure leaves it alone
	err := ParseAppend(col, s)
	if (err == nil) != (wantErr == nil) {
		rt.Fatalf("%s %q: ParseAppend error %v, ParseDatum error %v", typ, s, err, wantErr)
	}
	if err != nil {
		if sqlerr.CodeOf(err) != sqlerr.CodeOf(wantErr) || col.Len() != 1 {
			rt.Fatalf("%s %q: error %v (%d rows), want %v", typ, s, err, col.Len(), wantErr)
		}
		return
	}
	if col.Len() != 2 || Compare(col.Get(1), want) != 0 || FormatDatum(col.Get(1), typ) != FormatDatum(want, typ) {
		rt.Fatalf("%s %q: appended %v, ParseDatum %v", typ, s, col.Get(1), want)
	}
}

// TestLexISOMatchesLexer: whatever the ISO fast path accepts, the general
// lexer reads to the same fields; and it accepts the timestamps Sluice
// prints (with and without a fraction, T or space, and dates alone).
func TestLexISOMatchesLexer(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s := rapid.OneOf(
			rapid.Custom(func(rt *rapid.T) string { return FormatDatum(DTimestamp(genTimestampMicros(rt)), TTimestamp) }),
			rapid.Custom(func(rt *rapid.T) string { return FormatDatum(genDatum(TDate).Draw(rt, "d"), TDate) }),
			rapid.StringMatching(`[0-9]{4}-[0-9]{2}-[0-9]{2}([ T][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{0,7})?)?`),
			rapid.StringMatching(`[0-9 :.T-]{8,27}`),
		).Draw(rt, "s")
		fast, ok := lexISO(s)
		if !ok {
			return
		}
		slow, k := lexDateTimeAny(s)
		if k != dtOK || fast != slow {
			rt.Fatalf("%q: fast %+v, lexer %+v (%d)", s, fast, slow, k)
		}
	})
	for _, s := range []string{"2024-01-02", "2024-01-02 03:04:05", "2024-01-02T03:04:05.5", "1999-12-31 23:59:59.123456"} {
		if _, ok := lexISO(s); !ok {
			t.Errorf("lexISO(%q) refused", s)
		}
	}
}
