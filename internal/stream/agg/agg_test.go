package agg

import (
	"strings"
	"testing"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/stream/streamtest"
	"github.com/sluice-db/sluice/internal/types"
)

type aggCase struct {
	name   string
	in     []types.Type
	groups []int
	calls  []plan.AggCall
	script string
	want   string
}

var aggCases = []aggCase{
	{
		// The value table keeps the spelling last written to a key;
		// min and max show it, whether read by a scan or kept in memory.
		name: "min and max of key-equal numerics show the spelling last written",
		in:   tsch(i32, dec), groups: []int{0},
		calls: []plan.AggCall{ac(plan.AggMax, dec, 1), ac(plan.AggMin, dec, 1)},
		script: `barrier
			+ 1 1.0
			barrier
			+ 1 1.00
			+ 1 0.5
			barrier
			- 1 1.0
			barrier
			- 1 0.5
			stop`,
		want: `barrier
			+ 1 1.0 1.0
			barrier
			U- 1 1.0 1.0
			U+ 1 1.00 0.5
			barrier
			U- 1 1.00 0.5
			U+ 1 1.0 0.5
			barrier
			U- 1 1.0 0.5
			U+ 1 1.0 1.0
			barrier`,
	},
	{
		name: "count sum min max with deletes of the min and an emptied group",
		in:   tsch(i32, i32), groups: []int{0},
		calls: []plan.AggCall{ac(plan.AggCountStar, i64), ac(plan.AggCount, i64, 1), ac(plan.AggSum, i64, 1),
			ac(plan.AggMin, i32, 1), ac(plan.AggMax, i32, 1)},
		script: `barrier
			+ 1 10
			+ 1 20
			+ 2 5
			+ 1 NULL
			barrier
			- 1 10
			- 2 5
			barrier
			U- 1 20
			U+ 1 7
			stop`,
		want: `barrier
			+ 1 3 2 30 10 20
			+ 2 1 1 5 5 5
			barrier
			U- 1 3 2 30 10 20
			U+ 1 2 1 20 20 20
			- 2 1 1 5 5 5
			barrier
			U- 1 2 1 20 20 20
			U+ 1 2 1 7 7 7
			barrier`,
	},
	{
		// A new group's values wait and are written at the flush as fresh
		// rows (pending.go); the next max is found among them before their
		// epoch commits (waited.go): the script never commits.
		name: "a new group's values counted at its flush, the next max found before the commit",
		in:   tsch(i32, i32), groups: []int{0},
		calls: []plan.AggCall{ac(plan.AggCountStar, i64), ac(plan.AggMax, i32, 1)},
		script: `barrier
			+ 1 5
			+ 1 9
			+ 1 9
			+ 1 7
			+ 2 3
			barrier
			- 1 9
			barrier
			- 1 9
			- 2 3
			barrier
			- 1 7
			+ 3 4
			+ 3 8
			barrier
			- 3 8
			stop`,
		want: `barrier
			+ 1 4 9
			+ 2 1 3
			barrier
			U- 1 4 9
			U+ 1 3 9
			barrier
			U- 1 3 9
			U+ 1 2 7
			- 2 1 3
			barrier
			U- 1 2 7
			U+ 1 1 5
			+ 3 2 8
			barrier
			U- 3 2 8
			U+ 3 1 4
			barrier`,
	},
	{
		// Epochs 1 and 2 both write their new groups' values fresh (the
		// script never commits); epoch 3's rescans find them in both.
		name: "new groups in two uncommitted epochs, then the max of each deleted",
		in:   tsch(i32, i32), groups: []int{0},
		calls: []plan.AggCall{ac(plan.AggMax, i32, 1), ac(plan.AggMin, i32, 1)},
		script: `barrier
			+ 1 5
			+ 1 9
			barrier
			+ 2 3
			+ 2 8
			+ 2 8
			barrier
			- 1 9
			- 2 8
			- 2 3
			stop`,
		want: `barrier
			+ 1 9 5
			barrier
			+ 2 8 3
			barrier
			U- 1 9 5
			U+ 1 5 5
			U- 2 8 3
			U+ 2 8 8
			barrier`,
	},
	{
		name: "insert and delete in one epoch emit nothing; a group can come back",
		in:   tsch(i32, i32), groups: []int{0},
		calls: []plan.AggCall{ac(plan.AggCountStar, i64), ac(plan.AggMax, i32, 1)},
		script: `barrier
			+ 1 10
			chunk
			- 1 10
			barrier
			+ 1 3
			barrier
			- 1 3
			barrier
			+ 1 4
			stop`,
		want: `barrier
			barrier
			+ 1 1 3
			barrier
			- 1 1 3
			barrier
			+ 1 1 4
			barrier`,
	},
	{
		name: "simple agg on empty input emits its initial row once, at the end of its first epoch",
		in:   tsch(i32, str),
		calls: []plan.AggCall{ac(plan.AggCountStar, i64), ac(plan.AggSum, i64, 0), ac(plan.AggAvg, dec, 0),
			ac(plan.AggMin, i32, 0), ac(plan.AggStringAgg, str, 1, 1)},
		script: `barrier
			barrier
			stop`,
		want: `barrier
			+ 0 NULL NULL NULL NULL
			barrier
			barrier`,
	},
	{
		name: "simple agg updates and returns to empty",
		in:   tsch(i32),
		calls: []plan.AggCall{ac(plan.AggCountStar, i64), ac(plan.AggSum, i64, 0), ac(plan.AggAvg, dec, 0),
			ac(plan.AggMin, i32, 0)},
		script: `barrier
			+ 1
			+ 2
			barrier
			- 1
			- 2
			stop`,
		want: `barrier
			+ 2 3 1.5000000000000000 1
			barrier
			U- 2 3 1.5000000000000000 1
			U+ 0 NULL NULL NULL
			barrier`,
	},
	{
		name: "sum and avg result types, overflow into numeric, NaN retracted",
		in:   tsch(i64, f64, dec),
		calls: []plan.AggCall{ac(plan.AggSum, dec, 0), ac(plan.AggSum, f64, 1), ac(plan.AggAvg, f64, 1),
			ac(plan.AggSum, dec, 2), ac(plan.AggAvg, dec, 2)},
		script: `barrier
			+ 9223372036854775807 1.5 1.25
			+ 9223372036854775807 2.5 2.75
			barrier
			+ NULL NaN NaN
			barrier
			- NULL NaN NaN
			stop`,
		want: `barrier
			+ 18446744073709551614 4 2 4.00 2.0000000000000000
			barrier
			U- 18446744073709551614 4 2 4.00 2.0000000000000000
			U+ 18446744073709551614 NaN NaN NaN NaN
			barrier
			U- 18446744073709551614 NaN NaN NaN NaN
			U+ 18446744073709551614 4 2 4.00 2.0000000000000000
			barrier`,
	},
	{
		name: "small int and real sums",
		in:   tsch(i16, f32),
		calls: []plan.AggCall{ac(plan.AggSum, i64, 0), ac(plan.AggAvg, dec, 0), ac(plan.AggSum, f32, 1),
			ac(plan.AggMax, f32, 1)},
		script: `barrier
			+ 32767 0.5
			+ 32767 0.25
			+ -1 Infinity
			stop`,
		want: `barrier
			+ 65533 21844.333333333333 Infinity Infinity
			barrier`,
	},
	{
		name: "bool_and bool_or and FILTER",
		in:   tsch(i32, boo, boo), groups: []int{0},
		calls: []plan.AggCall{ac(plan.AggBoolAnd, boo, 1), ac(plan.AggBoolOr, boo, 1),
			filterCol(ac(plan.AggCountStar, i64), 2), filterCol(ac(plan.AggBoolAnd, boo, 1), 2)},
		script: `barrier
			+ 1 t t
			+ 1 f f
			+ 1 NULL t
			barrier
			- 1 f f
			barrier
			- 1 t t
			stop`,
		want: `barrier
			+ 1 f t 2 t
			barrier
			U- 1 f t 2 t
			U+ 1 t t 2 t
			barrier
			U- 1 t t 2 t
			U+ 1 NULL NULL 1 NULL
			barrier`,
	},
	{
		name: "DISTINCT count sum avg",
		in:   tsch(i32, i32), groups: []int{0},
		calls: []plan.AggCall{distinct(ac(plan.AggCount, i64, 1)), distinct(ac(plan.AggSum, i64, 1)),
			ac(plan.AggCount, i64, 1), distinct(ac(plan.AggAvg, dec, 1)), distinct(ac(plan.AggMax, i32, 1))},
		script: `barrier
			+ 1 5
			+ 1 5
			+ 1 7
			+ 1 NULL
			barrier
			- 1 5
			barrier
			- 1 5
			stop`,
		want: `barrier
			+ 1 2 12 3 6.0000000000000000 7
			barrier
			U- 1 2 12 3 6.0000000000000000 7
			U+ 1 2 12 2 6.0000000000000000 7
			barrier
			U- 1 2 12 2 6.0000000000000000 7
			U+ 1 1 7 1 7.0000000000000000 7
			barrier`,
	},
	{
		name: "string_agg with per-row delimiters, ORDER BY and DISTINCT",
		in:   tsch(i32, str, str, i32), groups: []int{0},
		calls: []plan.AggCall{orderBy(ac(plan.AggStringAgg, str, 1, 2), 3, false), ac(plan.AggStringAgg, str, 1, 2),
			orderBy(ac(plan.AggStringAgg, str, 1, 2), 3, true), distinct(ac(plan.AggStringAgg, str, 1, 2))},
		script: `barrier
			+ 1 b , 1
			+ 1 a ; 2
			+ 1 c , 3
			+ 1 c , 4
			+ 1 NULL , 5
			barrier
			- 1 b , 1
			stop`,
		want: `barrier
			+ 1 b;a,c,c a,b,c,c c,c;a,b a,b,c
			barrier
			U- 1 b;a,c,c a,b,c,c c,c;a,b a,b,c
			U+ 1 a,c,c a,c,c c,c;a a,c
			barrier`,
	},
	{
		name: "NULL group keys form one group",
		in:   tsch(str, i32), groups: []int{0},
		calls: []plan.AggCall{ac(plan.AggCountStar, i64), ac(plan.AggMin, i32, 1)},
		script: `barrier
			+ NULL 3
			+ x 1
			+ NULL 2
			stop`,
		want: `barrier
			+ NULL 2 2
			+ x 1 1
			barrier`,
	},
}

