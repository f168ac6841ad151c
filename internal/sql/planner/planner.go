package planner

import (
	"context"
	"fmt"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sql/parser"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// Catalog finds relations by name. *catalog.Catalog implements it.
type Catalog interface {
	ByName(name string) (*catalog.Relation, bool)
	// Function finds a SQL function (CREATE FUNCTION … LANGUAGE SQL).
	Function(name string) (catalog.Function, bool)
}

// IDAllocator hands out fresh ids for a view's state tables.
// *engine.Engine implements it.
type IDAllocator interface {
	IDs(ctx context.Context, n int) (*engine.IDBlock, error)
}

// Planner turns parsed statements into what the engine executes.
type Planner struct {
	cat Catalog
	ids IDAllocator
	// reads lists the relations the last Plan read (Reads).
	reads []*catalog.Relation
}

// Reads returns the relations the last Plan read from (FROM, subqueries,
// a view's inputs), for privilege checks; not the table a DML writes.
func (p *Planner) Reads() []*catalog.Relation { return p.reads }

// New returns a planner over cat; ids is needed only for CREATE
// MATERIALIZED VIEW.
func New(cat Catalog, ids IDAllocator) *Planner { return &Planner{cat: cat, ids: ids} }

// Result is one of *CreateTable, *CreateView, *Query, *Insert, *Update,
// *Delete, *Drop.
type Result interface{ isResult() }

// CreateTable is CREATE TABLE.
type CreateTable struct {
	Spec        engine.TableSpec
	IfNotExists bool
}

// CreateView is CREATE MATERIALIZED VIEW. Spec.Plan has Backfill leaves
// whose state tables have fresh ids.
type CreateView struct {
	Spec        engine.ViewSpec
	IfNotExists bool
}

// Drop is DROP TABLE | MATERIALIZED VIEW.
type Drop struct {
	Kind     catalog.Kind
	Names    []string
	IfExists bool
	Cascade  bool
}

// Query is a batch query. Plan's Backfill leaves mean "scan the committed
// snapshot of this relation"; its state tables have id 0. The plan's
// output has len(Columns) visible columns, possibly followed by hidden
// ones (ORDER BY expressions, stream keys) the client must not see.
type Query struct {
	Plan    *plan.Node
	Columns []catalog.Column
	// OrderBy, Limit (-1: none) and Offset apply to the final result.
	OrderBy []plan.ColumnOrder
	Limit   int64
	Offset  int64
}

func (*CreateTable) isResult() {}
func (*CreateView) isResult()  {}
func (*Drop) isResult()        {}
func (*Query) isResult()       {}
func (*Insert) isResult()      {}
func (*Update) isResult()      {}
func (*Delete) isResult()      {}

// Plan plans one standard statement (st.Kind == parser.KindStandard).
// Statements the session handles itself (SET, SHOW, BEGIN, EXPLAIN, …)
// are refused with 0A000.
func (p *Planner) Plan(ctx context.Context, st *parser.Statement) (Result, error) {
	if st.Node == nil {
		return nil, sqlerr.Errorf(sqlerr.FeatureNotSupported, "statement %s is not planned", st.Kind)
	}
	p.reads = nil
	switch n := st.Node.Node.(type) {
	case *pg_query.Node_CreateStmt:
		return p.createTable(st, n.CreateStmt)
	case *pg_query.Node_CreateTableAsStmt:
		return p.createView(ctx, st, n.CreateTableAsStmt)
	case *pg_query.Node_SelectStmt:
		return p.query(st, n.SelectStmt, nil)
	case *pg_query.Node_InsertStmt:
		return p.insert(st, n.InsertStmt, nil)
	case *pg_query.Node_UpdateStmt:
		return p.update(st, n.UpdateStmt, nil)
	case *pg_query.Node_DeleteStmt:
		return p.delete(st, n.DeleteStmt, nil)
	case *pg_query.Node_DropStmt:
		if n.DropStmt.RemoveType == pg_query.ObjectType_OBJECT_FUNCTION {
			return p.dropFunction(n.DropStmt)
		}
		return p.drop(st, n.DropStmt)
	case *pg_query.Node_CreateFunctionStmt:
		return p.createFunction(st, n.CreateFunctionStmt)
	}
	return nil, sqlerr.Errorf(sqlerr.FeatureNotSupported, "statement not supported: %s", nodeName(st.Node))
}

func nodeName(n *pg_query.Node) string {
	return fmt.Sprintf("%T", n.Node)[len("*pg_query.Node_"):]
}

// errAt returns a user error pointing at byte offset loc of the input.
func errAt(st *parser.Statement, code sqlerr.Code, loc int32, format string, args ...any) error {
	e := sqlerr.Errorf(code, format, args...)
	e.Position = st.Position(loc)
	return e
}

// withPos gives err (if a *sqlerr.Error without a position) the position
// of loc.
func withPos(st *parser.Statement, err error, loc int32) error {
	if e, ok := sqlerr.As(err); ok && e.Position == 0 && loc >= 0 {
		cp := *e
		cp.Position = st.Position(loc)
		return &cp
	}
	return err
}
