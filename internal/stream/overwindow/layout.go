package overwindow

import (
	"fmt"
	"slices"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// layout knows where a row's partition and position live. The table's PK
// is the partition columns, the ORDER BY columns with their orders, then
// the rest of the input's stream key; a row's sort key is the
// memcomparable encoding of the PK after the partition, so comparing sort
// keys is the table's scan order (window order, ties by stream key).
type layout struct {
	schema []types.Type

	partCols   []int
	partTypes  []types.Type
	partOrders []codec.Order

	sortCols   []int
	sortTypes  []types.Type
	sortOrders []codec.Order
	// orderCols is how many of sortCols are ORDER BY columns: rows whose
	// encodings of those agree are peers.
	orderCols int
}

func newLayout(schema []types.Type, w *plan.OverWindow, inputKey []int) (*layout, error) {
	tab := &w.Table
	if !slices.Equal(tab.Types, schema) {
		return nil, fmt.Errorf("overwindow: state table types %v differ from input %v", tab.Types, schema)
	}
	if tab.Orders != nil && len(tab.Orders) != len(tab.PK) {
		return nil, fmt.Errorf("overwindow: state table has %d orders for %d PK columns", len(tab.Orders), len(tab.PK))
	}
	p, o := len(w.PartitionBy), len(w.OrderBy)
	if len(tab.PK) < p+o {
		return nil, fmt.Errorf("overwindow: state table PK %v is shorter than partition + order by", tab.PK)
	}
	l := &layout{schema: schema, orderCols: o}
	for i, pk := range tab.PK {
		if pk < 0 || pk >= len(schema) {
			return nil, fmt.Errorf("overwindow: state table PK column %d out of range", pk)
		}
		ord := codec.Order{}
		if tab.Orders != nil {
			ord = tab.Orders[i]
		}
		switch {
		case i < p:
			if pk != w.PartitionBy[i] {
				return nil, fmt.Errorf("overwindow: state table PK %v must start with the partition %v", tab.PK, w.PartitionBy)
			}
			l.partCols, l.partTypes, l.partOrders = append(l.partCols, pk), append(l.partTypes, schema[pk]), append(l.partOrders, ord)
			continue
		case i < p+o:
			if ob := w.OrderBy[i-p]; pk != ob.Column || ord != ob.Order {
				return nil, fmt.Errorf("overwindow: state table PK column %d must be ORDER BY item %d", i, i-p)
			}
		}
		l.sortCols, l.sortTypes, l.sortOrders = append(l.sortCols, pk), append(l.sortTypes, schema[pk]), append(l.sortOrders, ord)
	}
	for _, k := range inputKey {
		if !slices.Contains(tab.PK, k) {
			return nil, fmt.Errorf("overwindow: input stream key column %d is not in the state table PK %v", k, tab.PK)
		}
	}
	for _, k := range tab.DistKey {
		if !slices.Contains(w.PartitionBy, k) {
			return nil, fmt.Errorf("overwindow: distribution key column %d is not a partition column", k)
		}
	}
	return l, nil
}

func project(row types.Row, cols []int) types.Row {
	out := make(types.Row, len(cols))
	for i, c := range cols {
		out[i] = row[c]
	}
	return out
}

// partition returns the row's partition key datums and their encoding,
// which names the partition in the cache.
func (l *layout) partition(row types.Row) (types.Row, string, error) {
	if len(l.partCols) == 0 {
		return nil, "", nil
	}
	vals := project(row, l.partCols)
	key, err := codec.EncodeKey(nil, vals, l.partTypes, l.partOrders)
	if err != nil {
		return nil, "", fmt.Errorf("overwindow: encode partition key: %w", err)
	}
	return vals, string(key), nil
}

// entry is one row of a partition: its sort key (peerLen bytes of which
// are the ORDER BY part), the input row, and the call values last emitted
// with it (nil: not emitted yet).
type entry struct {
	key     string
	peerLen int
	row     types.Row
	vals    types.Row
}

func (l *layout) entry(row types.Row) (entry, error) {
	vals := project(row, l.sortCols)
	key, err := codec.EncodeKey(nil, vals[:l.orderCols], l.sortTypes[:l.orderCols], l.sortOrders[:l.orderCols])
	if err != nil {
		return entry{}, fmt.Errorf("overwindow: encode order key: %w", err)
	}
	peerLen := len(key)
	key, err = codec.EncodeKey(key, vals[l.orderCols:], l.sortTypes[l.orderCols:], l.sortOrders[l.orderCols:])
	if err != nil {
		return entry{}, fmt.Errorf("overwindow: encode tie key: %w", err)
	}
	return entry{key: string(key), peerLen: peerLen, row: row}, nil
}
