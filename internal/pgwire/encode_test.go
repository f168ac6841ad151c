package pgwire

import (
	"bytes"
	"encoding/binary"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
	"pgregory.net/rapid"
)

// TestNumericBinaryKnownLayouts checks numeric_send's layout on values
// whose encoding can be worked out by hand from Postgres's definition.
func TestNumericBinaryKnownLayouts(t *testing.T) {
	cases := []struct {
		in                     string
		ndigits, weight, scale int
		sign                   uint16
		digits                 []uint16
	}{
		{"12345.6789", 3, 1, 4, numericPos, []uint16{1, 2345, 6789}},
		{"-0.000100", 1, -1, 6, numericNeg, []uint16{1}},
		{"10000", 1, 1, 0, numericPos, []uint16{1}},
		{"0.00", 0, 0, 2, numericPos, nil},
		{"1.50", 2, 0, 2, numericPos, []uint16{1, 5000}},
	}
	for _, c := range cases {
		d, err := types.ParseDatum(c.in, types.TDecimal)
		if err != nil {
			t.Fatal(err)
		}
		b, err := appendBinary(nil, d, OIDNumeric)
		if err != nil {
			t.Fatal(err)
		}
		want := appendNumericHeader(nil, c.ndigits, c.weight, c.sign, c.scale)
		for _, g := range c.digits {
			want = binary.BigEndian.AppendUint16(want, g)
		}
		if !bytes.Equal(b, want) {
			t.Errorf("%s: got % x, want % x", c.in, b, want)
		}
	}
}

// TestBinaryRoundTrip: decodeBinary inverts appendBinary for random values
// of every type (generated as text, so validity comes from types).
func TestBinaryRoundTrip(t *testing.T) {
	gens := map[types.ID]*rapid.Generator[string]{
		types.Int64:   rapid.Map(rapid.Int64(), func(v int64) string { return types.FormatDatum(v, types.TInt64) }),
		types.Decimal: rapid.StringMatching(`-?[0-9]{1,30}(\.[0-9]{0,20})?`),
		types.Date:    rapid.Map(rapid.Int32Range(-700000, 2900000), func(v int32) string { return types.FormatDatum(types.DDate(v), types.TDate) }),
		types.Timestamp: rapid.Map(rapid.Int64Range(types.MinTimestampMicros, types.EndTimestampMicros-1), func(v int64) string {
			return types.FormatDatum(types.DTimestamp(v), types.TTimestamp)
		}),
		types.Interval: rapid.Map(rapid.Int64(), func(v int64) string {
			return types.FormatDatum(types.DInterval{Months: int32(v >> 40), Days: int32(v>>20) % 1000, Micros: v}, types.TInterval)
		}),
	}
	rapid.Check(t, func(t *rapid.T) {
		for id, g := range gens {
			typ := types.Type{ID: id}
			d, err := types.ParseDatum(g.Draw(t, typ.String()), typ)
			if err != nil {
				t.Fatal(err)
			}
			b, err := appendBinary(nil, d, OIDOf(typ))
			if err != nil {
				t.Fatal(err)
			}
			back, err := decodeBinary(b, typ)
			if err != nil {
				t.Fatalf("%s: %v", types.FormatDatum(d, typ), err)
			}
			if !sameDatum(back, d, typ) {
				t.Fatalf("%s: got %s", types.FormatDatum(d, typ), types.FormatDatum(back, typ))
			}
		}
	})
}

func binaryInt64(v int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(v)) }

func TestBinaryParamErrors(t *testing.T) {
	for _, c := range []struct {
		b    []byte
		t    types.Type
		code string
	}{
		{[]byte{0, 1, 0, 0}, types.TInt16, "22003"},                           // 65536 as int4 for int2
		{[]byte{1, 2, 3}, types.TInt32, "22P03"},                              // odd width
		{[]byte{0xff, 0xfe}, types.TVarchar, "22021"},                         // not UTF-8
		{[]byte{0, 1, 0, 0, 0x12, 0, 0, 0, 0, 1}, types.TDecimal, "22P03"},    // bad sign
		{[]byte{0, 1, 0, 0, 0, 0, 0, 0, 0x27, 0x10}, types.TDecimal, "22P03"}, // digit 10000
		// 294277-01-01 (Postgres's END_TIMESTAMP) and one before its first.
		{binaryInt64(types.EndTimestampMicros), types.TTimestamp, "22008"},
		{binaryInt64(types.MinTimestampMicros - 1), types.TTimestamptz, "22008"},
	} {
		_, err := decodeBinary(c.b, c.t)
		if got := string(sqlerrCode(err)); got != c.code {
			t.Errorf("% x as %s: code %s (%v), want %s", c.b, c.t, got, err, c.code)
		}
	}
}

