package window

import (
	"fmt"

	"github.com/sluice-db/sluice/internal/aggval"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
)

// acc is an aggregate's running value over frame rows s … e.
type acc struct {
	s, e          int
	n             int64
	sum           aggval.Sum
	best          types.Datum
	trues, falses int64
}

func (a *acc) reset(s int) { *a = acc{s: s, e: s - 1} }

// aggregate computes an aggregate over each row's frame, extending the
// previous frame when the new one starts where it did and ends no
// earlier.
func (e *Evaluator) aggregate(p Partition, c plan.WindowCall, from, to int, col func(int, types.Datum)) error {
	var a acc
	a.reset(-1)
	for i := from; i < to; i++ {
		s, end := frame(p, c.Frame, i)
		if s != a.s || end < a.e {
			a.reset(s)
		}
		for j := a.e + 1; j <= end; j++ {
			if err := e.add(&a, c, p.Row(j)); err != nil {
				return err // a numeric overflow while adding fails in Postgres too
			}
		}
		a.e = max(a.e, end)
		v, err := e.result(&a, c)
		if err != nil {
			if err = e.ectx.RowError(err); err != nil {
				return err
			}
			v = nil
		}
		col(i, v)
	}
	return nil
}

func (e *Evaluator) add(a *acc, c plan.WindowCall, r types.Row) error {
	if c.Filter != nil && *c.Filter >= 0 {
		if ok, _ := r[*c.Filter].(bool); !ok {
			return nil
		}
	}
	if c.Agg == plan.AggCountStar {
		a.n++
		return nil
	}
	v := r[c.Args[0]]
	if v == nil {
		return nil
	}
	a.n++
	switch c.Agg {
	case plan.AggSum, plan.AggAvg:
		return a.sum.Add(v)
	case plan.AggMin, plan.AggMax:
		cmp := types.Compare(v, a.best)
		if a.best == nil || (c.Agg == plan.AggMax && cmp > 0) || (c.Agg == plan.AggMin && cmp < 0) {
			a.best = v
		}
	case plan.AggBoolAnd, plan.AggBoolOr:
		if v.(bool) {
			a.trues++
		} else {
			a.falses++
		}
	}
	return nil
}

func (e *Evaluator) result(a *acc, c plan.WindowCall) (types.Datum, error) {
	switch c.Agg {
	case plan.AggCount, plan.AggCountStar:
		return a.n, nil
	case plan.AggMin, plan.AggMax:
		return a.best, nil
	}
	if a.n == 0 {
		return nil, nil
	}
	switch c.Agg {
	case plan.AggBoolAnd:
		return a.falses == 0, nil
	case plan.AggBoolOr:
		return a.trues > 0, nil
	case plan.AggSum:
		return a.sum.Value(c.Type)
	case plan.AggAvg:
		return a.sum.Avg(e.ectx, e.div, a.n, c.Type)
	}
	return nil, fmt.Errorf("window: aggregate %s", c.Agg)
}
