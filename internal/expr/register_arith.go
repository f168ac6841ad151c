package expr

import (
	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-db/sluice/internal/types"
)

var intTypes = []types.Type{types.TInt16, types.TInt32, types.TInt64}

// allTypes lists every comparable type, for registering comparisons.
var allTypes = []types.Type{
	types.TBool, types.TInt16, types.TInt32, types.TInt64, types.TFloat32, types.TFloat64,
	types.TDecimal, types.TVarchar, types.TBytea, types.TDate, types.TTime,
	types.TTimestamp, types.TTimestamptz, types.TInterval,
}

func registerArith(r registry) {
	for _, op := range []byte{'+', '-', '*', '/', '%'} {
		name := string(op)
		for _, t := range intTypes {
			r.add(name, sig(t, t), t, intArithBuild(op))
		}
		if op != '%' {
			for _, t := range []types.Type{types.TFloat32, types.TFloat64} {
				r.add(name, sig(t, t), t, binary(floatArith(op, t)))
			}
		}
		r.add(name, sig(types.TDecimal, types.TDecimal), types.TDecimal, binary(decimalArith(op)))
	}
	for _, t := range intTypes {
		r.add("-", sig(t), t, unary(negInt(t)))
		r.add("+", sig(t), t, identity)
		r.add("abs", sig(t), t, unary(absInt(t)))
	}
	for _, t := range []types.Type{types.TFloat32, types.TFloat64} {
		r.add("-", sig(t), t, unary(negFloat))
		r.add("+", sig(t), t, identity)
		r.add("abs", sig(t), t, unary(absFloat))
	}
	r.add("-", sig(types.TDecimal), types.TDecimal, unary(negDecimal))
	r.add("+", sig(types.TDecimal), types.TDecimal, identity)
	r.add("abs", sig(types.TDecimal), types.TDecimal, unary(absDecimal))
	for _, t := range intTypes {
		r.add("mod", sig(t, t), t, intArithBuild('%'))
	}
	r.add("mod", sig(types.TDecimal, types.TDecimal), types.TDecimal,
		binary(func(_ *Context, a, b *apd.Decimal) (*apd.Decimal, error) { return modDecimal(a, b) }))
}

func intArithBuild(op byte) buildFn {
	return func(args []Expr, ret types.Type) (Expr, error) {
		return &intArith{op: op, l: args[0], r: args[1], typ: ret}, nil
	}
}

func identity(args []Expr, _ types.Type) (Expr, error) { return args[0], nil }

func registerCompare(r registry) {
	for _, op := range cmpOps {
		for _, t := range allTypes {
			r.add(string(op), sig(t, t), types.TBool, compareBuild(op, t))
		}
	}
	// != is an alias Postgres's parser rewrites to <>.
	r["!="] = r["<>"]
}

func compareBuild(op cmpOp, t types.Type) buildFn {
	return func(args []Expr, _ types.Type) (Expr, error) { return newCompare(op, t, args[0], args[1]) }
}
