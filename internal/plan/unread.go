package plan

import "github.com/sluice-db/sluice/internal/expr"

// A hash join keeps every column of both inputs in its state and boxes
// each into every row it handles: in Nexmark q4 that was every auction's
// description and every bid's extra, which the query never reads,
// written into the join's tables, sealed, compacted and read back with
// each candidate. NullUnread narrows each join input, right below the
// join, to the columns something above the join reads (with its keys, its
// residual's columns and its stream key), and renumbers the join
// (narrow.go); an output column of a dropped input column is NULL
// (HashJoin.Output -1), which nothing reads. The stream builder then sees
// the projection read only the kept columns, so a source below it (the
// nexmark generator) can skip making the others.
//
// What a node reads of its input is known here for projections, filters,
// joins and aggregations; any other node reads all of its input, so
// nothing below it is narrowed for its sake.

// NullUnread rewrites the plan under root, whose every output column is
// read (a view's). A node with more than one reader (the planner makes
// trees, but a plan is a graph) is rewritten once, as if all of it were
// read.
func NullUnread(root *Node) {
	u := unread{parents: parentCounts(root), seen: map[*Node]bool{}}
	u.rewrite(root, nil)
}

type unread struct {
	parents map[*Node]int
	seen    map[*Node]bool
}

// rewrite rewrites under n, of which out marks the columns read (nil:
// all).
func (u unread) rewrite(n *Node, out []bool) {
	if u.parents[n] > 1 {
		if u.seen[n] {
			return
		}
		u.seen[n], out = true, nil
	}
	needs := inputNeeds(n, out)
	for i, in := range n.Inputs {
		if in != nil {
			u.rewrite(in, needs[i])
		}
	}
	if n.Kind == KindHashJoin && needs[0] != nil && needs[1] != nil {
		narrowJoin(n, needs[0], needs[1])
	}
}

// inputNeeds returns what n reads of each input given what is read of n
// (nil: all).
func inputNeeds(n *Node, out []bool) [][]bool {
	needs := make([][]bool, len(n.Inputs))
	if len(n.Inputs) == 0 || n.Inputs[0] == nil {
		return needs
	}
	width := len(n.Inputs[0].Schema)
	switch {
	case n.Kind == KindProject && n.Project != nil && len(n.Inputs) == 1:
		r := make([]bool, width)
		for j, e := range n.Project.Exprs {
			if (out == nil || out[j]) && !MarkInputs(r, e) {
				return needs
			}
		}
		needs[0] = r
	case n.Kind == KindFilter && n.Filter != nil && len(n.Inputs) == 1 && out != nil && len(out) == width:
		r := append([]bool(nil), out...)
		if MarkInputs(r, n.Filter.Cond) {
			needs[0] = r
		}
	case (n.Kind == KindHashAgg || n.Kind == KindSimpleAgg) && n.Agg != nil && len(n.Inputs) == 1:
		needs[0] = aggNeeds(n.Agg, width)
	case n.Kind == KindHashJoin && n.HashJoin != nil && len(n.Inputs) == 2 && n.Inputs[1] != nil:
		needs[0], needs[1] = joinNeeds(n, out)
	}
	return needs
}

// aggNeeds: the group keys, and each call's arguments, filter and order.
func aggNeeds(a *Agg, width int) []bool {
	r := make([]bool, width)
	cols := append([]int(nil), a.GroupKeys...)
	for _, c := range a.Calls {
		cols = append(cols, c.Args...)
		for _, o := range c.OrderBy {
			cols = append(cols, o.Column)
		}
		if c.Filter != nil && !MarkInputs(r, *c.Filter) {
			return nil
		}
	}
	if !MarkColumns(r, cols...) {
		return nil
	}
	return r
}

// joinNeeds: the concatenated columns its read outputs come from, its
// residual's, and each side's keys and stream key.
func joinNeeds(n *Node, out []bool) ([]bool, []bool) {
	j := n.HashJoin
	lw, rw := len(n.Inputs[0].Schema), len(n.Inputs[1].Schema)
	concat := make([]bool, lw+rw)
	for k, c := range j.Output {
		if c == -1 { // NULL: reads nothing
			continue
		}
		if out == nil || (k < len(out) && out[k]) {
			if c < 0 || c >= len(concat) {
				return nil, nil
			}
			concat[c] = true
		}
	}
	if j.Residual != nil && !MarkInputs(concat, *j.Residual) {
		return nil, nil
	}
	l, r := concat[:lw], concat[lw:]
	if !MarkColumns(l, j.LeftKeys...) || !MarkColumns(l, n.Inputs[0].StreamKey...) ||
		!MarkColumns(r, j.RightKeys...) || !MarkColumns(r, n.Inputs[1].StreamKey...) {
		return nil, nil
	}
	return l, r
}

// MarkColumns marks cols in r; false when one is out of range.
func MarkColumns(r []bool, cols ...int) bool {
	for _, c := range cols {
		if c < 0 || c >= len(r) {
			return false
		}
		r[c] = true
	}
	return true
}

// MarkInputs marks in r every input column d reads; false when one is out
// of range (the caller then takes everything as read). The stream
// builder's column reads and a join's residual use it too.
func MarkInputs(r []bool, d expr.Desc) bool {
	if d.Kind == expr.KindInput {
		if d.Index < 0 || d.Index >= len(r) {
			return false
		}
		r[d.Index] = true
	}
	for _, a := range d.Args {
		if !MarkInputs(r, a) {
			return false
		}
	}
	return true
}

func allTrue(r []bool) bool {
	for _, b := range r {
		if !b {
			return false
		}
	}
	return true
}
