package topn

import (
	"slices"

	"github.com/sluice-db/sluice/internal/types"
)

// With plan.TopN.Rank the output carries each row's rank in its group (1
// for the first row, ROW_NUMBER's value) as an extra bigint column. An
// insert or delete inside the window moves the ranks of the rows after
// it, so a touched group's whole window before the chunk is kept and
// compared with the window after it, rank by rank: a row that left is a
// delete, one that came an insert, one whose rank or content changed an
// update pair. This costs the window's size per touched group and chunk,
// which ROW_NUMBER … <= N keeps small.

// windowRows copies the rows of w from the group's cache, in rank order
// (windowOf made the cache reach them).
func windowRows(c *groupCache, w window) []entry {
	if w.empty() {
		return nil
	}
	i, _ := c.search(w.lo.key)
	var out []entry
	for ; i < len(c.rows) && w.contains(c.rows[i].key); i++ {
		out = append(out, c.rows[i])
	}
	return out
}

// rankDiff appends to dels and ins the changes from the ranked rows before
// to after, each row with its rank (first rank first) appended.
func rankDiff(before, after []entry, first int64, schema []types.Type, dels, ins []outRow) ([]outRow, []outRow) {
	was := make(map[string]int, len(before))
	for i, e := range before {
		was[e.key] = i
	}
	ranked := func(e entry, i int) types.Row {
		return append(slices.Clip(e.row), first+int64(i))
	}
	for i, e := range after {
		j, ok := was[e.key]
		switch {
		case !ok:
			ins = append(ins, outRow{op: types.Insert, row: ranked(e, i)})
		case i != j || !sameRow(before[j].row, e.row, schema):
			dels = append(dels, outRow{op: types.UpdateDelete, row: ranked(before[j], j)},
				outRow{op: types.UpdateInsert, row: ranked(e, i)})
		}
		delete(was, e.key)
	}
	for _, j := range sortedValues(was) {
		dels = append(dels, outRow{op: types.Delete, row: ranked(before[j], j)})
	}
	return dels, ins
}

func sortedValues(m map[string]int) []int {
	out := make([]int, 0, len(m))
	for _, v := range m {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}
