package expr

import (
	"github.com/cockroachdb/apd/v3"

	"github.com/sluice-db/sluice/internal/types"
)

// registerTypmod adds the enforcement of explicit casts with a type
// modifier ('1.005'::numeric(5,2), 'abcd'::varchar(3)); the planner
// emits these calls, users have no reason to.
func registerTypmod(r registry) {
	i32, dec := types.TInt32, types.TDecimal
	r.add("numeric_typmod", sig(dec, i32, i32), dec, nary(true, func(_ *Context, args []types.Datum) (types.Datum, error) {
		m := types.Modifier{Precision: int32(args[1].(int64)), Scale: int32(args[2].(int64))}
		return m.Apply(args[0].(*apd.Decimal), types.TDecimal, true)
	}))
	for _, t := range []types.Type{types.TTimestamp, types.TTimestamptz, types.TTime} {
		r.add("frac_typmod", sig(t, i32), t, nary(true, func(_ *Context, args []types.Datum) (types.Datum, error) {
			return types.Modifier{Frac: int32(args[1].(int64)), HasFrac: true}.Apply(args[0], t, true)
		}))
	}
	iv := types.TInterval
	r.add("interval_typmod", sig(iv, i32, i32, types.TBool), iv, nary(true, func(_ *Context, args []types.Datum) (types.Datum, error) {
		m := types.Modifier{IntervalFields: int32(args[1].(int64)), Frac: int32(args[2].(int64)), HasFrac: args[3].(bool)}
		return m.Apply(args[0], iv, true)
	}))
	r.add("varchar_typmod", sig(types.TVarchar, i32), types.TVarchar, binary(func(_ *Context, s string, n int64) (string, error) {
		d, err := types.Modifier{Length: int32(n)}.Apply(s, types.TVarchar, true)
		if err != nil {
			return "", err
		}
		return d.(string), nil
	}))
}
