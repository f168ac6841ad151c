package session

import (
	"context"
	"fmt"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/engine"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/sql/parser"
	"github.com/sluice-db/sluice/internal/sql/planner"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// execute runs one parsed statement and writes its result.
func (s *Session) execute(ctx context.Context, st *parser.Statement, w pgwire.ResultWriter) error {
	switch st.Kind {
	case parser.KindStandard:
		return s.executeStandard(ctx, st, w)
	case parser.KindFlush:
		if err := s.e.Flush(ctx); err != nil {
			return err
		}
		return w.Complete("FLUSH")
	case parser.KindRecover:
		if err := s.requireSuperuser("run RECOVER"); err != nil {
			return err
		}
		return s.recover(ctx, st, w)
	case parser.KindShowTables:
		return s.showRelations(ctx, catalog.KindTable, w)
	case parser.KindShowMaterializedViews:
		return s.showRelations(ctx, catalog.KindMaterializedView, w)
	case parser.KindShowSources:
		return s.showRelations(ctx, catalog.KindSource, w)
	case parser.KindShowSinks:
		return s.showRelations(ctx, catalog.KindSink, w)
	case parser.KindCreateSink:
		return s.createSink(ctx, st, w)
	case parser.KindShowCreate:
		return s.showCreate(ctx, st, w)
	case parser.KindDescribe:
		return s.describe(ctx, st.Name, w)
	case parser.KindAlterRateLimit, parser.KindAlterPause, parser.KindAlterResume, parser.KindAlterAmplification:
		if rel, ok := s.e.Catalog().ByName(st.Name); ok && !s.isSuperuser() && !rel.OwnedBy(s.user) {
			return sqlerr.Errorf(sqlerr.InsufficientPrivilege, "must be owner of %s %s", relKindName(rel.Kind), rel.Name)
		}
		return s.alterControl(ctx, st, w)
	case parser.KindShowJobs:
		return s.showJobs(ctx, w)
	case parser.KindCancelJobs:
		return s.cancelJobs(ctx, st, w)
	}
	return sqlerr.Errorf(sqlerr.FeatureNotSupported, "%s is not supported yet", st.Kind)
}

// executeStandard runs a statement pg_query parsed: the session's own
// statements first, everything else through the planner.
func (s *Session) executeStandard(ctx context.Context, st *parser.Statement, w pgwire.ResultWriter) error {
	switch n := st.Node.Node.(type) {
	case *pg_query.Node_VariableSetStmt:
		return s.setVar(n.VariableSetStmt, w)
	case *pg_query.Node_VariableShowStmt:
		return s.showVar(ctx, n.VariableShowStmt.Name, w)
	case *pg_query.Node_TransactionStmt:
		return s.transaction(ctx, n.TransactionStmt, w)
	case *pg_query.Node_ExplainStmt:
		return s.explain(ctx, st, n.ExplainStmt, w)
	case *pg_query.Node_CopyStmt:
		return s.copyFrom(ctx, n.CopyStmt, w)
	case *pg_query.Node_CreateStmt:
		if n.CreateStmt.IfNotExists && s.exists(n.CreateStmt.Relation.Relname) {
			tag := "CREATE TABLE"
			if st.Source {
				tag = "CREATE SOURCE"
			}
			return s.skipExisting(n.CreateStmt.Relation.Relname, tag, w)
		}
	case *pg_query.Node_CreateTableAsStmt:
		cs := n.CreateTableAsStmt
		if cs.IfNotExists && cs.Into != nil && s.exists(cs.Into.Rel.Relname) {
			return s.skipExisting(cs.Into.Rel.Relname, "CREATE MATERIALIZED VIEW", w)
		}
	case *pg_query.Node_DiscardStmt:
		return w.Complete("DISCARD ALL")
	case *pg_query.Node_PrepareStmt:
		return s.sqlPrepare(st, n.PrepareStmt, w)
	case *pg_query.Node_ExecuteStmt:
		return s.sqlExecute(ctx, st, n.ExecuteStmt, w)
	case *pg_query.Node_DeallocateStmt:
		return s.sqlDeallocate(n.DeallocateStmt, w)
	case *pg_query.Node_CreateRoleStmt:
		return s.createRole(ctx, n.CreateRoleStmt, w)
	case *pg_query.Node_AlterRoleStmt:
		return s.alterRole(ctx, n.AlterRoleStmt, w)
	case *pg_query.Node_DropRoleStmt:
		return s.dropRole(ctx, n.DropRoleStmt, w)
	case *pg_query.Node_GrantStmt:
		return s.grant(ctx, n.GrantStmt, w)
	case *pg_query.Node_AlterSystemStmt:
		if err := s.requireSuperuser("run ALTER SYSTEM"); err != nil {
			return err
		}
		return sqlerr.New(sqlerr.FeatureNotSupported, "ALTER SYSTEM is not supported: set options on the command line")
	}
	s.h.planned.Add(1)
	res, err := s.p.Plan(ctx, st)
	if err != nil {
		return err
	}
	if err := s.checkPrivileges(res, s.p.Reads()); err != nil {
		return err
	}
	if d, ok := res.(*planner.Drop); ok && st.Graceful {
		return s.drop(ctx, d, true, w)
	}
	return s.executePlanned(ctx, res, w)
}

func (s *Session) exists(name string) bool {
	_, ok := s.e.Catalog().ByName(name)
	return ok
}

func (s *Session) skipExisting(name, tag string, w pgwire.ResultWriter) error {
	if err := w.Notice(pgwire.Notice{Code: sqlerr.DuplicateTable,
		Message: fmt.Sprintf("relation %q already exists, skipping", name)}); err != nil {
		return err
	}
	return w.Complete(tag)
}

func (s *Session) executePlanned(ctx context.Context, res planner.Result, w pgwire.ResultWriter) error {
	switch r := res.(type) {
	case *planner.CreateTable:
		r.Spec.Owner = s.user
		if _, err := s.e.CreateTable(ctx, r.Spec); err != nil {
			return err
		}
		return w.Complete("CREATE TABLE")
	case *planner.CreateSource:
		r.Spec.Owner = s.user
		if _, err := s.e.CreateSource(ctx, r.Spec); err != nil {
			return err
		}
		return w.Complete("CREATE SOURCE")
	case *planner.CreateView:
		if err := s.jobSettings(&r.Spec); err != nil {
			return err
		}
		if err := s.withLiveNotices(ctx, w, func(ctx context.Context) error {
			_, err := s.e.CreateMaterializedView(ctx, r.Spec)
			return err
		}); err != nil {
			return err
		}
		return w.Complete("CREATE MATERIALIZED VIEW")
	case *planner.CreateSink:
		if err := s.jobSettings(&r.Spec.ViewSpec); err != nil {
			return err
		}
		if err := s.withLiveNotices(ctx, w, func(ctx context.Context) error {
			_, err := s.e.CreateSink(ctx, r.Spec)
			return err
		}); err != nil {
			return err
		}
		return w.Complete("CREATE SINK")
	case *planner.Drop:
		return s.drop(ctx, r, false, w)
	case *planner.CreateFunction:
		return s.createFunction(ctx, r, w)
	case *planner.DropFunction:
		return s.dropFunction(ctx, r, w)
	case *planner.Query:
		return s.query(ctx, r, w, true)
	case *planner.Insert:
		return s.retryLocked(ctx, func() error { return s.insert(ctx, r, w) })
	case *planner.Update:
		return s.retryLocked(ctx, func() error { return s.update(ctx, r, w) })
	case *planner.Delete:
		return s.retryLocked(ctx, func() error { return s.delete(ctx, r, w) })
	}
	return sqlerr.Errorf(sqlerr.FeatureNotSupported, "statement result %T not supported", res)
}

// jobSettings gives a new view's or sink's job what the session says:
// its owner, background_ddl and the rate limit it starts with.
func (s *Session) jobSettings(spec *engine.ViewSpec) error {
	spec.Owner = s.user
	spec.Background = s.vars.bool("background_ddl")
	limit, err := s.viewRateLimit()
	spec.RateLimit = limit
	if err != nil {
		return err
	}
	return s.ampSettings(spec)
}

// drop runs DROP; graceful (DROP MATERIALIZED VIEW … GRACEFUL) sends a
// Stop barrier and waits for the final epoch instead of dropping at once.
func (s *Session) drop(ctx context.Context, d *planner.Drop, graceful bool, w pgwire.ResultWriter) error {
	tag := "DROP " + upper(string(d.Kind))
	for _, name := range d.Names {
		rel, ok := s.e.Catalog().ByName(name)
		if !ok {
			if d.IfExists {
				if err := w.Notice(pgwire.Notice{Message: fmt.Sprintf("%s %q does not exist, skipping", d.Kind, name)}); err != nil {
					return err
				}
				continue
			}
			return sqlerr.Errorf(sqlerr.UndefinedTable, "%s %q does not exist", d.Kind, name)
		}
		if rel.Kind != d.Kind {
			e := sqlerr.Errorf(sqlerr.WrongObjectType, "%q is not a %s", name, d.Kind)
			e.Hint = fmt.Sprintf("Use DROP %s to remove a %s.", upper(string(rel.Kind)), rel.Kind)
			return e
		}
		drop := s.e.Drop
		if graceful {
			drop = s.e.DropGraceful
		}
		if err := drop(ctx, name, d.Cascade); err != nil {
			return err
		}
	}
	return w.Complete(tag)
}

// recover runs RECOVER (every job, from the last committed epoch) or
// RECOVER MATERIALIZED VIEW name (that view and the views built on it,
// rebuilt from their inputs). Both are superuser commands; the playground
// makes every user a superuser (is_superuser is on for all), so there is
// nobody to refuse yet.
func (s *Session) recover(ctx context.Context, st *parser.Statement, w pgwire.ResultWriter) error {
	switch {
	case st.Name == "":
		if err := s.e.Recover(ctx); err != nil {
			return err
		}
	case st.Object != parser.ObjectMaterializedView:
		return sqlerr.Errorf(sqlerr.FeatureNotSupported, "RECOVER %s is not supported; use RECOVER MATERIALIZED VIEW or RECOVER", upper(string(st.Object)))
	default:
		if err := s.e.RecoverJob(ctx, st.Name); err != nil {
			return err
		}
	}
	return w.Complete("RECOVER")
}

func (s *Session) transaction(ctx context.Context, t *pg_query.TransactionStmt, w pgwire.ResultWriter) error {
	switch t.Kind {
	case pg_query.TransactionStmtKind_TRANS_STMT_BEGIN, pg_query.TransactionStmtKind_TRANS_STMT_START:
		if s.tx != nil {
			return s.warnThen(w, "25001", "there is already a transaction in progress", "BEGIN")
		}
		s.beginBlock()
		return w.Complete("BEGIN")
	case pg_query.TransactionStmtKind_TRANS_STMT_COMMIT:
		if s.tx == nil {
			return s.warnThen(w, "25P01", "there is no transaction in progress", "COMMIT")
		}
		return s.commitBlock(ctx, w)
	case pg_query.TransactionStmtKind_TRANS_STMT_ROLLBACK:
		if s.tx == nil {
			return s.warnThen(w, "25P01", "there is no transaction in progress", "ROLLBACK")
		}
		s.rollbackBlock()
		return w.Complete("ROLLBACK")
	}
	return sqlerr.New(sqlerr.FeatureNotSupported, "savepoints and two-phase commit are not supported")
}

// warnThen sends a WARNING and completes the statement with tag.
func (s *Session) warnThen(w pgwire.ResultWriter, code, msg, tag string) error {
	if err := w.Notice(pgwire.Notice{Severity: "WARNING", Code: sqlerr.Code(code), Message: msg}); err != nil {
		return err
	}
	return w.Complete(tag)
}

// createSink runs CREATE SINK: planned as a view's query is, with the
// same privilege checks (SELECT on what it reads), then created as a job
// whose root writes to the sink connector.
func (s *Session) createSink(ctx context.Context, st *parser.Statement, w pgwire.ResultWriter) error {
	if st.IfNotExists && !st.Explain && s.exists(st.Name) {
		return s.skipExisting(st.Name, "CREATE SINK", w)
	}
	s.h.planned.Add(1)
	res, err := s.p.PlanSink(ctx, st)
	if err != nil {
		return err
	}
	if err := s.checkPrivileges(res, s.p.Reads()); err != nil {
		return err
	}
	if cs, ok := res.(*planner.CreateSink); ok && st.Explain {
		return s.explainSink(ctx, cs, w)
	}
	return s.executePlanned(ctx, res, w)
}
