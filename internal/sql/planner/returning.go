package planner

import (
	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/types"
)

// Returning is a DML statement's RETURNING list: expressions over each
// row the statement wrote (INSERT: the row inserted, or updated by ON
// CONFLICT DO UPDATE; UPDATE: the new row; DELETE: the deleted row).
// Input is the layout of those rows: INSERT's have the table's visible
// columns, UPDATE's and DELETE's every column.
type Returning struct {
	Exprs   []expr.Desc
	Columns []catalog.Column
	Input   []types.Type
}

// returning binds list over rel's columns (all of them, or with
// visibleOnly the visible ones), qualified by qual.
func (q *query) returning(rel *catalog.Relation, qual string, visibleOnly bool, list []*pg_query.Node) (*Returning, error) {
	if len(list) == 0 {
		return nil, nil
	}
	scope := &relExpr{}
	for _, c := range rel.Columns {
		if visibleOnly && c.Hidden {
			continue
		}
		scope.cols = append(scope.cols, column{qual: qual, name: c.Name, typ: c.Type, hidden: c.Hidden})
	}
	b := &binder{q: q, scope: scope, clause: "RETURNING"}
	outs, err := q.targets(b, list)
	if err != nil {
		return nil, err
	}
	r := &Returning{Input: b.types()}
	for _, o := range outs {
		r.Exprs = append(r.Exprs, o.t.d)
		r.Columns = append(r.Columns, catalog.Column{Name: o.name, Type: o.t.t})
	}
	return r, nil
}

// ResultColumns returns the columns res sends to the client: a query's,
// or a DML statement's RETURNING list; nil when it sends none.
func ResultColumns(res Result) []catalog.Column {
	var r *Returning
	switch x := res.(type) {
	case *Query:
		return x.Columns
	case *Insert:
		r = x.Returning
	case *Update:
		r = x.Returning
	case *Delete:
		r = x.Returning
	}
	if r == nil {
		return nil
	}
	return r.Columns
}

func bindReturning(r *Returning, bind func(expr.Desc) expr.Desc) *Returning {
	if r == nil {
		return nil
	}
	out := *r
	out.Exprs = make([]expr.Desc, len(r.Exprs))
	for i, d := range r.Exprs {
		out.Exprs[i] = bind(d)
	}
	return &out
}
