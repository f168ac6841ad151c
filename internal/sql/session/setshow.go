package session

import (
	"context"
	"strconv"
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/pgwire"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// setVar runs SET / RESET. SET LOCAL behaves as SET: there are no
// multi-statement transactions to scope it to.
func (s *Session) setVar(v *pg_query.VariableSetStmt, w pgwire.ResultWriter) error {
	var err error
	tag := "SET"
	switch v.Kind {
	case pg_query.VariableSetKind_VAR_SET_VALUE:
		var val string
		if val, err = setValue(v.Args); err == nil {
			err = s.vars.set(v.Name, val)
		}
	case pg_query.VariableSetKind_VAR_SET_DEFAULT, pg_query.VariableSetKind_VAR_RESET:
		err = s.vars.reset(v.Name)
		if v.Kind == pg_query.VariableSetKind_VAR_RESET {
			tag = "RESET"
		}
	case pg_query.VariableSetKind_VAR_RESET_ALL:
		s.vars.resetAll()
		return w.Complete("RESET")
	case pg_query.VariableSetKind_VAR_SET_MULTI:
		// SET TRANSACTION …: accepted, every statement is its own
		// read-committed transaction anyway.
		return w.Complete("SET")
	default:
		err = sqlerr.Errorf(sqlerr.FeatureNotSupported, "SET %s FROM CURRENT is not supported", v.Name)
	}
	if err != nil {
		return err
	}
	// RisingWave's RW_FORCE_TWO_PHASE_AGG=true overrides (turns on)
	// enable_two_phase_agg.
	if strings.EqualFold(v.Name, "rw_force_two_phase_agg") && s.vars.bool("rw_force_two_phase_agg") {
		_ = s.vars.set("enable_two_phase_agg", "true")
	}
	if name, val, gerr := s.vars.get(v.Name); gerr == nil {
		if spec := s.vars.specs[name]; spec != nil && spec.reported {
			if err := w.ParameterStatus(reportedName(name), val); err != nil {
				return err
			}
		}
	}
	return w.Complete(tag)
}

// setValue renders SET's argument list as the setting's text.
func setValue(args []*pg_query.Node) (string, error) {
	parts := make([]string, 0, len(args))
	for _, a := range args {
		c := a.GetAConst()
		if tc := a.GetTypeCast(); tc != nil {
			c = tc.Arg.GetAConst()
		}
		if c == nil {
			return "", sqlerr.New(sqlerr.SyntaxError, "SET takes constant values")
		}
		parts = append(parts, constText(c))
	}
	return strings.Join(parts, ", "), nil
}

func constText(c *pg_query.A_Const) string {
	switch v := c.Val.(type) {
	case *pg_query.A_Const_Sval:
		return v.Sval.Sval
	case *pg_query.A_Const_Ival:
		return strconv.Itoa(int(v.Ival.Ival))
	case *pg_query.A_Const_Fval:
		return v.Fval.Fval
	case *pg_query.A_Const_Boolval:
		return strconv.FormatBool(v.Boolval.Boolval)
	}
	return ""
}

// showVar answers SHOW name and SHOW ALL.
func (s *Session) showVar(ctx context.Context, name string, w pgwire.ResultWriter) error {
	if strings.EqualFold(name, "all") {
		var rows []types.Row
		for _, v := range s.vars.all() {
			rows = append(rows, types.Row{v[0], v[1], v[2]})
		}
		return writeRows(ctx, w, textColumns("name", "setting", "description"), rows)
	}
	canonical, val, err := s.vars.get(name)
	if err != nil {
		return err
	}
	if canonical == "server_version" {
		val = s.h.cfg.ServerVersion
	}
	return writeRows(ctx, w, textColumns(reportedName(canonical)), []types.Row{{val}})
}
