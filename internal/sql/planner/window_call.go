package planner

import (
	"slices"
	"strconv"

	pg_query "github.com/pganalyze/pg_query_go/v6"
	"google.golang.org/protobuf/proto"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// winCall is a window function call bound over the relation below the
// windows (the FROM, or the aggregation's output).
type winCall struct {
	f      *pg_query.FuncCall
	call   plan.WindowCall // Args and Filter are set when planned
	args   []typed
	filter *typed
	part   []typed
	order  []typed
	orders []codec.Order
}

// sameWindow reports whether a and b partition and order alike, so one
// over-window node computes both.
func (a *winCall) sameWindow(b *winCall) bool {
	if len(a.part) != len(b.part) || len(a.order) != len(b.order) {
		return false
	}
	for i := range a.part {
		if !descEqual(a.part[i].d, b.part[i].d) {
			return false
		}
	}
	for i := range a.order {
		if !descEqual(a.order[i].d, b.order[i].d) || a.orders[i] != b.orders[i] {
			return false
		}
	}
	return true
}

// Frame option bits of a raw parse tree's WindowDef (Postgres's
// FRAMEOPTION_*).
const (
	frameRange              = 0x2
	frameRows               = 0x4
	frameGroups             = 0x8
	frameStartUnboundedPrec = 0x20
	frameEndUnboundedFoll   = 0x100
	frameStartCurrentRow    = 0x200
	frameEndCurrentRow      = 0x400
	frameStartOffsetPrec    = 0x800
	frameEndOffsetPrec      = 0x1000
	frameStartOffsetFoll    = 0x2000
	frameEndOffsetFoll      = 0x4000
	frameExclusion          = 0x8000 | 0x10000 | 0x20000
)

// windowDef resolves a call's OVER: a named window (OVER w), one built on
// a named window (OVER (w ORDER BY …)), or its own.
func (q *query) windowDef(w *pg_query.WindowDef, named []*pg_query.Node) (*pg_query.WindowDef, error) {
	if w.Refname == "" && w.Name != "" && len(w.PartitionClause) == 0 && len(w.OrderClause) == 0 {
		base, err := q.namedWindow(w.Name, w.Location, named)
		if err != nil {
			return nil, err
		}
		return q.expandWindow(base, named, 0)
	}
	return q.expandWindow(w, named, 0)
}

// namedWindow finds the WINDOW clause's definition of name.
func (q *query) namedWindow(name string, loc int32, named []*pg_query.Node) (*pg_query.WindowDef, error) {
	for _, n := range named {
		if d := n.GetWindowDef(); d != nil && d.Name == name {
			return d, nil
		}
	}
	return nil, errAt(q.st, sqlerr.UndefinedObject, loc, "window %q does not exist", name)
}

// expandWindow resolves a window built on another (w0 AS (PARTITION BY
// g), w1 AS (w0 ORDER BY id)) into one standing alone.
func (q *query) expandWindow(w *pg_query.WindowDef, named []*pg_query.Node, depth int) (*pg_query.WindowDef, error) {
	ref := w.Refname
	if ref == "" {
		return w, nil
	}
	if depth > len(named) {
		return nil, errAt(q.st, sqlerr.WindowingError, w.Location, "window %q refers to itself", ref)
	}
	base, err := q.namedWindow(ref, w.Location, named)
	if err != nil {
		return nil, err
	}
	if base, err = q.expandWindow(base, named, depth+1); err != nil {
		return nil, err
	}
	if len(w.PartitionClause) > 0 {
		return nil, errAt(q.st, sqlerr.WindowingError, w.Location, "cannot override PARTITION BY clause of window %q", ref)
	}
	if len(w.OrderClause) > 0 && len(base.OrderClause) > 0 {
		return nil, errAt(q.st, sqlerr.WindowingError, w.Location, "cannot override ORDER BY clause of window %q", ref)
	}
	if base.FrameOptions != frameDefaults {
		return nil, errAt(q.st, sqlerr.WindowingError, w.Location, "cannot copy window %q because it has a frame clause", ref)
	}
	out := proto.Clone(w).(*pg_query.WindowDef)
	out.Refname = ""
	out.PartitionClause = base.PartitionClause
	if len(out.OrderClause) == 0 {
		out.OrderClause = base.OrderClause
	}
	return out, nil
}

// checkNamedWindows refuses a WINDOW clause naming a window twice and
// binds every named window's expressions, used or not, as Postgres does.
func (q *query) checkNamedWindows(b *binder, named []*pg_query.Node) error {
	seen := map[string]bool{}
	for _, n := range named {
		d := n.GetWindowDef()
		if d == nil {
			continue
		}
		if seen[d.Name] {
			return errAt(q.st, sqlerr.WindowingError, d.Location, "window %q is already defined", d.Name)
		}
		seen[d.Name] = true
		full, err := q.expandWindow(d, named, 0)
		if err != nil {
			return err
		}
		wb := *b
		wb.clause = "window definitions"
		for _, e := range slices.Concat(full.PartitionClause, sortNodes(&pg_query.SelectStmt{SortClause: full.OrderClause})) {
			if _, err := wb.bind(e); err != nil {
				return err
			}
		}
	}
	return nil
}

// frameDefaults is FRAMEOPTION_DEFAULTS: RANGE UNBOUNDED PRECEDING
// AND CURRENT ROW, not written out.
const frameDefaults = frameRange | frameStartUnboundedPrec | frameEndCurrentRow

// bindWindowCall binds f over b, with its resolved window def.
func (q *query) bindWindowCall(b *binder, f *pg_query.FuncCall, def *pg_query.WindowDef) (*winCall, error) {
	wb := *b
	wb.clause = "window definitions"
	c := &winCall{f: f}
	for _, p := range def.PartitionClause {
		t, err := wb.bind(p)
		if err != nil {
			return nil, err
		}
		c.part = append(c.part, t)
	}
	for _, o := range def.OrderClause {
		sb := o.GetSortBy()
		t, err := wb.bind(sb.Node)
		if err != nil {
			return nil, err
		}
		c.order, c.orders = append(c.order, t), append(c.orders, sortOrder(sb))
	}
	frame, err := q.windowFrame(def)
	if err != nil {
		return nil, err
	}
	c.call.Frame = frame
	if f.AggDistinct {
		return nil, errAt(q.st, sqlerr.FeatureNotSupported, f.Location, "DISTINCT is not implemented for window functions")
	}
	if len(f.AggOrder) > 0 {
		return nil, errAt(q.st, sqlerr.FeatureNotSupported, f.Location, "aggregate ORDER BY is not implemented for window functions")
	}
	if aggNames[funcName(f)] {
		return c, q.bindWindowAgg(b, c, f)
	}
	return c, q.bindWindowFunc(b, c, f)
}

// bindWindowAgg binds an aggregate used as a window function, typed as
// the aggregate is.
func (q *query) bindWindowAgg(b *binder, c *winCall, f *pg_query.FuncCall) error {
	sc := &aggScope{q: q, from: b}
	ac, err := sc.bindCall(f)
	if err != nil {
		return err
	}
	switch ac.kind {
	case plan.AggStringAgg, plan.AggArrayAgg:
		return errAt(q.st, sqlerr.FeatureNotSupported, f.Location, "%s over a window is not supported", funcName(f))
	}
	c.call.Kind, c.call.Agg, c.call.Type = plan.WindowAgg, ac.kind, ac.typ
	c.args, c.filter = ac.args, ac.filter
	return nil
}

// windowNames are the window functions that are no aggregates.
var windowNames = map[string]bool{
	"row_number": true, "rank": true, "dense_rank": true, "percent_rank": true, "cume_dist": true, "ntile": true,
	"lag": true, "lead": true, "first_value": true, "last_value": true, "nth_value": true,
}

// bindWindowFunc binds a ranking or value function.
func (q *query) bindWindowFunc(b *binder, c *winCall, f *pg_query.FuncCall) error {
	name := funcName(f)
	if f.AggFilter != nil && windowNames[name] {
		return errAt(q.st, sqlerr.FeatureNotSupported, f.Location, "FILTER is not implemented for non-aggregate window functions")
	}
	if f.AggStar || f.AggFilter != nil {
		return errAt(q.st, sqlerr.WrongObjectType, f.Location, "%s is not an aggregate function", name)
	}
	args := make([]typed, len(f.Args))
	for i, a := range f.Args {
		t, err := b.bind(a)
		if err != nil {
			return err
		}
		args[i] = t
	}
	undefined := errAt(q.st, sqlerr.UndefinedFunction, f.Location, "function %s(%s) does not exist", name, typeList(typesOf(args)))
	arity := func(lo, hi int) bool { return len(args) >= lo && len(args) <= hi }
	switch name {
	case "row_number", "rank", "dense_rank":
		if !arity(0, 0) {
			return undefined
		}
		c.call.Kind, c.call.Type = plan.WindowKind(name), types.TInt64
	case "percent_rank", "cume_dist":
		if !arity(0, 0) {
			return undefined
		}
		c.call.Kind, c.call.Type = plan.WindowKind(name), types.TFloat64
	case "ntile":
		if !arity(1, 1) {
			return undefined
		}
		c.call.Kind, c.call.Type = plan.WindowNtile, types.TInt32
		return q.windowConstant(c, args[0], f.Args[0])
	case "lag", "lead":
		return q.bindLagLead(b, c, f, args, undefined)
	case "first_value", "last_value", "nth_value":
		if (name == "nth_value") != (len(args) == 2) || len(args) == 0 {
			return undefined
		}
		if err := q.typedValue(args[0], f); err != nil {
			return err
		}
		c.call.Kind, c.call.Type = plan.WindowKind(name), valueType(args[0])
		c.args = []typed{args[0]}
		if name == "nth_value" {
			return q.windowConstant(c, args[1], f.Args[1])
		}
	default:
		return errAt(q.st, sqlerr.WrongObjectType, f.Location, "OVER specified, but %s is not a window function nor an aggregate function", name)
	}
	return nil
}

// bindLagLead binds lag and lead: the value and the default take their
// common type, as Postgres's anycompatible arguments do.
func (q *query) bindLagLead(b *binder, c *winCall, f *pg_query.FuncCall, args []typed, undefined error) error {
	if len(args) < 1 || len(args) > 3 {
		return undefined
	}
	c.call.Kind, c.call.Offset = plan.WindowKind(funcName(f)), 1
	if len(args) >= 2 {
		if err := q.windowConstant(c, args[1], f.Args[1]); err != nil {
			return err
		}
	}
	vals := []typed{args[0]}
	nodes := []*pg_query.Node{f.Args[0]}
	if len(args) == 3 {
		vals, nodes = append(vals, args[2]), append(nodes, f.Args[2])
	}
	if err := q.typedValue(args[0], f); err != nil {
		return err
	}
	vals, err := b.unify(funcName(f), vals, nodes)
	if sqlerr.CodeOf(err) == sqlerr.DatatypeMismatch {
		return undefined // no common type: no such lag, as Postgres says
	}
	if err != nil {
		return err
	}
	c.call.Type = vals[0].t
	c.args = vals
	return nil
}

// typedValue refuses an argument of no type (a bare NULL), whose result
// type cannot be known, as Postgres does.
func (q *query) typedValue(t typed, f *pg_query.FuncCall) error {
	if t.t.ID == types.Unknown && t.d.Kind == expr.KindLiteral && t.d.Value == nil {
		return errAt(q.st, sqlerr.DatatypeMismatch, f.Location,
			"could not determine polymorphic type because input has type unknown")
	}
	return nil
}

// valueType is an argument's type, varchar for an untyped literal.
func valueType(t typed) types.Type {
	if t.t.ID == types.Unknown {
		return types.TVarchar
	}
	return t.t
}

func typesOf(ts []typed) []types.Type {
	out := make([]types.Type, len(ts))
	for i, t := range ts {
		out[i] = t.t
	}
	return out
}

// windowConstant sets the call's Offset from an integer constant
// argument. Sluice needs the offset when it plans (Postgres also takes
// expressions).
func (q *query) windowConstant(c *winCall, t typed, n *pg_query.Node) error {
	v, ok := intConstant(t)
	if !ok {
		return errAt(q.st, sqlerr.FeatureNotSupported, location(n),
			"the offset of %s must be an integer constant", c.call.Kind)
	}
	c.call.Offset = v
	return nil
}

// intConstant is the value of an integer literal.
func intConstant(t typed) (int64, bool) {
	if t.d.Kind != expr.KindLiteral || t.d.Value == nil || !t.t.IsInteger() {
		return 0, false
	}
	v, err := strconv.ParseInt(*t.d.Value, 10, 64)
	if err != nil || v > 1<<31 || v < -(1<<31) {
		return 0, false
	}
	return v, true
}

// windowFrame reads a window's frame clause.
func (q *query) windowFrame(w *pg_query.WindowDef) (plan.Frame, error) {
	opts := w.FrameOptions
	switch {
	case opts&frameGroups != 0:
		return plan.Frame{}, errAt(q.st, sqlerr.FeatureNotSupported, w.Location, "GROUPS frames are not supported")
	case opts&frameExclusion != 0:
		return plan.Frame{}, errAt(q.st, sqlerr.FeatureNotSupported, w.Location, "frame EXCLUDE is not supported")
	}
	f := plan.Frame{Rows: opts&frameRows != 0}
	var err error
	if f.Start, err = q.frameBound(w, w.StartOffset, f.Rows, opts&frameStartUnboundedPrec != 0,
		opts&frameStartCurrentRow != 0, opts&frameStartOffsetPrec != 0, opts&frameStartOffsetFoll != 0, "starting"); err != nil {
		return plan.Frame{}, err
	}
	if f.End, err = q.frameBound(w, w.EndOffset, f.Rows, false,
		opts&frameEndCurrentRow != 0, opts&frameEndOffsetPrec != 0, opts&frameEndOffsetFoll != 0, "ending"); err != nil {
		return plan.Frame{}, err
	}
	if opts&frameEndUnboundedFoll != 0 {
		f.End = plan.FrameBound{Kind: plan.UnboundedFollowing}
	}
	return f, nil
}

func (q *query) frameBound(w *pg_query.WindowDef, off *pg_query.Node, rows, unbounded, current, prec, foll bool, what string) (plan.FrameBound, error) {
	switch {
	case unbounded:
		return plan.FrameBound{Kind: plan.UnboundedPreceding}, nil
	case current:
		return plan.FrameBound{Kind: plan.CurrentRow}, nil
	case !prec && !foll:
		return plan.FrameBound{Kind: plan.UnboundedFollowing}, nil
	}
	if !rows {
		return plan.FrameBound{}, errAt(q.st, sqlerr.FeatureNotSupported, w.Location,
			"RANGE with an offset PRECEDING or FOLLOWING is not supported; use ROWS")
	}
	v, err := q.frameOffset(off, what)
	if err != nil {
		return plan.FrameBound{}, err
	}
	if v < 0 {
		return plan.FrameBound{}, errAt(q.st, sqlerr.InvalidPrecedingOrFollowingSize, location(off), "frame %s offset must not be negative", what)
	}
	b := plan.FrameBound{Kind: plan.OffsetPreceding, Offset: v}
	if foll {
		b.Kind = plan.OffsetFollowing
	}
	return b, nil
}

// windowPrepass binds a window call above a GROUP BY before the
// aggregation is planned, so that the aggregates in its arguments and
// window are registered; its value is a stand-in of its type.
func (s *aggScope) windowPrepass(f *pg_query.FuncCall) (typed, bool, error) {
	def, err := s.q.windowDef(f.Over, s.named)
	if err != nil {
		return typed{}, true, err
	}
	c, err := s.q.bindWindowCall(s.self, f, def)
	if err != nil {
		return typed{}, true, err
	}
	return typed{d: expr.Null(c.call.Type), t: c.call.Type}, true, nil
}

// frameOffset evaluates a ROWS frame offset: a constant expression of a
// type that casts to bigint ('1', 1.5 rounds to 2), as Postgres takes it.
func (q *query) frameOffset(off *pg_query.Node, what string) (int64, error) {
	b := &binder{q: q, clause: "window frame offsets"}
	t, err := b.bind(off)
	if sqlerr.CodeOf(err) == sqlerr.UndefinedColumn {
		return 0, errAt(q.st, sqlerr.InvalidColumnReference, location(off), "argument of ROWS must not contain variables")
	}
	if err != nil {
		return 0, err
	}
	if t, err = b.coerce(t, types.TInt64, location(off)); err != nil {
		return 0, err
	}
	e, err := expr.Build(t.d, nil)
	if err != nil {
		return 0, err
	}
	v, err := expr.EvalRow(expr.NewStrictContext(0), e, types.Row{}, nil)
	if err != nil {
		return 0, withPos(q.st, err, location(off))
	}
	if v == nil {
		return 0, errAt(q.st, sqlerr.NullValueNotAllowed, location(off), "frame %s offset must not be null", what)
	}
	return v.(int64), nil
}
