package plan

import "github.com/sluice-db/sluice/internal/expr"

// MapExprs returns a copy of the tree under n with f applied to every
// expression in it (projections, filters, join residuals and expiry
// bounds, VALUES rows, aggregate filters). Every node is copied (plans
// are small) and n itself is never modified, so a cached plan can be
// bound again and again: the planner binds a prepared statement's
// parameters with it.
func MapExprs(n *Node, f func(expr.Desc) expr.Desc) *Node {
	if n == nil {
		return nil
	}
	out := *n
	if len(n.Inputs) > 0 {
		out.Inputs = make([]*Node, len(n.Inputs))
		for i, in := range n.Inputs {
			out.Inputs[i] = MapExprs(in, f)
		}
	}
	switch {
	case n.Project != nil:
		p := *n.Project
		p.Exprs = mapAll(n.Project.Exprs, f)
		out.Project = &p
	case n.Filter != nil:
		out.Filter = &Filter{Cond: f(n.Filter.Cond)}
	case n.HashJoin != nil:
		j := *n.HashJoin
		if n.HashJoin.Residual != nil {
			r := f(*n.HashJoin.Residual)
			j.Residual = &r
		}
		j.LeftExpiry, j.RightExpiry = mapExpiry(j.LeftExpiry, f), mapExpiry(j.RightExpiry, f)
		out.HashJoin = &j
	case n.Values != nil:
		v := *n.Values
		v.Rows = make([][]expr.Desc, len(n.Values.Rows))
		for i, row := range n.Values.Rows {
			v.Rows[i] = mapAll(row, f)
		}
		out.Values = &v
	case n.WatermarkFilter != nil:
		w := *n.WatermarkFilter
		w.Expr = f(w.Expr)
		out.WatermarkFilter = &w
	case n.TemporalFilter != nil:
		tf := *n.TemporalFilter
		tf.Bound = f(tf.Bound)
		out.TemporalFilter = &tf
	case n.FunctionScan != nil:
		fs := *n.FunctionScan
		fs.Args = mapAll(fs.Args, f)
		out.FunctionScan = &fs
	case n.Agg != nil:
		out.Agg = mapAgg(n.Agg, f)
	case n.LocalAgg != nil:
		out.LocalAgg = mapAgg(n.LocalAgg, f)
	}
	return &out
}

// mapAgg maps the calls' FILTER conditions of a copy of a.
func mapAgg(a *Agg, f func(expr.Desc) expr.Desc) *Agg {
	c := *a
	c.Calls = append([]AggCall(nil), a.Calls...)
	for i, call := range c.Calls {
		if call.Filter != nil {
			d := f(*call.Filter)
			c.Calls[i].Filter = &d
		}
	}
	return &c
}

func mapExpiry(e *JoinExpiry, f func(expr.Desc) expr.Desc) *JoinExpiry {
	if e == nil {
		return nil
	}
	c := *e
	c.Bound = f(e.Bound)
	return &c
}

func mapAll(ds []expr.Desc, f func(expr.Desc) expr.Desc) []expr.Desc {
	out := make([]expr.Desc, len(ds))
	for i, d := range ds {
		out[i] = f(d)
	}
	return out
}
