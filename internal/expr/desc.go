package expr

import "github.com/sluice-db/sluice/internal/types"

// Kind says what a Desc node is. The set is closed; Build rejects any other.
type Kind string

// The node kinds. Args, Type, Index, Value and Name are read as each kind
// documents; fields a kind does not use must be left zero.
const (
	// KindInput reads input column Index. Type, when not unknown, must equal
	// the input's type (a mismatch is a planner bug, reported by Build).
	KindInput Kind = "input"
	// KindLiteral is a constant of Type written in Postgres text format in
	// Value; a nil Value is NULL.
	KindLiteral Kind = "literal"
	// KindFunc calls function or operator Name on Args. Operators use their
	// symbol ("+", "=", "||"); unary minus is Name "-" with one argument.
	// Type, when not unknown, must equal the resolved result type.
	KindFunc Kind = "func"
	// KindCast converts Args[0] to Type (an explicit CAST).
	KindCast Kind = "cast"
	// KindCase is a searched CASE: Args alternate WHEN condition, THEN
	// result; an odd trailing arg is the ELSE. A simple CASE (CASE x WHEN v
	// ...) is planned as a searched one comparing x = v, or written as
	// KindSimpleCase.
	KindCase Kind = "case"
	// KindSimpleCase is CASE Args[0] WHEN Args[1] THEN Args[2] ... [ELSE
	// last]: the operand is compared with each WHEN value by "=".
	KindSimpleCase Kind = "simple_case"
	// KindAnd, KindOr are three-valued boolean connectives over two or more
	// Args; KindNot negates one.
	KindAnd Kind = "and"
	KindOr  Kind = "or"
	KindNot Kind = "not"
	// KindIsNull, KindIsNotNull, KindIsTrue, KindIsNotTrue, KindIsFalse,
	// KindIsNotFalse test one arg and never return NULL.
	KindIsNull     Kind = "is_null"
	KindIsNotNull  Kind = "is_not_null"
	KindIsTrue     Kind = "is_true"
	KindIsNotTrue  Kind = "is_not_true"
	KindIsFalse    Kind = "is_false"
	KindIsNotFalse Kind = "is_not_false"
	// KindIsDistinctFrom and KindIsNotDistinctFrom compare two args with
	// NULL treated as an ordinary value.
	KindIsDistinctFrom    Kind = "is_distinct_from"
	KindIsNotDistinctFrom Kind = "is_not_distinct_from"
	// KindCoalesce returns the first non-NULL arg.
	KindCoalesce Kind = "coalesce"
	// KindNullIf returns NULL when Args[0] = Args[1], else Args[0].
	KindNullIf Kind = "nullif"
	// KindGreatest and KindLeast return the largest / smallest non-NULL arg.
	KindGreatest Kind = "greatest"
	KindLeast    Kind = "least"
	// KindIn is Args[0] IN (Args[1:]...), with SQL's NULL rules: TRUE if a
	// match, else NULL if the operand or any list item is NULL, else FALSE.
	KindIn Kind = "in"
	// KindNotIn is NOT (Args[0] IN (Args[1:]...)).
	KindNotIn Kind = "not_in"
	// KindArray is ARRAY[Args...]: a one-dimensional array of the Args,
	// each converted to the element type. Type, when set, is the array
	// type (needed for an empty ARRAY[]); otherwise it is the array of the
	// Args' common type (text when all are unknown).
	KindArray Kind = "array"
	// KindParam is parameter $Index of a prepared statement, of Type
	// (unknown while the planner has not inferred it yet). It builds, so
	// that the planner can type-check the expression around it, but does
	// not evaluate: BindParams replaces it with the bound value first.
	KindParam Kind = "param"
	// KindSingleRow is a scalar subquery's value: Args[0] is the number of
	// rows the subquery returned (bigint), Args[1] its value. A row whose
	// count exceeds one is a row error (21000), as in Postgres.
	KindSingleRow Kind = "single_row"
	// KindOuter reads column Index of the outer row a correlated
	// subquery is evaluated for (Context.Outer), of Type: the subquery's
	// reference to its enclosing query, in a batch plan's apply node.
	KindOuter Kind = "outer"
)

// Desc describes an expression as plain data: it has no func values, so it
// can be stored in a catalog, logged, and sent over the network as JSON.
// Build turns it into an evaluable Expr.
type Desc struct {
	Kind  Kind       `json:"kind"`
	Type  types.Type `json:"type,omitzero"`
	Index int        `json:"index,omitempty"`
	Value *string    `json:"value,omitempty"`
	Name  string     `json:"name,omitempty"`
	Args  []Desc     `json:"args,omitempty"`
}

// Input returns a reference to input column i of type t.
func Input(i int, t types.Type) Desc { return Desc{Kind: KindInput, Index: i, Type: t} }

// Literal returns the constant d of type t (d nil is NULL). The value is
// stored in text form, so a Desc holds no Go values besides strings.
func Literal(d types.Datum, t types.Type) Desc {
	desc := Desc{Kind: KindLiteral, Type: t}
	if d != nil {
		s := types.FormatDatum(d, t)
		desc.Value = &s
	}
	return desc
}

// Outer returns a reference to column i, of type t, of the outer row
// (KindOuter).
func Outer(i int, t types.Type) Desc { return Desc{Kind: KindOuter, Index: i, Type: t} }

// Param returns parameter $n (1-based) of type t.
func Param(n int, t types.Type) Desc { return Desc{Kind: KindParam, Index: n, Type: t} }

// Null returns a NULL literal of type t.
func Null(t types.Type) Desc { return Desc{Kind: KindLiteral, Type: t} }

// Func returns a call of function or operator name.
func Func(name string, args ...Desc) Desc { return Desc{Kind: KindFunc, Name: name, Args: args} }

// Cast returns CAST(d AS t).
func Cast(d Desc, t types.Type) Desc { return Desc{Kind: KindCast, Type: t, Args: []Desc{d}} }

// Any reports whether pred holds for d or any node under it.
func Any(d Desc, pred func(Desc) bool) bool {
	if pred(d) {
		return true
	}
	for _, a := range d.Args {
		if Any(a, pred) {
			return true
		}
	}
	return false
}

// Node returns a node of kind k over args (and, or, coalesce, in, ...).
func Node(k Kind, args ...Desc) Desc { return Desc{Kind: k, Args: args} }
