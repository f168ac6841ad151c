package session

import (
	"context"
	"slices"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/sql/planner"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
)

// `INSERT INTO t SELECT … ON CONFLICT DO NOTHING`, the idempotent bulk
// load, collected every proposed row (conflict.go) before writing any:
// ten million rows were held boxed. Into a table keyed by one bigint it
// now writes pieces, as a plain INSERT … SELECT does (insertQueryPieces):
// before a piece is prepared, its rows whose key the table holds (in the
// statement's snapshot) or an earlier row of the statement proposed are
// dropped, as Postgres's DO NOTHING drops them (the first proposal wins).
// The statement's keys are kept as sorted runs of int64s (intRuns: 8
// bytes a key).

// skipsInPieces reports whether ins is an INSERT … SELECT … ON CONFLICT DO
// NOTHING that insertQueryPieces writes in pieces (skipTaken).
func skipsInPieces(ins *planner.Insert) bool {
	rel := ins.Table
	return ins.OnConflict != nil && ins.OnConflict.DoNothing && hasDeclaredPK(rel) &&
		len(rel.PK) == 1 && rel.Columns[rel.PK[0]].Type == types.TInt64
}

// skipTaken drops the rows of each piece whose key is taken.
type skipTaken struct {
	ctx  context.Context
	sn   *storage.Snapshot
	rel  *catalog.Relation
	col  int            // the key's column
	seen intRuns        // the keys of earlier pieces' rows
	mine map[int64]bool // the keys of this piece's rows
	pk   types.Row
}

func newSkipTaken(ctx context.Context, sn *storage.Snapshot, rel *catalog.Relation) *skipTaken {
	return &skipTaken{ctx: ctx, sn: sn, rel: rel, col: rel.PK[0], mine: map[int64]bool{}, pk: make(types.Row, 1)}
}

// filter returns the rows of c (a piece, checked and conformed to the
// table's columns first) whose keys are free, in their order.
func (d *skipTaken) filter(c *types.Chunk) (*types.Chunk, error) {
	if err := engine.Conform(d.rel, c); err != nil {
		return nil, err // a NULL key: 23502, as Postgres
	}
	vec, ok := c.Cols[d.col].(*types.Vec[int64])
	if !ok || c.HasVisibility() {
		return nil, errNotInt64Key
	}
	clear(d.mine)
	desc := storage.TableDesc(d.rel.Table)
	var keep []int
	for i, k := range vec.Vals {
		if i%256 == 255 && d.ctx.Err() != nil {
			return nil, d.ctx.Err()
		}
		if d.mine[k] || d.seen.has(k) {
			continue
		}
		d.mine[k] = true
		d.pk[0] = k
		_, found, err := d.sn.Get(d.ctx, desc, d.pk)
		if err != nil {
			return nil, err
		}
		if !found {
			keep = append(keep, i)
		}
	}
	keys := make([]int64, 0, len(d.mine))
	for k := range d.mine {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	d.seen.add(keys)
	if len(keep) == c.Capacity() {
		return c, nil
	}
	return gatherRows(c, keep), nil
}

// intRuns is a set of int64s kept as sorted runs, merged as a binary
// counter is carried: a set of n keys added in pieces has about log n
// runs, and a key is looked up in each.
type intRuns struct{ runs [][]int64 }

func (r *intRuns) has(k int64) bool {
	for _, run := range r.runs {
		if _, ok := slices.BinarySearch(run, k); ok {
			return true
		}
	}
	return false
}

// add adds sorted keys none of which the set holds.
func (r *intRuns) add(sorted []int64) {
	if len(sorted) == 0 {
		return
	}
	r.runs = append(r.runs, sorted)
	for n := len(r.runs); n >= 2 && len(r.runs[n-2]) <= len(r.runs[n-1]); n = len(r.runs) {
		a, b := r.runs[n-2], r.runs[n-1]
		merged := make([]int64, 0, len(a)+len(b))
		for len(a) > 0 && len(b) > 0 {
			if a[0] < b[0] {
				merged, a = append(merged, a[0]), a[1:]
			} else {
				merged, b = append(merged, b[0]), b[1:]
			}
		}
		merged = append(append(merged, a...), b...)
		r.runs = append(r.runs[:n-2], merged)
	}
}
