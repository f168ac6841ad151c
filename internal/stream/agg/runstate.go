package agg

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-db/sluice/internal/expr"
	"github.com/sluice-db/sluice/internal/plan"
	"github.com/sluice-db/sluice/internal/types"
)

// runState is the retractable running value of one count, sum, avg,
// bool_and or bool_or call in one group. Every field is a count or a sum
// that an insert adds to and a delete subtracts from, so no input needs to
// be remembered. One struct serves every kind; a kind uses only its fields.
// Counts and integer sums need only the three words here; the float,
// numeric and boolean parts are in x, made by the first write to one. A
// windowed count creates hundreds of thousands of groups an epoch
// (Nexmark q5), and a state of 104 bytes per call was a third of each.
type runState struct {
	// n counts the non-NULL inputs that passed the filter (count(*): the
	// rows). sum and avg are NULL while it is zero.
	n int64
	// hi:lo is a two's complement 128-bit integer sum: 2^64 rows of any
	// bigint cannot overflow it, so int sums never fail and sum(int8) can
	// be exact like Postgres's numeric sum.
	hi int64
	lo uint64
	x  *runExtra // nil: all zero
}

// runExtra is the part of a runState only float and numeric sums and
// averages and bool_and and bool_or use.
type runExtra struct {
	// f and d are the finite part of a float or numeric sum. NaN and the
	// infinities are counted apart because they cannot be subtracted back
	// out (Inf - Inf is NaN).
	f             float64
	d             apd.Decimal
	nan, pinf     int64
	ninf          int64
	trues, falses int64
}

// noExtra is the all-zero extra part that reads of a state without one
// see; it is never written.
var noExtra runExtra

// w returns the extra part for a write, making it.
func (s *runState) w() *runExtra {
	if s.x == nil {
		s.x = &runExtra{}
	}
	return s.x
}

// r returns the extra part for a read (noExtra when there is none).
func (s *runState) r() *runExtra {
	if s.x == nil {
		return &noExtra
	}
	return s.x
}

// stateTypes is the layout of one call's running state in the result
// table's state blob (see encodeStates).
var stateTypes = []types.Type{
	types.TInt64, types.TInt64, types.TInt64, types.TFloat64, types.TDecimal,
	types.TInt64, types.TInt64, types.TInt64, types.TInt64, types.TInt64,
}

// addInt adds v to the 128-bit sum, or subtracts it when neg.
func (s *runState) addInt(v int64, neg bool) {
	ext := uint64(0)
	if v < 0 {
		ext = math.MaxUint64
	}
	var carry uint64
	var hi uint64
	if neg {
		s.lo, carry = bits.Sub64(s.lo, uint64(v), 0)
		hi, _ = bits.Sub64(uint64(s.hi), ext, carry)
	} else {
		s.lo, carry = bits.Add64(s.lo, uint64(v), 0)
		hi, _ = bits.Add64(uint64(s.hi), ext, carry)
	}
	s.hi = int64(hi)
}

// int128 returns the integer sum and whether it fits an int64.
func (s *runState) int128() (int64, bool) {
	v := int64(s.lo)
	return v, (v < 0 && s.hi == -1) || (v >= 0 && s.hi == 0)
}

// intSumDecimal returns the 128-bit sum as a numeric.
func (s *runState) intSumDecimal() *apd.Decimal {
	if v, ok := s.int128(); ok {
		return apd.New(v, 0)
	}
	b := new(big.Int).SetInt64(s.hi)
	b.Lsh(b, 64)
	b.Add(b, new(big.Int).SetUint64(s.lo))
	return apd.NewWithBigInt(new(apd.BigInt).SetMathBigInt(b), 0)
}

// countSpecial adjusts the NaN/±Infinity counts by delta and reports
// whether x was one of them (and so is not part of the finite sum).
func (s *runState) countSpecial(nan, inf, negative bool, delta int64) bool {
	switch {
	case nan:
		s.w().nan += delta
	case inf && negative:
		s.w().ninf += delta
	case inf:
		s.w().pinf += delta
	default:
		return false
	}
	return true
}

