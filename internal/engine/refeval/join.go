package refeval

import (
	"slices"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
)

// join is a nested-loop join with SQL NULL semantics and outer padding.
func join(n *plan.Node, left, right []types.Row) ([]types.Row, error) {
	j := n.HashJoin
	lt, rt := n.Inputs[0].Schema, n.Inputs[1].Schema
	all := slices.Concat(lt, rt)
	var residual expr.Expr
	if j.Residual != nil {
		e, err := expr.Build(*j.Residual, all)
		if err != nil {
			return nil, err
		}
		residual = e
	}
	ctx := &expr.Context{}
	lMatched := make([]bool, len(left))
	rMatched := make([]bool, len(right))
	var out []types.Row
	for li, l := range left {
		for ri, r := range right {
			ok, err := matches(ctx, j, residual, l, r, all)
			if err != nil {
				return nil, err
			}
			if ok {
				lMatched[li], rMatched[ri] = true, true
				out = append(out, pick(slices.Concat(l, r), j.Output))
			}
		}
	}
	if j.Type == plan.LeftJoin || j.Type == plan.FullJoin {
		for li, l := range left {
			if !lMatched[li] {
				out = append(out, pick(slices.Concat(l, make(types.Row, len(rt))), j.Output))
			}
		}
	}
	if j.Type == plan.RightJoin || j.Type == plan.FullJoin {
		for ri, r := range right {
			if !rMatched[ri] {
				out = append(out, pick(slices.Concat(make(types.Row, len(lt)), r), j.Output))
			}
		}
	}
	return out, nil
}

func matches(ctx *expr.Context, j *plan.HashJoin, residual expr.Expr, l, r types.Row, all []types.Type) (bool, error) {
	for k := range j.LeftKeys {
		a, b := l[j.LeftKeys[k]], r[j.RightKeys[k]]
		nullSafe := k < len(j.NullSafe) && j.NullSafe[k]
		if a == nil || b == nil {
			if nullSafe && a == nil && b == nil {
				continue
			}
			return false, nil
		}
		if types.Compare(a, b) != 0 {
			return false, nil
		}
	}
	if residual == nil {
		return true, nil
	}
	v, err := expr.EvalRow(ctx, residual, slices.Concat(l, r), all)
	if err != nil {
		return false, err
	}
	b, ok := v.(bool)
	return ok && b, nil
}
