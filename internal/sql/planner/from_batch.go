package planner

import (
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
)

// In a batch query a FROM list is joined in an order that avoids cross
// joins: a WHERE conjunct that reads one item alone filters that item
// before any join, and each next item is the first (in FROM order) that
// a conjunct relates to those joined so far; only when none is related
// does a cross join happen. Catalog queries from drivers list six or
// nine relations with the conditions relating them scattered through
// WHERE; joined left to right they would multiply pg_attribute by
// itself. The result's columns are put back in FROM order. A streaming
// job keeps the left-to-right order (its plan is its state's layout).

// fromClauseBatch is fromClause for a batch query.
func (q *query) fromClauseBatch(items []*pg_query.Node, where *pg_query.Node) (*relExpr, *pg_query.Node, error) {
	rels := make([]*relExpr, len(items))
	lateral := false
	for i, it := range items {
		if f := it.GetRangeFunction(); f != nil && i > 0 && q.lateralFunction(f, concatCols(rels[:i])) {
			lateral = true
			continue // joined onto the items before it (fromClauseLateral)
		}
		r, err := q.fromItem(it)
		if err != nil {
			return nil, nil, err
		}
		rels[i] = r
	}
	if lateral {
		return q.fromClauseLateral(items, rels, where)
	}
	conj, err := q.pushToItems(rels, conjuncts(where))
	if err != nil {
		return nil, nil, err
	}
	start := make([]int, len(rels))
	order := []int{0}
	acc := rels[0]
	for len(order) < len(rels) {
		next := q.nextItem(rels, order, acc, conj)
		var on []*pg_query.Node
		on, conj = q.joinConditions(acc, rels[next], conj)
		if acc, start[next], err = q.joinAt(acc, rels[next], plan.InnerJoin, andOf(on), location(items[next])); err != nil {
			return nil, nil, err
		}
		order = append(order, next)
	}
	return q.fromOrder(acc, rels, order, start), andOf(conj), nil
}

// concatCols is a relation of rels' columns, for binding only.
func concatCols(rels []*relExpr) *relExpr {
	out := &relExpr{}
	for _, r := range rels {
		if r != nil {
			out.cols = append(out.cols, r.cols...)
		}
	}
	return out
}

// fromClauseLateral joins a FROM list holding a function that reads the
// items before it, left to right: each such function runs for each row
// of the items joined so far.
func (q *query) fromClauseLateral(items []*pg_query.Node, rels []*relExpr, where *pg_query.Node) (*relExpr, *pg_query.Node, error) {
	conj := conjuncts(where)
	acc := rels[0]
	for i := 1; i < len(items); i++ {
		var err error
		if rels[i] == nil {
			if acc, err = q.joinLateralFunction(acc, items[i].GetRangeFunction()); err != nil {
				return nil, nil, err
			}
			continue
		}
		on, rest := q.joinConditions(acc, rels[i], conj)
		conj = rest
		if acc, err = q.join(acc, rels[i], plan.InnerJoin, andOf(on), location(items[i])); err != nil {
			return nil, nil, err
		}
	}
	return acc, andOf(conj), nil
}

// pushToItems filters each item by the conjuncts that read it alone (and
// bind over the whole FROM list, so an ambiguous name stays an error)
// and returns the others.
func (q *query) pushToItems(rels []*relExpr, conj []*pg_query.Node) ([]*pg_query.Node, error) {
	all := concatCols(rels)
	var rest []*pg_query.Node
	for _, c := range conj {
		only := -1
		for i, r := range rels {
			if q.bindsIn(c, r) {
				if only >= 0 {
					only = -2 // reads no item's columns, or is ambiguous
					break
				}
				only = i
			}
		}
		if only < 0 || !q.bindsIn(c, all) {
			rest = append(rest, c)
			continue
		}
		b := &binder{q: q, scope: rels[only], clause: "WHERE"}
		r, err := q.filter(b, rels[only], c, "WHERE")
		if err != nil {
			return nil, err
		}
		rels[only] = r
	}
	return rest, nil
}

// nextItem is the first item not yet joined that a conjunct relates to
// acc, or else the first not yet joined.
func (q *query) nextItem(rels []*relExpr, order []int, acc *relExpr, conj []*pg_query.Node) int {
	first := -1
	for i, r := range rels {
		if slices.Contains(order, i) {
			continue
		}
		if first < 0 {
			first = i
		}
		if on, _ := q.joinConditions(acc, r, conj); len(on) > 0 {
			return i
		}
	}
	return first
}

// joinConditions splits conj into those that relate left to right (bind
// over both and over neither alone) and the rest.
func (q *query) joinConditions(left, right *relExpr, conj []*pg_query.Node) (on, rest []*pg_query.Node) {
	combined := &relExpr{cols: slices.Concat(left.cols, right.cols)}
	for _, c := range conj {
		if q.bindsIn(c, combined) && !q.bindsIn(c, left) && !q.bindsIn(c, right) {
			on = append(on, c)
		} else {
			rest = append(rest, c)
		}
	}
	return on, rest
}

// fromOrder puts acc's columns, joined in order, back in FROM order:
// item i's columns start at start[i] (a join appends key columns it
// computes after each side's own).
func (q *query) fromOrder(acc *relExpr, rels []*relExpr, order []int, start []int) *relExpr {
	if slices.IsSorted(order) {
		return acc
	}
	var outs []outCol
	for i, r := range rels {
		for j, c := range r.cols {
			k := start[i] + j
			outs = append(outs, outCol{t: typed{d: expr.Input(k, acc.cols[k].typ), t: acc.cols[k].typ},
				name: c.name, qual: c.qual, hidden: c.hidden, unknown: c.unknown})
		}
	}
	out := q.project(acc, outs, true)
	n := 0
	for _, r := range rels {
		for _, c := range r.cols {
			out.cols[n].src, out.cols[n].key = c.src, c.key // GROUP BY still sees the tables' keys
			n++
		}
	}
	return out
}
