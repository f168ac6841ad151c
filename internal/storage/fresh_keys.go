package storage

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// A table keyed by anything but one bigint (an int or text key, a
// composite one, a view's group key) took every row of a bulk load into
// the overlay, boxed, until the seal: a two-million-row COPY into a table
// keyed by an int peaked at 689 MB of RSS, against 237 MB keyed by a
// bigint. Its fresh rows are kept as a bigint table's are, with each row's
// key encoding (what the table stores after the vnode prefix: codec.
// EncodeKey of its primary key, which orders as the key does) in place of
// the id. A chunk's rows are kept in key order, sorted when they do not
// come so.

// freshByKey reports whether the table's fresh rows carry key encodings
// rather than ids.
func (t *StateTable) freshByKey() bool {
	return !(len(t.lay.desc.PK) == 1 && t.lay.pkTypes[0] == types.TInt64 && len(t.lay.distPos) == 1)
}

// idsDescend reports whether the table's fresh rows are ids of a
// descending key: in memory they rise, which is not the key's order, so
// they are neither spilled nor sealed into a file.
func (t *StateTable) idsDescend() bool { return !t.freshByKey() && t.lay.pkOrders[0].Desc }

// insertFreshKeyed is InsertFresh for a table not keyed by one bigint. It
// reports false (and stores nothing) when a key is there twice.
func (t *StateTable) insertFreshKeyed(c *types.Chunk, rows []int, overwrite bool) (bool, error) {
	keys, err := t.encodeKeys(c, rows)
	if err != nil {
		return false, err
	}
	if !keys.rise() {
		order := make([]int, len(rows))
		for k := range order {
			order[k] = k
		}
		slices.SortStableFunc(order, func(a, b int) int { return bytes.Compare(keys.row(a), keys.row(b)) })
		sorted := make([]int, len(rows))
		for k, o := range order {
			sorted[k] = rows[o]
		}
		if rows = sorted; !keys.risesIn(order) {
			return false, nil // a key twice: the overlay keeps the later
		}
		if keys, err = t.encodeKeys(c, rows); err != nil {
			return false, err
		}
	}
	vals, err := t.encodeRows(c, rows)
	if err != nil {
		return false, err
	}
	n := len(rows)
	fc := freshChunk{keys: keys, vals: vals, vnodes: t.vnodesOf(c, rows), n: n, byKey: true, overwrite: overwrite,
		loKey: slices.Clone(keys.row(0)), hiKey: slices.Clone(keys.row(n - 1))}
	return true, t.addFresh(fc)
}

// encodeKeys encodes the primary keys of rows of c into one arena.
func (t *StateTable) encodeKeys(c *types.Chunk, rows []int) (encodedRows, error) {
	pk := make(types.Row, len(t.lay.desc.PK))
	e := encodedRows{at: make([]uint32, 0, 2*len(rows))}
	for _, i := range rows {
		for j, col := range t.lay.desc.PK {
			pk[j] = c.Cols[col].Get(i)
		}
		start := len(e.buf)
		var err error
		if e.buf, err = codec.EncodeKey(e.buf, pk, t.lay.pkTypes, t.lay.pkOrders); err != nil {
			return encodedRows{}, fmt.Errorf("storage: table %d: encode key: %w", t.lay.desc.ID, err)
		}
		if len(e.buf) > math.MaxUint32 {
			return encodedRows{}, fmt.Errorf("storage: table %d: fresh keys of 4 GiB in one chunk", t.lay.desc.ID)
		}
		e.at = append(e.at, uint32(start), uint32(len(e.buf)))
	}
	e.size = len(e.buf)
	return e, nil
}

// rise reports whether e's rows strictly rise.
func (e *encodedRows) rise() bool {
	for k := 1; k < len(e.at)/2; k++ {
		if bytes.Compare(e.row(k-1), e.row(k)) >= 0 {
			return false
		}
	}
	return true
}

// risesIn reports whether e's rows strictly rise taken in order.
func (e *encodedRows) risesIn(order []int) bool {
	for k := 1; k < len(order); k++ {
		if bytes.Compare(e.row(order[k-1]), e.row(order[k])) >= 0 {
			return false
		}
	}
	return true
}

