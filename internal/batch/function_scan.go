package batch

import (
	"context"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// maxFunctionRows bounds the rows one set-returning function call makes,
// as the planner bounds generate_series with constant arguments.
const maxFunctionRows = 10_000_000

// functionScan runs a set-returning function in FROM whose arguments
// are evaluated now (plan.KindFunctionScan): generate_series(start, stop
// [, step]) over integers, and unnest(array).
func (x *executor) functionScan(ctx context.Context, n *plan.Node, emit emitFunc) error {
	fs := n.FunctionScan
	if fs == nil {
		return sqlerr.New(sqlerr.Internal, "batch: malformed function_scan node")
	}
	args := make([]types.Datum, len(fs.Args))
	for i, d := range fs.Args {
		e, err := expr.Build(d, nil)
		if err != nil {
			return err
		}
		if args[i], err = expr.EvalRow(x.ectx, e, types.Row{}, nil); err != nil {
			return err
		}
	}
	bld := types.NewBuilder(n.Schema, x.size)
	var ord int64
	out := func(v types.Datum) error {
		ord++
		row := types.Row{v}
		if fs.Ordinality {
			row = append(row, ord)
		}
		return send(ctx, emit, bld.Append(types.Insert, row))
	}
	var err error
	switch fs.Name {
	case "generate_series":
		err = series(args, out)
	case "unnest":
		err = unnest(args, out)
	default:
		err = sqlerr.Errorf(sqlerr.FeatureNotSupported, "function %s is not supported in FROM", fs.Name)
	}
	if err != nil {
		return err
	}
	return send(ctx, emit, bld.Take())
}

// series emits generate_series(start, stop[, step]): nothing when an
// argument is NULL.
func series(args []types.Datum, out func(types.Datum) error) error {
	step := int64(1)
	if len(args) == 3 {
		if args[2] == nil {
			return nil
		}
		step = args[2].(int64)
	}
	if args[0] == nil || args[1] == nil {
		return nil
	}
	if step == 0 {
		return sqlerr.New(sqlerr.InvalidParameterValue, "step size cannot equal zero")
	}
	start, stop := args[0].(int64), args[1].(int64)
	for v, n := start, 0; (step > 0 && v <= stop) || (step < 0 && v >= stop); v, n = v+step, n+1 {
		if n >= maxFunctionRows {
			return sqlerr.Errorf(sqlerr.ProgramLimitExceeded, "generate_series is limited to %d rows", maxFunctionRows)
		}
		if err := out(v); err != nil {
			return err
		}
		if (step > 0 && v > stop-step) || (step < 0 && v < stop-step) {
			break // the next value would pass stop (or overflow)
		}
	}
	return nil
}

// unnest emits an array's elements; nothing for NULL.
func unnest(args []types.Datum, out func(types.Datum) error) error {
	a, _ := args[0].(types.DArray)
	for _, v := range a {
		if err := out(v); err != nil {
			return err
		}
	}
	return nil
}
