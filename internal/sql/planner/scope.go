package planner

import (
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sql/parser"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/stream/source"
	"github.com/sluice-db/sluice/internal/types"
)

// column is one output column of a relational expression as name
// resolution sees it.
type column struct {
	qual   string // the table name or alias that qualifies it
	name   string
	typ    types.Type
	hidden bool // carried for the stream key; not part of SELECT *
	// src numbers the table scan the column comes straight from (0: none),
	// and key says it is part of that table's declared primary key, so
	// GROUP BY can see which columns the key determines.
	src int
	key bool
	// unknown: the column is a literal of no type output as varchar
	// (outCol.unknown); set operations resolve it like Postgres's unknown.
	unknown bool
}

// relExpr is a planned relational expression: a plan node and the names
// of its output columns.
type relExpr struct {
	node *plan.Node
	cols []column
}

// visible returns the positions of the columns SELECT * shows.
func (r *relExpr) visible() []int {
	var out []int
	for i, c := range r.cols {
		if !c.hidden {
			out = append(out, i)
		}
	}
	return out
}

// requalify renames every column's qualifier (a FROM alias).
func (r *relExpr) requalify(q string) {
	for i := range r.cols {
		r.cols[i].qual = q
	}
}

// query holds what binding one statement needs: the statement (for
// positions), whether the plan is streaming, the CTEs in scope and the
// relations read.
type query struct {
	p         *Planner
	st        *parser.Statement
	streaming bool
	ctes      []map[string]*cte
	deps      []uint32
	scans     int
	// now is the statement's now() for values evaluated at plan time.
	now types.DTimestamptz
	// params, for a prepared statement, types its parameters; nil when
	// the statement may have none.
	params *paramSet
	// scalars are the statement's scalar subqueries (subquery.go).
	scalars map[*pg_query.SubLink]*scalarSub
	// inlining counts nested SQL function calls being inlined.
	inlining int
	// outer is the relation of the query around an apply subquery being
	// planned (apply.go); nil elsewhere. farther are the enclosing
	// queries' relations hidden from a nested subquery (hideOuter), so
	// that a reference to one is refused for what it is.
	outer   *relExpr
	farther []*relExpr
}

// hideOuter hides the enclosing query of an apply subquery while a
// subquery nested in it is planned: that one's nearest enclosing query
// is the subquery itself. It returns what restores it.
func (q *query) hideOuter() func() {
	saved, n := q.outer, len(q.farther)
	if saved != nil {
		q.farther = append(q.farther, saved)
	}
	q.outer = nil
	return func() { q.outer, q.farther = saved, q.farther[:n] }
}

type cte struct {
	name string
	node func() (*relExpr, error)
}

// lookupCTE finds a CTE by name, innermost WITH first.
func (q *query) lookupCTE(name string) *cte {
	for i := len(q.ctes) - 1; i >= 0; i-- {
		if c, ok := q.ctes[i][name]; ok {
			return c
		}
	}
	return nil
}

// scanRelation reads every column of a table or view.
func (q *query) scanRelation(rel *catalog.Relation, qual string) (*relExpr, error) {
	if !slices.Contains(q.deps, rel.ID) {
		q.deps = append(q.deps, rel.ID)
	}
	cols := make([]int, len(rel.Columns))
	out := &relExpr{}
	src := 0
	if rel.Kind == catalog.KindTable && len(rel.PK) > 0 &&
		!slices.ContainsFunc(rel.PK, func(k int) bool { return rel.Columns[k].Hidden }) {
		q.scans++
		src = q.scans
	}
	for i, c := range rel.Columns {
		cols[i] = i
		out.cols = append(out.cols, column{qual: qual, name: c.Name, typ: c.Type, hidden: c.Hidden,
			src: src, key: src != 0 && slices.Contains(rel.PK, i)})
	}
	if rel.Kind == catalog.KindSource {
		// Each job reads a source through a connector source of its own.
		n, err := engine.ConnectorNode(rel)
		if err != nil {
			return nil, err
		}
		out.node = n
		return out, nil
	}
	out.node = &plan.Node{Kind: plan.KindBackfill, Schema: slices.Clone(rel.Table.Types), StreamKey: slices.Clone(rel.PK),
		Watermarks: relationWatermarks(rel), AppendOnly: rel.AppendOnly && rel.Connector == nil || relationAppendOnly(rel),
		Backfill: &plan.Backfill{Upstream: rel.Table, Columns: cols, ProgressTable: source.ProgressTable(0)}}
	return out, nil
}

// relationWatermarks returns the columns of rel's rows that carry
// watermarks: those its job's materialize passes on (a table's
// WATERMARK FOR column, a view's window columns). A backfill passes them
// on once its snapshot is read.
func relationWatermarks(rel *catalog.Relation) []int {
	if rel.Job.Plan == nil {
		return nil
	}
	f := rel.Job.Plan.Fragment(rel.Job.MaterializeFragment)
	if f == nil || f.Root == nil {
		return nil
	}
	return slices.Clone(f.Root.Watermarks)
}

// relationAppendOnly reports whether rel is a view whose rows are only
// ever inserted (its materialize's input is append-only: an EMIT ON
// WINDOW CLOSE aggregation, a filter over a source).
func relationAppendOnly(rel *catalog.Relation) bool {
	if rel.Kind != catalog.KindMaterializedView || rel.Job.Plan == nil {
		return false
	}
	f := rel.Job.Plan.Fragment(rel.Job.MaterializeFragment)
	return f != nil && f.Root != nil && f.Root.AppendOnly
}

// resolve finds the column qual.name (qual may be empty) in r. Visible
// columns win over hidden ones of the same name.
func (q *query) resolve(r *relExpr, qual, name string, loc int32) (int, error) {
	if r == nil {
		return 0, q.undefinedColumn(qual, name, loc)
	}
	for _, wantHidden := range []bool{false, true} {
		found := -1
		for i, c := range r.cols {
			if c.hidden != wantHidden || c.name != name || (qual != "" && c.qual != qual) {
				continue
			}
			if found >= 0 {
				return 0, errAt(q.st, sqlerr.AmbiguousColumn, loc, "column reference %q is ambiguous", name)
			}
			found = i
		}
		if found >= 0 {
			return found, nil
		}
	}
	if qual != "" && !slices.ContainsFunc(r.cols, func(c column) bool { return c.qual == qual }) {
		return 0, errAt(q.st, sqlerr.UndefinedTable, loc, "missing FROM-clause entry for table %q", qual)
	}
	return 0, q.undefinedColumn(qual, name, loc)
}

func (q *query) undefinedColumn(qual, name string, loc int32) error {
	if qual != "" {
		return errAt(q.st, sqlerr.UndefinedColumn, loc, "column %s.%s does not exist", qual, name)
	}
	return errAt(q.st, sqlerr.UndefinedColumn, loc, "column %q does not exist", name)
}
