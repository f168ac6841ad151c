package planner

import (
	"context"
	"fmt"
	"slices"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sql/parser"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

func (p *Planner) createTable(st *parser.Statement, cs *pg_query.CreateStmt) (Result, error) {
	q := &query{p: p, st: st}
	if len(cs.InhRelations) > 0 || cs.Partspec != nil || cs.OfTypename != nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "table inheritance, partitioning and typed tables are not supported")
	}
	if err := checkWithOptions(st, "table", cs.Options); err != nil {
		return nil, err
	}
	conn, err := tableConnector(st)
	if err != nil {
		return nil, err
	}
	spec := engine.TableSpec{Name: cs.Relation.Relname, AppendOnly: st.AppendOnly, Definition: st.SQL()}
	var pkNames []*pg_query.Node
	pkLoc := int32(-1)
	for _, e := range cs.TableElts {
		switch x := e.Node.(type) {
		case *pg_query.Node_ColumnDef:
			cd := x.ColumnDef
			if slices.ContainsFunc(spec.Columns, func(c catalog.Column) bool { return c.Name == cd.Colname }) {
				return nil, errAt(st, sqlerr.Code("42701"), cd.Location, "column %q specified more than once", cd.Colname)
			}
			if cd.Colname == engine.RowIDColumn {
				return nil, errAt(st, sqlerr.Code("42701"), cd.Location, "column name %q is reserved", cd.Colname)
			}
			t, err := typeName(q, cd.TypeName)
			if err != nil {
				return nil, err
			}
			mod, err := typeModifier(q, cd.TypeName, t)
			if err != nil {
				return nil, err
			}
			if mod != nil && t.ID == types.Interval {
				// A store would have to read '1' by the column's fields.
				return nil, errAt(st, sqlerr.FeatureNotSupported, cd.TypeName.Location,
					"interval columns with fields or a precision are not supported; declare the column interval")
			}
			col := catalog.Column{Name: cd.Colname, Type: t, Mod: mod}
			for _, c := range cd.Constraints {
				con := c.GetConstraint()
				if con == nil {
					continue
				}
				isPK, err := q.columnConstraint(&col, con)
				if err != nil {
					return nil, err
				}
				if isPK {
					if pkNames != nil {
						return nil, errAt(st, sqlerr.Code("42P16"), con.Location, "multiple primary keys for table %q are not allowed", spec.Name)
					}
					pkNames = []*pg_query.Node{{Node: &pg_query.Node_String_{String_: &pg_query.String{Sval: cd.Colname}}}}
					pkLoc = con.Location
				}
			}
			spec.Columns = append(spec.Columns, col)
		case *pg_query.Node_Constraint:
			con := x.Constraint
			if con.Contype != pg_query.ConstrType_CONSTR_PRIMARY {
				return nil, unsupportedConstraint(q, con)
			}
			if pkNames != nil {
				return nil, errAt(st, sqlerr.Code("42P16"), con.Location, "multiple primary keys for table %q are not allowed", spec.Name)
			}
			pkNames, pkLoc = con.Keys, con.Location
		default:
			return nil, sqlerr.Errorf(sqlerr.FeatureNotSupported, "table element not supported: %s", nodeName(e))
		}
	}
	if len(spec.Columns) == 0 {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "a table needs at least one column")
	}
	for _, n := range pkNames {
		name := n.GetString_().Sval
		i := slices.IndexFunc(spec.Columns, func(c catalog.Column) bool { return c.Name == name })
		if i < 0 {
			return nil, errAt(st, sqlerr.UndefinedColumn, pkLoc, "column %q named in key does not exist", name)
		}
		if slices.Contains(spec.PK, i) {
			return nil, errAt(st, sqlerr.Code("42701"), pkLoc, "column %q appears twice in primary key constraint", name)
		}
		spec.PK = append(spec.PK, i)
		spec.Columns[i].NotNull = true
	}
	if spec.Watermark, err = q.watermarkOf(spec, conn != nil); err != nil {
		return nil, err
	}
	if conn != nil {
		return withConnector(st, spec, conn, cs.IfNotExists)
	}
	return &CreateTable{Spec: spec, IfNotExists: cs.IfNotExists}, nil
}

func (p *Planner) createView(ctx context.Context, st *parser.Statement, cs *pg_query.CreateTableAsStmt) (Result, error) {
	if cs.Objtype != pg_query.ObjectType_OBJECT_MATVIEW {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "CREATE TABLE AS is not supported; use CREATE MATERIALIZED VIEW")
	}
	if err := checkWithOptions(st, "materialized view", cs.Into.GetOptions()); err != nil {
		return nil, err
	}
	q := &query{p: p, st: st, streaming: true}
	sel := cs.Query.GetSelectStmt()
	if sel == nil {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "a materialized view must be defined by a SELECT")
	}
	r, _, err := q.selectStmt(sel, true)
	if err != nil {
		return nil, err
	}
	// A column list must name every column. Postgres lets a shorter list
	// rename only the leading columns; RisingWave refuses it, and so does
	// Sluice: a view's column names are its interface to the views built
	// on it, and a list that stops early is far more often a mistake.
	if n, want := len(cs.Into.ColNames), len(r.visible()); n > 0 && n != want {
		if n > want {
			return nil, sqlerr.New(sqlerr.SyntaxError, "too many column names were specified")
		}
		return nil, sqlerr.Errorf(sqlerr.SyntaxError, "the column list names %d of the query's %d columns; name every column or leave the list out", n, want)
	}
	if err := q.aliasColumns(r, &pg_query.Alias{Aliasname: cs.Into.Rel.Relname, Colnames: cs.Into.ColNames}); err != nil {
		return nil, err
	}
	cols, err := viewColumns(r)
	if err != nil {
		return nil, err
	}
	r = q.visibleFirst(r)
	if err := q.streamingPlan(ctx, r, st.EmitOnWindowClose); err != nil {
		return nil, err
	}
	spec := engine.ViewSpec{Name: cs.Into.Rel.Relname, Columns: cols, Plan: r.node, PK: slices.Clone(r.node.StreamKey),
		DependsOn: q.deps, Definition: st.SQL()}
	return &CreateView{Spec: spec, IfNotExists: cs.IfNotExists}, nil
}

