package plan

import (
	"slices"

	"github.com/sluice-db/sluice/internal/expr"
)

// narrowJoin puts a projection of the needed columns (joinNeeds) below
// each input of join n that has columns it does not need, and
// renumbers n over the narrowed inputs: its keys, its residual, its
// tables and its output, where a dropped column becomes -1 (NULL). n's
// own schema stays as it is.
func narrowJoin(n *Node, lneed, rneed []bool) {
	lmap, lw := narrowInput(n, 0, lneed)
	rmap, _ := narrowInput(n, 1, rneed)
	if lmap == nil && rmap == nil {
		return
	}
	nl := len(lneed)
	concat := func(c int) int {
		if c < nl {
			return mapped(lmap, c)
		}
		if r := mapped(rmap, c-nl); r >= 0 {
			return lw + r
		}
		return -1
	}
	j := *n.HashJoin
	j.LeftKeys, j.RightKeys = mapCols(lmap, j.LeftKeys), mapCols(rmap, j.RightKeys)
	j.LeftTable, j.RightTable = mapTable(lmap, j.LeftTable, n.Inputs[0]), mapTable(rmap, j.RightTable, n.Inputs[1])
	if j.Residual != nil {
		r, _ := expr.RemapInputs(*j.Residual, func(i int) (int, bool) { return concat(i), true })
		j.Residual = &r
	}
	j.Output = make([]int, len(n.HashJoin.Output))
	for k, c := range n.HashJoin.Output {
		j.Output[k] = -1
		if c >= 0 {
			j.Output[k] = concat(c)
		}
	}
	n.HashJoin = &j
}

// narrowInput replaces input i of n by a projection of the columns keep
// marks (joinNeeds: they include the stream key); it returns the
// old-to-new column map (-1: dropped) and the new width. A map of nil
// means the input kept every column and was left as it is.
func narrowInput(n *Node, i int, keep []bool) ([]int, int) {
	in := n.Inputs[i]
	if allTrue(keep) {
		return nil, len(keep)
	}
	m := make([]int, len(keep))
	var exprs []expr.Desc
	p := &Node{Kind: KindProject, Inputs: []*Node{in}, Project: &Project{}}
	for c, t := range in.Schema {
		m[c] = -1
		if keep[c] {
			m[c] = len(exprs)
			exprs = append(exprs, expr.Input(c, t))
			p.Schema = append(p.Schema, t)
		}
	}
	p.Project.Exprs = exprs
	p.StreamKey = mapCols(m, in.StreamKey)
	n.Inputs[i] = p
	return m, len(exprs)
}

// mapped is column c through m (nil: unchanged).
func mapped(m []int, c int) int {
	if m == nil {
		return c
	}
	return m[c]
}

// mapCols maps columns a narrowed input keeps.
func mapCols(m []int, cols []int) []int {
	if m == nil {
		return cols
	}
	out := make([]int, len(cols))
	for i, c := range cols {
		out[i] = m[c]
	}
	return out
}

// mapTable reshapes a join side's table to its narrowed input in: the
// same keys, over the input's columns.
func mapTable(m []int, t Table, in *Node) Table {
	if m == nil {
		return t
	}
	t.Types = slices.Clone(in.Schema)
	t.PK, t.DistKey = mapCols(m, t.PK), mapCols(m, t.DistKey)
	return t
}