func TestAggOperator(t *testing.T) {
	for _, tc := range aggCases {
		for _, cache := range []int{1, 1000} {
			t.Run(tc.name+"/cache="+itoa(cache), func(t *testing.T) {
				st := streamtest.OpenStore(t)
				node := planAgg(tc.in, tc.groups, cloneCalls(tc.calls), 1)
				src := stream.NewMockSource(tc.in, script(tc.in, tc.script, 1)...)
				a, err := NewAgg(testEnv(st, cache), src, node)
				if err != nil {
					t.Fatal(err)
				}
				got := drain(t, a)
				if want := trimLines(tc.want); got != want {
					t.Errorf("got:\n%s\nwant:\n%s", got, want)
				}
			})
		}
	}
}

func cloneCalls(cs []plan.AggCall) []plan.AggCall { return append([]plan.AggCall(nil), cs...) }

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

func TestFilterRowErrorIsNotCounted(t *testing.T) {
	in := tsch(i32, i32, i32)
	cond := expr.Func(">", expr.Func("/", expr.Input(1, i32), expr.Input(2, i32)), expr.Literal(int64(0), i32))
	call := ac(plan.AggCountStar, i64)
	call.Filter = &cond
	st := streamtest.OpenStore(t)
	ectx := &expr.Context{}
	env := testEnv(st, 10)
	env.Expr = ectx
	src := stream.NewMockSource(in, script(in, "barrier\n+ 1 10 0\n+ 1 10 2\n+ 1 -4 2\nstop", 1)...)
	a, err := NewAgg(env, src, planAgg(in, []int{0}, []plan.AggCall{call}, 1))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := drain(t, a), "barrier\n+ 1 1\nbarrier\n"; got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if ectx.RowErrors() != 1 {
		t.Errorf("row errors = %d, want 1", ectx.RowErrors())
	}
}

