package join

import (
	"context"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/storage"
	"github.com/sluice-db/sluice/internal/stream"
	"github.com/sluice-db/sluice/internal/types"
)

// storeOpener opens the env's store tables for the actor's vnodes.
func storeOpener(env *stream.Env) tableOpener {
	return func(t plan.Table) (stateTable, error) {
		st, err := env.OpenTable(t)
		if err != nil {
			return nil, err
		}
		return storeTable{st}, nil
	}
}

// storeTable adapts *storage.StateTable to stateTable.
type storeTable struct{ *storage.StateTable }

func (t storeTable) Scan(ctx context.Context, prefix types.Row) (rowIterator, error) {
	it, err := t.StateTable.ScanKey(ctx, prefix)
	if err != nil {
		return nil, err
	}
	return storeIter{it}, nil
}

type storeIter struct{ storage.Iterator }

// Close releases the iterator. Closing a read-only iterator cannot lose
// data, so its error is not interesting to the join.
func (i storeIter) Close() { _ = i.Iterator.Close() }
