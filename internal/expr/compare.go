package expr

import (
	"bytes"
	"cmp"

	"github.com/cockroachdb/apd/v3"
	"github.com/sluice-db/sluice/internal/types"
)

// cmpOp is one of the six comparison operators.
type cmpOp string

const (
	opEQ cmpOp = "="
	opNE cmpOp = "<>"
	opLT cmpOp = "<"
	opLE cmpOp = "<="
	opGT cmpOp = ">"
	opGE cmpOp = ">="
)

var cmpOps = []cmpOp{opEQ, opNE, opLT, opLE, opGT, opGE}

// test reports whether a three-way comparison result c satisfies op.
func (op cmpOp) test(c int) bool {
	switch op {
	case opEQ:
		return c == 0
	case opNE:
		return c != 0
	case opLT:
		return c < 0
	case opLE:
		return c <= 0
	case opGT:
		return c > 0
	default:
		return c >= 0
	}
}

// cmpExpr compares two columns of Go type T with compare. For types whose
// Go order is the SQL order (integers, dates, timestamps, strings in
// byte order) ordered is set and a tight loop with native operators is
// used; a constant right operand (col > 5, the usual filter) is not
// materialized.
type cmpExpr[T any] struct {
	op      cmpOp
	l, r    Expr
	compare func(a, b T) int
	ordered func(op cmpOp, a, b []T, konst *T, out []bool)
}

func (e *cmpExpr[T]) Type() types.Type { return types.TBool }

func (e *cmpExpr[T]) Eval(ctx *Context, c *types.Chunk) (types.Column, error) {
	a, err := evalAs[T](ctx, e.l, c)
	if err != nil {
		return nil, err
	}
	n := c.Capacity()
	out := newVec[bool](types.TBool, n)
	var bv []T
	var konst *T
	var bNulls types.Bitmap
	if lit, ok := e.r.(*literalExpr); ok && e.ordered != nil {
		if lit.val == nil {
			out.Nulls = allNulls(n)
			return out, nil
		}
		k, ok := lit.val.(T)
		if !ok {
			return nil, errBuild("literal %T is not %T", lit.val, k)
		}
		konst = &k
	} else {
		b, err := evalAs[T](ctx, e.r, c)
		if err != nil {
			return nil, err
		}
		bv, bNulls = b.Vals[:n], b.Nulls
	}
	out.Nulls = unionNulls(a.Nulls, bNulls)
	if e.ordered != nil {
		e.ordered(e.op, a.Vals[:n], bv, konst, out.Vals)
	} else {
		// A NULL slot's value is the type's zero (a nil *apd.Decimal),
		// which compare functions need not handle.
		for i := range out.Vals {
			if !out.Nulls.Get(i) {
				out.Vals[i] = e.op.test(e.compare(a.Vals[i], bv[i]))
			}
		}
	}
	zeroNulls(out)
	return out, nil
}

// allNulls returns a bitmap with the first n bits set.
func allNulls(n int) types.Bitmap {
	b := make(types.Bitmap, (n+63)/64)
	for i := 0; i < n; i++ {
		b.Set(i)
	}
	return b
}

// orderedLoop compares with native operators; konst, when set, replaces b.
func orderedLoop[T cmp.Ordered](op cmpOp, a, b []T, konst *T, out []bool) {
	if konst != nil {
		k := *konst
		switch op {
		case opEQ:
			for i := range out {
				out[i] = a[i] == k
			}
		case opNE:
			for i := range out {
				out[i] = a[i] != k
			}
		case opLT:
			for i := range out {
				out[i] = a[i] < k
			}
		case opLE:
			for i := range out {
				out[i] = a[i] <= k
			}
		case opGT:
			for i := range out {
				out[i] = a[i] > k
			}
		case opGE:
			for i := range out {
				out[i] = a[i] >= k
			}
		}
		return
	}
	b = b[:len(out)]
	switch op {
	case opEQ:
		for i := range out {
			out[i] = a[i] == b[i]
		}
	case opNE:
		for i := range out {
			out[i] = a[i] != b[i]
		}
	case opLT:
		for i := range out {
			out[i] = a[i] < b[i]
		}
	case opLE:
		for i := range out {
			out[i] = a[i] <= b[i]
		}
	case opGT:
		for i := range out {
			out[i] = a[i] > b[i]
		}
	case opGE:
		for i := range out {
			out[i] = a[i] >= b[i]
		}
	}
}

func compareBool(a, b bool) int {
	switch {
	case a == b:
		return 0
	case !a:
		return -1
	}
	return 1
}

// newCompare builds op over two args of type t.
func newCompare(op cmpOp, t types.Type, l, r Expr) (Expr, error) {
	switch t.ID {
	case types.Bool:
		return &cmpExpr[bool]{op: op, l: l, r: r, compare: compareBool}, nil
	case types.Int16, types.Int32, types.Int64:
		return &cmpExpr[int64]{op: op, l: l, r: r, compare: cmp.Compare[int64], ordered: orderedLoop[int64]}, nil
	case types.Float32, types.Float64:
		return &cmpExpr[float64]{op: op, l: l, r: r, compare: types.CompareFloat}, nil
	case types.Decimal:
		return &cmpExpr[*apd.Decimal]{op: op, l: l, r: r, compare: types.CompareDecimal}, nil
	case types.Varchar:
		return &cmpExpr[string]{op: op, l: l, r: r, compare: cmp.Compare[string], ordered: orderedLoop[string]}, nil
	case types.Bytea:
		return &cmpExpr[[]byte]{op: op, l: l, r: r, compare: bytes.Compare}, nil
	case types.Date:
		return &cmpExpr[types.DDate]{op: op, l: l, r: r, compare: cmp.Compare[types.DDate], ordered: orderedLoop[types.DDate]}, nil
	case types.Time:
		return &cmpExpr[types.DTime]{op: op, l: l, r: r, compare: cmp.Compare[types.DTime], ordered: orderedLoop[types.DTime]}, nil
	case types.Timestamp:
		return &cmpExpr[types.DTimestamp]{op: op, l: l, r: r, compare: cmp.Compare[types.DTimestamp], ordered: orderedLoop[types.DTimestamp]}, nil
	case types.Timestamptz:
		return &cmpExpr[types.DTimestamptz]{op: op, l: l, r: r, compare: cmp.Compare[types.DTimestamptz], ordered: orderedLoop[types.DTimestamptz]}, nil
	case types.Interval:
		return &cmpExpr[types.DInterval]{op: op, l: l, r: r, compare: types.CompareInterval}, nil
	case types.Array:
		return &cmpExpr[types.DArray]{op: op, l: l, r: r, compare: types.CompareArray}, nil
	}
	return nil, errBuild("no comparison for %s", t)
}