func TestDistinctOperator(t *testing.T) {
	in := tsch(i32, i32)
	s := `barrier
		+ 1 5
		+ 1 6
		+ 2 7
		barrier
		- 1 5
		chunk
		- 1 6
		U- 2 7
		U+ 2 8
		barrier
		U- 2 8
		U+ 3 8
		- 9 9
		stop`
	want := `barrier
		+ 1
		+ 2
		barrier
		- 1
		barrier
		- 2
		+ 3
		barrier`
	for _, cache := range []int{1, 1000} {
		st := streamtest.OpenStore(t)
		src := stream.NewMockSource(in, script(in, s, 1)...)
		d, err := NewDistinct(testEnv(st, cache), src, planDistinct(in, []int{0}, 1))
		if err != nil {
			t.Fatal(err)
		}
		if got := drain(t, d); got != trimLines(want) {
			t.Errorf("cache %d got:\n%s\nwant:\n%s", cache, got, trimLines(want))
		}
	}
}

func TestBuildRejectsMalformedNodes(t *testing.T) {
	in := tsch(i32, str)
	st := streamtest.OpenStore(t)
	src := func() stream.Executor { return stream.NewMockSource(in) }
	good := func() *plan.Agg {
		return planAgg(in, []int{0}, []plan.AggCall{ac(plan.AggSum, i64, 0), ac(plan.AggMin, str, 1)}, 1)
	}
	cases := map[string]func(a *plan.Agg){
		"wrong sum type":       func(a *plan.Agg) { a.Calls[0].Type = i32 },
		"sum of varchar":       func(a *plan.Agg) { a.Calls[0].Args = []int{1}; a.Calls[0].Type = dec },
		"arg out of range":     func(a *plan.Agg) { a.Calls[0].Args = []int{5} },
		"group out of range":   func(a *plan.Agg) { a.GroupKeys = []int{-1} },
		"missing call table":   func(a *plan.Agg) { a.Calls[1].Table = nil },
		"bad result table":     func(a *plan.Agg) { a.ResultTable.Types = a.ResultTable.Types[1:] },
		"bad call table pk":    func(a *plan.Agg) { a.Calls[1].Table.PK = []int{0} },
		"unknown kind":         func(a *plan.Agg) { a.Calls[0].Kind = "median" },
		"dist key not a group": func(a *plan.Agg) { a.ResultTable.DistKey = []int{1} },
		"non-bool filter": func(a *plan.Agg) {
			f := expr.Input(0, i32)
			a.Calls[0].Filter = &f
		},
	}
	if _, err := NewAgg(testEnv(st, 10), src(), good()); err != nil {
		t.Fatalf("good node rejected: %v", err)
	}
	for name, mutate := range cases {
		a := good()
		mutate(a)
		if _, err := NewAgg(testEnv(st, 10), src(), a); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	n := &plan.Node{Kind: plan.KindSimpleAgg, Agg: good()}
	if _, err := Build(testEnv(st, 10), nil, n, []stream.Executor{src()}); err == nil || !strings.Contains(err.Error(), "group keys") {
		t.Errorf("simple_agg with group keys: %v", err)
	}
}
