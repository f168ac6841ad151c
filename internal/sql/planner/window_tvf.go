package planner

import (
	"strings"

	pg_query "github.com/pganalyze/pg_query_go/v6"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// TUMBLE(rel, time, size [, offset]) and HOP(rel, time, slide, size
// [, offset]) are RisingWave's and Flink's time-window table functions:
// rel's rows with window_start and window_end appended. Windows are
// aligned to the Unix epoch plus offset. TUMBLE puts each row in the one
// window [start, start+size) holding its time (window_start is
// date_bin(size, time, epoch + offset)); HOP puts it in each of the
// size/slide windows of width size that start every slide and hold it.
// The time column is a timestamp or timestamptz; the intervals are
// constants without months, and size a multiple of slide. The columns
// keep rel's name as their qualifier (bid.auction), unless the call has
// an alias.

// unixEpoch is 1970-01-01 00:00:00 in micros from 2000.
const unixEpoch = -types.TimestampEpochSeconds * 1_000_000

func isTimeWindow(name string) bool { return name == "tumble" || name == "hop" }

func (q *query) timeWindow(f *pg_query.RangeFunction, fc *pg_query.FuncCall) (*relExpr, error) {
	name := funcName(fc)
	hop := name == "hop"
	least := 3 // relation, time, size
	if hop {
		least = 4 // relation, time, slide, size
	}
	if len(fc.Args) < least || len(fc.Args) > least+1 {
		return nil, errAt(q.st, sqlerr.UndefinedFunction, fc.Location, "%s takes (relation, time column, %s[, offset])",
			strings.ToUpper(name), map[bool]string{false: "size", true: "slide, size"}[hop])
	}
	r, err := q.windowInput(fc)
	if err != nil {
		return nil, err
	}
	b := &binder{q: q, scope: r, clause: strings.ToUpper(name)}
	tc, err := b.bind(fc.Args[1])
	if err != nil {
		return nil, err
	}
	if tc.d.Kind != expr.KindInput || (tc.t.ID != types.Timestamp && tc.t.ID != types.Timestamptz) {
		return nil, errAt(q.st, sqlerr.DatatypeMismatch, location(fc.Args[1]),
			"the time column of %s must be a column of type timestamp or timestamptz", strings.ToUpper(name))
	}
	iv, err := q.windowIntervals(fc.Args[2:], name)
	if err != nil {
		return nil, err
	}
	out := &relExpr{cols: append([]column(nil), r.cols...)}
	qual := ""
	if len(r.cols) > 0 {
		qual = r.cols[0].qual
	}
	if f.Alias != nil && len(f.Alias.Colnames) > 0 {
		return nil, errAt(q.st, sqlerr.FeatureNotSupported, fc.Location,
			"column aliases for %s are not supported; rename its columns in the select list", strings.ToUpper(name))
	}
	if f.Alias != nil {
		qual = f.Alias.Aliasname
		for i := range out.cols {
			out.cols[i].qual = qual
		}
	}
	out.cols = append(out.cols, column{qual: qual, name: "window_start", typ: tc.t}, column{qual: qual, name: "window_end", typ: tc.t})
	schema := append(append([]types.Type(nil), r.node.Schema...), tc.t, tc.t)
	origin := unixEpoch + iv.offset
	if hop {
		h := &plan.HopWindow{TimeCol: tc.d.Index, Slide: iv.slide, Size: iv.size, Origin: origin}
		out.node = &plan.Node{Kind: plan.KindHopWindow, Inputs: []*plan.Node{r.node}, Schema: schema,
			StreamKey: append(append([]int(nil), r.node.StreamKey...), len(r.cols)), HopWindow: h}
		return out, nil
	}
	exprs := make([]expr.Desc, 0, len(schema))
	for i, t := range r.node.Schema {
		exprs = append(exprs, expr.Input(i, t))
	}
	start := plan.BinStart(tc.d.Index, tc.t, iv.size, origin)
	end := expr.Func("+", start, expr.Literal(types.DInterval{Micros: iv.size}, types.TInterval))
	end.Type = tc.t
	exprs = append(exprs, start, end)
	out.node = &plan.Node{Kind: plan.KindProject, Inputs: []*plan.Node{r.node}, Schema: schema,
		StreamKey: append([]int(nil), r.node.StreamKey...), Project: &plan.Project{Exprs: exprs}}
	return out, nil
}

// windowInput plans the relation named by a window function's first
// argument (a table, view, source or CTE).
func (q *query) windowInput(fc *pg_query.FuncCall) (*relExpr, error) {
	ref := fc.Args[0].GetColumnRef()
	if ref == nil || len(ref.Fields) != 1 || ref.Fields[0].GetString_() == nil {
		return nil, errAt(q.st, sqlerr.FeatureNotSupported, location(fc.Args[0]),
			"the first argument of %s must name a table, view or source", strings.ToUpper(funcName(fc)))
	}
	return q.rangeVar(&pg_query.RangeVar{Relname: ref.Fields[0].GetString_().Sval, Inh: true, Location: ref.Location})
}

type windowIntervals struct{ slide, size, offset int64 }

// windowIntervals reads (size [, offset]) or (slide, size [, offset]).
func (q *query) windowIntervals(args []*pg_query.Node, name string) (windowIntervals, error) {
	var vals []int64
	for _, a := range args {
		v, err := q.windowInterval(a)
		if err != nil {
			return windowIntervals{}, err
		}
		vals = append(vals, v)
	}
	var iv windowIntervals
	if name == "hop" {
		iv.slide, iv.size, vals = vals[0], vals[1], vals[2:]
	} else {
		iv.size, vals = vals[0], vals[1:]
	}
	if len(vals) > 0 {
		iv.offset = vals[0]
	}
	switch {
	case iv.size <= 0 || (name == "hop" && iv.slide <= 0):
		return iv, errAt(q.st, sqlerr.InvalidParameterValue, location(args[0]), "window size and slide must be positive")
	case name == "hop" && iv.size%iv.slide != 0:
		return iv, errAt(q.st, sqlerr.InvalidParameterValue, location(args[1]), "window size must be a multiple of the slide")
	case name == "hop" && iv.size/iv.slide > plan.MaxHopCopies:
		return iv, errAt(q.st, sqlerr.ProgramLimitExceeded, location(args[1]),
			"a hop window puts each row in at most %d windows (size / slide)", plan.MaxHopCopies)
	}
	return iv, nil
}

// windowInterval evaluates a constant interval without months, in micros.
func (q *query) windowInterval(a *pg_query.Node) (int64, error) {
	b := &binder{q: q, clause: "window sizes"}
	t, err := b.bind(a)
	if err != nil {
		return 0, err
	}
	d, err := evalConst(t, types.TInterval)
	iv, ok := d.(types.DInterval)
	if err != nil || !ok {
		return 0, errAt(q.st, sqlerr.InvalidParameterValue, location(a), "window sizes must be constant intervals")
	}
	if iv.Months != 0 {
		return 0, errAt(q.st, sqlerr.FeatureNotSupported, location(a), "window sizes with months or years are not supported")
	}
	us := int64(iv.Days)*86_400_000_000 + iv.Micros
	if iv.Days > 1_000_000 || iv.Days < -1_000_000 {
		return 0, errAt(q.st, sqlerr.InvalidParameterValue, location(a), "window size out of range")
	}
	return us, nil
}
