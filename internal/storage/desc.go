package storage

import (
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// TableDesc describes a state table's rows and keys.
type TableDesc struct {
	// ID is unique among all tables of the store and never reused.
	ID uint32
	// Types are the row's column types.
	Types []types.Type
	// PK lists the primary-key columns, in key order. Empty means the table
	// holds at most one row per vnode (a singleton aggregate's state).
	PK []int
	// Orders gives each PK column's order; nil means all ASC NULLS LAST.
	Orders []codec.Order
	// DistKey lists the distribution-key columns; each must be a PK column
	// so a PK alone tells the vnode. The vnode of a row is
	// VNodeOf(HashRow(dist columns)); an empty DistKey puts every row in
	// vnode 0.
	DistKey []int
}

// layout is a validated TableDesc with everything precomputed that keys and
// values need. It is immutable and shared by StateTable and Snapshot reads.
type layout struct {
	desc      TableDesc
	pkTypes   []types.Type
	pkOrders  []codec.Order // len(PK), defaults filled in
	distPos   []int         // position in the PK of each dist-key column
	distTypes []types.Type
	// distIsPrefix: the dist key is the PK's first columns, in order (every
	// join side and most group keys), so a PK prefix is its own dist row.
	distIsPrefix bool
}

func newLayout(desc TableDesc) (*layout, error) {
	if err := validateDesc(desc); err != nil {
		return nil, err
	}
	l := &layout{desc: desc}
	for i, c := range desc.PK {
		l.pkTypes = append(l.pkTypes, desc.Types[c])
		var o codec.Order
		if desc.Orders != nil {
			o = desc.Orders[i]
		}
		l.pkOrders = append(l.pkOrders, o)
	}
	for _, c := range desc.DistKey {
		l.distPos = append(l.distPos, slices.Index(desc.PK, c))
		l.distTypes = append(l.distTypes, desc.Types[c])
	}
	l.distIsPrefix = slices.Equal(l.distPos, seqInts(len(l.distPos)))
	return l, nil
}

func validateDesc(d TableDesc) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("storage: table %d: %w: %s", d.ID, ErrBadDesc, fmt.Sprintf(format, args...))
	}
	if len(d.Types) == 0 {
		return bad("no columns")
	}
	for i, t := range d.Types {
		if !t.Valid() || t.ID == types.Unknown {
			return bad("column %d has invalid type %v", i, t)
		}
	}
	if d.Orders != nil && len(d.Orders) != len(d.PK) {
		return bad("%d orders for %d pk columns", len(d.Orders), len(d.PK))
	}
	if err := checkColumns(d.PK, len(d.Types)); err != nil {
		return bad("pk: %v", err)
	}
	if err := checkColumns(d.DistKey, len(d.Types)); err != nil {
		return bad("dist key: %v", err)
	}
	for _, c := range d.DistKey {
		if !slices.Contains(d.PK, c) {
			return bad("dist key column %d is not in the pk", c)
		}
	}
	return nil
}

func checkColumns(cols []int, n int) error {
	seen := make(map[int]bool, len(cols))
	for _, c := range cols {
		if c < 0 || c >= n {
			return fmt.Errorf("column %d out of range [0,%d)", c, n)
		}
		if seen[c] {
			return fmt.Errorf("column %d repeated", c)
		}
		seen[c] = true
	}
	return nil
}

// checkRow verifies a full row's width and datum types.
func (l *layout) checkRow(row types.Row) error {
	if len(row) != len(l.desc.Types) {
		return fmt.Errorf("storage: table %d: row has %d columns, want %d", l.desc.ID, len(row), len(l.desc.Types))
	}
	for i, d := range row {
		if err := types.CheckDatum(d, l.desc.Types[i]); err != nil {
			return fmt.Errorf("storage: table %d column %d: %w", l.desc.ID, i, err)
		}
	}
	return nil
}

// pkOf returns the row's primary-key values in key order.
func (l *layout) pkOf(row types.Row) types.Row {
	pk := make(types.Row, len(l.desc.PK))
	for i, c := range l.desc.PK {
		pk[i] = row[c]
	}
	return pk
}

// vnodeOf returns the vnode of a PK prefix that covers the dist key, and
// false if it does not cover it.
func (l *layout) vnodeOf(pkPrefix types.Row) (uint16, bool) {
	if len(l.distPos) == 0 {
		return 0, true
	}
	if l.distIsPrefix {
		// No copy: HashRow only reads the datums.
		if len(pkPrefix) < len(l.distPos) {
			return 0, false
		}
		return codec.VNodeOf(codec.HashRow(pkPrefix[:len(l.distPos)], l.distTypes)), true
	}
	dist := make(types.Row, len(l.distPos))
	for i, p := range l.distPos {
		if p >= len(pkPrefix) {
			return 0, false
		}
		dist[i] = pkPrefix[p]
	}
	return codec.VNodeOf(codec.HashRow(dist, l.distTypes)), true
}

// appendKey appends t|id|vnode|pk-prefix to dst.
func (l *layout) appendKey(dst []byte, vnode uint16, pkPrefix types.Row) ([]byte, error) {
	if len(pkPrefix) > len(l.pkTypes) {
		return dst, fmt.Errorf("storage: table %d: pk of %d columns, want at most %d", l.desc.ID, len(pkPrefix), len(l.pkTypes))
	}
	dst = appendVNodePrefix(dst, l.desc.ID, vnode)
	n := len(pkPrefix)
	out, err := codec.EncodeKey(dst, pkPrefix, l.pkTypes[:n], l.pkOrders[:n])
	if err != nil {
		return dst, fmt.Errorf("storage: table %d: encode pk: %w", l.desc.ID, err)
	}
	return out, nil
}

// appendIntKey appends t|id|vnode|pk for a table keyed by one non-NULL
// bigint, without boxing it.
func (l *layout) appendIntKey(dst []byte, vnode uint16, id int64) []byte {
	dst = appendVNodePrefix(dst, l.desc.ID, vnode)
	return codec.AppendKeyInt64(dst, id, l.pkOrders[0])
}

// encodeValue encodes a full row as a Pebble value.
func (l *layout) encodeValue(dst []byte, row types.Row) ([]byte, error) {
	out, err := codec.EncodeValue(dst, row, l.desc.Types)
	if err != nil {
		return dst, fmt.Errorf("storage: table %d: encode row: %w", l.desc.ID, err)
	}
	return out, nil
}

// decodeValue decodes a Pebble value into a fresh row.
func (l *layout) decodeValue(v []byte) (types.Row, error) {
	row, err := codec.DecodeValue(v, l.desc.Types)
	if err != nil {
		return nil, fmt.Errorf("storage: table %d: decode row: %w", l.desc.ID, err)
	}
	return row, nil
}

// seqInts returns 0, 1, …, n-1.
func seqInts(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}
