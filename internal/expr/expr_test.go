package expr

import (
	"strings"
	"testing"

	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

var (
	i16  = types.TInt16
	i32  = types.TInt32
	i64  = types.TInt64
	f4   = types.TFloat32
	f8   = types.TFloat64
	dec  = types.TDecimal
	str  = types.TVarchar
	boo  = types.TBool
	date = types.TDate
	ts   = types.TTimestamp
	ivl  = types.TInterval
)

func lit(s string, t types.Type) Desc { return Desc{Kind: KindLiteral, Type: t, Value: &s} }

// untyped is a string literal without a type ('abc' before binding).
func untyped(s string) Desc { return Desc{Kind: KindLiteral, Value: &s} }

// evalText builds d over input types ts, evaluates it over the chunk
// written in text form, and renders the result one token per row.
func evalText(t *testing.T, ctx *Context, ts []types.Type, chunk string, d Desc) (string, error) {
	t.Helper()
	e, err := Build(d, ts)
	if err != nil {
		return "", err
	}
	c := types.MustParseChunk(ts, chunk)
	col, err := e.Eval(ctx, c)
	if err != nil {
		return "", err
	}
	if col.Len() != c.Capacity() {
		t.Fatalf("result has %d rows, chunk %d", col.Len(), c.Capacity())
	}
	if col.Type() != e.Type() {
		t.Fatalf("result column is %s, Expr says %s", col.Type(), e.Type())
	}
	toks := make([]string, col.Len())
	for i := range toks {
		toks[i] = types.FormatToken(col.Get(i), col.Type())
	}
	return strings.Join(toks, " "), nil
}

type evalCase struct {
	name  string
	ts    []types.Type
	chunk string
	desc  Desc
	want  string // result tokens, or "error 22012" for a strict error
}

func runCases(t *testing.T, cases []evalCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := evalText(t, &Context{Strict: true}, tc.ts, tc.chunk, tc.desc)
			if err != nil {
				got = "error " + string(sqlerr.CodeOf(err))
				if !strings.HasPrefix(tc.want, "error") {
					t.Fatalf("unexpected error: %v", err)
				}
			}
			if got != tc.want {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestArithmetic(t *testing.T) {
	a, b := Input(0, i32), Input(1, i32)
	rows := "+ 1 2\n+ NULL 3\n+ -7 2\n+ 4 NULL\n"
	runCases(t, []evalCase{
		{"add", []types.Type{i32, i32}, rows, Func("+", a, b), "3 NULL -5 NULL"},
		{"sub", []types.Type{i32, i32}, rows, Func("-", a, b), "-1 NULL -9 NULL"},
		{"mul", []types.Type{i32, i32}, rows, Func("*", a, b), "2 NULL -14 NULL"},
		{"div truncates", []types.Type{i32, i32}, rows, Func("/", a, b), "0 NULL -3 NULL"},
		{"mod sign of dividend", []types.Type{i32, i32}, rows, Func("%", a, b), "1 NULL -1 NULL"},
		{"neg", []types.Type{i32, i32}, rows, Func("-", a), "-1 NULL 7 -4"},
		{"int4 overflow", []types.Type{i32, i32}, "+ 2147483647 1", Func("+", a, b), "error 22003"},
		{"int2 overflow", []types.Type{i16, i16}, "+ 200 200", Func("*", Input(0, i16), Input(1, i16)), "error 22003"},
		{"int8 overflow", []types.Type{i64, i64}, "+ 9223372036854775807 1", Func("+", Input(0, i64), Input(1, i64)), "error 22003"},
		{"int8 mul overflow", []types.Type{i64, i64}, "+ 4294967296 4294967296", Func("*", Input(0, i64), Input(1, i64)), "error 22003"},
		{"int4 min / -1", []types.Type{i32, i32}, "+ -2147483648 -1", Func("/", a, b), "error 22003"},
		{"min % -1", []types.Type{i32, i32}, "+ -2147483648 -1", Func("%", a, b), "0"},
		{"div by zero", []types.Type{i32, i32}, "+ 1 0", Func("/", a, b), "error 22012"},
		{"div by zero in NULL row is NULL", []types.Type{i32, i32}, "+ NULL 0", Func("/", a, b), "NULL"},
		{"mixed int widths widen", []types.Type{i16, i64}, "+ 1 9223372036854775806", Func("+", Input(0, i16), Input(1, i64)), "9223372036854775807"},
		{"float div by zero", []types.Type{f8, f8}, "+ 1 0", Func("/", Input(0, f8), Input(1, f8)), "error 22012"},
		{"float overflow", []types.Type{f8, f8}, "+ 1e308 1e308", Func("*", Input(0, f8), Input(1, f8)), "error 22003"},
		{"real overflow", []types.Type{f4, f4}, "+ 3e38 3e38", Func("+", Input(0, f4), Input(1, f4)), "error 22003"},
		{"int plus float", []types.Type{i32, f8}, "+ 1 0.5", Func("+", Input(0, i32), Input(1, f8)), "1.5"},
		{"numeric add exact", []types.Type{dec, dec}, "+ 0.1 0.2", Func("+", Input(0, dec), Input(1, dec)), "0.3"},
		{"numeric div scale", []types.Type{dec, dec}, "+ 1 3\n+ 10 4\n+ 1.000000000000000000001 1", Func("/", Input(0, dec), Input(1, dec)), "0.33333333333333333333 2.5000000000000000 1.000000000000000000001"},
		{"numeric div by zero", []types.Type{dec, dec}, "+ 1 0", Func("/", Input(0, dec), Input(1, dec)), "error 22012"},
		{"numeric mod", []types.Type{dec, dec}, "+ 7.5 2", Func("%", Input(0, dec), Input(1, dec)), "1.5"},
		{"int plus numeric", []types.Type{i32, dec}, "+ 1 0.5", Func("+", Input(0, i32), Input(1, dec)), "1.5"},
	})
}

func TestNonStrictRowErrors(t *testing.T) {
	var seen []sqlerr.Code
	ctx := &Context{OnRowError: func(err error) { seen = append(seen, sqlerr.CodeOf(err)) }}
	ts := []types.Type{i32, i32}
	got, err := evalText(t, ctx, ts, "+ 6 2\n+ 1 0\n+ 2147483647 -1\n- 9 3 D\n+ 5 0 D", Func("/", Input(0, i32), Input(1, i32)))
	if err != nil {
		t.Fatal(err)
	}
	// The invisible row with a zero divisor is NULL but not an error.
	if want := "3 NULL -2147483647 3 NULL"; got != want {
		t.Fatalf("got %q want %q", got, want)
	}
	got, err = evalText(t, ctx, ts, "+ 2147483647 1", Func("+", Input(0, i32), Input(1, i32)))
	if err != nil || got != "NULL" {
		t.Fatalf("overflow: got %q, %v", got, err)
	}
	if ctx.RowErrors() != 2 || len(seen) != 2 || seen[0] != sqlerr.DivisionByZero || seen[1] != sqlerr.NumericValueOutOfRange {
		t.Fatalf("row errors %d, seen %v", ctx.RowErrors(), seen)
	}
}

func TestCompareAndLogic(t *testing.T) {
	two := []types.Type{i64, i64}
	rows := "+ 1 2\n+ 2 2\n+ NULL 1\n+ 3 2"
	for _, tc := range []struct{ op, want string }{
		{"=", "f t NULL f"}, {"<>", "t f NULL t"}, {"<", "t f NULL f"},
		{"<=", "t t NULL f"}, {">", "f f NULL t"}, {">=", "f t NULL t"},
	} {
		runCases(t, []evalCase{
			{tc.op, two, rows, Func(tc.op, Input(0, i64), Input(1, i64)), tc.want},
			{tc.op + " const", two, rows, Func(tc.op, Input(0, i64), Literal(int64(2), i64)), tc.want},
		})
	}
	bools := []types.Type{boo, boo}
	truth := "+ t t\n+ t f\n+ t NULL\n+ f NULL\n+ NULL NULL\n+ f f"
	runCases(t, []evalCase{
		{"float NaN equals NaN", []types.Type{f8, f8}, "+ NaN NaN\n+ NaN 1", Func("=", Input(0, f8), Input(1, f8)), "t f"},
		{"NaN sorts last", []types.Type{f8, f8}, "+ NaN 1e308", Func(">", Input(0, f8), Input(1, f8)), "t"},
		{"string compare", []types.Type{str, str}, "+ a b\n+ b b", Func("<", Input(0, str), Input(1, str)), "t f"},
		{"compare with NULL literal", two, rows, Func("=", Input(0, i64), Null(i64)), "NULL NULL NULL NULL"},
		{"numeric compare with NULL", []types.Type{types.TDecimal, types.TDecimal}, "+ NULL 1\n+ 2 1\n+ 1 NULL", Func(">", Input(0, types.TDecimal), Input(1, types.TDecimal)), "NULL t NULL"},
		{"numeric compare with NULL literal", []types.Type{types.TDecimal}, "+ 1\n+ NULL", Func("<", Input(0, types.TDecimal), Null(types.TDecimal)), "NULL NULL"},
		{"numeric distinct from NULL", []types.Type{types.TDecimal, types.TDecimal}, "+ NULL 1\n+ NULL NULL\n+ 1 1", Node(KindIsDistinctFrom, Input(0, types.TDecimal), Input(1, types.TDecimal)), "t f f"},
		{"and", bools, truth, Node(KindAnd, Input(0, boo), Input(1, boo)), "t f NULL f NULL f"},
		{"or", bools, truth, Node(KindOr, Input(0, boo), Input(1, boo)), "t t t NULL NULL f"},
		{"not", bools, truth, Node(KindNot, Input(1, boo)), "f t NULL NULL NULL t"},
		{"is null", bools, truth, Node(KindIsNull, Input(1, boo)), "f f t t t f"},
		{"is not null", bools, truth, Node(KindIsNotNull, Input(1, boo)), "t t f f f t"},
		{"is true", bools, truth, Node(KindIsTrue, Input(1, boo)), "t f f f f f"},
		{"is not false", bools, truth, Node(KindIsNotFalse, Input(1, boo)), "t f t t t f"},
		{"is distinct from", two, rows + "\n+ NULL NULL", Node(KindIsDistinctFrom, Input(0, i64), Input(1, i64)), "t f t t f"},
		{"is not distinct from", two, rows + "\n+ NULL NULL", Node(KindIsNotDistinctFrom, Input(0, i64), Input(1, i64)), "f t f f t"},
	})
}

func TestConditionals(t *testing.T) {
	two := []types.Type{i32, i32}
	rows := "+ 6 2\n+ 1 0\n+ NULL 5"
	guard := Node(KindCase,
		Func("<>", Input(1, i32), Literal(int64(0), i32)), Func("/", Input(0, i32), Input(1, i32)),
		Literal(int64(-1), i32))
	runCases(t, []evalCase{
		{"case guards division", two, rows, guard, "3 -1 NULL"},
		{"case without else", two, rows, Node(KindCase, Func(">", Input(0, i32), Input(1, i32)), untyped("big")), "big big NULL"},
		{"simple case", two, rows, Node(KindSimpleCase, Input(1, i32), Literal(int64(0), i32), untyped("zero"), Literal(int64(2), i32), untyped("two"), untyped("other")), "two zero other"},
		{"case unifies branch types", two, rows, Node(KindCase, Func("=", Input(1, i32), Literal(int64(0), i32)), Literal(int64(1), i64), Input(0, i32)), "6 1 NULL"},
		{"coalesce", two, rows, Node(KindCoalesce, Input(0, i32), Input(1, i32)), "6 1 5"},
		{"coalesce skips errors on covered rows", two, rows, Node(KindCoalesce, Input(1, i32), Func("/", Input(0, i32), Input(1, i32))), "2 0 5"},
		{"nullif", two, rows + "\n+ 2 2", Node(KindNullIf, Input(0, i32), Input(1, i32)), "6 1 NULL NULL"},
		{"greatest ignores NULL", two, rows, Node(KindGreatest, Input(0, i32), Input(1, i32)), "6 1 5"},
		{"least", two, rows, Node(KindLeast, Input(0, i32), Input(1, i32), Literal(int64(1), i32)), "1 0 1"},
		{"in", two, rows, Node(KindIn, Input(0, i32), Literal(int64(1), i32), Literal(int64(6), i32)), "t t NULL"},
		{"in with NULL item", two, rows, Node(KindIn, Input(0, i32), Literal(int64(1), i32), Null(i32)), "NULL t NULL"},
		{"not in", two, rows, Node(KindNotIn, Input(0, i32), Literal(int64(1), i32), Literal(int64(7), i32)), "t f NULL"},
	})
}
