package join

import (
	"context"

	"github.com/sluice-db/sluice/internal/types"
)

// An append-only side with an expiry stores most of its rows only to
// delete them again at the same barrier: Nexmark q4's and q7's bids expire
// a few seconds of event time after they came, and an epoch spans tens of
// seconds of it. Each such row cost the state table an encoded key, a
// hash-index insert, a delete through the same index and a tombstone item
// (about a ninth of q4's CPU), for a row no checkpoint ever held.
//
// deferredTable fronts such a side's state table. It keeps the rows the
// epoch inserts in a list of its own and writes them to the table only
// when the table must hold them: at the seal, after the barrier's expiry
// has dropped most of them from the list, or before any read of the table
// (a scan, a lookup), which must see them.
//
// Expiry finds a row's place in the list by the tag it noted with the row
// (lastTag, drop): the list's generation, which each write-out ends, and
// the row's position; drop also checks that the place holds that very
// row, so a generation that wrapped around drops nothing it should not.
// A map from row to place cost more than the table writes it saved. A
// delete goes to the table: the side deletes only rows that expiry
// drops, rows it read from the table (watermark cleaning, whose scan
// writes the list out first), and input retractions, before which the
// join writes the list out (an append-only side has none, but a plan that
// says so wrongly must not bring a deleted row back).
type deferredTable struct {
	stateTable
	// blocks hold the list: the epoch's inserts not yet written (nil:
	// dropped), n of them, in blocks of listBlock that are kept for the
	// next epochs (one slice grown by doubling moved every row).
	blocks [][]types.Row
	n      int
	peak   int   // the most rows the list held since the last seal
	gen    int64 // the list's generation, in [0, 2^31)
	listed bool  // the last InsertAbsent kept its row in the list
}

// listBlock is the rows of a block (a variable for the test, which makes
// blocks tiny).
var listBlock = 1024

// at returns the list's i-th place.
func (d *deferredTable) at(i int) *types.Row { return &d.blocks[i/listBlock][i%listBlock] }

func newDeferredTable(t stateTable) *deferredTable {
	return &deferredTable{stateTable: t}
}

// InsertAbsent keeps row in the list. A row of no columns (no identity
// for drop to check) goes to the table at once.
func (d *deferredTable) InsertAbsent(row types.Row) error {
	if d.listed = len(row) > 0; !d.listed {
		return d.stateTable.InsertAbsent(row)
	}
	if d.n == len(d.blocks)*listBlock {
		d.blocks = append(d.blocks, make([]types.Row, listBlock))
	}
	*d.at(d.n) = row
	d.n++
	return nil
}

// lastTag returns the tag of the row InsertAbsent last kept, or -1 when
// it kept none. A tag is never negative.
func (d *deferredTable) lastTag() int64 {
	if !d.listed {
		return -1
	}
	return d.gen<<32 | int64(d.n-1)
}

// drop removes row, noted with tag, from the list if the list holds it:
// the row is deleted before it was written.
func (d *deferredTable) drop(tag int64, row types.Row) bool {
	if tag < 0 || tag>>32 != d.gen || len(row) == 0 {
		return false
	}
	i := int(uint32(tag))
	if i >= d.n {
		return false
	}
	if r := d.at(i); len(*r) > 0 && &(*r)[0] == &row[0] {
		*r = nil
		return true
	}
	return false
}

// writeOut writes the list's rows to the table and empties it.
func (d *deferredTable) writeOut() error {
	if d.n == 0 {
		return nil
	}
	for i := range d.n {
		r := d.at(i)
		if *r == nil {
			continue
		}
		if err := d.stateTable.InsertAbsent(*r); err != nil {
			return err
		}
		*r = nil
	}
	d.peak = max(d.peak, d.n)
	d.n = 0
	d.gen = (d.gen + 1) & (1<<31 - 1)
	return nil
}

// Seal writes the list out, then seals the table. Blocks beyond twice
// the epoch's need go: one huge epoch must not pin its list.
func (d *deferredTable) Seal(epoch uint64) error {
	if err := d.writeOut(); err != nil {
		return err
	}
	if used := (d.peak + listBlock - 1) / listBlock; len(d.blocks) > 2*used {
		clear(d.blocks[2*used:])
		d.blocks = d.blocks[:2*used]
	}
	d.peak = 0
	return d.stateTable.Seal(epoch)
}

// The reads and the other writes see, or follow, the list's rows.

func (d *deferredTable) Insert(row types.Row) error {
	if err := d.writeOut(); err != nil {
		return err
	}
	return d.stateTable.Insert(row)
}

func (d *deferredTable) InsertOwned(row types.Row) error {
	if err := d.writeOut(); err != nil {
		return err
	}
	return d.stateTable.InsertOwned(row)
}

func (d *deferredTable) Update(old, new types.Row) error {
	if err := d.writeOut(); err != nil {
		return err
	}
	return d.stateTable.Update(old, new)
}

func (d *deferredTable) Get(ctx context.Context, pk types.Row) (types.Row, bool, error) {
	if err := d.writeOut(); err != nil {
		return nil, false, err
	}
	return d.stateTable.Get(ctx, pk)
}

func (d *deferredTable) Scan(ctx context.Context, prefix types.Row) (rowIterator, error) {
	if err := d.writeOut(); err != nil {
		return nil, err
	}
	return d.stateTable.Scan(ctx, prefix)
}

func (d *deferredTable) DeleteBetween(ctx context.Context, lo, bound types.Datum, visit func(types.Row) error) error {
	if err := d.writeOut(); err != nil {
		return err
	}
	return d.stateTable.DeleteBetween(ctx, lo, bound, visit)
}
