package expr

import (
	"strings"

	"github.com/sluice-db/sluice/internal/types"
)

// anyType is a parameter that accepts an argument of any type unchanged
// (concat's arguments). It is not a valid SQL type.
var anyType = types.Type{ID: 254}

// buildFn makes the Expr of one overload from its (already coerced)
// arguments.
type buildFn func(args []Expr, ret types.Type) (Expr, error)

// overload is one signature of a function or operator.
type overload struct {
	params   []types.Type
	variadic bool // the last param repeats: at least len(params) args
	ret      types.Type
	build    buildFn
}

func (o *overload) param(i int) types.Type {
	if i >= len(o.params) {
		return o.params[len(o.params)-1]
	}
	return o.params[i]
}

func (o *overload) arityOK(n int) bool {
	if o.variadic {
		return n >= len(o.params)
	}
	return n == len(o.params)
}

// registry maps a lower-case function or operator name to its overloads,
// in order of preference (ties in resolution go to the earlier one, which
// is how double precision wins over numeric for round(integer), as in
// Postgres). It is built once and only read afterwards.
type registry map[string][]overload

var builtins = newRegistry()

func newRegistry() registry {
	r := registry{}
	registerArith(r)
	registerCompare(r)
	registerStrings(r)
	registerRegexp(r)
	registerDatetime(r)
	registerMath(r)
	registerRandom(r)
	registerTypmod(r)
	registerArrays(r)
	registerSlices(r)
	registerSession(r)
	registerFormat(r)
	registerBitwise(r)
	return r
}

func (r registry) add(name string, params []types.Type, ret types.Type, build buildFn) {
	r[name] = append(r[name], overload{params: params, ret: ret, build: build})
}

func (r registry) addVariadic(name string, params []types.Type, ret types.Type, build buildFn) {
	r[name] = append(r[name], overload{params: params, variadic: true, ret: ret, build: build})
}

// ResolveFunc returns the result type of name(args) — the planner's type
// check. It fails with 42883 (undefined_function) when no overload accepts
// the argument types, even with implicit casts.
func ResolveFunc(name string, args []types.Type) (types.Type, error) {
	o, err := builtins.resolve(name, args)
	if err != nil {
		return types.Type{}, err
	}
	return o.ret, nil
}

// ResolveArgs returns the parameter types of the overload name(args)
// resolves to, one per argument; an argument the overload takes as it is
// (of any type) gets Unknown. The planner types an untyped prepared
// statement parameter by it.
func ResolveArgs(name string, args []types.Type) ([]types.Type, error) {
	o, err := builtins.resolve(name, args)
	if err != nil {
		return nil, err
	}
	out := make([]types.Type, len(args))
	for i := range args {
		if p := o.param(i); p != anyType {
			out[i] = p
		}
	}
	return out, nil
}

// resolve picks the overload for args, roughly as Postgres does: an exact
// match; else the overload whose parameters are all the arguments' common
// type (integer + bigint is bigint + bigint); else the one needing the
// fewest implicit casts, the earlier on a tie.
func (r registry) resolve(name string, args []types.Type) (*overload, error) {
	cands := r[strings.ToLower(name)]
	best, bestCost := -1, 0
	for i := range cands {
		cost, ok := matchCost(&cands[i], args)
		if ok && cost == 0 {
			return &cands[i], nil
		}
		if ok && (best < 0 || cost < bestCost) {
			best, bestCost = i, cost
		}
	}
	if o := homogeneous(cands, args); o != nil {
		return o, nil
	}
	if best < 0 {
		return nil, errUndefined(name, args)
	}
	return &cands[best], nil
}

func matchCost(o *overload, args []types.Type) (int, bool) {
	if !o.arityOK(len(args)) {
		return 0, false
	}
	cost := 0
	for i, a := range args {
		p := o.param(i)
		switch {
		case p == anyType || a == p:
		case CanImplicitCast(a, p):
			cost++
		default:
			return 0, false
		}
	}
	return cost, true
}

// homogeneous returns the overload whose every parameter is the args'
// common type (text for all-unknown args), if any.
func homogeneous(cands []overload, args []types.Type) *overload {
	if len(args) == 0 {
		return nil
	}
	ct, ok := CommonTypeOf(args)
	if !ok {
		return nil
	}
	if ct.ID == types.Unknown {
		ct = types.TVarchar
	}
	if ct.ID == types.Float32 && !allOf(args, types.Float32) {
		// Postgres has float4-with-float8 operators and prefers float8,
		// the preferred numeric type, for the coerced side: real * int
		// is double precision, not real.
		ct = types.TFloat64
	}
	for i := range cands {
		o := &cands[i]
		if !o.arityOK(len(args)) {
			continue
		}
		same := true
		for j := range args {
			same = same && o.param(j) == ct
		}
		if same {
			return o
		}
	}
	return nil
}

// allOf reports whether every arg of a known type has type id.
func allOf(args []types.Type, id types.ID) bool {
	for _, a := range args {
		if a.ID != id && a.ID != types.Unknown {
			return false
		}
	}
	return true
}

// buildFunc resolves name over the built args, casts each arg to its
// parameter type and builds the call.
func buildFunc(name string, args []Expr) (Expr, error) {
	ts := make([]types.Type, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	o, err := builtins.resolve(name, ts)
	if err != nil {
		return nil, err
	}
	coerced := make([]Expr, len(args))
	for i, a := range args {
		p := o.param(i)
		if p == anyType {
			p = a.Type()
			if p.ID == types.Unknown {
				p = types.TVarchar
			}
		}
		if coerced[i], err = coerce(a, p); err != nil {
			return nil, err
		}
	}
	return o.build(coerced, o.ret)
}

// coerce implicitly casts e to t.
func coerce(e Expr, t types.Type) (Expr, error) {
	if e.Type() == t {
		return e, nil
	}
	if !CanImplicitCast(e.Type(), t) {
		return nil, errBuild("no implicit cast from %s to %s", e.Type(), t)
	}
	return newCast(e, t)
}

// Helpers that turn typed row functions into buildFns.

func unary[A, R any](fn func(*Context, A) (R, error)) buildFn {
	return func(args []Expr, ret types.Type) (Expr, error) {
		return &unaryExpr[A, R]{arg: args[0], typ: ret, fn: fn}, nil
	}
}

func binary[A, B, R any](fn func(*Context, A, B) (R, error)) buildFn {
	return func(args []Expr, ret types.Type) (Expr, error) {
		return &binaryExpr[A, B, R]{l: args[0], r: args[1], typ: ret, fn: fn}, nil
	}
}

// nary builds a boxed call; strict means NULL in, NULL out.
func nary(strict bool, fn func(*Context, []types.Datum) (types.Datum, error)) buildFn {
	return func(args []Expr, ret types.Type) (Expr, error) {
		return &naryExpr{args: args, typ: ret, strict: strict, fn: fn}, nil
	}
}

func sig(ts ...types.Type) []types.Type { return ts }
