package mview

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/types"
)

// ScanAll returns every committed row of table t, read through a store
// snapshot at the latest committed epoch (vnode by vnode, each in PK
// order). Uncommitted writes are not seen: this is what a batch query reads.
func ScanAll(ctx context.Context, store *storage.Store, t plan.Table) (rows []types.Row, err error) {
	snap, err := store.Snapshot()
	if err != nil {
		return nil, fmt.Errorf("mview: snapshot: %w", err)
	}
	defer func() {
		if cerr := snap.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	it, err := snap.ScanTable(ctx, storage.TableDesc(t))
	if err != nil {
		return nil, fmt.Errorf("mview: scan table %d: %w", t.ID, err)
	}
	defer func() {
		if cerr := it.Close(); err == nil && cerr != nil {
			err = cerr
		}
	}()
	for {
		row, ok, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("mview: scan table %d: %w", t.ID, err)
		}
		if !ok {
			return rows, nil
		}
		if len(rows)%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		rows = append(rows, row)
	}
}
