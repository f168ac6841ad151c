package batch

import (
	"context"
	"testing"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
)

// countingReader records how a query reads its tables.
type countingReader struct {
	memReader
	scans, seeks int
}

func (r *countingReader) ScanTable(ctx context.Context, d storage.TableDesc) (storage.Iterator, error) {
	r.scans++
	return r.memReader.ScanTable(ctx, d)
}

func (r *countingReader) Scan(ctx context.Context, d storage.TableDesc, p types.Row) (storage.Iterator, error) {
	r.seeks++
	return r.memReader.Scan(ctx, d, p)
}

// TestIntegerLiteralOnBigintKeySeeks: `id = 2` on a bigint key (the
// literal is an integer, as the planner types it) seeks, and an integer
// outside an integer key's range matches nothing without a scan.
func TestIntegerLiteralOnBigintKeySeeks(t *testing.T) {
	ts := []types.Type{i64, i64}
	r := &countingReader{memReader: memReader{1: {{int64(1), int64(10)}, {int64(2), int64(20)}}}}
	f := &plan.Node{Kind: plan.KindFilter, Inputs: []*plan.Node{scanNode(1, ts)}, Schema: ts,
		Filter: &plan.Filter{Cond: expr.Func("=", expr.Input(0, i64), expr.Literal(int64(2), types.TInt32))}}
	rows, err := runAll(t, r, Query{Plan: f, Visible: 2, Limit: -1})
	if err != nil || len(rows) != 1 || rows[0][1] != int64(20) || r.scans != 0 || r.seeks != 1 {
		t.Fatalf("rows %v (%v), %d scans, %d seeks; want [[2 20]], 0 scans, 1 seek", rows, err, r.scans, r.seeks)
	}
	ts32 := []types.Type{types.TInt32, i64}
	f = &plan.Node{Kind: plan.KindFilter, Inputs: []*plan.Node{scanNode(1, ts32)}, Schema: ts32,
		Filter: &plan.Filter{Cond: expr.Func("=", expr.Input(0, types.TInt32), expr.Literal(int64(1)<<40, i64))}}
	r.scans, r.seeks = 0, 0
	if rows, err := runAll(t, r, Query{Plan: f, Visible: 2, Limit: -1}); err != nil || len(rows) != 0 || r.scans != 0 || r.seeks != 0 {
		t.Fatalf("an int key = 2^40: rows %v (%v), %d scans, %d seeks; want none", rows, err, r.scans, r.seeks)
	}
}

// TestFilterOnKeySeeks: a filter fixing the key seeks once per distinct
// value and never scans; one that does not fix it scans.
func TestFilterOnKeySeeks(t *testing.T) {
	ts := []types.Type{i64, i64}
	r := &countingReader{memReader: memReader{1: {{int64(1), int64(10)}, {int64(2), int64(20)}, {int64(3), int64(30)}}}}
	lit := func(v int64) expr.Desc { return expr.Literal(v, i64) }
	in := expr.Desc{Kind: expr.KindIn, Args: []expr.Desc{expr.Input(0, i64), lit(3), lit(1), lit(3), expr.Null(i64)}}
	cond := expr.Desc{Kind: expr.KindAnd, Args: []expr.Desc{in, expr.Func(">", expr.Input(1, i64), lit(15))}}
	f := &plan.Node{Kind: plan.KindFilter, Inputs: []*plan.Node{scanNode(1, ts)}, Schema: ts, Filter: &plan.Filter{Cond: cond}}
	rows, err := runAll(t, r, Query{Plan: f, Visible: 2, Limit: -1})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0][0] != int64(3) || r.scans != 0 || r.seeks != 2 {
		t.Fatalf("rows %v, %d scans, %d seeks; want [[3 30]], 0 scans, 2 seeks", rows, r.scans, r.seeks)
	}
	f.Filter.Cond = expr.Func(">", expr.Input(1, i64), lit(15))
	if _, err := runAll(t, r, Query{Plan: f, Visible: 2, Limit: -1}); err != nil || r.scans != 1 {
		t.Fatalf("a filter off the key: %v, %d scans", err, r.scans)
	}
}