// vnodesOf returns the vnodes of rows of c.
func (t *StateTable) vnodesOf(c *types.Chunk, rows []int) []uint16 {
	out := make([]uint16, len(rows))
	if len(t.lay.distPos) == 0 {
		return out
	}
	hashes := codec.HashColumns(c, t.lay.desc.DistKey, nil)
	for k, i := range rows {
		out[k] = codec.VNodeOf(hashes[i])
	}
	return out
}

// appendFreshKey appends the full key of row k of the in-memory chunk fc.
func (t *StateTable) appendFreshKey(dst []byte, fc *freshChunk, k int) []byte {
	if fc.ids == nil {
		return append(appendVNodePrefix(dst, t.lay.desc.ID, fc.vnodes[k]), fc.keys.row(k)...)
	}
	return t.lay.appendIntKey(dst, fc.vnodes[k], fc.ids[k])
}

// appendFreshSuffix appends what row k of the in-memory chunk fc's key
// holds after its vnode prefix.
func (t *StateTable) appendFreshSuffix(dst []byte, fc *freshChunk, k int) []byte {
	if fc.ids == nil {
		return append(dst, fc.keys.row(k)...)
	}
	return codec.AppendKeyInt64(dst, fc.ids[k], t.lay.pkOrders[0])
}

// compareFresh compares the keys of row k of a and row j of b, in-memory
// chunks of one table, within one vnode.
func compareFresh(a *freshChunk, k int, b *freshChunk, j int) int {
	if a.ids == nil {
		return bytes.Compare(a.keys.row(k), b.keys.row(j))
	}
	return cmp.Compare(a.ids[k], b.ids[j])
}

// freshKey is a key looked up among the fresh rows: full is the table's
// key and suffix what follows its vnode prefix; id is the key of a table
// keyed by one bigint.
type freshKey struct {
	full, suffix []byte
	vnode        uint16
	id           int64
}

// freshKeyOf returns pk (the table's key full) as a fresh key, or false
// when no fresh row can have it.
func (t *StateTable) freshKeyOf(pk types.Row, full []byte) (freshKey, bool) {
	q := freshKey{full: full, suffix: full[stateKeyHeaderLen:], vnode: uint16(full[stateKeyHeaderLen-2])<<8 | uint16(full[stateKeyHeaderLen-1])}
	if t.freshByKey() {
		return q, true
	}
	id, ok := pk[0].(int64)
	q.id = id
	return q, ok && len(pk) == 1
}

// mayHold reports whether fc's key range holds q.
func (fc *freshChunk) mayHold(q freshKey) bool {
	if fc.byKey {
		return bytes.Compare(fc.loKey, q.suffix) <= 0 && bytes.Compare(q.suffix, fc.hiKey) <= 0
	}
	return fc.lo <= q.id && q.id <= fc.hi
}

// find returns the index of q among the in-memory chunk fc's rows.
func (fc *freshChunk) find(q freshKey) (int, bool) {
	if fc.ids != nil {
		return slices.BinarySearch(fc.ids, q.id)
	}
	n := len(fc.keys.at) / 2
	k := sort.Search(n, func(k int) bool { return bytes.Compare(fc.keys.row(k), q.suffix) >= 0 })
	return k, k < n && bytes.Equal(fc.keys.row(k), q.suffix)
}

// bytes returns what fc holds in memory: its rows' encodings and, for
// each row, its id, vnode and spans. Counting the encodings alone let a
// COPY of five million one-bigint rows (9 bytes each, 18 more a row)
// stay under the fresh-row budget whole, at 577 MiB of peak RSS.
func (fc *freshChunk) bytes() int {
	return fc.encodedBytes() + 8*len(fc.ids) + 2*len(fc.vnodes) + 4*(len(fc.vals.at)+len(fc.keys.at))
}

// encodedBytes returns the bytes of fc's rows' encodings.
func (fc *freshChunk) encodedBytes() int { return fc.vals.size + fc.keys.size }
