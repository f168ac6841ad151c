package types

import (
	"testing"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"pgregory.net/rapid"
)

func TestArrayTypeNames(t *testing.T) {
	for name, want := range map[string]string{
		"int[]": "integer[]", "integer[]": "integer[]", "text[]": "character varying[]",
		"varchar[]": "character varying[]", "_int4": "integer[]", "double precision[]": "double precision[]",
		"numeric[]": "numeric[]", "bool[]": "boolean[]",
	} {
		typ, ok := ParseTypeName(name)
		if !ok || typ.String() != want || !typ.Valid() || !typ.IsArray() {
			t.Errorf("ParseTypeName(%q) = %v (%v), want %s", name, typ, ok, want)
		}
	}
	for _, bad := range []string{"int[][]", "nosuch[]", "[]"} {
		if typ, ok := ParseTypeName(bad); ok {
			t.Errorf("ParseTypeName(%q) = %v, want failure", bad, typ)
		}
	}
	if ArrayOf(TInt32) != ArrayOf(TInt32) || ArrayOf(TInt32) == ArrayOf(TInt64) || ArrayOf(TInt32) == TInt32 {
		t.Error("array types do not compare by element type")
	}
	if (Type{ID: Array}).Valid() || (Type{ID: Int32, Elem: Int32}).Valid() {
		t.Error("malformed array types are valid")
	}
}

func TestArrayText(t *testing.T) {
	text := ArrayOf(TVarchar)
	for _, c := range []struct {
		in   string
		typ  Type
		want string
	}{
		{"{1,2,3}", ArrayOf(TInt32), "{1,2,3}"},
		{"  { 1 , NULL,\t-3 }  ", ArrayOf(TInt64), "{1,NULL,-3}"},
		{"{}", ArrayOf(TInt32), "{}"},
		{`{"a b",  c\,d ,"",null,"NULL",\N\ULL}`, text, `{"a b","c,d","",NULL,"NULL","NULL"}`},
		{`{"say \"hi\"","a\\b","{x}"}`, text, `{"say \"hi\"","a\\b","{x}"}`},
		{"{t,f,NULL}", ArrayOf(TBool), "{t,f,NULL}"},
		{`{"2024-01-02 03:04:05"}`, ArrayOf(TTimestamp), `{"2024-01-02 03:04:05"}`},
		{`{"1 day"}`, ArrayOf(TInterval), `{"1 day"}`},
	} {
		d, err := ParseDatum(c.in, c.typ)
		if err != nil {
			t.Errorf("ParseDatum(%q, %s): %v", c.in, c.typ, err)
			continue
		}
		if got := FormatDatum(d, c.typ); got != c.want {
			t.Errorf("%q as %s formats as %s, want %s", c.in, c.typ, got, c.want)
		}
	}
	for _, bad := range []string{"", "1,2", "{1,2", "{1,,2}", "{1}x", "{,}", `{"a}`, "{a\"b}", "{1} {2}"} {
		_, err := ParseDatum(bad, ArrayOf(TInt32))
		if sqlerr.CodeOf(err) != sqlerr.InvalidTextRepresentation {
			t.Errorf("ParseDatum(%q): %v, want 22P02", bad, err)
		}
	}
	if _, err := ParseDatum("{{1},{2}}", ArrayOf(TInt32)); sqlerr.CodeOf(err) != sqlerr.FeatureNotSupported {
		t.Errorf("a 2-D literal gave %v, want 0A000", err)
	}
}

// TestArrayTextRoundTrip: any text array's output reads back as itself.
func TestArrayTextRoundTrip(t *testing.T) {
	typ := ArrayOf(TVarchar)
	elem := rapid.OneOf(
		rapid.Just[Datum](nil),
		rapid.Map(rapid.StringOf(rapid.SampledFrom([]rune(`ab ,{}"\ NUL`+"\t\n"))), func(s string) Datum { return s }),
		rapid.Map(rapid.String(), func(s string) Datum { return s }),
	)
	rapid.Check(t, func(t *rapid.T) {
		a := DArray(rapid.SliceOfN(elem, 0, 5).Draw(t, "array"))
		s := FormatDatum(a, typ)
		back, err := ParseDatum(s, typ)
		if err != nil {
			t.Fatalf("%q does not parse: %v", s, err)
		}
		if CompareArray(a, back.(DArray)) != 0 || len(back.(DArray)) != len(a) {
			t.Fatalf("%q reads back as %#v, want %#v", s, back, a)
		}
	})
}

func TestCompareArray(t *testing.T) {
	arr := func(ds ...Datum) DArray { return DArray(ds) }
	ordered := []DArray{
		arr(), arr(int64(1)), arr(int64(1), int64(2)), arr(int64(1), int64(2), int64(0)),
		arr(int64(1), nil), arr(int64(2)), arr(nil), arr(nil, int64(1)),
	}
	for i, a := range ordered {
		for j, b := range ordered {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			if got := Compare(a, b); got != want {
				t.Errorf("Compare(%v, %v) = %d, want %d", a, b, got, want)
			}
		}
	}
}

func TestArrayColumn(t *testing.T) {
	typ := ArrayOf(TInt32)
	col := ColumnOf(typ, DArray{int64(1)}, nil, DArray{})
	if col.Len() != 3 || !col.IsNull(1) || CheckDatum(col.Get(0), typ) != nil {
		t.Fatalf("column %v", col)
	}
	if CheckDatum(DArray{"x"}, typ) == nil || CheckDatum(int64(1), typ) == nil {
		t.Error("CheckDatum accepts a wrong element or a scalar")
	}
	c := MustParseChunk([]Type{typ, ArrayOf(TVarchar)}, "+ {1,2} '{\"a b\",NULL}'\n- NULL {}")
	if got, want := c.String(), "+ {1,2} '{\"a b\",NULL}'\n- NULL {}\n"; got != want {
		t.Errorf("chunk text %q, want %q", got, want)
	}
}
