package window

import (
	"slices"
	"testing"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// ints is a partition of one int column, peers when equal.
type ints []int64

func (p ints) Len() int            { return len(p) }
func (p ints) Row(i int) types.Row { return types.Row{p[i]} }
func (p ints) Peers(i, j int) bool { return p[i] == p[j] }

func eval(t *testing.T, p Partition, c plan.WindowCall, ctx *expr.Context) ([]types.Datum, error) {
	t.Helper()
	ev, err := New([]plan.WindowCall{c}, ctx)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := ev.Eval(p, 0, p.Len())
	if err != nil {
		return nil, err
	}
	out := make([]types.Datum, len(rows))
	for i, r := range rows {
		out[i] = r[0]
	}
	return out, nil
}

// TestNtile: the first n mod k buckets are one row larger, as Postgres
// splits them; more buckets than rows gives each row its own.
func TestNtile(t *testing.T) {
	for _, tc := range []struct {
		n, k int64
		want []int64
	}{
		{7, 3, []int64{1, 1, 1, 2, 2, 3, 3}},
		{6, 3, []int64{1, 1, 2, 2, 3, 3}},
		{2, 5, []int64{1, 2}},
		{5, 1, []int64{1, 1, 1, 1, 1}},
	} {
		var got []int64
		for i := range tc.n {
			got = append(got, ntile(i, tc.n, tc.k))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("ntile(%d rows, %d): %v, want %v", tc.n, tc.k, got, tc.want)
		}
	}
}

// TestEmptyFrames: a frame wholly outside the partition is NULL (count
// 0), and a frame offset larger than the partition does not overflow.
func TestEmptyFrames(t *testing.T) {
	p := ints{1, 2, 3}
	after := plan.Frame{Rows: true, Start: plan.FrameBound{Kind: plan.OffsetFollowing, Offset: 5},
		End: plan.FrameBound{Kind: plan.OffsetFollowing, Offset: 1 << 31}}
	got, err := eval(t, p, plan.WindowCall{Kind: plan.WindowAgg, Agg: plan.AggCountStar, Frame: after, Type: types.TInt64}, nil)
	if err != nil || !slices.Equal(got, []types.Datum{int64(0), int64(0), int64(0)}) {
		t.Errorf("count over empty frames: %v, %v", got, err)
	}
	got, err = eval(t, p, plan.WindowCall{Kind: plan.WindowFirstValue, Args: []int{0}, Frame: after, Type: types.TInt64}, nil)
	if err != nil || !slices.Equal(got, []types.Datum{nil, nil, nil}) {
		t.Errorf("first_value over empty frames: %v, %v", got, err)
	}
}

// TestRowErrors: a bad argument fails a batch query with its SQLSTATE and
// is NULL in a streaming job, counted.
func TestRowErrors(t *testing.T) {
	c := plan.WindowCall{Kind: plan.WindowNtile, Offset: 0, Type: types.TInt64}
	if _, err := eval(t, ints{1}, c, expr.NewStrictContext(0)); sqlerr.CodeOf(err) != sqlerr.InvalidArgumentForNtile {
		t.Errorf("strict ntile(0): %v", err)
	}
	soft := &expr.Context{}
	got, err := eval(t, ints{1, 2}, c, soft)
	if err != nil || !slices.Equal(got, []types.Datum{nil, nil}) || soft.RowErrors() != 1 {
		t.Errorf("streaming ntile(0): %v, %v, %d row errors", got, err, soft.RowErrors())
	}
}

// TestReach: how far a change is seen, per kind of call.
func TestReach(t *testing.T) {
	rows := func(s, e plan.FrameBound) plan.Frame { return plan.Frame{Rows: true, Start: s, End: e} }
	prec := func(n int64) plan.FrameBound { return plan.FrameBound{Kind: plan.OffsetPreceding, Offset: n} }
	foll := func(n int64) plan.FrameBound { return plan.FrameBound{Kind: plan.OffsetFollowing, Offset: n} }
	cur := plan.FrameBound{Kind: plan.CurrentRow}
	for _, tc := range []struct {
		call      plan.WindowCall
		back, fwd int64
		whole     bool
	}{
		{plan.WindowCall{Kind: plan.WindowRank}, 0, Unbounded, false},
		{plan.WindowCall{Kind: plan.WindowCumeDist}, 0, 0, true},
		{plan.WindowCall{Kind: plan.WindowLag, Offset: 3}, 0, 3, false},
		{plan.WindowCall{Kind: plan.WindowLead, Offset: 2}, 2, 0, false},
		{plan.WindowCall{Kind: plan.WindowLag, Offset: -2}, 2, 0, false},
		{plan.WindowCall{Kind: plan.WindowAgg, Frame: rows(prec(10), cur)}, 0, 10, false},
		{plan.WindowCall{Kind: plan.WindowAgg, Frame: rows(foll(1), foll(4))}, 4, 0, false},
		{plan.WindowCall{Kind: plan.WindowAgg, Frame: plan.DefaultFrame}, 0, Unbounded, false},
		{plan.WindowCall{Kind: plan.WindowLastValue, Frame: rows(cur, plan.FrameBound{Kind: plan.UnboundedFollowing})}, Unbounded, 0, false},
	} {
		back, fwd, whole := Reach([]plan.WindowCall{tc.call})
		if back != tc.back || fwd != tc.fwd || whole != tc.whole {
			t.Errorf("Reach(%+v) = %d, %d, %v; want %d, %d, %v", tc.call, back, fwd, whole, tc.back, tc.fwd, tc.whole)
		}
	}
}
