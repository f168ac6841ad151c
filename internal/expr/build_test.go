package expr

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
	"pgregory.net/rapid"
)

func TestBuildErrors(t *testing.T) {
	in := []types.Type{i32, boo}
	bad := func(s string) *string { return &s }
	for _, tc := range []struct {
		name string
		desc Desc
		code sqlerr.Code
	}{
		{"unknown kind", Desc{Kind: "frob"}, sqlerr.Internal},
		{"unknown function", Func("frobnicate", Input(0, i32)), sqlerr.UndefinedFunction},
		{"bad arity", Func("lower"), sqlerr.UndefinedFunction},
		{"arg type mismatch", Func("+", Input(0, i32), Input(1, boo)), sqlerr.UndefinedFunction},
		{"index out of range", Input(5, i32), sqlerr.Internal},
		{"negative index", Input(-1, i32), sqlerr.Internal},
		{"input type mismatch", Input(0, boo), sqlerr.Internal},
		{"unknown type", Desc{Kind: KindLiteral, Type: types.Type{ID: 99}, Value: bad("1")}, sqlerr.Internal},
		{"bad literal", Desc{Kind: KindLiteral, Type: i32, Value: bad("x")}, sqlerr.InvalidTextRepresentation},
		{"declared type wrong", Desc{Kind: KindFunc, Name: "+", Type: boo, Args: []Desc{Input(0, i32), Input(0, i32)}}, sqlerr.Internal},
		{"impossible cast", Cast(Input(1, boo), types.TDate), sqlerr.CannotCoerce},
		{"AND of integer", Node(KindAnd, Input(0, i32), Input(1, boo)), sqlerr.DatatypeMismatch},
		{"case without then", Node(KindCase, Input(1, boo)), sqlerr.Internal},
		{"coalesce of mismatched types", Node(KindCoalesce, Input(0, i32), Input(1, boo)), sqlerr.DatatypeMismatch},
		{"extract of non-constant unit", Func("extract", Cast(Input(0, i32), str), Literal(types.DTimestamp(0), ts)), sqlerr.FeatureNotSupported},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Build(tc.desc, in)
			if err == nil {
				t.Fatal("Build succeeded")
			}
			if got := sqlerr.CodeOf(err); got != tc.code {
				t.Fatalf("code %s, want %s (%v)", got, tc.code, err)
			}
		})
	}
}

func TestResolveFunc(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []types.Type
		want types.Type
	}{
		{"+", []types.Type{i32, i32}, i32},
		{"+", []types.Type{i16, i32}, i32},
		{"+", []types.Type{i32, i64}, i64},
		{"+", []types.Type{i64, dec}, dec},
		{"+", []types.Type{dec, f8}, f8},
		{"+", []types.Type{i32, f4}, f8},
		{"+", []types.Type{f4, f4}, f4},
		{"+", []types.Type{ts, ivl}, ts},
		{"-", []types.Type{date, date}, i32},
		{"=", []types.Type{str, types.TUnknown}, boo},
		{"round", []types.Type{i32}, f8},
		{"round", []types.Type{dec}, dec},
		{"LOWER", []types.Type{str}, str},
		{"concat", []types.Type{str, i32, boo}, str},
	} {
		got, err := ResolveFunc(tc.name, tc.args)
		if err != nil || got != tc.want {
			t.Errorf("ResolveFunc(%s, %v) = %v, %v; want %v", tc.name, tc.args, got, err, tc.want)
		}
	}
	_, err := ResolveFunc("+", []types.Type{i32, boo})
	e, ok := sqlerr.As(err)
	if !ok || e.Code != sqlerr.UndefinedFunction || e.Message != "operator does not exist: integer + boolean" || e.Hint == "" {
		t.Fatalf("error %#v", err)
	}
	_, err = ResolveFunc("lower", []types.Type{i32})
	if e, ok := sqlerr.As(err); !ok || e.Message != "function lower(integer) does not exist" {
		t.Fatalf("error %v", err)
	}
}