// apply adds (sign +1) or retracts (sign -1) the non-NULL input d of call.
// count(*) passes a nil d.
func (s *runState) apply(c *callSpec, d types.Datum, sign int64, dec *apd.Context) error {
	if c.Kind == plan.AggSumCounts {
		s.n += sign * d.(int64) // a count a local aggregation made
		return nil
	}
	s.n += sign
	switch c.Kind {
	case plan.AggSum, plan.AggAvg:
		return s.applySum(c.class, d, sign, dec)
	case plan.AggBoolAnd, plan.AggBoolOr:
		if d.(bool) {
			s.w().trues += sign
		} else {
			s.w().falses += sign
		}
	}
	return nil
}

func (s *runState) applySum(class sumClass, d types.Datum, sign int64, dec *apd.Context) error {
	switch class {
	case sumInt:
		s.addInt(d.(int64), sign < 0)
	case sumFloat:
		x := d.(float64)
		if !s.countSpecial(math.IsNaN(x), math.IsInf(x, 0), x < 0, sign) {
			s.w().f += float64(sign) * x
		}
	case sumDecimal:
		x := d.(*apd.Decimal)
		if s.countSpecial(x.Form == apd.NaN || x.Form == apd.NaNSignaling, x.Form == apd.Infinite, x.Negative, sign) {
			return nil
		}
		var err error
		sum := &s.w().d
		if sign > 0 {
			_, err = dec.Add(sum, sum, x)
		} else {
			_, err = dec.Sub(sum, sum, x)
		}
		if err != nil {
			return fmt.Errorf("agg: numeric sum: %w", err)
		}
	}
	return nil
}

// special returns the NaN/Infinity result of a float or numeric sum, if
// any: NaN beats everything and +Inf with -Inf makes NaN, as in Postgres.
func (s *runState) special() (nan, pinf, ninf bool) {
	x := s.r()
	switch {
	case x.nan > 0 || (x.pinf > 0 && x.ninf > 0):
		return true, false, false
	case x.pinf > 0:
		return false, true, false
	case x.ninf > 0:
		return false, false, true
	}
	return false, false, false
}

// outputEnv is what computing outputs needs: numeric arithmetic and the
// numeric division operator (so avg rounds exactly like numeric '/').
type outputEnv struct {
	dec  *apd.Context
	div  expr.Expr
	ectx *expr.Context
}

var divTypes = []types.Type{types.TDecimal, types.TDecimal}

func newOutputEnv(ectx *expr.Context) (*outputEnv, error) {
	div, err := expr.Build(expr.Func("/", expr.Input(0, types.TDecimal), expr.Input(1, types.TDecimal)), divTypes)
	if err != nil {
		return nil, fmt.Errorf("agg: numeric division: %w", err)
	}
	return &outputEnv{dec: types.DecimalContext(), div: div, ectx: ectx}, nil
}

// output returns the call's current value.
func (s *runState) output(c *callSpec, env *outputEnv) (types.Datum, error) {
	switch c.Kind {
	case plan.AggCount, plan.AggCountStar, plan.AggSumCounts:
		return s.n, nil
	case plan.AggBoolAnd:
		if x := s.r(); x.trues+x.falses != 0 {
			return x.falses == 0, nil
		}
		return nil, nil
	case plan.AggBoolOr:
		if x := s.r(); x.trues+x.falses != 0 {
			return x.trues > 0, nil
		}
		return nil, nil
	}
	if s.n <= 0 {
		return nil, nil
	}
	if c.Kind == plan.AggSum {
		return s.sumOutput(c), nil
	}
	return s.avgOutput(c, env)
}

func (s *runState) sumOutput(c *callSpec) types.Datum {
	switch c.class {
	case sumInt:
		if c.Type.ID == types.Decimal {
			return s.intSumDecimal()
		}
		v, ok := s.int128()
		if !ok {
			// Postgres would fail with "bigint out of range"; a stream
			// must not stop, so the sum reads NULL until it fits again.
			return nil
		}
		return v
	case sumFloat:
		return roundFloat(s.floatOr(s.r().f), c.Type)
	default:
		if d := s.decimalSpecial(); d != nil {
			return d
		}
		return new(apd.Decimal).Set(&s.r().d)
	}
}

