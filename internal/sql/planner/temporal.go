package planner

import (
	"slices"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// In a materialized view now() is the time of the latest barrier. It may
// appear only in a temporal filter: a WHERE conjunct comparing a
// timestamp or timestamptz column with an expression of now() and
// constants (ts > now() - INTERVAL '1 hour'). Anywhere else its value
// would be frozen into rows when they are computed, and their later
// deletes would not match them.

var nowFuncs = []string{"now", "current_timestamp", "transaction_timestamp", "statement_timestamp"}

// usesNow reports whether d calls now() or one of its spellings.
func usesNow(d expr.Desc) bool {
	if d.Kind == expr.KindFunc && slices.Contains(nowFuncs, d.Name) {
		return true
	}
	return slices.ContainsFunc(d.Args, usesNow)
}

func usesInput(d expr.Desc) bool {
	return d.Kind == expr.KindInput || slices.ContainsFunc(d.Args, usesInput)
}

// errNowInView is the error for now() outside a temporal filter.
func errNowInView() error {
	e := sqlerr.New(sqlerr.FeatureNotSupported,
		"now() in a materialized view is only supported in a WHERE condition comparing a time column with it (a temporal filter)")
	e.Hint = "Write, for example, WHERE ts > now() - INTERVAL '1 hour'; the view then drops rows as they age."
	return e
}

// temporalFilters takes the temporal-filter conjuncts out of a streaming
// WHERE condition: it returns the rest (nil if none) and a temporal
// filter per conjunct taken. Any other use of now() is an error.
func temporalFilters(cond expr.Desc) (*expr.Desc, []plan.TemporalFilter, error) {
	var rest []expr.Desc
	var tfs []plan.TemporalFilter
	terms := []expr.Desc{cond}
	if cond.Kind == expr.KindAnd {
		terms = cond.Args
	}
	for _, c := range terms {
		if !usesNow(c) {
			rest = append(rest, c)
			continue
		}
		tf, ok := temporalConjunct(c)
		if !ok {
			return nil, nil, errNowInView()
		}
		tfs = append(tfs, tf)
	}
	switch len(rest) {
	case 0:
		return nil, tfs, nil
	case 1:
		return &rest[0], tfs, nil
	}
	d := expr.Node(expr.KindAnd, rest...)
	return &d, tfs, nil
}

var flipped = map[string]string{">": "<", ">=": "<=", "<": ">", "<=": ">="}

// temporalConjunct reads `col op bound` or `bound op col`, col a time
// column (a timestamp one cast to timestamptz to meet now()), bound of
// now() and constants only.
func temporalConjunct(c expr.Desc) (plan.TemporalFilter, bool) {
	if c.Kind != expr.KindFunc || flipped[c.Name] == "" || len(c.Args) != 2 {
		return plan.TemporalFilter{}, false
	}
	op, col, bound := c.Name, c.Args[0], c.Args[1]
	if usesNow(col) {
		op, col, bound = flipped[op], bound, col
	}
	if usesNow(col) || usesInput(bound) {
		return plan.TemporalFilter{}, false
	}
	if col.Kind == expr.KindCast && len(col.Args) == 1 && col.Args[0].Kind == expr.KindInput &&
		col.Args[0].Type.ID == types.Timestamp && col.Type.ID == types.Timestamptz {
		col = col.Args[0]
		bound = expr.Cast(bound, col.Type)
	}
	if col.Kind != expr.KindInput || (col.Type.ID != types.Timestamp && col.Type.ID != types.Timestamptz) {
		return plan.TemporalFilter{}, false
	}
	if bound.Type != col.Type {
		// timestamp compared with timestamptz: in the session's zone, as
		// the comparison does.
		bound = expr.Cast(bound, col.Type)
	}
	return plan.TemporalFilter{Col: col.Index, Op: op, Bound: bound}, true
}

// temporalNodes stacks the temporal filters over n.
func temporalNodes(n *plan.Node, tfs []plan.TemporalFilter) *plan.Node {
	for i := range tfs {
		tf := tfs[i]
		tf.Table = plan.TemporalFilterTable(0, n.Schema, tf.Col, n.StreamKey)
		n = &plan.Node{Kind: plan.KindTemporalFilter, Inputs: []*plan.Node{n}, Schema: n.Schema,
			StreamKey: n.StreamKey, TemporalFilter: &tf}
	}
	return n
}

// checkNoNow refuses now() anywhere in a streaming plan but a temporal
// filter's bound.
func checkNoNow(n *plan.Node) error {
	if n.Kind != plan.KindTemporalFilter {
		var err error
		own := *n
		own.Inputs = nil
		plan.MapExprs(&own, func(d expr.Desc) expr.Desc {
			if err == nil && usesNow(d) {
				err = errNowInView()
			}
			return d
		})
		if err != nil {
			return err
		}
	}
	for _, in := range n.Inputs {
		if err := checkNoNow(in); err != nil {
			return err
		}
	}
	return nil
}
