package agg

import (
	"fmt"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
)

// sumClass says how a numeric aggregate (sum, avg) accumulates its input.
type sumClass uint8

const (
	sumNone    sumClass = iota
	sumInt              // 128-bit integer running sum
	sumFloat            // float64 running sum plus counts of NaN and ±Infinity
	sumDecimal          // apd running sum plus counts of NaN and ±Infinity
)

// callSpec is a validated AggCall plus what the executor derives from it.
type callSpec struct {
	plan.AggCall
	argType types.Type // type of Args[0]; unknown for count(*)
	class   sumClass
	// tableBacked calls keep their inputs in a value table: min, max,
	// string_agg and every DISTINCT call.
	tableBacked bool
	// running calls keep a running state in the group's result row; a
	// DISTINCT count/sum/avg/bool is both (the table says when a value
	// enters or leaves the distinct set, the running state aggregates it).
	running bool
	// kept: a min or max over an append-only input keeps only its
	// extreme (group.ext), which the result row persists as the output.
	kept   bool
	filter expr.Expr // nil when the call has no FILTER
	vt     *valueTable
}

// resultType returns the Postgres result type of kind over arg.
func resultType(k plan.AggKind, arg types.Type) (types.Type, error) {
	switch k {
	case plan.AggCountStar, plan.AggCount:
		return types.TInt64, nil
	case plan.AggSumCounts:
		if arg.ID == types.Int64 {
			return types.TInt64, nil
		}
	case plan.AggSum:
		switch {
		case arg.ID == types.Int16 || arg.ID == types.Int32:
			return types.TInt64, nil
		case arg.ID == types.Int64 || arg.ID == types.Decimal:
			return types.TDecimal, nil
		case arg.IsFloat():
			return arg, nil
		}
	case plan.AggAvg:
		switch {
		case arg.IsInteger() || arg.ID == types.Decimal:
			return types.TDecimal, nil
		case arg.IsFloat():
			return types.TFloat64, nil
		}
	case plan.AggMin, plan.AggMax:
		if arg.Valid() && arg.ID != types.Unknown {
			return arg, nil
		}
	case plan.AggBoolAnd, plan.AggBoolOr:
		if arg.ID == types.Bool {
			return types.TBool, nil
		}
	case plan.AggStringAgg:
		if arg.ID == types.Varchar || arg.ID == types.Bytea {
			return arg, nil
		}
	case plan.AggArrayAgg:
		if arr := types.ArrayOf(arg); arr.Valid() {
			return arr, nil
		}
	default:
		return types.Type{}, fmt.Errorf("unknown aggregate %q", k)
	}
	return types.Type{}, fmt.Errorf("%s(%s) is not supported", k, arg)
}

// classOf returns how sum/avg accumulate arg.
func classOf(arg types.Type) sumClass {
	switch {
	case arg.IsInteger():
		return sumInt
	case arg.IsFloat():
		return sumFloat
	case arg.ID == types.Decimal:
		return sumDecimal
	}
	return sumNone
}

// newCallSpec validates call against the input types; appendOnly says
// the input only inserts.
func newCallSpec(call plan.AggCall, in []types.Type, appendOnly bool) (*callSpec, error) {
	s := &callSpec{AggCall: call}
	wantArgs := 1
	switch call.Kind {
	case plan.AggCountStar:
		wantArgs = 0
	case plan.AggStringAgg:
		wantArgs = 2
	}
	if len(call.Args) != wantArgs {
		return nil, fmt.Errorf("%s takes %d arguments, got %d", call.Kind, wantArgs, len(call.Args))
	}
	for _, a := range call.Args {
		if a < 0 || a >= len(in) {
			return nil, fmt.Errorf("%s: argument column %d out of range [0,%d)", call.Kind, a, len(in))
		}
	}
	if wantArgs > 0 {
		s.argType = in[call.Args[0]]
	}
	if call.Kind == plan.AggStringAgg && in[call.Args[1]] != s.argType {
		return nil, fmt.Errorf("string_agg: delimiter is %s, value %s", in[call.Args[1]], s.argType)
	}
	if call.Distinct && call.Kind == plan.AggCountStar {
		return nil, fmt.Errorf("count(DISTINCT *) is not an aggregate")
	}
	if len(call.OrderBy) > 0 && call.Kind != plan.AggStringAgg && call.Kind != plan.AggArrayAgg {
		return nil, fmt.Errorf("%s does not take ORDER BY", call.Kind)
	}
	for _, o := range call.OrderBy {
		if o.Column < 0 || o.Column >= len(in) {
			return nil, fmt.Errorf("string_agg: ORDER BY column %d out of range [0,%d)", o.Column, len(in))
		}
	}
	want, err := resultType(call.Kind, s.argType)
	if err != nil {
		return nil, err
	}
	if call.Type != want {
		return nil, fmt.Errorf("%s(%s) returns %s, plan says %s", call.Kind, s.argType, want, call.Type)
	}
	if call.Filter != nil {
		f, err := expr.Build(*call.Filter, in)
		if err != nil {
			return nil, fmt.Errorf("%s FILTER: %w", call.Kind, err)
		}
		if f.Type() != types.TBool {
			return nil, fmt.Errorf("%s FILTER is %s, not boolean", call.Kind, f.Type())
		}
		s.filter = f
	}
	switch call.Kind {
	case plan.AggMin, plan.AggMax:
		s.kept = appendOnly
		s.tableBacked = !appendOnly
	case plan.AggStringAgg, plan.AggArrayAgg:
		s.tableBacked = true
	default:
		s.running = true
		s.tableBacked = call.Distinct
	}
	if call.Kind == plan.AggSum || call.Kind == plan.AggAvg {
		s.class = classOf(s.argType)
	}
	return s, nil
}
