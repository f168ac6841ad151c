package expr

import (
	"math/rand/v2"

	"github.com/sluice-db/sluice/internal/types"
	"github.com/sluice-db/sluice/internal/types/codec"
)

func registerRandom(r registry) {
	r.add("random", nil, tF8, func([]Expr, types.Type) (Expr, error) { return randomExpr{}, nil })
}

// randomExpr is random(): a double in [0, 1).
//
// In a batch query it is truly random, as in Postgres. In a streaming job
// (Context.StableRandom) it is a hash of the row it is computed for: a
// materialized view must retract exactly the value it once inserted when
// that row is deleted or updated, and a fresh draw would leave the old
// value behind in every aggregate downstream. Equal input rows therefore
// get equal values there, and two random() calls of one row agree.
type randomExpr struct{}

func (randomExpr) Type() types.Type { return tF8 }

func (randomExpr) Eval(ctx *Context, c *types.Chunk) (types.Column, error) {
	n := c.Capacity()
	out := &types.Vec[float64]{Typ: tF8, Vals: make([]float64, n)}
	if ctx != nil && ctx.StableRandom {
		cols := make([]int, len(c.Cols))
		for i := range cols {
			cols[i] = i
		}
		for i, h := range codec.HashColumns(c, cols, nil) {
			out.Vals[i] = unitFloat(h)
		}
		return out, nil
	}
	for i := range out.Vals {
		out.Vals[i] = rand.Float64()
	}
	return out, nil
}

// unitFloat maps a 64-bit hash to [0, 1) using its top 53 bits, as
// math/rand does for a random word.
func unitFloat(h uint64) float64 {
	return float64(h>>11) / (1 << 53)
}

// volatileFuncs are the functions whose value differs from call to call
// within a statement.
var volatileFuncs = map[string]bool{"random": true, "gen_random_uuid": true, "clock_timestamp": true, "timeofday": true}

// IsVolatile reports whether function name is volatile: a batch
// subquery calling it runs afresh for each outer row.
func IsVolatile(name string) bool { return volatileFuncs[name] }