func TestCopyTextDecoder(t *testing.T) {
	in := "a\tb\\tc\t\\N\n" + // escaped tab inside a field, NULL
		"\\\\N\t\t\\x41\\102\\z\r\n" + // a literal \N, an empty field, hex, octal, other
		"x|y\n" +
		"\\.\n" +
		"after the end marker\n"
	d := NewCopyTextDecoder(strings.NewReader(in))
	var got []string
	for {
		fields, nulls, err := d.ReadRow()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		parts := make([]string, len(fields))
		for i, f := range fields {
			parts[i] = "[" + f + "]"
			if nulls[i] {
				parts[i] = "NULL"
			}
		}
		got = append(got, strings.Join(parts, " "))
	}
	want := []string{`[a] [b	c] NULL`, `[\N] [] [ABz]`, `[x|y]`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got %q, want %q", got, want)
	}
	if d.Line() != 3 {
		t.Fatalf("line %d", d.Line())
	}

	d = NewCopyTextDecoder(strings.NewReader("1\t2024-01-02\n7\tnope\n1\n"))
	ts := []types.Type{types.TInt32, types.TDate}
	row, err := d.DecodeRow(ts)
	if err != nil || row[0] != int64(1) || types.FormatDatum(row[1], types.TDate) != "2024-01-02" {
		t.Fatalf("row %v, %v", row, err)
	}
	if _, err := d.DecodeRow(ts); sqlerrCode(err) != "22007" && sqlerrCode(err) != "22P02" {
		t.Fatalf("bad date: %v", err)
	}
	if _, err := d.DecodeRow(ts); sqlerrCode(err) != codeBadCopyFileFormat {
		t.Fatalf("missing column: %v", err)
	}
}

// TestCopyTextLongLines: lines longer than the decoder's read buffer
// (64 KiB), with escapes and a last line without a newline, split as
// short ones do, and each row's fields survive the next read.
func TestCopyTextLongLines(t *testing.T) {
	long := strings.Repeat("x", 150<<10)
	in := long + `\t` + "\tend\n" + "short\t" + `\\N` + "\n" + long + "\tlast"
	d := NewCopyTextDecoder(strings.NewReader(in))
	var rows [][]string
	for {
		fields, _, err := d.ReadRow()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		// The strings (not the slice) must survive the next read.
		rows = append(rows, append([]string(nil), fields...))
	}
	want := [][]string{{long + "\t", "end"}, {"short", `\N`}, {long, "last"}}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i := range want {
		if strings.Join(rows[i], "|") != strings.Join(want[i], "|") {
			t.Fatalf("row %d: %d fields (%d bytes), want %d", i, len(rows[i]), len(strings.Join(rows[i], "|")), len(want[i]))
		}
	}
}

func sqlerrCode(err error) sqlerr.Code {
	if err == nil {
		return ""
	}
	return sqlerr.CodeOf(err)
}

// TestCopyTextPlainSplit: a line without a backslash splits the same on
// the IndexByte path as on the byte-by-byte one, whatever the delimiter
// and NULL string.
func TestCopyTextPlainSplit(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		line := rapid.StringMatching(`[aNé\t|,]{0,12}`).Draw(rt, "line")
		d := &CopyTextDecoder{
			Delimiter: rapid.SampledFrom([]byte{'\t', '|', ','}).Draw(rt, "delimiter"),
			Null:      rapid.SampledFrom([]string{`\N`, "", "N"}).Draw(rt, "null"),
		}
		d.splitPlain(line)
		plain, plainNulls := slices.Clone(d.fields), slices.Clone(d.nulls)
		d.fields, d.nulls = d.fields[:0], d.nulls[:0]
		escaped, escapedNulls, err := d.splitEscaped(line)
		if err != nil || !slices.Equal(plain, escaped) || !slices.Equal(plainNulls, escapedNulls) {
			rt.Fatalf("%q: plain %q %v, escaped %q %v (%v)", line, plain, plainNulls, escaped, escapedNulls, err)
		}
	})
}
