package expr

import (
	"testing"

	"github.com/sluice-db/sluice/internal/types"
)

func TestStrings(t *testing.T) {
	one := []types.Type{str}
	s := Input(0, str)
	rows := "+ Hello\n+ NULL\n+ 'héllo wörld'"
	runCases(t, []evalCase{
		{"length counts characters", one, rows, Func("length", s), "5 NULL 11"},
		{"upper", one, rows, Func("upper", s), "HELLO NULL 'HÉLLO WÖRLD'"},
		{"lower", one, rows, Func("lower", s), "hello NULL 'héllo wörld'"},
		{"concat op", one, rows, Func("||", s, untyped("!")), "Hello! NULL 'héllo wörld!'"},
		{"substr", one, rows, Func("substr", s, Literal(int64(2), i64), Literal(int64(3), i64)), "ell NULL éll"},
		{"substr start before 1", one, rows, Func("substr", s, Literal(int64(-1), i64), Literal(int64(3), i64)), "H NULL h"},
		{"substr no count", one, rows, Func("substring", s, Literal(int64(7), i32)), "'' NULL wörld"},
		{"substr negative count", one, rows, Func("substr", s, Literal(int64(1), i32), Literal(int64(-1), i32)), "error 22011"},
		{"trim", one, "+ '  x  '", Func("trim", s), "x"},
		{"ltrim chars", one, "+ xxaxx", Func("ltrim", s, untyped("x")), "axx"},
		{"rtrim", one, "+ '  x  '", Func("rtrim", s), "'  x'"},
		{"replace", one, rows, Func("replace", s, untyped("l"), untyped("L")), "HeLLo NULL 'héLLo wörLd'"},
		{"position", one, rows, Func("position", s, untyped("l")), "3 NULL 3"},
		{"position of empty", one, rows, Func("position", s, untyped("")), "1 NULL 1"},
		{"like", one, rows, Func("like", s, untyped("H%o")), "t NULL f"},
		{"like underscore", one, rows, Func("like", s, untyped("h_llo%")), "f NULL t"},
		{"ilike", one, rows, Func("ilike", s, untyped("h%")), "t NULL t"},
		{"not like", one, rows, Func("not_like", s, untyped("%o")), "f NULL t"},
		{"like escape", one, "+ 50%\n+ 500", Func("like", s, untyped("50!%"), untyped("!")), "t f"},
		{"like default escape", one, "+ a_b\n+ axb", Func("like", s, untyped(`a\_b`)), "t f"},
		{"starts_with", one, rows, Func("starts_with", s, untyped("He")), "t NULL f"},
		{"concat skips NULL", []types.Type{str, i32}, "+ a 1\n+ NULL 2\n+ b NULL", Func("concat", s, Input(1, i32), untyped("-")), "a1- 2- b-"},
		{"concat_ws", []types.Type{str, i32}, "+ a 1\n+ NULL 2", Func("concat_ws", untyped(","), s, Input(1, i32)), "a,1 2"},
		{"split_part", one, "+ a,b,c", Func("split_part", s, untyped(","), Literal(int64(2), i32)), "b"},
		{"split_part negative", one, "+ a,b,c", Func("split_part", s, untyped(","), Literal(int64(-1), i32)), "c"},
		{"split_part zero", one, "+ a,b,c", Func("split_part", s, untyped(","), Literal(int64(0), i32)), "error 22023"},
		{"left right", one, rows, Func("||", Func("left", s, Literal(int64(2), i32)), Func("right", s, Literal(int64(-3), i32))), "Helo NULL 'hélo wörld'"},
		{"repeat", one, "+ ab", Func("repeat", s, Literal(int64(3), i32)), "ababab"},
		{"reverse", one, rows, Func("reverse", s), "olleH NULL 'dlröw olléh'"},
	})
}

