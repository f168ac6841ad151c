package topn

import (
	"context"
	"sort"
	"strings"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// memTable is an in-memory stateTable for fast unit tests of the executor
// logic; the real store is exercised by the recovery and property tests.
type memTable struct {
	desc plan.Table
	rows map[string]types.Row
}

func newMemTable(desc plan.Table) *memTable {
	return &memTable{desc: desc, rows: make(map[string]types.Row)}
}

func (m *memTable) pk(row types.Row, n int) string {
	vals := make(types.Row, n)
	ts := make([]types.Type, n)
	for i := 0; i < n; i++ {
		vals[i] = row[m.desc.PK[i]]
		ts[i] = m.desc.Types[m.desc.PK[i]]
	}
	var orders []codec.Order
	if m.desc.Orders != nil {
		orders = m.desc.Orders[:n]
	}
	k, err := codec.EncodeKey(nil, vals, ts, orders)
	if err != nil {
		panic(err)
	}
	return string(k)
}

func (m *memTable) Insert(row types.Row) error { m.rows[m.pk(row, len(m.desc.PK))] = row; return nil }
func (m *memTable) Delete(row types.Row) error {
	delete(m.rows, m.pk(row, len(m.desc.PK)))
	return nil
}
func (m *memTable) Seal(uint64) error { return nil }

func (m *memTable) ScanGroup(_ context.Context, prefix types.Row, limit int) ([]types.Row, bool, error) {
	full := make(types.Row, len(m.desc.Types))
	for i, d := range prefix {
		full[m.desc.PK[i]] = d
	}
	p := m.pk(full, len(prefix))
	var keys []string
	for k := range m.rows {
		if strings.HasPrefix(k, p) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) > limit {
		keys = keys[:limit]
		out := make([]types.Row, len(keys))
		for i, k := range keys {
			out[i] = m.rows[k]
		}
		return out, false, nil
	}
	out := make([]types.Row, len(keys))
	for i, k := range keys {
		out[i] = m.rows[k]
	}
	return out, true, nil
}