func TestCommonTypeAndCasts(t *testing.T) {
	for _, tc := range []struct {
		a, b, want types.Type
		ok         bool
	}{
		{i16, i32, i32, true}, {i64, dec, dec, true}, {dec, f8, f8, true},
		{f4, i32, f8, true}, {types.TUnknown, date, date, true}, {date, ts, ts, true},
		{i32, boo, types.Type{}, false}, {str, i32, types.Type{}, false},
	} {
		got, ok := CommonType(tc.a, tc.b)
		if got != tc.want || ok != tc.ok {
			t.Errorf("CommonType(%s, %s) = %s, %v", tc.a, tc.b, got, ok)
		}
		if got2, ok2 := CommonType(tc.b, tc.a); got2 != got || ok2 != ok {
			t.Errorf("CommonType not symmetric for %s, %s", tc.a, tc.b)
		}
	}
	if !CanCast(str, date) || !CanCast(boo, i32) || CanCast(boo, date) || CanCast(ivl, i32) {
		t.Fatal("CanCast")
	}
	if !CanImplicitCast(i32, dec) || CanImplicitCast(dec, i32) || CanImplicitCast(str, i32) {
		t.Fatal("CanImplicitCast")
	}
}

func TestDescJSONRoundTrip(t *testing.T) {
	d := Node(KindCase,
		Func(">", Input(0, i32), Literal(int64(3), i32)),
		Func("||", Cast(Input(0, i32), str), untyped("x")),
		Null(str))
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var back Desc
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d, back) {
		t.Fatalf("round trip changed the Desc:\n%s\n%#v", b, back)
	}
	in := []types.Type{i32}
	got1, err1 := evalText(t, nil, in, "+ 5\n+ 1", d)
	got2, err2 := evalText(t, nil, in, "+ 5\n+ 1", back)
	if err1 != nil || err2 != nil || got1 != got2 || got1 != "5x NULL" {
		t.Fatalf("%q %v / %q %v", got1, err1, got2, err2)
	}
}

// genDesc draws a random, usually malformed, Desc tree.
func genDesc(t *rapid.T, depth int) Desc {
	kinds := []Kind{KindInput, KindLiteral, KindFunc, KindCast, KindCase, KindSimpleCase, KindAnd, KindOr, KindNot,
		KindIsNull, KindIsTrue, KindIsDistinctFrom, KindCoalesce, KindNullIf, KindGreatest, KindIn, "bogus"}
	names := []string{"+", "-", "*", "/", "%", "=", "<", "||", "lower", "length", "substr", "abs", "round",
		"date_trunc", "extract", "like", "concat", "split_part", "power", "sqrt", "now", "nope"}
	values := []string{"0", "1", "-1", "2147483647", "abc", "", "1.5", "NaN", "2024-01-31", "1 day", "t", "year", "%a_"}
	d := Desc{Kind: rapid.SampledFrom(kinds).Draw(t, "kind")}
	d.Type = types.Type{ID: types.ID(rapid.IntRange(0, 16).Draw(t, "type"))}
	d.Index = rapid.IntRange(-1, 3).Draw(t, "index")
	d.Name = rapid.SampledFrom(names).Draw(t, "name")
	if rapid.Bool().Draw(t, "hasValue") {
		v := rapid.SampledFrom(values).Draw(t, "value")
		d.Value = &v
	}
	if depth < 3 {
		n := rapid.IntRange(0, 4).Draw(t, "nargs")
		for i := 0; i < n; i++ {
			d.Args = append(d.Args, genDesc(t, depth+1))
		}
	}
	return d
}

func TestRandomDescsNeverPanic(t *testing.T) {
	in := []types.Type{i32, str, f8}
	c := types.MustParseChunk(in, "+ 1 a 1.5\n+ 0 '' 0\n+ NULL NULL NULL\n+ -2147483648 x -1 D")
	rapid.Check(t, func(t *rapid.T) {
		d := genDesc(t, 0)
		e, err := Build(d, in)
		if err != nil {
			return
		}
		for _, strict := range []bool{true, false} {
			col, err := e.Eval(&Context{Strict: strict}, c)
			if err == nil && col.Len() != c.Capacity() {
				t.Fatalf("%d rows for %d", col.Len(), c.Capacity())
			}
			if err != nil && !strict {
				if _, ok := sqlerr.As(err); ok && sqlerr.CodeOf(err) != sqlerr.Internal {
					t.Fatalf("non-strict evaluation failed with a row error: %v", err)
				}
			}
		}
	})
}
