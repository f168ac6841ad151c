package expr

import (
	"testing"

	"pgregory.net/rapid"

	"github.com/sluice-db/sluice/internal/types"
)

// drawMicros draws timestamp micros (or an interval's time part) from the
// whole range, its edges and near zero.
func drawMicros(t *rapid.T, label string) int64 {
	return rapid.OneOf(
		rapid.Int64Range(types.MinTimestampMicros, types.EndTimestampMicros-1),
		rapid.Int64Range(types.MinTimestampMicros, types.MinTimestampMicros+1_000_000),
		rapid.Int64Range(types.EndTimestampMicros-1_000_000, types.EndTimestampMicros-1),
		rapid.Int64Range(-86_400_000_000, 86_400_000_000),
		rapid.Int64(),
	).Draw(t, label)
}

// TestWallPlusOfTimeMatchesCalendar: timestamp + an interval of only a
// time part adds micros, as the calendar path (months, days, then time)
// does, with the same range errors.
func TestWallPlusOfTimeMatchesCalendar(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		w := rapid.Int64Range(types.MinTimestampMicros, types.EndTimestampMicros-1).Draw(t, "w")
		v := types.DInterval{Micros: drawMicros(t, "us")}
		got, gotErr := wallPlus(w, v)
		want, wantErr := addInterval(wallTime(w), v)
		if (gotErr != nil) != (wantErr != nil) || gotErr == nil && got != want {
			t.Fatalf("%d + %dus: got %d, %v; calendar %d, %v", w, v.Micros, got, gotErr, want, wantErr)
		}
	})
}

// TestConstantRightArgumentMatchesColumn: a binary function of a column
// and a literal gives what it gives with the literal's value in a column
// of its own, row errors (NULL, counted) and NULLs included.
func TestConstantRightArgumentMatchesColumn(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(1, 40).Draw(t, "rows")
		v := types.DInterval{Micros: drawMicros(t, "us")}
		if rapid.Bool().Draw(t, "days") {
			v.Days = rapid.Int32Range(-400, 400).Draw(t, "d")
		}
		times := &types.Vec[types.DTimestamp]{Typ: types.TTimestamp}
		ivls := &types.Vec[types.DInterval]{Typ: types.TInterval}
		for range n {
			if rapid.IntRange(0, 5).Draw(t, "null") == 0 {
				times.AppendNull()
			} else {
				times.Append(types.DTimestamp(drawMicros(t, "w") % types.EndTimestampMicros))
			}
			ivls.Append(v)
		}
		c := types.NewChunk([]types.Column{times, ivls}, nil)
		in := []types.Type{types.TTimestamp, types.TInterval}
		op := rapid.SampledFrom([]string{"+", "-"}).Draw(t, "op")
		eval := func(d Desc) (types.Column, uint64) {
			e, err := Build(d, in)
			if err != nil {
				t.Fatal(err)
			}
			ctx := &Context{}
			col, err := e.Eval(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			return col, ctx.RowErrors()
		}
		got, gotErrs := eval(Func(op, Input(0, types.TTimestamp), Literal(v, types.TInterval)))
		want, wantErrs := eval(Func(op, Input(0, types.TTimestamp), Input(1, types.TInterval)))
		for i := range n {
			if types.Compare(got.Get(i), want.Get(i)) != 0 {
				t.Fatalf("row %d: %v %s %v = %v with a literal, %v with a column", i, times.Get(i), op, v, got.Get(i), want.Get(i))
			}
		}
		if gotErrs != wantErrs {
			t.Fatalf("row errors: %d with a literal, %d with a column", gotErrs, wantErrs)
		}
	})
}

// TestConstColumnOfDatetimeTypes: a literal of each datetime type (and
// a NULL one) fills every row of its column.
func TestConstColumnOfDatetimeTypes(t *testing.T) {
	for _, c := range []struct {
		t types.Type
		d types.Datum
	}{
		{types.TInterval, types.DInterval{Months: 1, Days: 2, Micros: 3}},
		{types.TTimestamp, types.DTimestamp(123_456)},
		{types.TTimestamptz, types.DTimestamptz(-5)},
		{types.TDate, types.DDate(42)},
		{types.TTime, types.DTime(7_000_000)},
	} {
		for _, d := range []types.Datum{c.d, nil} {
			col, err := constColumn(c.t, d, 3)
			if err != nil {
				t.Fatal(err)
			}
			if col.Len() != 3 {
				t.Fatalf("%s %v: %d rows, want 3", c.t, d, col.Len())
			}
			for i := range 3 {
				if got := col.Get(i); types.Compare(got, d) != 0 || (got == nil) != (d == nil) {
					t.Fatalf("%s: row %d is %v, want %v", c.t, i, got, d)
				}
			}
		}
	}
}