func TestMath(t *testing.T) {
	runCases(t, []evalCase{
		{"abs int", []types.Type{i32}, "+ -3\n+ NULL", Func("abs", Input(0, i32)), "3 NULL"},
		{"abs int min overflows", []types.Type{i32}, "+ -2147483648", Func("abs", Input(0, i32)), "error 22003"},
		{"round float half even", []types.Type{f8}, "+ 2.5\n+ 3.5\n+ -2.5", Func("round", Input(0, f8)), "2 4 -2"},
		{"round numeric half away", []types.Type{dec}, "+ 2.5\n+ -2.5\n+ 2.449", Func("round", Input(0, dec)), "3 -3 2"},
		{"round numeric places", []types.Type{dec}, "+ 2.345\n+ 1234", Func("round", Input(0, dec), Literal(int64(2), i32)), "2.35 1234.00"},
		{"round numeric negative places", []types.Type{dec}, "+ 1250", Func("round", Input(0, dec), Literal(int64(-2), i32)), "1300"},
		{"round int picks double", []types.Type{i32}, "+ 5", Func("round", Input(0, i32)), "5"},
		{"ceil floor", []types.Type{f8}, "+ 1.2\n+ -1.2", Func("+", Func("ceil", Input(0, f8)), Func("floor", Input(0, f8))), "3 -3"},
		{"numeric ceil", []types.Type{dec}, "+ 1.2\n+ -1.2", Func("ceil", Input(0, dec)), "2 -1"},
		{"sqrt", []types.Type{f8}, "+ 16\n+ -1", Func("sqrt", Input(0, f8)), "error 2201F"},
		{"sqrt numeric", []types.Type{dec}, "+ 2", Func("sqrt", Input(0, dec)), "1.414213562373095"},
		{"power", []types.Type{f8}, "+ 2", Func("power", Input(0, f8), Literal(float64(10), f8)), "1024"},
		{"power zero negative", []types.Type{f8}, "+ 0", Func("power", Input(0, f8), Literal(float64(-1), f8)), "error 2201F"},
		{"mod", []types.Type{i32}, "+ 7\n+ -7", Func("mod", Input(0, i32), Literal(int64(3), i32)), "1 -1"},
		{"sign", []types.Type{f8}, "+ -5\n+ 0\n+ 3", Func("sign", Input(0, f8)), "-1 0 1"},
	})
}

func TestCasts(t *testing.T) {
	runCases(t, []evalCase{
		{"float to int rounds half even", []types.Type{f8}, "+ 2.5\n+ 3.5\n+ -0.5\n+ NULL", Cast(Input(0, f8), i32), "2 4 0 NULL"},
		{"float to int out of range", []types.Type{f8}, "+ 3e9", Cast(Input(0, f8), i32), "error 22003"},
		{"numeric to int rounds half away", []types.Type{dec}, "+ 2.5\n+ -2.5\n+ 2.4", Cast(Input(0, dec), i64), "3 -3 2"},
		{"int8 to int2 range", []types.Type{i64}, "+ 40000", Cast(Input(0, i64), i16), "error 22003"},
		{"int to numeric", []types.Type{i32}, "+ 42", Cast(Input(0, i32), dec), "42"},
		{"float to numeric", []types.Type{f8}, "+ 0.1\n+ 1e20", Cast(Input(0, f8), dec), "0.1 100000000000000000000"},
		{"numeric to float", []types.Type{dec}, "+ 1.5", Cast(Input(0, dec), f8), "1.5"},
		{"double to real overflow", []types.Type{f8}, "+ 1e300", Cast(Input(0, f8), f4), "error 22003"},
		{"text to int", []types.Type{str}, "+ 12\n+ NULL", Cast(Input(0, str), i32), "12 NULL"},
		{"text to int bad", []types.Type{str}, "+ abc", Cast(Input(0, str), i32), "error 22P02"},
		{"int to text", []types.Type{i32}, "+ -12", Cast(Input(0, i32), str), "-12"},
		{"bool to int", []types.Type{boo}, "+ t\n+ f", Cast(Input(0, boo), i32), "1 0"},
		{"int to bool", []types.Type{i32}, "+ 5\n+ 0", Cast(Input(0, i32), boo), "t f"},
		{"literal folded", []types.Type{i32}, "+ 1", Cast(untyped("7"), i64), "7"},
		{"date to timestamp", []types.Type{date}, "+ 2024-02-29", Cast(Input(0, date), ts), "'2024-02-29 00:00:00'"},
		{"timestamp to date", []types.Type{ts}, "+ '1969-12-31 23:00:00'", Cast(Input(0, ts), date), "1969-12-31"},
		{"interval to text", []types.Type{ivl}, "+ '1 day'", Cast(Cast(Input(0, ivl), str), ivl), "'1 day'"},
	})
	if _, err := Build(Cast(Input(0, boo), date), []types.Type{boo}); err == nil {
		t.Fatal("bool to date cast accepted")
	}
}