func (s *runState) avgOutput(c *callSpec, env *outputEnv) (types.Datum, error) {
	switch c.class {
	case sumFloat:
		return s.floatOr(s.r().f / float64(s.n)), nil
	case sumInt:
		return env.divide(s.intSumDecimal(), s.n)
	default:
		if d := s.decimalSpecial(); d != nil {
			return d, nil
		}
		sum := new(apd.Decimal).Set(&s.r().d) // the state's own stays unshared
		return env.divide(sum, s.n)
	}
}

// floatOr returns the special result if any, else finite.
func (s *runState) floatOr(finite float64) float64 {
	switch nan, pinf, ninf := s.special(); {
	case nan:
		return math.NaN()
	case pinf:
		return math.Inf(1)
	case ninf:
		return math.Inf(-1)
	}
	return finite
}

func (s *runState) decimalSpecial() *apd.Decimal {
	switch nan, pinf, ninf := s.special(); {
	case nan:
		return &apd.Decimal{Form: apd.NaN}
	case pinf:
		return &apd.Decimal{Form: apd.Infinite}
	case ninf:
		return &apd.Decimal{Form: apd.Infinite, Negative: true}
	}
	return nil
}

// roundFloat rounds a real result through float32, as the type demands.
func roundFloat(f float64, t types.Type) float64 {
	if t.ID == types.Float32 {
		return float64(float32(f))
	}
	return f
}

// divide returns sum / n with numeric division's result scale.
func (e *outputEnv) divide(sum *apd.Decimal, n int64) (types.Datum, error) {
	d, err := expr.EvalRow(e.ectx, e.div, types.Row{sum, apd.New(n, 0)}, divTypes)
	if err != nil {
		return nil, fmt.Errorf("agg: avg: %w", err)
	}
	return d, nil
}

// appendToColumns appends the state as one row of stateTypes to cols
// (their *types.Vec columns, as types.MustColumn makes them), unboxed. The
// numeric sum is appended by pointer, not copied: the columns are encoded
// and reset before the state changes again.
func (s *runState) appendToColumns(cols []types.Column) {
	ints := [...]int64{s.n, s.hi, int64(s.lo)}
	for i, v := range ints {
		cols[i].(*types.Vec[int64]).AppendValue(v)
	}
	x := s.r()
	cols[3].(*types.Vec[float64]).AppendValue(x.f)
	if !x.d.IsZero() || x.d.Exponent != 0 {
		cols[4].(*types.Vec[*apd.Decimal]).AppendValue(&x.d)
	} else {
		cols[4].Append(nil)
	}
	for i, v := range [...]int64{x.nan, x.pinf, x.ninf, x.trues, x.falses} {
		cols[5+i].(*types.Vec[int64]).AppendValue(v)
	}
}

// setFromColumns loads the state from row 0 of cols, laid out as
// appendToColumns writes them. A NULL reads as zero.
func (s *runState) setFromColumns(cols []types.Column) {
	s.n, s.hi, s.lo = int64At(cols[0]), int64At(cols[1]), uint64(int64At(cols[2]))
	var x runExtra
	ints := [...]*int64{&x.nan, &x.pinf, &x.ninf, &x.trues, &x.falses}
	for i, p := range ints {
		*p = int64At(cols[5+i])
	}
	if v := cols[3].(*types.Vec[float64]); !v.IsNull(0) {
		x.f = v.Vals[0]
	}
	d := cols[4].(*types.Vec[*apd.Decimal])
	if x.nan|x.pinf|x.ninf|x.trues|x.falses == 0 && x.f == 0 && !math.Signbit(x.f) && d.IsNull(0) {
		s.x = nil // a count's or an integer sum's state
		return
	}
	*s.w() = x // x.d is zero: a decimal is set in place, not copied
	if !d.IsNull(0) {
		s.x.d.Set(d.Vals[0])
	}
}

func int64At(c types.Column) int64 {
	v := c.(*types.Vec[int64])
	if v.IsNull(0) {
		return 0
	}
	return v.Vals[0]
}
