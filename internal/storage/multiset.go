package storage

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/types"
)

// AddCount treats the table as a multiset: each row is a primary key (the
// leading columns, in order) followed by one bigint count. It adds delta
// to pk's count and returns the count before and after (after clamped at
// zero). A row whose count falls to zero or below is deleted, so a bad
// retraction cannot leave a negative count behind; an absent row is
// inserted only when delta is positive.
//
// uncommittedOnly says the caller knows pk has no committed row (an
// aggregate's multiset row of a new group): only the uncommitted writes are
// read, never Pebble.
//
// It is Get, then Insert or Delete, in one step: the key is encoded once,
// and a row already written this epoch is updated where it lies instead of
// being cloned out and back (an aggregate's min or max does this once per
// input row: about a fifth of the CPU of a bulk load into a group-by view).
func (t *StateTable) AddCount(ctx context.Context, pk types.Row, delta int64, uncommittedOnly bool) (before, after int64, err error) {
	if err := t.checkMultiset(len(pk)); err != nil {
		return 0, 0, err
	}
	if t.broken != nil {
		return 0, 0, t.broken
	}
	t.maybePrune()
	key, err := t.keyOf(pk)
	if err != nil {
		return 0, 0, err
	}
	h := t.overlay.keyHash(key)
	if row, ok := t.overlay.unsealedRowH(h, key); ok {
		if row != nil {
			before, _ = row[len(pk)].(int64)
			if after = before + delta; after > 0 {
				row[len(pk)] = after // the overlay owns its rows
			} else {
				t.overlay.putH(h, key, nil)
			}
			return before, max(after, 0), nil
		}
		// Deleted earlier this epoch: absent.
		return t.putCount(h, key, pk, 0, delta, false, t.overlay.putH)
	}
	old, found, untouched, err := t.readKey(ctx, h, key, pk, uncommittedOnly)
	if err != nil {
		return 0, 0, err
	}
	if found {
		before, _ = old[len(pk)].(int64)
	}
	// Not written this epoch: the overlay need not look for it again.
	put := t.overlay.putAbsentH
	if untouched {
		put = t.overlay.putFreshH
	}
	return t.putCount(h, key, pk, before, delta, found, put)
}

// putCount writes pk's count before+delta as a new row, or deletes the
// row when that is not positive and one was found, through put (h is
// key's hash).
func (t *StateTable) putCount(h uint64, key []byte, pk types.Row, before, delta int64, found bool,
	put func(uint64, []byte, types.Row)) (int64, int64, error) {
	after := before + delta
	switch {
	case after > 0:
		row := make(types.Row, len(pk)+1)
		copy(row, pk)
		row[len(pk)] = after
		put(h, key, row)
	case found:
		put(h, key, nil)
	}
	return before, max(after, 0), nil
}

// checkMultiset checks that the table's rows are n key columns, the PK in
// order, then a bigint count.
func (t *StateTable) checkMultiset(n int) error {
	d := &t.lay.desc
	ok := len(d.Types) == n+1 && d.Types[n] == types.TInt64 && len(d.PK) == n
	for i := 0; ok && i < n; i++ {
		ok = d.PK[i] == i
	}
	if !ok {
		return fmt.Errorf("storage: table %d is not a multiset of %d key columns and a bigint count", d.ID, n)
	}
	return nil
}

// readKey reads key (of pk, hash h) from the layers under the unsealed writes:
// the sealed runs, the fresh rows and, unless uncommittedOnly, Pebble.
// untouched says none of them holds the key, not even as a tombstone of
// an uncommitted epoch: a key the commit may ingest (putFresh).
func (t *StateTable) readKey(ctx context.Context, h uint64, key []byte, pk types.Row,
	uncommittedOnly bool) (row types.Row, found, untouched bool, err error) {
	if e, ok := t.overlay.sealedGetH(h, key); ok {
		return e.row, e.row != nil, false, nil
	}
	if row, ok, err := t.freshGet(pk, key); ok || err != nil {
		return row, ok, false, err
	}
	if uncommittedOnly {
		return nil, false, true, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, false, false, err
	}
	// Most keys read here are absent (a value new to its group): the
	// pooled iterator answers those from bloom filters, the last level's
	// too, where DB.Get built an iterator per read and searched the last
	// level's index and a data block (a fifth of Nexmark q16's CPU).
	row, found, err = t.store.pointGet(t.lay, key)
	return row, found, !found && err == nil, err
}