// streamingPlan readies the plan of a view's or sink's query for a job:
// EMIT ON WINDOW CLOSE when asked, the rewrites, and its state tables'
// ids.
func (q *query) streamingPlan(ctx context.Context, r *relExpr, eowc bool) error {
	if eowc {
		if err := emitOnWindowClose(r.node); err != nil {
			return err
		}
	}
	plan.NullUnread(r.node)
	plan.ShareCommon(r.node)
	plan.DeriveStreamProps(r.node)
	plan.MarkAppendOnlyInputs(r.node)
	plan.SplitLocalAggs(r.node)
	plan.DeriveJoinExpiry(r.node)
	if err := checkNoNow(r.node); err != nil {
		return err
	}
	return q.p.assignIDs(ctx, r.node)
}

// visibleFirst reorders r's columns so the visible ones come first (a
// projection, only when needed).
func (q *query) visibleFirst(r *relExpr) *relExpr {
	vis := r.visible()
	if slices.Equal(vis, seq(len(vis))) {
		return r
	}
	var outs []outCol
	for _, hidden := range []bool{false, true} {
		for i, c := range r.cols {
			if c.hidden == hidden {
				outs = append(outs, outCol{t: typed{d: expr.Input(i, c.typ), t: c.typ}, name: c.name, qual: c.qual, hidden: c.hidden})
			}
		}
	}
	return q.project(r, outs, true)
}

// viewColumns names a view's columns in the order visibleFirst puts them:
// the visible ones as the query names them (which must be unique), the
// hidden ones as "_" plus their source name, made unique.
func viewColumns(r *relExpr) ([]catalog.Column, error) {
	var cols []catalog.Column
	seen := map[string]bool{}
	for _, i := range r.visible() {
		c := r.cols[i]
		if seen[c.name] {
			return nil, sqlerr.Errorf(sqlerr.Code("42701"), "column %q specified more than once", c.name)
		}
		seen[c.name] = true
		cols = append(cols, catalog.Column{Name: c.name, Type: c.typ})
	}
	for _, c := range r.cols {
		if !c.hidden {
			continue
		}
		name := c.name
		if len(name) == 0 || name[0] != '_' {
			name = "_" + name
		}
		for n := 1; seen[name]; n++ {
			name = fmt.Sprintf("%s_%d", c.name, n)
			if name[0] != '_' {
				name = "_" + name
			}
		}
		seen[name] = true
		cols = append(cols, catalog.Column{Name: name, Type: c.typ, Hidden: true})
	}
	return cols, nil
}

// query plans a batch SELECT.
func (p *Planner) query(st *parser.Statement, s *pg_query.SelectStmt, ps *paramSet) (Result, error) {
	q := &query{p: p, st: st, params: ps}
	r, ord, err := q.selectStmt(s, true)
	if err != nil {
		return nil, err
	}
	if err := notQueryable(r.node); err != nil {
		return nil, err
	}
	return q.batchQuery(r, ord), nil
}

// batchQuery puts a batch plan's visible columns first (remapping the
// final ordering) and describes its output.
func (q *query) batchQuery(r *relExpr, ord *ordering) *Query {
	perm := append(r.visible(), hiddenOf(r)...)
	r = q.visibleFirst(r)
	out := &Query{Plan: r.node, Limit: -1}
	for _, c := range r.cols {
		if !c.hidden {
			out.Columns = append(out.Columns, catalog.Column{Name: c.name, Type: c.typ})
		}
	}
	if ord != nil {
		out.Limit, out.Offset = ord.limit, ord.offset
		for _, o := range ord.by {
			o.Column = slices.Index(perm, o.Column)
			out.OrderBy = append(out.OrderBy, o)
		}
	}
	return out
}

func hiddenOf(r *relExpr) []int {
	var out []int
	for i, c := range r.cols {
		if c.hidden {
			out = append(out, i)
		}
	}
	return out
}

func (p *Planner) drop(st *parser.Statement, ds *pg_query.DropStmt) (Result, error) {
	d := &Drop{IfExists: ds.MissingOk, Cascade: ds.Behavior == pg_query.DropBehavior_DROP_CASCADE}
	switch ds.RemoveType {
	case pg_query.ObjectType_OBJECT_TABLE:
		d.Kind = catalog.KindTable
		if st.Source {
			d.Kind = catalog.KindSource
		}
	case pg_query.ObjectType_OBJECT_MATVIEW:
		d.Kind = catalog.KindMaterializedView
	case pg_query.ObjectType_OBJECT_VIEW:
		if !st.Sink {
			return nil, sqlerr.New(sqlerr.FeatureNotSupported, "DROP VIEW is not supported: Sluice has no plain views")
		}
		d.Kind = catalog.KindSink
	default:
		return nil, sqlerr.Errorf(sqlerr.FeatureNotSupported, "DROP %s is not supported", ds.RemoveType.String()[len("OBJECT_"):])
	}
	for _, o := range ds.Objects {
		items := o.GetList().GetItems()
		if len(items) == 0 {
			continue
		}
		d.Names = append(d.Names, items[len(items)-1].GetString_().Sval)
	}
	return d, nil
}
