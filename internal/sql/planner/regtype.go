package planner

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// The object identifier types. An oid is a bigint in Sluice, and so is a
// reg* value (regclass, regtype, …) while it is compared or joined:
// 'items'::regclass looks the name up (regclass_in, an error if there is
// none, as in Postgres) and c.oid::regclass is the number. Where a reg*
// value is shown (a select-list item) or cast to text, it becomes the
// object's name (regclass_out), which is what Postgres prints. So
// WHERE c.oid = 'items'::regclass, SELECT c.oid::regclass and
// c.reloftype::regtype::text all mean what they do in Postgres; what
// differs is only the type a client is told for a shown reg* column
// (text, not regclass).

// regKinds maps the reg* type names to the stem of their functions. The
// kinds naming functions, operators and text-search objects (regproc,
// …) are names (text) in Sluice, which has none of those objects: pg_type's
// typinput, a regproc, holds the function's name.
var regKinds = map[string]string{
	"regclass": "regclass", "regtype": "regtype", "regnamespace": "regnamespace", "regrole": "regrole",
	"regproc": "regproc", "regprocedure": "regproc", "regoper": "regproc", "regoperator": "regproc",
	"regconfig": "regproc", "regdictionary": "regproc", "regcollation": "regproc",
}

// regKindOf returns the reg* kind tn names, if it names one.
func regKindOf(tn *pg_query.TypeName) (string, bool) {
	if len(tn.Names) == 0 || len(tn.ArrayBounds) > 0 {
		return "", false
	}
	k, ok := regKinds[strings.ToLower(tn.Names[len(tn.Names)-1].GetString_().Sval)]
	return k, ok
}

// regCast binds arg::kind: a name is looked up, a number kept.
func (b *binder) regCast(c *pg_query.TypeCast, kind string) (typed, error) {
	arg, err := b.bind(c.Arg)
	if err != nil {
		return typed{}, err
	}
	if kind == "regproc" {
		return b.nameCast(c, arg)
	}
	var t typed
	switch {
	case arg.reg != "":
		t = arg
	case arg.t.ID == types.Varchar || arg.t.ID == types.Unknown:
		if arg.t.ID == types.Unknown {
			if arg, err = b.coerce(arg, types.TVarchar, location(c.Arg)); err != nil {
				return typed{}, err
			}
		}
		if t, err = b.call(kind+"_in", c.Location, arg); err != nil {
			return typed{}, err
		}
	case arg.t.IsInteger():
		t = typed{d: expr.Cast(arg.d, types.TInt64), t: types.TInt64}
		if arg.t == types.TInt64 {
			t = arg
		}
	default:
		return typed{}, errAt(b.q.st, sqlerr.CannotCoerce, c.Location, "cannot cast type %s to %s", arg.t, kind)
	}
	t.reg = kind
	return t, nil
}

// regName shows a reg* value as its object's name; any other value is
// returned as it is.
func (b *binder) regName(t typed, loc int32) (typed, error) {
	if t.reg == "" {
		return t, nil
	}
	return b.call(t.reg+"_out", loc, typed{d: t.d, t: t.t})
}

// nameCast is a cast to a reg* kind that is a name in Sluice (regproc,
// …): text stays as it is, a number becomes its text.
func (b *binder) nameCast(c *pg_query.TypeCast, arg typed) (typed, error) {
	switch {
	case arg.t.ID == types.Varchar:
		return arg, nil
	case arg.t.ID == types.Unknown:
		return b.coerce(arg, types.TVarchar, location(c.Arg))
	case arg.t.IsInteger():
		return b.call("regproc_out", c.Location, typed{d: expr.Cast(arg.d, types.TInt64), t: types.TInt64})
	}
	return typed{}, errAt(b.q.st, sqlerr.CannotCoerce, c.Location, "cannot cast type %s to regproc", arg.t)
}
