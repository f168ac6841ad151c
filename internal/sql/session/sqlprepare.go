package session

import (
	"context"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/sql/parser"
	"github.com/sluice-db/sluice/internal/sqlerr"
)

// PREPARE name [(types)] AS statement, EXECUTE name [(values)] and
// DEALLOCATE [PREPARE] name | ALL: the SQL face of prepared statements,
// planned and cached as the extended protocol's are (prepare.go). As in
// Postgres, PREPARE takes SELECT, INSERT, UPDATE and DELETE, and a
// statement lives until DEALLOCATE or the end of the session.

const (
	codeDuplicatePrepared = sqlerr.Code("42P05")
	codeUnknownPrepared   = sqlerr.Code("26000")
)

func (s *Session) sqlPrepare(st *parser.Statement, ps *pg_query.PrepareStmt, w pgwire.ResultWriter) error {
	if _, ok := s.named[ps.Name]; ok {
		return sqlerr.Errorf(codeDuplicatePrepared, "prepared statement \"%s\" already exists", ps.Name)
	}
	declared, err := s.p.ParamTypes(st, ps.Argtypes)
	if err != nil {
		return err
	}
	inner := *st
	inner.Node = ps.Query
	p := &prepared{s: s, sql: st.Input[st.Start:st.End], st: &inner}
	ok, err := p.planNow(declared)
	if err != nil {
		return err
	}
	if !ok {
		return sqlerr.New(sqlerr.FeatureNotSupported, "PREPARE takes SELECT, INSERT, UPDATE and DELETE")
	}
	if s.named == nil {
		s.named = map[string]*prepared{}
	}
	s.named[ps.Name] = p
	return w.Complete("PREPARE")
}

func (s *Session) sqlExecute(ctx context.Context, st *parser.Statement, es *pg_query.ExecuteStmt, w pgwire.ResultWriter) error {
	p, ok := s.named[es.Name]
	if !ok {
		return sqlerr.Errorf(codeUnknownPrepared, "prepared statement \"%s\" does not exist", es.Name)
	}
	params, err := s.p.ParamValues(st, es.Params, p.params, es.Name)
	if err != nil {
		return err
	}
	if err := p.replanIfStale(); err != nil {
		return err
	}
	res, err := bindPrepared(p, params)
	if err != nil {
		return err
	}
	return s.executePlanned(ctx, res, w)
}

func (s *Session) sqlDeallocate(ds *pg_query.DeallocateStmt, w pgwire.ResultWriter) error {
	switch {
	case ds.Isall || ds.Name == "":
		s.named = nil
		return w.Complete("DEALLOCATE ALL")
	case s.named[ds.Name] == nil:
		return sqlerr.Errorf(codeUnknownPrepared, "prepared statement \"%s\" does not exist", ds.Name)
	}
	delete(s.named, ds.Name)
	return w.Complete("DEALLOCATE")
}
