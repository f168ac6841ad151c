package topn

import (
	"fmt"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// layout knows where a row's group, rank and identity live. The state
// table's primary key is (group keys, order-by columns, tie columns), where
// the tie columns are the rest of the PK (the input's stream key). A row's
// sort key is the memcomparable encoding of the PK after the group, so
// comparing sort keys as strings is exactly the table's scan order, and the
// sort key identifies the row within its group.
type layout struct {
	schema []types.Type

	groupCols   []int
	groupTypes  []types.Type
	groupOrders []codec.Order

	// sortCols are the order-by columns then the tie columns.
	sortCols   []int
	sortTypes  []types.Type
	sortOrders []codec.Order
	// orderCols is how many of sortCols are order-by columns; rows whose
	// encodings of those agree are peers (WITH TIES).
	orderCols int
}

// newLayout checks that the table's PK is the group keys, then the order-by
// columns with their orders, then at least one more column, and derives the
// layout.
func newLayout(schema []types.Type, t *plan.TopN) (*layout, error) {
	tab := &t.Table
	if len(tab.Types) != len(schema) {
		return nil, fmt.Errorf("topn: state table has %d columns, input %d", len(tab.Types), len(schema))
	}
	for i, ty := range tab.Types {
		if ty != schema[i] {
			return nil, fmt.Errorf("topn: state table column %d is %s, input %s", i, ty, schema[i])
		}
	}
	if tab.Orders != nil && len(tab.Orders) != len(tab.PK) {
		return nil, fmt.Errorf("topn: state table has %d orders for %d PK columns", len(tab.Orders), len(tab.PK))
	}
	g, o := len(t.GroupKeys), len(t.OrderBy)
	if len(tab.PK) < g+o {
		return nil, fmt.Errorf("topn: state table PK %v is shorter than group keys + order by", tab.PK)
	}
	for i, pk := range tab.PK {
		if pk < 0 || pk >= len(schema) {
			return nil, fmt.Errorf("topn: state table PK column %d out of range", pk)
		}
		if i < g && pk != t.GroupKeys[i] {
			return nil, fmt.Errorf("topn: state table PK %v must start with the group keys %v", tab.PK, t.GroupKeys)
		}
		if i >= g && i < g+o {
			ob := t.OrderBy[i-g]
			if pk != ob.Column || orderAt(tab.Orders, i) != ob.Order {
				return nil, fmt.Errorf("topn: state table PK column %d (%d %+v) must be ORDER BY item %d (%d %+v)",
					i, pk, orderAt(tab.Orders, i), i-g, ob.Column, ob.Order)
			}
		}
	}
	l := &layout{schema: schema, orderCols: o}
	for i, pk := range tab.PK {
		if i < g {
			l.groupCols = append(l.groupCols, pk)
			l.groupTypes = append(l.groupTypes, schema[pk])
			l.groupOrders = append(l.groupOrders, orderAt(tab.Orders, i))
			continue
		}
		l.sortCols = append(l.sortCols, pk)
		l.sortTypes = append(l.sortTypes, schema[pk])
		l.sortOrders = append(l.sortOrders, orderAt(tab.Orders, i))
	}
	return l, nil
}

func orderAt(orders []codec.Order, i int) codec.Order {
	if orders == nil {
		return codec.Order{}
	}
	return orders[i]
}

func project(row types.Row, cols []int) types.Row {
	out := make(types.Row, len(cols))
	for i, c := range cols {
		out[i] = row[c]
	}
	return out
}

// group returns the row's group key datums and their encoding, which names
// the group in the cache (equal encodings are equal SQL values: 1.0 and
// 1.00 are one group, as they are one PK prefix in the table).
func (l *layout) group(row types.Row) (types.Row, string, error) {
	if len(l.groupCols) == 0 {
		return nil, "", nil
	}
	vals := project(row, l.groupCols)
	key, err := codec.EncodeKey(nil, vals, l.groupTypes, l.groupOrders)
	if err != nil {
		return nil, "", fmt.Errorf("topn: encode group key: %w", err)
	}
	return vals, string(key), nil
}

// entry is one row of a group with its sort key. peerLen is the length of
// the order-by part of key: two rows are peers when those prefixes match.
type entry struct {
	key     string
	peerLen int
	row     types.Row
}

func (l *layout) entry(row types.Row) (entry, error) {
	vals := project(row, l.sortCols)
	key, err := codec.EncodeKey(nil, vals[:l.orderCols], l.sortTypes[:l.orderCols], l.sortOrders[:l.orderCols])
	if err != nil {
		return entry{}, fmt.Errorf("topn: encode order-by key: %w", err)
	}
	peerLen := len(key)
	// Column encodings concatenate, so appending the tie columns gives the
	// encoding of the whole PK suffix.
	key, err = codec.EncodeKey(key, vals[l.orderCols:], l.sortTypes[l.orderCols:], l.sortOrders[l.orderCols:])
	if err != nil {
		return entry{}, fmt.Errorf("topn: encode tie key: %w", err)
	}
	return entry{key: string(key), peerLen: peerLen, row: row}, nil
}

// peers reports whether a and b tie on every ORDER BY column.
func peers(a, b entry) bool {
	return a.peerLen == b.peerLen && a.key[:a.peerLen] == b.key[:b.peerLen]
}
