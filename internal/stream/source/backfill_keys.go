package source

import (
	"fmt"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// upstreamKeys computes, for a row of the upstream table, its vnode and the
// memcomparable key of its primary key — the two coordinates the scan
// position is expressed in. They must agree with how the state store lays
// the table out (storage keys are table|vnode|EncodeKey(pk)), so a row's
// place in the scan order is exactly its place in the snapshot.
type upstreamKeys struct {
	pk        []int
	pkTypes   []types.Type
	orders    []codec.Order
	dist      []int
	distTypes []types.Type

	hashes  []uint64
	scratch types.Row
}

func newUpstreamKeys(t plan.Table) (*upstreamKeys, error) {
	// A table without a primary key (a view over a global aggregate) holds
	// at most one row per vnode; its key is empty, and a position is then
	// the empty key, which must stay distinct from "no position" (nil).
	k := &upstreamKeys{pk: t.PK, orders: t.Orders}
	if t.Orders != nil && len(t.Orders) != len(t.PK) {
		return nil, fmt.Errorf("source: table %d has %d orders for %d pk columns", t.ID, len(t.Orders), len(t.PK))
	}
	for _, c := range t.PK {
		if c < 0 || c >= len(t.Types) {
			return nil, fmt.Errorf("source: table %d pk column %d out of range", t.ID, c)
		}
		k.pkTypes = append(k.pkTypes, t.Types[c])
	}
	for _, c := range t.DistKey {
		if c < 0 || c >= len(t.Types) {
			return nil, fmt.Errorf("source: table %d dist key column %d out of range", t.ID, c)
		}
		k.dist = append(k.dist, c)
		k.distTypes = append(k.distTypes, t.Types[c])
	}
	k.scratch = make(types.Row, len(t.PK))
	return k, nil
}

// vnodes returns the vnode of every row of c (all 0 without a dist key).
func (k *upstreamKeys) vnodes(c *types.Chunk) []uint64 {
	n := c.Capacity()
	if len(k.dist) == 0 {
		k.hashes = k.hashes[:0]
		for range n {
			k.hashes = append(k.hashes, 0)
		}
		return k.hashes
	}
	k.hashes = codec.HashColumns(c, k.dist, k.hashes[:0])
	for i, h := range k.hashes {
		k.hashes[i] = uint64(codec.VNodeOf(h))
	}
	return k.hashes
}

// keyAt appends row i's pk key to dst.
func (k *upstreamKeys) keyAt(dst []byte, c *types.Chunk, i int) ([]byte, error) {
	for j, col := range k.pk {
		k.scratch[j] = c.Cols[col].Get(i)
	}
	return nonNil(codec.EncodeKey(dst, k.scratch, k.pkTypes, k.orders))
}

// keyOf appends a full row's pk key to dst.
func (k *upstreamKeys) keyOf(dst []byte, row types.Row) ([]byte, error) {
	for j, col := range k.pk {
		k.scratch[j] = row[col]
	}
	return nonNil(codec.EncodeKey(dst, k.scratch, k.pkTypes, k.orders))
}

// pkOfKey decodes a key back into the pk row the snapshot scan resumes
// after. Decoding may normalize a value (1.00 → 1) but the normalized value
// encodes to the same key, so the resume point is exact.
func (k *upstreamKeys) pkOfKey(key []byte) (types.Row, error) {
	row, rest, err := codec.DecodeKey(key, k.pkTypes, k.orders)
	if err != nil {
		return nil, err
	}
	if row == nil {
		row = types.Row{} // the empty key of a keyless table: resume after it
	}
	if len(rest) != 0 {
		return nil, fmt.Errorf("source: %d trailing bytes after scan position", len(rest))
	}
	return row, nil
}

// nonNil keeps an empty key distinct from "no key".
func nonNil(key []byte, err error) ([]byte, error) {
	if key == nil && err == nil {
		key = []byte{}
	}
	return key, err
}
