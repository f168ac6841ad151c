package expr

import (
	"time"

	"testing"

	"github.com/sluice-db/sluice/internal/testenv"
	"github.com/sluice-db/sluice/internal/types"
)

// Cases found by running the same expressions on Postgres 15 and on Sluice
// (tests/slt/expr_types.slt holds the SQL side of the same comparison).

func TestNumericSpecialValues(t *testing.T) {
	a, b := Input(0, dec), Input(1, dec)
	two := []types.Type{dec, dec}
	rows := "+ Infinity -Infinity\n+ Infinity Infinity\n+ -Infinity -Infinity\n+ NaN 1\n+ Infinity 2\n+ 5 Infinity"
	runCases(t, []evalCase{
		{"add", two, rows, Func("+", a, b), "NaN Infinity -Infinity NaN Infinity Infinity"},
		{"sub", two, rows, Func("-", a, b), "Infinity NaN NaN NaN Infinity -Infinity"},
		{"mul", two, rows + "\n+ Infinity 0\n+ 0 -Infinity", Func("*", a, b), "-Infinity Infinity Infinity NaN Infinity Infinity NaN NaN"},
		{"div", two, rows, Func("/", a, b), "NaN NaN NaN NaN Infinity 0"},
		{"mod", two, rows + "\n+ -3.5 -Infinity", Func("%", a, b), "NaN NaN NaN NaN NaN 5 -3.5"},
		{"NaN / 0 is NaN", two, "+ NaN 0", Func("/", a, b), "NaN"},
		{"NaN % 0 is NaN", two, "+ NaN 0", Func("%", a, b), "NaN"},
		{"Infinity / 0", two, "+ Infinity 0", Func("/", a, b), "error 22012"},
		{"Infinity % 0", two, "+ Infinity 0", Func("%", a, b), "error 22012"},
		{"float NaN / 0 is NaN", []types.Type{f8, f8}, "+ NaN 0", Func("/", Input(0, f8), Input(1, f8)), "NaN"},
		{"real NaN / 0 is NaN", []types.Type{f4, f4}, "+ NaN 0", Func("/", Input(0, f4), Input(1, f4)), "NaN"},
	})
}

func TestNumericNaNOrdersLast(t *testing.T) {
	a, b := Input(0, dec), Input(1, dec)
	two := []types.Type{dec, dec}
	rows := "+ NaN Infinity\n+ NaN 1\n+ NaN NaN\n+ -Infinity NaN"
	runCases(t, []evalCase{
		{">", two, rows, Func(">", a, b), "t t f f"},
		{"<", two, rows, Func("<", a, b), "f f f t"},
		{"=", two, rows, Func("=", a, b), "f f t f"},
		{"greatest", two, rows, Node(KindGreatest, a, b), "NaN NaN NaN NaN"},
	})
}

func TestAndOrShortCircuit(t *testing.T) {
	x := Input(0, i32)
	guard := Func("<>", x, Literal(int64(0), i32))
	div := Func("=", Func("/", Literal(int64(10), i32), x), Literal(int64(10), i32))
	one := []types.Type{i32}
	rows := "+ 1\n+ 0\n+ NULL\n+ 5"
	runCases(t, []evalCase{
		{"AND guard", one, rows, Node(KindAnd, guard, div), "t f NULL f"},
		{"OR guard", one, rows, Node(KindOr, Func("=", x, Literal(int64(0), i32)), div), "t t NULL f"},
		// The guard leaves NULL rows undecided, so the division still runs
		// for them (and is NULL there): NULL AND NULL.
		{"AND of three", one, rows, Node(KindAnd, guard, guard, div), "t f NULL f"},
		{"unguarded still fails", one, rows, Node(KindAnd, div, guard), "error 22012"},
	})
	// In a streaming job the guarded division is no row error either.
	ctx := &Context{}
	if _, err := evalText(t, ctx, one, rows, Node(KindAnd, guard, div)); err != nil {
		t.Fatal(err)
	}
	if n := ctx.RowErrors(); n != 0 {
		t.Fatalf("guarded AND counted %d row errors", n)
	}
}

