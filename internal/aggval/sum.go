package aggval

import (
	"fmt"
	"math/big"

	"github.com/cockroachdb/apd/v3"

	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/sqlerr"
	"github.com/sluice-db/sluice/internal/types"
)

// Sum is the running sum of non-NULL numbers; the zero value is empty.
// It does not count its inputs: avg takes the count from the caller.
type Sum struct {
	isum big.Int // exact integer sum
	fsum float64
	dsum apd.Decimal
	// NaN and ±Infinity of numeric inputs, counted apart.
	nan, pinf, ninf int64
}

// Reset empties s.
func (s *Sum) Reset() { *s = Sum{} }

// Add adds one non-NULL number: int64, float64 or *apd.Decimal.
func (s *Sum) Add(v types.Datum) error {
	switch x := v.(type) {
	case int64:
		s.isum.Add(&s.isum, big.NewInt(x))
	case float64:
		s.fsum += x
	case *apd.Decimal:
		switch {
		case x.Form == apd.NaN:
			s.nan++
		case x.Form == apd.Infinite && x.Negative:
			s.ninf++
		case x.Form == apd.Infinite:
			s.pinf++
		default:
			if _, err := types.DecimalContext().Add(&s.dsum, &s.dsum, x); err != nil {
				return sqlerr.New(sqlerr.NumericValueOutOfRange, "numeric field overflow")
			}
		}
	default:
		return fmt.Errorf("aggval: cannot sum %T", v)
	}
	return nil
}

// Value returns the sum as type t: bigint (of smallint/int, an error when
// it overflows, as in Postgres), real, double or numeric.
func (s *Sum) Value(t types.Type) (types.Datum, error) {
	switch t.ID {
	case types.Int64:
		if !s.isum.IsInt64() {
			return nil, sqlerr.New(sqlerr.NumericValueOutOfRange, "bigint out of range")
		}
		return s.isum.Int64(), nil
	case types.Float32:
		return float64(float32(s.fsum)), nil
	case types.Float64:
		return s.fsum, nil
	}
	if d := s.special(); d != nil {
		return d, nil
	}
	return s.decimal()
}

// decimal is the exact sum of integer and numeric inputs.
func (s *Sum) decimal() (*apd.Decimal, error) {
	out := new(apd.Decimal).Set(&s.dsum)
	if s.isum.Sign() != 0 {
		var bi apd.BigInt
		bi.SetMathBigInt(&s.isum)
		if _, err := types.DecimalContext().Add(out, out, apd.NewWithBigInt(&bi, 0)); err != nil {
			return nil, sqlerr.New(sqlerr.NumericValueOutOfRange, "numeric field overflow")
		}
	}
	return out, nil
}

func (s *Sum) special() *apd.Decimal {
	switch {
	case s.nan > 0 || (s.pinf > 0 && s.ninf > 0):
		return &apd.Decimal{Form: apd.NaN}
	case s.pinf > 0:
		return &apd.Decimal{Form: apd.Infinite}
	case s.ninf > 0:
		return &apd.Decimal{Form: apd.Infinite, Negative: true}
	}
	return nil
}

// Divider divides a numeric sum by a count with numeric '/', so that an
// average has Postgres's result scale.
type Divider struct{ div expr.Expr }

// NewDivider builds the division.
func NewDivider() (*Divider, error) {
	ts := []types.Type{types.TDecimal, types.TDecimal}
	div, err := expr.Build(expr.Func("/", expr.Input(0, types.TDecimal), expr.Input(1, types.TDecimal)), ts)
	if err != nil {
		return nil, err
	}
	return &Divider{div: div}, nil
}

// Avg returns the average of n > 0 summed inputs as type t (double
// precision or numeric).
func (s *Sum) Avg(ctx *expr.Context, d *Divider, n int64, t types.Type) (types.Datum, error) {
	if t.ID == types.Float64 {
		return s.fsum / float64(n), nil
	}
	if sp := s.special(); sp != nil {
		return sp, nil
	}
	sum, err := s.decimal()
	if err != nil {
		return nil, err
	}
	return expr.EvalRow(ctx, d.div, types.Row{sum, apd.New(n, 0)}, []types.Type{types.TDecimal, types.TDecimal})
}
