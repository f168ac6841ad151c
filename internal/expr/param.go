package expr

import (
	"fmt"

	"github.com/sluice-db/sluice/internal/types"
)

// HasParams reports whether d refers to a parameter anywhere.
func HasParams(d Desc) bool {
	if d.Kind == KindParam {
		return true
	}
	for _, a := range d.Args {
		if HasParams(a) {
			return true
		}
	}
	return false
}

// BindParams returns d with every parameter $n replaced by the literal
// values[n-1] of type ts[n-1]: the parameter's final type, which a node
// bound before the planner inferred it does not carry. Subtrees without
// parameters are shared with d, not copied.
func BindParams(d Desc, ts []types.Type, values []types.Datum) Desc {
	if d.Kind == KindParam {
		if d.Index < 1 || d.Index > len(values) {
			return d // Build reports it unbound
		}
		return Literal(values[d.Index-1], ts[d.Index-1])
	}
	var args []Desc
	for i, a := range d.Args {
		b := BindParams(a, ts, values)
		if args == nil && !sameDesc(a, b) {
			args = make([]Desc, len(d.Args))
			copy(args, d.Args[:i])
		}
		if args != nil {
			args[i] = b
		}
	}
	if args != nil {
		d.Args = args
	}
	return d
}

// sameDesc reports whether BindParams left a unchanged: it returns its
// input itself when nothing below was a parameter.
func sameDesc(a, b Desc) bool {
	return a.Kind == b.Kind && a.Index == b.Index && a.Value == b.Value &&
		len(a.Args) == len(b.Args) && (len(a.Args) == 0 || &a.Args[0] == &b.Args[0])
}

// paramExpr is an unbound parameter: it has a type, for the planner's
// checks, and fails if evaluated.
type paramExpr struct {
	n   int
	typ types.Type
}

func (e *paramExpr) Type() types.Type { return e.typ }

func (e *paramExpr) Eval(*Context, *types.Chunk) (types.Column, error) {
	return nil, fmt.Errorf("expr: internal error: parameter $%d is not bound", e.n)
}
