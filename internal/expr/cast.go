package expr

import (
	"math"
	"strconv"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// buildCast is an explicit CAST: any pair CanCast allows.
func buildCast(e Expr, to types.Type) (Expr, error) {
	from := e.Type()
	if !to.Valid() || to.ID == types.Unknown {
		return nil, errBuild("cast to invalid type %d", to.ID)
	}
	if !CanCast(from, to) {
		return nil, sqlerr.Errorf(sqlerr.CannotCoerce, "cannot cast type %s to %s", from, to)
	}
	return newCast(e, to)
}

// newCast converts e to to. A cast of a constant is folded at build time,
// so a typed literal costs nothing per row (and a bad one, like
// CAST('x' AS int), fails the build as it fails planning in Postgres).
func newCast(e Expr, to types.Type) (Expr, error) {
	if e.Type() == to {
		return e, nil
	}
	c, err := castExprOf(e, to)
	if err != nil {
		return nil, err
	}
	if _, ok := e.(*literalExpr); ok {
		v, err := foldConst(c)
		if err != nil {
			return nil, err
		}
		return &literalExpr{typ: to, val: v}, nil
	}
	return c, nil
}

func castExprOf(e Expr, to types.Type) (Expr, error) {
	from := e.Type()
	switch {
	case from.ID == types.Unknown || from.ID == types.Varchar:
		return &naryExpr{args: []Expr{e}, typ: to, strict: true, fn: parseCast(to)}, nil
	case from.ID == types.Bool && to.ID == types.Varchar:
		// bool's cast to text is booltext ('true'), not its output
		// form ('t') that the other casts to text use.
		return &unaryExpr[bool, string]{arg: e, typ: to, fn: func(_ *Context, b bool) (string, error) {
			return strconv.FormatBool(b), nil
		}}, nil
	case to.ID == types.Varchar:
		return &naryExpr{args: []Expr{e}, typ: to, strict: true, fn: formatCast(from)}, nil
	case from.IsArray() && to.IsArray():
		return newArrayCast(e, to)
	case from.IsInteger():
		return castFromInt(e, to)
	case from.IsFloat():
		return castFromFloat(e, to)
	case from.ID == types.Decimal:
		return castFromDecimal(e, to)
	case from.ID == types.Bool && to.ID == types.Int32:
		return &unaryExpr[bool, int64]{arg: e, typ: to, fn: func(_ *Context, b bool) (int64, error) {
			if b {
				return 1, nil
			}
			return 0, nil
		}}, nil
	}
	return castDatetime(e, to)
}

func parseCast(to types.Type) func(*Context, []types.Datum) (types.Datum, error) {
	return func(_ *Context, args []types.Datum) (types.Datum, error) {
		s, _ := args[0].(string)
		d, err := types.ParseDatum(s, to)
		if err != nil {
			if _, ok := sqlerr.As(err); ok {
				return nil, err
			}
			return nil, sqlerr.Errorf(sqlerr.InvalidTextRepresentation, "%v", err)
		}
		return d, nil
	}
}

func formatCast(from types.Type) func(*Context, []types.Datum) (types.Datum, error) {
	return func(_ *Context, args []types.Datum) (types.Datum, error) {
		return types.FormatDatum(args[0], from), nil
	}
}

func castFromInt(e Expr, to types.Type) (Expr, error) {
	switch {
	case to.IsInteger():
		lo, hi := to.IntRange()
		return &unaryExpr[int64, int64]{arg: e, typ: to, fn: func(_ *Context, x int64) (int64, error) {
			if x < lo || x > hi {
				return 0, errIntRange(to)
			}
			return x, nil
		}}, nil
	case to.IsFloat():
		real := to.ID == types.Float32
		return &unaryExpr[int64, float64]{arg: e, typ: to, fn: func(_ *Context, x int64) (float64, error) {
			if real {
				return float64(float32(x)), nil
			}
			return float64(x), nil
		}}, nil
	case to.ID == types.Decimal:
		return &unaryExpr[int64, *apd.Decimal]{arg: e, typ: to, fn: func(_ *Context, x int64) (*apd.Decimal, error) {
			return decimalFromInt(x), nil
		}}, nil
	case to.ID == types.Bool:
		return &unaryExpr[int64, bool]{arg: e, typ: to, fn: func(_ *Context, x int64) (bool, error) { return x != 0, nil }}, nil
	}
	return nil, errBuild("no cast from %s to %s", e.Type(), to)
}

func castFromFloat(e Expr, to types.Type) (Expr, error) {
	from := e.Type()
	switch {
	case to.IsInteger():
		lo, hi := to.IntRange()
		return &unaryExpr[float64, int64]{arg: e, typ: to, fn: func(_ *Context, x float64) (int64, error) {
			// Postgres rounds float → int with rint: half to even.
			r := math.RoundToEven(x)
			if math.IsNaN(r) || r < float64(lo) || r >= -float64(lo) || int64(r) > hi {
				return 0, errIntRange(to)
			}
			return int64(r), nil
		}}, nil
	case to.ID == types.Float32:
		return &unaryExpr[float64, float64]{arg: e, typ: to, fn: func(_ *Context, x float64) (float64, error) {
			r := float64(float32(x))
			if math.IsInf(r, 0) && !math.IsInf(x, 0) {
				return 0, errFloatOverflow()
			}
			if r == 0 && x != 0 {
				return 0, errFloatUnderflow()
			}
			return r, nil
		}}, nil
	case to.ID == types.Float64:
		return &unaryExpr[float64, float64]{arg: e, typ: to, fn: func(_ *Context, x float64) (float64, error) { return x, nil }}, nil
	case to.ID == types.Decimal:
		// Postgres prints the float with DBL_DIG (FLT_DIG for real)
		// significant digits and reads that back as numeric.
		digits := 15
		if from.ID == types.Float32 {
			digits = 6
		}
		return &unaryExpr[float64, *apd.Decimal]{arg: e, typ: to, fn: func(_ *Context, x float64) (*apd.Decimal, error) {
			return floatToDecimal(x, digits)
		}}, nil
	}
	return nil, errBuild("no cast from %s to %s", from, to)
}

func floatToDecimal(x float64, digits int) (*apd.Decimal, error) {
	switch {
	case math.IsNaN(x):
		return &apd.Decimal{Form: apd.NaN}, nil
	case math.IsInf(x, 1):
		return &apd.Decimal{Form: apd.Infinite}, nil
	case math.IsInf(x, -1):
		return &apd.Decimal{Form: apd.Infinite, Negative: true}, nil
	}
	d, _, err := apd.NewFromString(strconv.FormatFloat(x, 'g', digits, 64))
	if err != nil {
		return nil, errNumericOverflow()
	}
	// Drop the exponent form's trailing zeros the way Postgres shows them:
	// 1e+20 is 100000000000000000000, not 1E+20.
	if d.Exponent > 0 {
		var r apd.Decimal
		if _, err := decExact.Quantize(&r, d, 0); err == nil {
			return &r, nil
		}
	}
	return d, nil
}

func castFromDecimal(e Expr, to types.Type) (Expr, error) {
	switch {
	case to.IsInteger():
		lo, hi := to.IntRange()
		return &unaryExpr[*apd.Decimal, int64]{arg: e, typ: to, fn: func(_ *Context, x *apd.Decimal) (int64, error) {
			if x.Form != apd.Finite {
				return 0, sqlerr.Errorf(sqlerr.FeatureNotSupported, "cannot convert %s to %s", x, to)
			}
			// numeric → int rounds half away from zero.
			var r apd.Decimal
			c := decExact
			c.Rounding = apd.RoundHalfUp
			if _, err := c.RoundToIntegralValue(&r, x); err != nil {
				return 0, errIntRange(to)
			}
			v, err := r.Int64()
			if err != nil || v < lo || v > hi {
				return 0, errIntRange(to)
			}
			return v, nil
		}}, nil
	case to.IsFloat():
		real := to.ID == types.Float32
		return &unaryExpr[*apd.Decimal, float64]{arg: e, typ: to, fn: func(_ *Context, x *apd.Decimal) (float64, error) {
			f, err := strconv.ParseFloat(x.String(), 64)
			if x.Form == apd.NaN {
				return math.NaN(), nil
			}
			if err != nil && !math.IsInf(f, 0) {
				return 0, errFloatOverflow()
			}
			if real {
				f = float64(float32(f))
			}
			if math.IsInf(f, 0) && x.Form == apd.Finite {
				return 0, errFloatOverflow()
			}
			return f, nil
		}}, nil
	}
	return nil, errBuild("no cast from %s to %s", e.Type(), to)
}
