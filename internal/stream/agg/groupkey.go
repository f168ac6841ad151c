package agg

import (
	"context"
	"fmt"

	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// The in-memory group index (the dirty set and the LRU) needs a key that
// is equal exactly when the result table's primary keys are equal; it does
// not need their order. For types whose value encoding is canonical (equal
// values, equal bytes) the value encoding is such a key, and it can be
// written straight from the chunk's typed columns: no datum is boxed per
// input row and the encoding is shorter. Numeric (1.0 = 1.00), float
// (-0 = 0, NaN payloads), interval ('1 day' = '24 hours') and arrays
// (which may hold them) compare equal across different value bytes, so a
// group key with any of those uses the memcomparable key instead, built
// from boxed datums as the result table does.

// exactKeyTypes reports whether every type's value encoding is canonical.
func exactKeyTypes(ts []types.Type) bool {
	for _, t := range ts {
		switch t.ID {
		case types.Bool, types.Int16, types.Int32, types.Int64, types.Varchar, types.Bytea,
			types.Date, types.Time, types.Timestamp, types.Timestamptz:
		default:
			return false
		}
	}
	return true
}

// rowKey returns the index key of a group key row, in gs.keyBuf.
func (gs *groups) rowKey(key types.Row) ([]byte, error) {
	var kb []byte
	var err error
	if gs.valueKey {
		kb, err = codec.EncodeValue(gs.keyBuf[:0], key, gs.groupTypes)
	} else {
		kb, err = codec.EncodeKey(gs.keyBuf[:0], key, gs.groupTypes, nil)
	}
	if err != nil {
		return nil, fmt.Errorf("agg: group key: %w", err)
	}
	gs.keyBuf = kb
	return kb, nil
}

// getAt is get for row i of the group-key columns cols (one per group key,
// of the group key types). A group that is dirty or cached is found
// without boxing the key; the key is boxed only to load or create one.
func (gs *groups) getAt(ctx context.Context, cols []types.Column, i int) (*group, error) {
	if !gs.valueKey {
		return gs.get(ctx, gs.boxKey(cols, i))
	}
	if gs.intKeyed {
		if !gs.ints.ok { // not prepared for this chunk: get routes the key
			return gs.get(ctx, gs.boxKey(cols, i))
		}
		if ik, ok := gs.ints.at(i); ok {
			return gs.getInt(ctx, ik, nil, cols, i)
		}
		// A NULL in the key: the string path, as get takes it.
	}
	kb, err := codec.EncodeValueColumns(gs.keyBuf[:0], cols, i)
	if err != nil {
		return nil, fmt.Errorf("agg: group key: %w", err)
	}
	gs.keyBuf = kb
	if g := gs.hit(kb); g != nil {
		return g, nil
	}
	return gs.miss(ctx, kb, gs.boxKey(cols, i))
}

// boxKey returns row i of cols as datums, in scratch that the next call
// overwrites (get and miss copy what they keep).
func (gs *groups) boxKey(cols []types.Column, i int) types.Row {
	for j, c := range cols {
		gs.keyRow[j] = c.Get(i)
	}
	return gs.keyRow
}
