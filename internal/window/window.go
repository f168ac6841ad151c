package window

import (
	"fmt"

	"github.com/sluice-db/sluice/internal/aggval"
	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// Partition is one partition's rows in window order.
type Partition interface {
	Len() int
	Row(i int) types.Row
	// Peers reports whether rows i and j tie on every ORDER BY column.
	Peers(i, j int) bool
}

// Evaluator computes a list of window calls.
type Evaluator struct {
	calls []plan.WindowCall
	ectx  *expr.Context
	div   *aggval.Divider
}

// New checks the calls and prepares their evaluation; ectx evaluates
// avg's numeric division.
func New(calls []plan.WindowCall, ectx *expr.Context) (*Evaluator, error) {
	for _, c := range calls {
		if err := check(c); err != nil {
			return nil, err
		}
	}
	div, err := aggval.NewDivider()
	if err != nil {
		return nil, err
	}
	return &Evaluator{calls: calls, ectx: ectx, div: div}, nil
}

func check(c plan.WindowCall) error {
	want := 0
	switch c.Kind {
	case plan.WindowRowNumber, plan.WindowRank, plan.WindowDenseRank, plan.WindowPercentRank,
		plan.WindowCumeDist, plan.WindowNtile:
	case plan.WindowLag, plan.WindowLead:
		want = 1
		if len(c.Args) == 2 {
			want = 2
		}
	case plan.WindowFirstValue, plan.WindowLastValue, plan.WindowNthValue:
		want = 1
	case plan.WindowAgg:
		want = 1
		if c.Agg == plan.AggCountStar {
			want = 0
		}
		switch c.Agg {
		case plan.AggCount, plan.AggCountStar, plan.AggSum, plan.AggAvg, plan.AggMin, plan.AggMax,
			plan.AggBoolAnd, plan.AggBoolOr:
		default:
			return fmt.Errorf("window: aggregate %s over a window is not supported", c.Agg)
		}
	default:
		return fmt.Errorf("window: unknown function %q", c.Kind)
	}
	if len(c.Args) != want {
		return fmt.Errorf("window: %s takes %d arguments, has %d", c.Kind, want, len(c.Args))
	}
	framed := c.Kind == plan.WindowAgg || c.Kind == plan.WindowFirstValue || c.Kind == plan.WindowLastValue || c.Kind == plan.WindowNthValue
	if framed && (c.Frame.Start.Kind == plan.UnboundedFollowing || c.Frame.End.Kind == plan.UnboundedPreceding) {
		return fmt.Errorf("window: bad frame %+v", c.Frame)
	}
	return nil
}

// Eval returns the calls' values for rows from … to-1 of p, one row of
// len(calls) values per partition row.
func (e *Evaluator) Eval(p Partition, from, to int) ([]types.Row, error) {
	out := make([]types.Row, to-from)
	vals := make([]types.Datum, (to-from)*len(e.calls))
	for i := range out {
		out[i] = vals[i*len(e.calls) : (i+1)*len(e.calls) : (i+1)*len(e.calls)]
	}
	for ci, c := range e.calls {
		col := func(i int, d types.Datum) { out[i-from][ci] = d }
		var err error
		switch c.Kind {
		case plan.WindowAgg:
			err = e.aggregate(p, c, from, to, col)
		case plan.WindowLag, plan.WindowLead, plan.WindowFirstValue, plan.WindowLastValue, plan.WindowNthValue:
			err = value(p, c, from, to, col)
		default:
			err = rank(p, c, from, to, col)
		}
		if err != nil && from < to {
			err = e.ectx.RowError(err) // NULL in a streaming job
		}
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// groupStart and groupEnd are the first and last rows of i's peer group.
func groupStart(p Partition, i int) int {
	for i > 0 && p.Peers(i-1, i) {
		i--
	}
	return i
}

func groupEnd(p Partition, i int) int {
	for i+1 < p.Len() && p.Peers(i, i+1) {
		i++
	}
	return i
}

// frame returns row i's frame [s, e]; it is empty when s > e.
func frame(p Partition, f plan.Frame, i int) (s, e int) {
	n := p.Len()
	switch b := f.Start; b.Kind {
	case plan.UnboundedPreceding:
		s = 0
	case plan.OffsetPreceding:
		s = i - clampOffset(b.Offset, n)
	case plan.CurrentRow:
		s = i
		if !f.Rows {
			s = groupStart(p, i)
		}
	case plan.OffsetFollowing:
		s = i + clampOffset(b.Offset, n)
	default:
		s = n
	}
	switch b := f.End; b.Kind {
	case plan.OffsetPreceding:
		e = i - clampOffset(b.Offset, n)
	case plan.CurrentRow:
		e = i
		if !f.Rows {
			e = groupEnd(p, i)
		}
	case plan.OffsetFollowing:
		e = i + clampOffset(b.Offset, n)
	case plan.UnboundedFollowing:
		e = n - 1
	default:
		e = -1
	}
	return max(s, 0), min(e, n-1)
}

// clampOffset bounds an offset by the partition size, so adding it to a
// row index cannot overflow.
func clampOffset(off int64, n int) int {
	if off > int64(n) {
		return n + 1
	}
	return int(off)
}

// value computes lag, lead, first_value, last_value and nth_value.
func value(p Partition, c plan.WindowCall, from, to int, col func(int, types.Datum)) error {
	n := p.Len()
	if c.Kind == plan.WindowNthValue && c.Offset <= 0 {
		return allNull(from, to, col, sqlerr.New(sqlerr.InvalidArgumentForNthValue, "argument of nth_value must be greater than zero"))
	}
	arg := c.Args[0]
	for i := from; i < to; i++ {
		j := -1
		switch c.Kind {
		case plan.WindowLag, plan.WindowLead:
			off := clampOffset(c.Offset, n)
			if c.Offset < 0 {
				off = -clampOffset(-c.Offset, n)
			}
			if c.Kind == plan.WindowLag {
				off = -off
			}
			if j = i + off; j < 0 || j >= n {
				var d types.Datum
				if len(c.Args) == 2 {
					d = p.Row(i)[c.Args[1]]
				}
				col(i, d)
				continue
			}
		default:
			s, e := frame(p, c.Frame, i)
			switch c.Kind {
			case plan.WindowFirstValue:
				j = s
			case plan.WindowLastValue:
				j = e
			default:
				j = s + clampOffset(c.Offset, n) - 1
			}
			if s > e || j > e {
				col(i, nil)
				continue
			}
		}
		col(i, p.Row(j)[arg])
	}
	return nil
}

// allNull sets every row's value to NULL and returns err.
func allNull(from, to int, col func(int, types.Datum), err error) error {
	for i := from; i < to; i++ {
		col(i, nil)
	}
	return err
}
