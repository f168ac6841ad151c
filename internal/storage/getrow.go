package storage

import (
	"context"
	"errors"
	"fmt"

	"github.com/cockroachdb/pebble/v2"
	"github.com/sluice-db/sluice/internal/types"
)

// getRow reads key from r (the DB or a snapshot) and decodes its value
// with lay: the committed half of every point read.
func getRow(r pebble.Reader, lay *layout, key []byte) (types.Row, bool, error) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("storage: table %d get: %w", lay.desc.ID, err)
	}
	defer closer.Close()
	row, err := lay.decodeValue(v)
	return row, err == nil, err
}

// pointKey starts a point read of pk in desc's table: it checks ctx and
// returns the table's layout and pk's full key.
func pointKey(ctx context.Context, desc TableDesc, pk types.Row) (*layout, []byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	lay, err := newLayout(desc)
	if err != nil {
		return nil, nil, err
	}
	key, err := lay.pkKey(pk)
	return lay, key, err
}

// pkKey encodes the full key of pk, a complete primary key of lay's table.
func (lay *layout) pkKey(pk types.Row) ([]byte, error) {
	if len(pk) != len(lay.pkTypes) {
		return nil, fmt.Errorf("storage: table %d: pk has %d columns, want %d", lay.desc.ID, len(pk), len(lay.pkTypes))
	}
	vnode, _ := lay.vnodeOf(pk)
	return lay.appendKey(nil, vnode, pk)
}