func TestDatetime(t *testing.T) {
	runCases(t, []evalCase{
		{"timestamp + month clamps", []types.Type{ts, ivl}, "+ '2024-01-31 10:00:00' '1 mon'\n+ NULL '1 day'", Func("+", Input(0, ts), Input(1, ivl)), "'2024-02-29 10:00:00' NULL"},
		{"timestamp - interval", []types.Type{ts, ivl}, "+ '2024-03-01 00:00:00' '1 day 01:00:00'", Func("-", Input(0, ts), Input(1, ivl)), "'2024-02-28 23:00:00'"},
		{"date + int", []types.Type{date, i32}, "+ 2024-02-28 2", Func("+", Input(0, date), Input(1, i32)), "2024-03-01"},
		{"date - date", []types.Type{date, date}, "+ 2024-03-01 2024-02-28", Func("-", Input(0, date), Input(1, date)), "2"},
		{"date + interval", []types.Type{date, ivl}, "+ 2024-01-01 '02:30:00'", Func("+", Input(0, date), Input(1, ivl)), "'2024-01-01 02:30:00'"},
		{"timestamp - timestamp", []types.Type{ts, ts}, "+ '2024-01-03 03:00:00' '2024-01-01 00:00:00'", Func("-", Input(0, ts), Input(1, ts)), "'2 days 03:00:00'"},
		{"interval * number", []types.Type{ivl}, "+ '1 mon'", Func("*", Input(0, ivl), Literal(float64(1.5), f8)), "'1 mon 15 days'"},
		{"interval + interval", []types.Type{ivl, ivl}, "+ '1 day' '02:00:00'", Func("+", Input(0, ivl), Input(1, ivl)), "'1 day 02:00:00'"},
		{"extract year", []types.Type{ts}, "+ '2024-05-06 07:08:09.5'", Func("extract", untyped("year"), Input(0, ts)), "2024"},
		{"extract second", []types.Type{ts}, "+ '2024-05-06 07:08:09.5'", Func("extract", untyped("second"), Input(0, ts)), "9.500000"},
		{"extract dow doy", []types.Type{ts}, "+ '2024-05-05 00:00:00'", Func("+", Func("date_part", untyped("dow"), Input(0, ts)), Func("date_part", untyped("doy"), Input(0, ts))), "126"},
		{"extract epoch", []types.Type{ts}, "+ '1970-01-02 00:00:01'", Func("extract", untyped("epoch"), Input(0, ts)), "86401.000000"},
		{"extract from date", []types.Type{date}, "+ 2024-05-06", Func("extract", untyped("month"), Input(0, date)), "5"},
		{"extract interval epoch", []types.Type{ivl}, "+ '1 day 00:00:01'", Func("extract", untyped("epoch"), Input(0, ivl)), "86401.000000"},
		{"extract bad unit", []types.Type{ts}, "+ '2024-05-06 07:08:09'", Func("extract", untyped("fortnight"), Input(0, ts)), "error 22023"},
		{"date_trunc month", []types.Type{ts}, "+ '2024-05-06 07:08:09'", Func("date_trunc", untyped("month"), Input(0, ts)), "'2024-05-01 00:00:00'"},
		{"date_trunc week", []types.Type{ts}, "+ '2024-05-05 07:08:09'", Func("date_trunc", untyped("week"), Input(0, ts)), "'2024-04-29 00:00:00'"},
		{"to_timestamp", []types.Type{i32}, "+ 1", Func("=", Func("to_timestamp", Literal(float64(0), f8)), Cast(untyped("1970-01-01 00:00:00+00"), types.TTimestamptz)), "t"},
	})
}

func TestNowComesFromContext(t *testing.T) {
	ctx := &Context{Strict: true, Now: types.DTimestamptz(123456)}
	e := MustBuild(Func("now"), nil)
	d, err := EvalRow(ctx, e, nil, nil)
	if err != nil || d != types.DTimestamptz(123456) {
		t.Fatalf("now() = %v, %v", d, err)
	}
}
