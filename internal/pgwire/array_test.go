package pgwire

import (
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/sluice-db/sluice/internal/types"
)

// pgx's own array codecs check the wire forms independently of ours.

func TestArrayBinaryReadByPgx(t *testing.T) {
	m := pgtype.NewMap()
	for _, a := range []types.DArray{{int64(1), nil, int64(-7)}, {}, {int64(1 << 30)}} {
		typ := types.ArrayOf(types.TInt32)
		b, err := appendBinary(nil, a, OIDOf(typ))
		if err != nil {
			t.Fatal(err)
		}
		var got []*int32
		if err := m.Scan(OIDInt4Array, pgtype.BinaryFormatCode, b, &got); err != nil {
			t.Fatalf("%v: pgx cannot read %x: %v", a, b, err)
		}
		if len(got) != len(a) {
			t.Fatalf("%v: pgx read %d elements", a, len(got))
		}
		for i, g := range got {
			if (g == nil) != (a[i] == nil) || g != nil && int64(*g) != a[i].(int64) {
				t.Fatalf("%v: element %d read as %v", a, i, g)
			}
		}
	}
}

func TestArrayBinaryWrittenByPgx(t *testing.T) {
	m := pgtype.NewMap()
	in := []*string{ptr("a,b"), nil, ptr(""), ptr(`q"\`)}
	b, err := m.Encode(OIDTextArray, pgtype.BinaryFormatCode, in, nil)
	if err != nil {
		t.Fatal(err)
	}
	typ, err := TypeOfOID(OIDTextArray)
	if err != nil || typ != types.ArrayOf(types.TVarchar) {
		t.Fatalf("TypeOfOID(text[]) = %v, %v", typ, err)
	}
	d, err := decodeParam(b, typ, formatBinary)
	if err != nil {
		t.Fatal(err)
	}
	got := d.(types.DArray)
	if len(got) != len(in) {
		t.Fatalf("decoded %v", got)
	}
	for i, s := range in {
		if (s == nil) != (got[i] == nil) || s != nil && *s != got[i] {
			t.Fatalf("element %d: %v, want %v", i, got[i], s)
		}
	}
	// And the text form of the same array is what pgx's text parser reads.
	txt := types.FormatDatum(got, typ)
	var back []*string
	if err := m.Scan(OIDTextArray, pgtype.TextFormatCode, []byte(txt), &back); err != nil {
		t.Fatalf("pgx cannot parse %s: %v", txt, err)
	}
	for i, s := range in {
		if (s == nil) != (back[i] == nil) || s != nil && *s != *back[i] {
			t.Fatalf("text %s: element %d is %v", txt, i, back[i])
		}
	}
}

func TestArrayOIDs(t *testing.T) {
	for elem, want := range map[types.Type]uint32{
		types.TInt32: 1007, types.TInt64: 1016, types.TVarchar: 1015, types.TBool: 1000,
		types.TFloat64: 1022, types.TDecimal: 1231, types.TInt16: 1005, types.TTimestamptz: 1185,
	} {
		typ := types.ArrayOf(elem)
		if got := OIDOf(typ); got != want {
			t.Errorf("OIDOf(%s) = %d, want %d", typ, got, want)
		}
		if back, err := TypeOfOID(want); err != nil || back != typ {
			t.Errorf("TypeOfOID(%d) = %v, %v", want, back, err)
		}
	}
}

func TestArrayBinaryRejectsCorrupt(t *testing.T) {
	typ := types.ArrayOf(types.TInt32)
	good, err := appendBinary(nil, types.DArray{int64(5), int64(6)}, OIDOf(typ))
	if err != nil {
		t.Fatal(err)
	}
	for i := range len(good) {
		if _, err := decodeBinaryArray(good[:i], typ); err == nil {
			t.Fatalf("truncated to %d bytes decoded", i)
		}
	}
	if _, err := decodeBinaryArray(append(good, 0), typ); err == nil {
		t.Fatal("trailing byte accepted")
	}
}

func ptr[T any](v T) *T { return &v }
