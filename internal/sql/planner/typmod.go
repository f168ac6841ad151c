package planner

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// typeModifier reads the modifier of a type name: numeric(p[, s]) and
// varchar(n). Other types with a modifier are refused rather than
// silently widened (timestamp(3) would otherwise keep microseconds).
func typeModifier(q *query, tn *pg_query.TypeName, t types.Type) (*types.Modifier, error) {
	if len(tn.Typmods) == 0 || t.IsArray() {
		return nil, nil
	}
	args := make([]int32, len(tn.Typmods))
	for i, n := range tn.Typmods {
		c := n.GetAConst()
		if c == nil || c.GetIval() == nil {
			return nil, errAt(q.st, sqlerr.SyntaxError, tn.Location, "type modifiers must be simple constants or identifiers")
		}
		args[i] = c.GetIval().Ival
	}
	var m types.Modifier
	var err error
	switch {
	case t.ID == types.Decimal && len(args) <= 2:
		s := int32(0)
		if len(args) == 2 {
			s = args[1]
		}
		m, err = types.NewNumericModifier(args[0], s)
	case t.ID == types.Varchar && len(args) == 1 && isVarcharName(tn):
		m, err = types.NewLengthModifier(args[0])
	case t.ID == types.Varchar && len(args) == 1:
		// char(n)/bpchar(n): Sluice stores it as varchar without padding.
		return nil, nil
	case (t.ID == types.Timestamp || t.ID == types.Timestamptz || t.ID == types.Time) && len(args) == 1:
		m, err = types.NewFracModifier(args[0])
	case t.ID == types.Interval && len(args) <= 2:
		m, err = types.NewIntervalModifier(args[0], args[len(args)-1], len(args) == 2)
	default:
		return nil, errAt(q.st, sqlerr.FeatureNotSupported, tn.Location, "type modifiers of %s are not supported", t)
	}
	if err != nil {
		return nil, withPos(q.st, err, tn.Location)
	}
	return &m, nil
}

func isVarcharName(tn *pg_query.TypeName) bool {
	name := strings.ToLower(tn.Names[len(tn.Names)-1].GetString_().Sval)
	return name == "varchar"
}

// withModifier wraps an explicit cast's result in the modifier's
// enforcement (numeric rounds, varchar truncates).
func withModifier(t typed, m *types.Modifier) typed {
	switch {
	case m == nil:
		return t
	case m.Precision > 0:
		return typed{d: expr.Func("numeric_typmod", t.d, expr.Literal(int64(m.Precision), types.TInt32),
			expr.Literal(int64(m.Scale), types.TInt32)), t: t.t}

	case m.Length > 0:
		return typed{d: expr.Func("varchar_typmod", t.d, expr.Literal(int64(m.Length), types.TInt32)), t: t.t}
	case t.t.ID == types.Interval:
		return typed{d: expr.Func("interval_typmod", t.d, expr.Literal(int64(m.IntervalFields), types.TInt32),
			expr.Literal(int64(m.Frac), types.TInt32), expr.Literal(m.HasFrac, types.TBool)), t: t.t}

	case m.HasFrac:
		return typed{d: expr.Func("frac_typmod", t.d, expr.Literal(int64(m.Frac), types.TInt32)), t: t.t}
	}
	return t
}

// qualifiedInterval reads a string literal cast to an interval with a
// qualifier (INTERVAL '1' MINUTE): a bare number is in the qualifier's
// least significant field, which a cast of the parsed value could not
// know. ok reports that c was such a literal.
func (b *binder) qualifiedInterval(c *pg_query.TypeCast, to types.Type, mod *types.Modifier) (typed, bool, error) {
	if to.ID != types.Interval || mod == nil || mod.IntervalFields == 0 {
		return typed{}, false, nil
	}
	s := c.Arg.GetAConst().GetSval()
	if s == nil {
		return typed{}, false, nil
	}
	d, err := types.ParseIntervalFields(s.Sval, mod.IntervalFields)
	if err == nil {
		d, err = mod.Apply(d, to, true)
	}
	if err != nil {
		return typed{}, true, withPos(b.q.st, err, location(c.Arg))
	}
	return typed{d: expr.Literal(d, to), t: to}, true, nil
}
