package refeval

import (
	"slices"
	"strings"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

// orderedArgs returns the argument rows of a string_agg or array_agg call
// (after FILTER and DISTINCT) in ORDER BY order. Postgres leaves the order
// of ties, and of a call without ORDER BY, unspecified; the oracle breaks
// them by the arguments ascending, NULLs last, which is one valid order
// and the one the streaming executor's value table keeps.
func orderedArgs(call plan.AggCall, in []types.Type, g []types.Row) ([]types.Row, error) {
	withOrder := call
	cols := make([]int, 0, len(call.OrderBy)+len(call.Args))
	for _, o := range call.OrderBy {
		cols = append(cols, o.Column)
	}
	withOrder.Args = append(cols, call.Args...)
	rows, err := aggInputs(withOrder, in, g)
	if err != nil {
		return nil, err
	}
	n := len(call.OrderBy)
	slices.SortStableFunc(rows, func(a, b types.Row) int {
		for i, o := range call.OrderBy {
			if c := compareNulls(a[i], b[i], o.Order); c != 0 {
				return c
			}
		}
		for i := n; i < len(a); i++ {
			if c := compareNulls(a[i], b[i], defaultOrder); c != 0 {
				return c
			}
		}
		return 0
	})
	out := make([]types.Row, len(rows))
	for i, r := range rows {
		out[i] = r[n:]
	}
	return out, nil
}

// defaultOrder is ascending, NULLs last.
var defaultOrder = codec.Order{}

// arrayAgg collects the values, NULLs included; no rows give NULL.
func arrayAgg(args []types.Row) types.Datum {
	if len(args) == 0 {
		return nil
	}
	out := make(types.DArray, len(args))
	for i, a := range args {
		out[i] = a[0]
	}
	return out
}

// stringAgg joins the non-NULL values, each but the first preceded by its
// own delimiter (a NULL delimiter adds nothing), as Postgres does.
func stringAgg(args []types.Row, t types.Type) types.Datum {
	var sb strings.Builder
	n := 0
	for _, a := range args {
		if a[0] == nil {
			continue
		}
		if n > 0 {
			sb.WriteString(asString(a[1]))
		}
		sb.WriteString(asString(a[0]))
		n++
	}
	if n == 0 {
		return nil
	}
	if t.ID == types.Bytea {
		return []byte(sb.String())
	}
	return sb.String()
}

func asString(d types.Datum) string {
	switch v := d.(type) {
	case string:
		return v
	case []byte:
		return string(v)
	}
	return ""
}

// avg is sum / count: float division for floats, numeric division (with
// its result scale) for integers and numerics.
func avg(vals []types.Datum, t types.Type) (types.Datum, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	if t.ID == types.Float64 {
		s, err := sum(vals, t)
		if err != nil {
			return nil, err
		}
		return s.(float64) / float64(len(vals)), nil
	}
	s, err := sum(vals, types.TDecimal)
	if err != nil {
		return nil, err
	}
	if d := s.(*apd.Decimal); d.Form != apd.Finite {
		return d, nil
	}
	dt := []types.Type{types.TDecimal, types.TDecimal}
	div, err := expr.Build(expr.Func("/", expr.Input(0, types.TDecimal), expr.Input(1, types.TDecimal)), dt)
	if err != nil {
		return nil, err
	}
	return expr.EvalRow(&expr.Context{}, div, types.Row{s, apd.New(int64(len(vals)), 0)}, dt)
}
