package refeval

import (
	"fmt"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
)

// aggregate groups rows and computes each call from scratch. A
// simple aggregation (no group keys) always yields one row. A local
// aggregation's is one partial per group over all its rows, which is one
// of the outputs it may give (it aggregates whatever chunks it gets).
func aggregate(n *plan.Node, rows []types.Row) ([]types.Row, error) {
	a := n.Agg
	if n.Kind == plan.KindLocalAgg {
		a = n.LocalAgg
	}
	groups := map[string][]types.Row{}
	var order []string
	for _, r := range rows {
		k := keyString(pick(r, a.GroupKeys))
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	if len(a.GroupKeys) == 0 && len(order) == 0 {
		order, groups[""] = []string{""}, nil
	}
	in := n.Inputs[0].Schema
	var out []types.Row
	for _, k := range order {
		g := groups[k]
		var row types.Row
		if len(g) > 0 {
			row = pick(g[0], a.GroupKeys)
		}
		for _, call := range a.Calls {
			v, err := aggCall(call, in, g)
			if err != nil {
				return nil, err
			}
			row = append(row, v)
		}
		out = append(out, row)
	}
	return out, nil
}

// aggInputs returns the call's argument rows after FILTER and DISTINCT.
func aggInputs(call plan.AggCall, in []types.Type, g []types.Row) ([]types.Row, error) {
	rows := g
	if call.Filter != nil {
		vals, err := evalRows(*call.Filter, in, g)
		if err != nil {
			return nil, err
		}
		rows = nil
		for i, v := range vals {
			if b, ok := v.(bool); ok && b {
				rows = append(rows, g[i])
			}
		}
	}
	args := make([]types.Row, 0, len(rows))
	for _, r := range rows {
		args = append(args, pick(r, call.Args))
	}
	if call.Distinct {
		args = distinct(seqN(len(call.Args)), args)
	}
	return args, nil
}

func seqN(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func aggCall(call plan.AggCall, in []types.Type, g []types.Row) (types.Datum, error) {
	args, err := aggInputs(call, in, g)
	if err != nil {
		return nil, err
	}
	if call.Kind == plan.AggCountStar {
		return int64(len(args)), nil
	}
	if call.Kind == plan.AggArrayAgg || call.Kind == plan.AggStringAgg {
		ordered, err := orderedArgs(call, in, g)
		if err != nil || call.Kind == plan.AggStringAgg {
			return stringAgg(ordered, call.Type), err
		}
		return arrayAgg(ordered), nil
	}
	var vals []types.Datum
	for _, a := range args {
		if a[0] != nil {
			vals = append(vals, a[0])
		}
	}
	switch call.Kind {
	case plan.AggCount:
		return int64(len(vals)), nil
	case plan.AggSumCounts:
		var n int64
		for _, v := range vals {
			n += v.(int64)
		}
		return n, nil
	case plan.AggMin, plan.AggMax:
		return extreme(vals, call.Kind == plan.AggMax), nil
	case plan.AggSum:
		return sum(vals, call.Type)
	case plan.AggBoolAnd, plan.AggBoolOr:
		return boolAgg(vals, call.Kind == plan.AggBoolAnd), nil
	case plan.AggAvg:
		return avg(vals, call.Type)
	}
	return nil, fmt.Errorf("refeval: aggregate %s not supported", call.Kind)
}

func extreme(vals []types.Datum, max bool) types.Datum {
	var best types.Datum
	for _, v := range vals {
		c := types.Compare(v, best)
		if best == nil || (max && c > 0) || (!max && c < 0) {
			best = v
		}
	}
	return best
}

func sum(vals []types.Datum, t types.Type) (types.Datum, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	switch t.ID {
	case types.Int64:
		var s int64
		for _, v := range vals {
			s += v.(int64)
		}
		return s, nil
	case types.Float32, types.Float64:
		var s float64
		for _, v := range vals {
			s += v.(float64)
		}
		return s, nil
	case types.Decimal:
		s := new(apd.Decimal)
		ctx := types.DecimalContext()
		for _, v := range vals {
			var d apd.Decimal
			switch x := v.(type) {
			case int64:
				d.SetInt64(x)
			case *apd.Decimal:
				d.Set(x)
			}
			if _, err := ctx.Add(s, s, &d); err != nil {
				return nil, err
			}
		}
		return s, nil
	}
	return nil, fmt.Errorf("refeval: sum of %s", t)
}

func boolAgg(vals []types.Datum, and bool) types.Datum {
	if len(vals) == 0 {
		return nil
	}
	acc := and
	for _, v := range vals {
		if and {
			acc = acc && v.(bool)
		} else {
			acc = acc || v.(bool)
		}
	}
	return acc
}
