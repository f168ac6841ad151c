package session

import (
	"context"
	"regexp"
	"slices"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/catalog"
	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/sql/parser"
	"github.com/sluice-db/sluice/internal/sql/planner"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// A SELECT, INSERT, UPDATE or DELETE is planned once, when it is
// prepared: the planner types its parameters and the plan is cached with
// the catalog version it was made at. Each Execute binds the parameters'
// values into the cached plan (planner.Bind) and runs it, without parsing
// or planning; a catalog change since the plan re-plans it first, and a
// re-plan that would change the result columns or parameter types fails
// with 0A000, as in Postgres. Every other statement is parsed once too
// and run by the session; the few that take parameters there (catalog
// queries, which the session's catalog evaluator answers from the text)
// have them substituted as typed literals ('…'::type) into the text,
// their types inferred from it where that is cheap (a cast, a comparison
// with a known column).

// prepared is a pgwire.Statement.
type prepared struct {
	s      *Session
	sql    string
	st     *parser.Statement // nil for an empty statement
	params []types.Type
	cols   []pgwire.Column
	// plan is the cached plan (nil when the session runs the statement
	// itself), made at catalog version version.
	plan    planner.Result
	version uint64
	reads   []*catalog.Relation // what plan reads, for privilege checks
}

func (p *prepared) ParamTypes() []types.Type { return p.params }
func (p *prepared) Columns() []pgwire.Column { return p.cols }

// Prepare implements pgwire.Session.
func (s *Session) Prepare(ctx context.Context, sql string, declared []types.Type) (pgwire.Statement, error) {
	sts, err := parser.ParseWithin(ctx, sql, s.memoryLimit())
	if err != nil {
		return nil, err
	}
	if len(sts) > 1 {
		return nil, sqlerr.New(sqlerr.SyntaxError, "cannot insert multiple commands into a prepared statement")
	}
	p := &prepared{s: s, sql: sql}
	if len(sts) == 0 {
		p.params = declared
		return p, nil
	}
	p.st = &sts[0]
	if ok, err := p.planNow(declared); ok || err != nil {
		return p, err
	}
	return p, s.prepareText(ctx, p, declared)
}

// planNow plans a statement the planner handles, reporting false for
// the others.
func (p *prepared) planNow(declared []types.Type) (bool, error) {
	version := p.s.e.Catalog().Version()
	p.s.h.planned.Add(1)
	res, ts, ok, err := p.s.p.PlanPrepared(p.st, declared)
	if !ok || err != nil {
		return ok, err
	}
	p.plan, p.params, p.version, p.reads = res, ts, version, p.s.p.Reads()
	p.cols = resultColumns(res)
	return true, nil
}

// prepareText prepares a statement the session runs from its text.
func (s *Session) prepareText(ctx context.Context, p *prepared, declared []types.Type) error {
	n, err := paramCount(p.sql)
	if err != nil {
		return err
	}
	p.params = make([]types.Type, max(n, len(declared)))
	copy(p.params, declared)
	s.inferParams(p.st, p.params)
	p.cols, err = s.describeStatement(ctx, p)
	return err
}

// Execute implements pgwire.Statement.
func (p *prepared) Execute(ctx context.Context, params []types.Datum, w pgwire.ResultWriter) error {
	if p.st == nil {
		return w.EmptyQuery()
	}
	p.s.act.begin(p.sql, p.s.h.cfg.Clock())
	defer p.s.endActivity()
	if err := p.s.writeNotices(w); err != nil {
		return err
	}
	if p.plan == nil {
		return p.executeText(ctx, params, w)
	}
	return p.s.runAs(ctx, p.st, func(ctx context.Context) error {
		if err := p.replanIfStale(); err != nil {
			return err
		}
		if err := p.s.checkPrivileges(p.plan, p.reads); err != nil {
			return err
		}
		res, err := bindPrepared(p, params)
		if err != nil {
			return err
		}
		return p.s.executePlanned(ctx, res, w)
	})
}

// bindPrepared binds params into p's cached plan.
func bindPrepared(p *prepared, params []types.Datum) (planner.Result, error) {
	return planner.Bind(p.plan, p.params, params, p.s.now())
}

// replanIfStale re-plans after a catalog change (a table dropped and
// created again, a view added); the statement's shape must not change.
func (p *prepared) replanIfStale() error {
	version := p.s.e.Catalog().Version()
	if version == p.version {
		return nil
	}
	p.s.h.planned.Add(1)
	res, ts, _, err := p.s.p.PlanPrepared(p.st, p.params)
	if err != nil {
		return err
	}
	if !slices.Equal(ts, p.params) || !slices.Equal(resultColumns(res), p.cols) {
		return sqlerr.New(sqlerr.FeatureNotSupported, "cached plan must not change result type")
	}
	p.plan, p.version, p.reads = res, version, p.s.p.Reads()
	return nil
}

// executeText runs a statement the session handles itself, its
// parameters substituted into the text.
func (p *prepared) executeText(ctx context.Context, params []types.Datum, w pgwire.ResultWriter) error {
	if len(p.params) == 0 {
		return p.s.run(ctx, p.st, w)
	}
	sql, err := substitute(p.sql, p.params, params)
	if err != nil {
		return err
	}
	return p.s.Query(ctx, sql, w)
}

// describeStatement finds the result columns of a statement the session
// runs itself, without side effects: SHOW, DESCRIBE, EXPLAIN and catalog
// queries only read, so they are run into a recording writer.
func (s *Session) describeStatement(ctx context.Context, p *prepared) ([]pgwire.Column, error) {
	nulls := make([]types.Datum, len(p.params))
	sql, err := substitute(p.sql, p.params, nulls)
	if err != nil {
		return nil, err
	}
	sts, err := parser.ParseWithin(ctx, sql, s.memoryLimit())
	if err != nil || len(sts) != 1 {
		return nil, err
	}
	st := &sts[0]
	readOnly := st.Kind == parser.KindShowTables || st.Kind == parser.KindShowMaterializedViews ||
		st.Kind == parser.KindDescribe || st.Kind == parser.KindShowJobs || st.Kind == parser.KindShowSources ||
		st.Kind == parser.KindShowSinks || st.Kind == parser.KindShowCreate || (st.Kind == parser.KindCreateSink && st.Explain)
	if st.Kind == parser.KindStandard {
		switch st.Node.Node.(type) {
		case *pg_query.Node_SelectStmt, *pg_query.Node_VariableShowStmt, *pg_query.Node_ExplainStmt:
			readOnly = true
		}
	}
	if !readOnly {
		return nil, nil
	}
	rec := &recorder{}
	if err := s.execute(ctx, st, rec); err != nil {
		return nil, err
	}
	return rec.cols, nil
}

// paramCount returns the highest $n in sql.
func paramCount(sql string) (int, error) {
	res, err := pg_query.Scan(sql)
	if err != nil {
		return 0, nil // the parser reports the problem
	}
	n := 0
	for _, t := range res.Tokens {
		if t.Token == pg_query.Token_PARAM {
			k, err := strconv.Atoi(sql[t.Start+1 : t.End])
			if err != nil {
				return 0, sqlerr.Errorf(sqlerr.SyntaxError, "bad parameter %s", sql[t.Start:t.End])
			}
			n = max(n, k)
		}
	}
	return n, nil
}

// substitute replaces every $n in sql with params[n-1] as a literal.
func substitute(sql string, ts []types.Type, params []types.Datum) (string, error) {
	res, err := pg_query.Scan(sql)
	if err != nil || len(ts) == 0 {
		return sql, nil
	}
	var b strings.Builder
	last := 0
	for _, t := range res.Tokens {
		if t.Token != pg_query.Token_PARAM {
			continue
		}
		k, _ := strconv.Atoi(sql[t.Start+1 : t.End])
		if k < 1 || k > len(params) {
			return "", sqlerr.Errorf(sqlerr.Code("42P02"), "there is no parameter $%d", k)
		}
		b.WriteString(sql[last:t.Start])
		b.WriteString(literal(params[k-1], ts[k-1]))
		last = int(t.End)
	}
	b.WriteString(sql[last:])
	return b.String(), nil
}

// literal spells d as SQL: a quoted string in the type's text format,
// cast to the type when it is known.
func literal(d types.Datum, t types.Type) string {
	known := t.ID != types.Unknown
	if d == nil {
		if known {
			return "NULL::" + t.String()
		}
		return "NULL"
	}
	text, ok := d.(string)
	if known || !ok {
		text = types.FormatDatum(d, t)
	}
	q := "'" + strings.ReplaceAll(text, "'", "''") + "'"
	if known {
		return "(" + q + "::" + t.String() + ")"
	}
	return q
}

var (
	reCast     = regexp.MustCompile(`\$(\d+)\s*::\s*([A-Za-z_][A-Za-z_0-9 ]*?)\b(\s*\[\s*\d*\s*\])?`)
	reColParam = regexp.MustCompile(`(?i)([A-Za-z_][A-Za-z_0-9]*)\s*(?:=|<>|!=|<=|>=|<|>)\s*\$(\d+)`)
	reParamCol = regexp.MustCompile(`(?i)\$(\d+)\s*(?:=|<>|!=|<=|>=|<|>)\s*(?:[A-Za-z_][A-Za-z_0-9]*\.)?([A-Za-z_][A-Za-z_0-9]*)`)
)

// inferParams fills unknown entries of ts from the statement's text.
func (s *Session) inferParams(st *parser.Statement, ts []types.Type) {
	setIf := func(k int, t types.Type) {
		if k >= 1 && k <= len(ts) && ts[k-1].ID == types.Unknown {
			ts[k-1] = t
		}
	}
	for _, m := range reCast.FindAllStringSubmatch(st.Input, -1) {
		k, _ := strconv.Atoi(m[1])
		name := strings.ToLower(strings.TrimSpace(m[2]))
		if m[3] != "" {
			name += "[]" // $1::int[]
		}
		if t, ok := types.ParseTypeName(name); ok {
			setIf(k, t)
		}
	}
	if st.Node != nil {
		if ins := st.Node.GetInsertStmt(); ins != nil {
			s.inferInsert(ins, setIf)
		}
	}
	colType := s.columnTyper(st.Input)
	for _, m := range reColParam.FindAllStringSubmatch(st.Input, -1) {
		k, _ := strconv.Atoi(m[2])
		if t, ok := colType(m[1]); ok {
			setIf(k, t)
		}
	}
	for _, m := range reParamCol.FindAllStringSubmatch(st.Input, -1) {
		k, _ := strconv.Atoi(m[1])
		if t, ok := colType(m[2]); ok {
			setIf(k, t)
		}
	}
}

// inferInsert types the parameters of INSERT … VALUES by their target
// columns.
func (s *Session) inferInsert(ins *pg_query.InsertStmt, setIf func(int, types.Type)) {
	rel, ok := s.e.Catalog().ByName(ins.Relation.GetRelname())
	if !ok || ins.SelectStmt.GetSelectStmt() == nil {
		return
	}
	var targets []types.Type
	if len(ins.Cols) == 0 {
		targets = visibleTypes(rel)
	}
	for _, c := range ins.Cols {
		name := c.GetResTarget().GetName()
		for _, col := range rel.Columns {
			if col.Name == name {
				targets = append(targets, col.Type)
			}
		}
	}
	for _, l := range ins.SelectStmt.GetSelectStmt().ValuesLists {
		for i, it := range l.GetList().GetItems() {
			if pr := it.GetParamRef(); pr != nil && i < len(targets) {
				setIf(int(pr.Number), targets[i])
			}
		}
	}
}

// columnTyper looks a column name up in the relations the text names.
func (s *Session) columnTyper(sql string) func(string) (types.Type, bool) {
	lower := strings.ToLower(sql)
	var rels []map[string]types.Type
	for _, r := range s.relations("") {
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(r.Name) + `\b`).MatchString(lower) {
			continue
		}
		m := map[string]types.Type{}
		for _, c := range r.Columns {
			m[c.Name] = c.Type
		}
		rels = append(rels, m)
	}
	return func(col string) (types.Type, bool) {
		for _, m := range rels {
			if t, ok := m[strings.ToLower(col)]; ok {
				return t, true
			}
		}
		return types.Type{}, false
	}
}
