package batch

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// Reader reads committed tables; *storage.Snapshot implements it. All
// leaves of one query read the same Reader, so they agree on the epoch.
type Reader interface {
	ScanTable(ctx context.Context, desc storage.TableDesc) (storage.Iterator, error)
	// Scan reads the rows whose primary key starts with pkPrefix.
	Scan(ctx context.Context, desc storage.TableDesc, pkPrefix types.Row) (storage.Iterator, error)
	// ScanRange reads the rows whose primary key starts with pkPrefix and
	// whose next key column is between lo and hi.
	ScanRange(ctx context.Context, desc storage.TableDesc, pkPrefix types.Row, lo, hi *storage.Bound) (storage.Iterator, error)
}

// Query is a batch query to run: the planner's plan plus its final
// ordering. The plan's first Visible columns are the result; the rest
// (ORDER BY expressions, keys) are cut off after sorting.
type Query struct {
	Plan    *plan.Node
	Visible int
	OrderBy []plan.ColumnOrder
	Limit   int64 // -1: none
	Offset  int64
}

// Options tune execution.
type Options struct {
	// ChunkSize is the number of rows per internal chunk (default
	// types.DefaultChunkSize).
	ChunkSize int
	// Now is the statement's now().
	Now types.DTimestamptz
	// MemoryLimit bounds the bytes the query keeps (mem.go); past it the
	// query fails with 53200. 0: no limit.
	MemoryLimit int64
	// Pool, when set, is the memory every query running at once shares;
	// past it a query spills or fails with 53200 like at MemoryLimit.
	Pool *MemoryPool
	// SpillDir, with a MemoryLimit or a Pool, is where sorts,
	// aggregations, DISTINCT and hash joins go past memory (spill.go,
	// partition.go); empty: they fail at the limit.
	SpillDir string
	// System produces the rows of the system relations a query reads
	// (plan.KindSystemScan); nil: such a query fails.
	System SystemRows
	// Session answers the session and catalog functions (expr.Session).
	Session expr.Session
}

// RowFunc receives one result row (visible columns only). The row is not
// reused by the executor, so the callee may keep it.
type RowFunc func(row types.Row) error

// errStop ends the producers once LIMIT is reached.
var errStop = errors.New("batch: limit reached")

// Run executes q over r and passes every result row to out, in order.
func Run(ctx context.Context, r Reader, q Query, opts Options, out RowFunc) (err error) {
	defer func() {
		// A plan whose schema does not match its data is a planner bug;
		// it must fail the statement, not the server.
		if p := recover(); p != nil {
			err = sqlerr.Errorf(sqlerr.Internal, "batch: internal error: %v\n%s", p, debug.Stack())
		}
	}()
	if q.Plan == nil {
		return fmt.Errorf("batch: query has no plan")
	}
	ectx := expr.NewStrictContext(opts.Now)
	ectx.Session = opts.Session
	x := &executor{r: r, ectx: ectx, size: opts.ChunkSize,
		mem: memBudget{limit: opts.MemoryLimit, pool: opts.Pool}, spillDir: opts.SpillDir,
		provider: opts.System, system: map[string][]types.Row{}}
	defer x.mem.close()
	if x.size <= 0 {
		x.size = types.DefaultChunkSize
	}
	if len(q.OrderBy) == 0 {
		return x.stream(ctx, q, out)
	}
	return x.sorted(ctx, q, out)
}

// stream passes rows through as they are produced, honouring OFFSET and
// stopping the producers at LIMIT.
func (x *executor) stream(ctx context.Context, q Query, out RowFunc) error {
	skip, left := q.Offset, q.Limit
	if left == 0 {
		return nil
	}
	err := x.run(ctx, q.Plan, func(ctx context.Context, c *types.Chunk) error {
		for i := 0; i < c.Capacity(); i++ {
			if skip > 0 {
				skip--
				continue
			}
			if err := out(c.Row(i)[:q.Visible]); err != nil {
				return err
			}
			if left > 0 {
				if left--; left == 0 {
					return errStop
				}
			}
		}
		return nil
	})
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// sorted collects every row, sorts by ORDER BY (stably, so ties keep the
// plan's order) and emits the OFFSET/LIMIT window.
func (x *executor) sorted(ctx context.Context, q Query, out RowFunc) error {
	if x.canSpill() {
		return x.sortedOnDisk(ctx, q, out)
	}
	rows, err := x.collect(ctx, q.Plan)
	if err != nil {
		return err
	}
	slices.SortStableFunc(rows, func(a, b types.Row) int { return compareBy(a, b, q.OrderBy) })
	lo := min(int(q.Offset), len(rows))
	hi := len(rows)
	if q.Limit >= 0 {
		hi = min(lo+int(q.Limit), len(rows))
	}
	for i, r := range rows[lo:hi] {
		if i%x.size == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := out(r[:q.Visible]); err != nil {
			return err
		}
	}
	return nil
}

// compareBy compares rows by ORDER BY items with their direction and NULL
// placement.
func compareBy(a, b types.Row, by []plan.ColumnOrder) int {
	for _, o := range by {
		if c := compareOrdered(a[o.Column], b[o.Column], o.Order); c != 0 {
			return c
		}
	}
	return 0
}

func compareOrdered(x, y types.Datum, o codec.Order) int {
	switch {
	case x == nil && y == nil:
		return 0
	case x == nil:
		if o.NullsFirst {
			return -1
		}
		return 1
	case y == nil:
		if o.NullsFirst {
			return 1
		}
		return -1
	}
	c := types.Compare(x, y)
	if o.Desc {
		return -c
	}
	return c
}
