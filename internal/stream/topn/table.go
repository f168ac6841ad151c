package topn

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// storeTable adapts a *storage.StateTable to stateTable.
type storeTable struct {
	*storage.StateTable
}

// openStateTable opens the node's table for the actor's vnodes.
func openStateTable(env *stream.Env, t plan.Table) (stateTable, error) {
	st, err := env.OpenTable(t)
	if err != nil {
		return nil, fmt.Errorf("topn: open state table %d: %w", t.ID, err)
	}
	return storeTable{st}, nil
}

// ScanGroup reads up to limit rows of the group in PK order. The prefix
// covers the distribution key (validate checks DistKey ⊆ GroupKeys), so the
// rows come from one vnode and are in rank order.
func (t storeTable) ScanGroup(ctx context.Context, prefix types.Row, limit int) (_ []types.Row, all bool, err error) {
	it, err := t.Scan(ctx, prefix)
	if err != nil {
		return nil, false, err
	}
	defer func() {
		if cerr := it.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	rows := make([]types.Row, 0, min(limit, 1024))
	for {
		row, ok, err := it.Next()
		if err != nil {
			return nil, false, err
		}
		if !ok {
			return rows, true, nil
		}
		if len(rows) == limit {
			return rows, false, nil // one row past the limit: the group goes on
		}
		if len(rows)%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return nil, false, err
			}
		}
		rows = append(rows, row)
	}
}