func TestStringParity(t *testing.T) {
	s := Input(0, str)
	one := []types.Type{str}
	runCases(t, []evalCase{
		// position(sub IN s) reaches Build as position(s, sub).
		{"position", one, "+ hello\n+ héllö", Func("position", s, untyped("l")), "3 3"},
		{"position empty", one, "+ hello", Func("position", s, untyped("")), "1"},
		{"like_escape", one, "+ a#c\n+ 50%\n+ a\\c", Func("like_escape", s, untyped("#")), `a\c 50% a\\c`},
		{"like_escape empty", one, `+ a\c`, Func("like_escape", s, untyped("")), `a\\c`},
		{"like escape #", one, "+ a%\n+ ab", Func("like", s, Func("like_escape", untyped("a#%"), untyped("#"))), "t f"},
		{"like_escape too long", one, "+ a", Func("like_escape", s, untyped("ab")), "error 22025"},
		{"trailing escape unused", one, "+ a\n+ ''", Func("like", s, untyped(`a\`)), "f f"},
		{"trailing escape needed", one, "+ ab", Func("like", s, untyped(`a\`)), "error 22025"},
		{"bool to text", []types.Type{boo}, "+ t\n+ f\n+ NULL", Cast(Input(0, boo), str), "true false NULL"},
	})
}

func TestDatetimeInfinity(t *testing.T) {
	d, w, z := Input(0, date), Input(0, ts), Input(0, types.TTimestamptz)
	dates := []types.Type{date}
	stamps := []types.Type{ts}
	day := lit("1 day", ivl)
	runCases(t, []evalCase{
		{"date + int", dates, "+ infinity\n+ -infinity", Func("+", d, Literal(int64(5), i32)), "infinity -infinity"},
		{"date + interval", dates, "+ infinity\n+ -infinity", Func("+", d, day), "infinity -infinity"},
		{"date - date", dates, "+ infinity", Func("-", d, lit("2024-01-01", date)), "error 22008"},
		{"date to timestamp", dates, "+ infinity\n+ -infinity\n+ 2024-01-02", Cast(d, ts), "infinity -infinity '2024-01-02 00:00:00'"},
		{"date beyond timestamps", dates, "+ 5874897-12-31", Cast(d, ts), "error 22008"},
		{"date to timestamptz", dates, "+ -infinity", Cast(d, types.TTimestamptz), "-infinity"},
		{"timestamp + interval", stamps, "+ infinity\n+ -infinity", Func("-", w, day), "infinity -infinity"},
		{"timestamptz + interval", []types.Type{types.TTimestamptz}, "+ infinity", Func("+", z, day), "infinity"},
		{"timestamp - timestamp", stamps, "+ infinity", Func("-", w, lit("2024-01-01", ts)), "error 22008"},
		{"timestamp to date", stamps, "+ infinity\n+ -infinity", Cast(w, date), "infinity -infinity"},
		{"timestamp to time", stamps, "+ infinity\n+ '2024-01-01 10:00:00'", Cast(w, types.TTime), "NULL 10:00:00"},
		{"extract year", stamps, "+ infinity\n+ -infinity", Func("extract", untyped("year"), w), "Infinity -Infinity"},
		{"extract hour", stamps, "+ infinity", Func("extract", untyped("hour"), w), "NULL"},
		{"date_part epoch", stamps, "+ -infinity", Func("date_part", untyped("epoch"), w), "-Infinity"},
		{"date_trunc", stamps, "+ infinity\n+ -infinity", Func("date_trunc", untyped("month"), w), "infinity -infinity"},
		{"extract BC year", stamps, "+ '0001-01-01 00:00:00 BC'", Func("extract", untyped("year"), w), "-1"},
		{"extract millennium", stamps, "+ '2000-12-31 00:00:00'\n+ '2001-01-01 00:00:00'", Func("extract", untyped("millennium"), w), "2 3"},
		{"date_trunc millennium", stamps, "+ '2000-12-31 00:00:00'", Func("date_trunc", untyped("millennium"), w), "'1001-01-01 00:00:00'"},
	})
}

func TestTimeZoneTransitions(t *testing.T) {
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		testenv.Missing(t, "the time zone database", "apt-get install -y tzdata: "+err.Error())
	}
	tz := types.TTimestamptz
	cases := []struct {
		name   string
		ts     []types.Type
		chunk  string
		desc   Desc
		expect string
	}{
		// Expected values are Postgres 15's with timezone America/New_York.
		{"skipped wall clock", []types.Type{ts}, "+ '2024-03-10 02:30:00'", Cast(Input(0, ts), tz), "'2024-03-10 07:30:00+00'"},
		{"repeated wall clock", []types.Type{ts}, "+ '2024-11-03 01:30:00'", Cast(Input(0, ts), tz), "'2024-11-03 06:30:00+00'"},
		{"plus a day into the gap", []types.Type{tz}, "+ '2024-03-09 07:30:00+00'", Func("+", Input(0, tz), lit("1 day", ivl)), "'2024-03-10 07:30:00+00'"},
		{"plus a day across fall back", []types.Type{tz}, "+ '2024-11-02 05:30:00+00'", Func("+", Input(0, tz), lit("1 day", ivl)), "'2024-11-03 06:30:00+00'"},
		{"plus an hour is an hour", []types.Type{tz}, "+ '2024-11-03 04:30:00+00'", Func("+", Input(0, tz), lit("1 hour", ivl)), "'2024-11-03 05:30:00+00'"},
		{"at time zone", []types.Type{ts}, "+ '2024-03-10 02:30:00'", Func("timezone", untyped("America/New_York"), Input(0, ts)), "'2024-03-10 07:30:00+00'"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := evalText(t, &Context{Strict: true, Location: ny}, tc.ts, tc.chunk, tc.desc)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.expect {
				t.Fatalf("got %s, want %s", got, tc.expect)
			}
		})
	}
}

func TestIntervalScaleAndJustify(t *testing.T) {
	v := Input(0, ivl)
	one := []types.Type{ivl}
	runCases(t, []evalCase{
		{"month / 7", one, "+ '1 mon'", Func("/", v, Literal(7.0, f8)), "'4 days 06:51:25.6896'"},
		{"month * 1.5", one, "+ '1 mon'", Func("*", v, Literal(1.5, f8)), "'1 mon 15 days'"},
		{"justify_hours", one, "+ '27:00:00'", Func("justify_hours", v), "'1 day 03:00:00'"},
		{"justify_days", one, "+ '35 days'\n+ '-35 days'", Func("justify_days", v), "'1 mon 5 days' '-1 mons -5 days'"},
		{"justify_interval", one, "+ '1 mon -01:00:00'\n+ '-1 mons 32 days 25:00:00'", Func("justify_interval", v), "'29 days 23:00:00' '3 days 01:00:00'"},
		{"time + interval wraps", []types.Type{types.TTime}, "+ 10:00:00", Func("+", Input(0, types.TTime), lit("15 hours", ivl)), "01:00:00"},
		{"date + time", []types.Type{date}, "+ 2024-01-01", Func("+", Input(0, date), lit("10:30", types.TTime)), "'2024-01-01 10:30:00'"},
	})
}
