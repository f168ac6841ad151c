package join

import (
	"context"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
)

// stateTable is what the join needs of a state table. The real one is a
// storage.StateTable (see table.go); unit tests use an in-memory one.
type stateTable interface {
	Insert(row types.Row) error
	// InsertOwned is Insert of a row the table keeps itself, which must
	// not change after (storage.StateTable.InsertOwned).
	InsertOwned(row types.Row) error
	// InsertAbsent is Insert of a row whose key the table does not hold
	// in its latest state; the table keeps row itself, which must not
	// change after (storage.StateTable.InsertAbsent).
	InsertAbsent(row types.Row) error
	Delete(row types.Row) error
	Update(old, new types.Row) error
	// Get looks a row up by its full primary key.
	Get(ctx context.Context, pk types.Row) (types.Row, bool, error)
	// Scan returns the rows whose primary key starts with prefix, in
	// primary-key order. It must see every write made before it was called.
	// The rows may be the table's own (storage.StateTable.ScanKey): the
	// join never changes a row it read or stored.
	Scan(ctx context.Context, prefix types.Row) (rowIterator, error)
	// DeleteBetween deletes the rows whose first primary-key column is in
	// [lo, bound), lo nil: below bound, calling visit with each first; visit
	// must neither keep nor change the row
	// (storage.StateTable.DeleteBetween).
	DeleteBetween(ctx context.Context, lo, bound types.Datum, visit func(types.Row) error) error
	Seal(epoch uint64) error
}

// rowIterator walks a Scan. The join never writes to a table while it holds
// an iterator over that same table.
type rowIterator interface {
	Next() (types.Row, bool, error)
	Close()
}

// tableOpener opens the state table a plan describes.
type tableOpener func(t plan.Table) (stateTable, error)
