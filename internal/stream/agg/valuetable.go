package agg

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// valueTable is a table-backed call's multiset of inputs: one row per
// (group keys, value columns) with its multiplicity in the last column
// (see CallLayout). Rows whose multiplicity falls to zero are deleted, so a
// group's first row in key order is its min (or max, ordered DESC).
type valueTable struct {
	t      *storage.StateTable
	cols   []int // input columns stored after the group keys
	nGroup int
	scr    types.Row
	// types and orders are the table's (CallLayout): its rows' types, its
	// key columns' orders.
	types  []types.Type
	orders []codec.Order
	// waited holds the values the table holds as fresh rows not yet
	// committed (waited.go).
	waited waitedSet
}

func newValueTable(t *storage.StateTable, cols []int, nGroup int, l Layout) *valueTable {
	return &valueTable{t: t, cols: cols, nGroup: nGroup, scr: make(types.Row, 0, nGroup+len(cols)+1),
		types: l.Types, orders: l.Orders}
}

// bump adds delta to the multiplicity of (group, vals) and returns the
// multiplicity before and after. newGroup says the group has no committed
// row (group.isNew), so neither has its multiset: only uncommitted writes
// are read. A multiplicity falling to zero or below deletes the row (a
// negative one means a delete of a row never inserted: dropped rather than
// kept, so a bad upstream cannot poison the group forever).
func (v *valueTable) bump(ctx context.Context, group, vals types.Row, delta int64, newGroup bool) (before, after int64, err error) {
	pk := v.scr[:0]
	pk = append(pk, group...)
	pk = append(pk, vals...)
	v.scr = pk[:0]
	before, after, err = v.t.AddCount(ctx, pk, delta, newGroup)
	clear(pk)
	if err != nil {
		return 0, 0, fmt.Errorf("agg: value table: %w", err)
	}
	return before, after, nil
}

// cancelEvery is how many groups a flush walks, or value rows a scan
// reads, between two checks of the actor's cancellation.
const cancelEvery = 256

// scan calls fn with each of group's value rows (the value columns only)
// and multiplicity, in key order, until fn returns false.
func (v *valueTable) scan(ctx context.Context, group types.Row, fn func(vals types.Row, n int64) bool) error {
	if v.waited.forgetCommitted(v.t.CommittedEpoch()); !v.waited.empty() && v.t.HoldsFresh() {
		return v.scanWaited(ctx, group, fn)
	}
	it, err := v.t.Scan(ctx, group)
	if err != nil {
		return fmt.Errorf("agg: value table scan: %w", err)
	}
	defer it.Close()
	return v.visit(ctx, func() (types.Row, bool, error) {
		row, ok, err := it.Next()
		if err != nil {
			err = fmt.Errorf("agg: value table scan: %w", err)
		}
		return row, ok, err
	}, fn)
}

// visit calls fn with the value columns and multiplicity of each row next
// returns, until either is done. One group's rows can be millions
// (string_agg over a huge group) and the store's iterator does not watch
// ctx, so this loop does.
func (v *valueTable) visit(ctx context.Context, next func() (types.Row, bool, error), fn func(vals types.Row, n int64) bool) error {
	for n := 1; ; n++ {
		if n%cancelEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		row, ok, err := next()
		if err != nil || !ok {
			return err
		}
		cnt, _ := row[len(row)-1].(int64)
		if !fn(row[v.nGroup:len(row)-1], cnt) {
			return nil
		}
	}
}
