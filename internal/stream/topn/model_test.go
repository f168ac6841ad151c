package topn

import (
	"fmt"
	"slices"
	"sort"

	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
)

// naiveTopN computes a top-N from scratch: group the rows, sort each group
// by the ORDER BY items (NULL placement and direction per item) and then by
// the tie columns ascending, and slice. It shares no code with the
// executor's key encoding on purpose.
func naiveTopN(rows []types.Row, tn *plan.TopN, tie []int) []types.Row {
	groups := make(map[string][]types.Row)
	var names []string
	for _, r := range rows {
		name := fmt.Sprint(project(r, tn.GroupKeys)...)
		if _, ok := groups[name]; !ok {
			names = append(names, name)
		}
		groups[name] = append(groups[name], r)
	}
	var out []types.Row
	for _, name := range names {
		g := groups[name]
		sort.Slice(g, func(i, j int) bool {
			if c := compareOrder(g[i], g[j], tn.OrderBy); c != 0 {
				return c < 0
			}
			return types.CompareRows(project(g[i], tie), project(g[j], tie)) < 0
		})
		out = append(out, sliceWindow(g, tn)...)
	}
	return out
}

func sliceWindow(g []types.Row, tn *plan.TopN) []types.Row {
	lo := int(tn.Offset)
	if lo >= len(g) {
		return nil
	}
	if tn.Limit < 0 {
		return g[lo:]
	}
	hi := min(len(g), lo+int(tn.Limit))
	if tn.WithTies && hi > lo {
		for hi < len(g) && compareOrder(g[hi-1], g[hi], tn.OrderBy) == 0 {
			hi++
		}
	}
	return g[lo:hi]
}

// compareOrder compares two rows by ORDER BY items with SQL semantics.
func compareOrder(a, b types.Row, order []plan.ColumnOrder) int {
	for _, o := range order {
		x, y := a[o.Column], b[o.Column]
		var c int
		switch {
		case x == nil && y == nil:
			c = 0
		case x == nil || y == nil:
			// Exactly one is NULL; it sorts first iff NULLS FIRST,
			// whatever the direction.
			c = 1
			if (x == nil) == o.Order.NullsFirst {
				c = -1
			}
		default:
			c = types.Compare(x, y)
			if o.Order.Desc {
				c = -c
			}
		}
		if c != 0 {
			return c
		}
	}
	return 0
}

// multiset applies output chunks and reports misuse (a delete of a row that
// is not there).
type multiset map[string]int

func (m multiset) apply(c *types.Chunk) error {
	vis := c.VisibleIndices()
	for j, i := range vis {
		// An update pair is adjacent and within one chunk.
		if c.Op(i) == types.UpdateDelete && (j+1 == len(vis) || c.Op(vis[j+1]) != types.UpdateInsert) {
			return fmt.Errorf("U- without its U+ in chunk\n%s", c)
		}
		if c.Op(i) == types.UpdateInsert && (j == 0 || c.Op(vis[j-1]) != types.UpdateDelete) {
			return fmt.Errorf("U+ without its U- in chunk\n%s", c)
		}
		k := types.FormatRow(c.Row(i), c.Types())
		if c.Op(i).IsInsert() {
			m[k]++
			continue
		}
		if m[k] == 0 {
			return fmt.Errorf("delete of absent row %q", k)
		}
		m[k]--
		if m[k] == 0 {
			delete(m, k)
		}
	}
	return nil
}

func (m multiset) sorted() []string {
	var out []string
	for k, n := range m {
		for range n {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func sortedRows(rows []types.Row, ts []types.Type) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = types.FormatRow(r, ts)
	}
	slices.Sort(out)
	return out
}
