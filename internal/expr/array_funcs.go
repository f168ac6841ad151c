package expr

import (
	"strings"

	"github.com/sluice-db/sluice/internal/types"
)

// Array functions and operators. Postgres declares them over the
// polymorphic anyarray/anyelement; Sluice registers one overload per
// element type instead, which the ordinary resolution handles: exact
// matches, implicit element widening (int[] to bigint[]) and unknown
// literals ('{1,2}') fall out of it. Arrays are one-dimensional with lower
// bound 1, so dimension arguments other than 1 give NULL.

// SubscriptFunc is the function name the planner uses for a subscript
// a[i]; it cannot be spelled as a call in SQL.
const SubscriptFunc = "[]"

func registerArrays(r registry) {
	i32 := types.TInt32
	for _, t := range allTypes {
		a := types.ArrayOf(t)
		for _, op := range cmpOps {
			r.add(string(op), sig(a, a), types.TBool, compareBuild(op, a))
			r.add(AnyOp(string(op)), sig(t, a), types.TBool, nary(false, quantified(op, true)))
			r.add(AllOp(string(op)), sig(t, a), types.TBool, nary(false, quantified(op, false)))
		}
		r.add(SubscriptFunc, sig(a, i32), t, nary(true, subscript))
		r.add("array_length", sig(a, i32), i32, nary(true, dimFunc(func(x types.DArray) int64 { return int64(len(x)) })))
		r.add("array_upper", sig(a, i32), i32, nary(true, dimFunc(func(x types.DArray) int64 { return int64(len(x)) })))
		r.add("array_lower", sig(a, i32), i32, nary(true, dimFunc(func(types.DArray) int64 { return 1 })))
		r.add("array_ndims", sig(a), i32, nary(true, func(_ *Context, d []types.Datum) (types.Datum, error) {
			if len(d[0].(types.DArray)) == 0 {
				return nil, nil
			}
			return int64(1), nil
		}))
		r.add("cardinality", sig(a), i32, nary(true, func(_ *Context, d []types.Datum) (types.Datum, error) {
			return int64(len(d[0].(types.DArray))), nil
		}))
		for _, name := range []string{"array_to_string", "array_join"} {
			r.add(name, sig(a, tv), tv, nary(false, arrayToString(t)))
			r.add(name, sig(a, tv, tv), tv, nary(false, arrayToString(t)))
		}
		// || prefers array || array, so an unknown literal next to an
		// array reads as an array ('{3}'), as in Postgres.
		r.add("||", sig(a, a), a, nary(false, arrayCat))
		r.add("||", sig(a, t), a, nary(false, arrayAppend))
		r.add("||", sig(t, a), a, nary(false, arrayPrepend))
		r.add("array_cat", sig(a, a), a, nary(false, arrayCat))
		r.add("array_append", sig(a, t), a, nary(false, arrayAppend))
		r.add("array_prepend", sig(t, a), a, nary(false, arrayPrepend))
		r.add("array_position", sig(a, t), i32, nary(false, arrayPosition))
		r.add("array_position", sig(a, t, i32), i32, nary(false, arrayPosition))
		r.add("array_remove", sig(a, t), a, nary(false, arrayRemove))
		r.add("@>", sig(a, a), types.TBool, nary(true, contains(false)))
		r.add("array_contains", sig(a, a), types.TBool, nary(true, contains(false)))
		r.add("<@", sig(a, a), types.TBool, nary(true, contains(true)))
		r.add("&&", sig(a, a), types.TBool, nary(true, overlaps))
	}
}

// AnyOp and AllOp name the quantified comparisons x op ANY (array) and
// x op ALL (array) as functions of (x, array).
func AnyOp(op string) string { return op + " any" }

// AllOp: see AnyOp.
func AllOp(op string) string { return op + " all" }

// quantified is x op ANY/ALL (array) with SQL's NULL rules: ANY is TRUE
// when some comparison is TRUE, else NULL when some is NULL, else FALSE;
// ALL is the dual. An empty array gives FALSE (ANY) or TRUE (ALL) even
// for a NULL x.
func quantified(op cmpOp, anyOf bool) func(*Context, []types.Datum) (types.Datum, error) {
	return func(_ *Context, d []types.Datum) (types.Datum, error) {
		if d[1] == nil {
			return nil, nil
		}
		sawNull := false
		for _, e := range d[1].(types.DArray) {
			if d[0] == nil || e == nil {
				sawNull = true
				continue
			}
			if op.test(types.Compare(d[0], e)) == anyOf {
				return anyOf, nil
			}
		}
		if sawNull {
			return nil, nil
		}
		return !anyOf, nil
	}
}

// subscript is a[i]: 1-based, NULL out of range.
func subscript(_ *Context, d []types.Datum) (types.Datum, error) {
	a, i := d[0].(types.DArray), d[1].(int64)
	if i < 1 || i > int64(len(a)) {
		return nil, nil
	}
	return a[i-1], nil
}

// dimFunc is a per-dimension function (array_length, array_upper, ...):
// NULL for an empty array or a dimension other than 1.
func dimFunc(fn func(types.DArray) int64) func(*Context, []types.Datum) (types.Datum, error) {
	return func(_ *Context, d []types.Datum) (types.Datum, error) {
		a := d[0].(types.DArray)
		if len(a) == 0 || d[1].(int64) != 1 {
			return nil, nil
		}
		return fn(a), nil
	}
}

// arrayToString joins the elements' text forms with a separator; NULL
// elements are skipped, or written as the third argument when it is given
// and not NULL.
func arrayToString(elem types.Type) func(*Context, []types.Datum) (types.Datum, error) {
	return func(_ *Context, d []types.Datum) (types.Datum, error) {
		if d[0] == nil || d[1] == nil {
			return nil, nil
		}
		sep := d[1].(string)
		nullStr, hasNull := "", len(d) > 2 && d[2] != nil
		if hasNull {
			nullStr = d[2].(string)
		}
		var sb strings.Builder
		first := true
		for _, e := range d[0].(types.DArray) {
			if e == nil && !hasNull {
				continue
			}
			if !first {
				sb.WriteString(sep)
			}
			first = false
			if e == nil {
				sb.WriteString(nullStr)
			} else {
				sb.WriteString(types.FormatDatum(e, elem))
			}
		}
		return sb.String(), nil
	}
}

// arrayCat concatenates; a NULL array counts as empty unless both are.
func arrayCat(_ *Context, d []types.Datum) (types.Datum, error) {
	if d[0] == nil && d[1] == nil {
		return nil, nil
	}
	x, _ := d[0].(types.DArray)
	y, _ := d[1].(types.DArray)
	out := make(types.DArray, 0, len(x)+len(y))
	return append(append(out, x...), y...), nil
}

// arrayAppend adds an element (NULL included) at the end; a NULL array
// counts as empty.
func arrayAppend(_ *Context, d []types.Datum) (types.Datum, error) {
	x, _ := d[0].(types.DArray)
	out := make(types.DArray, 0, len(x)+1)
	return append(append(out, x...), d[1]), nil
}

// arrayPrepend adds an element at the front; a NULL array counts as empty.
func arrayPrepend(_ *Context, d []types.Datum) (types.Datum, error) {
	x, _ := d[1].(types.DArray)
	out := make(types.DArray, 0, len(x)+1)
	return append(append(out, d[0]), x...), nil
}

// arrayPosition is the 1-based index of the first element not distinct
// from the value (so NULL finds a NULL), searching from the optional start.
func arrayPosition(_ *Context, d []types.Datum) (types.Datum, error) {
	if d[0] == nil {
		return nil, nil
	}
	start := int64(1)
	if len(d) > 2 {
		if d[2] == nil {
			return nil, nil
		}
		start = max(d[2].(int64), 1)
	}
	a := d[0].(types.DArray)
	for i := start - 1; i < int64(len(a)); i++ {
		if notDistinct(a[i], d[1]) {
			return i + 1, nil
		}
	}
	return nil, nil
}

// arrayRemove drops every element not distinct from the value.
func arrayRemove(_ *Context, d []types.Datum) (types.Datum, error) {
	if d[0] == nil {
		return nil, nil
	}
	out := types.DArray{}
	for _, e := range d[0].(types.DArray) {
		if !notDistinct(e, d[1]) {
			out = append(out, e)
		}
	}
	return out, nil
}

func notDistinct(a, b types.Datum) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return types.Compare(a, b) == 0
}

// contains is a @> b (or a <@ b when flipped): every element of b equals
// some element of a. NULL elements never match, as in Postgres.
func contains(flip bool) func(*Context, []types.Datum) (types.Datum, error) {
	return func(_ *Context, d []types.Datum) (types.Datum, error) {
		a, b := d[0].(types.DArray), d[1].(types.DArray)
		if flip {
			a, b = b, a
		}
		for _, y := range b {
			if !hasElem(a, y) {
				return false, nil
			}
		}
		return true, nil
	}
}

// overlaps is a && b: some non-NULL element is in both.
func overlaps(_ *Context, d []types.Datum) (types.Datum, error) {
	a, b := d[0].(types.DArray), d[1].(types.DArray)
	for _, y := range b {
		if hasElem(a, y) {
			return true, nil
		}
	}
	return false, nil
}

func hasElem(a types.DArray, y types.Datum) bool {
	if y == nil {
		return false
	}
	for _, x := range a {
		if x != nil && types.Compare(x, y) == 0 {
			return true
		}
	}
	return false
}

// SliceFunc is the function name the planner uses for a slice a[lo:hi];
// an omitted bound is passed as 1 or the largest integer.
const SliceFunc = "[:]"

func registerSlices(r registry) {
	i32 := types.TInt32
	for _, t := range allTypes {
		a := types.ArrayOf(t)
		r.add(SliceFunc, sig(a, i32, i32), a, nary(true, slice))
	}
}

// slice is a[lo:hi], both bounds inclusive and clamped to the array; an
// empty range gives an empty array.
func slice(_ *Context, d []types.Datum) (types.Datum, error) {
	a, lo, hi := d[0].(types.DArray), d[1].(int64), d[2].(int64)
	lo, hi = max(lo, 1), min(hi, int64(len(a)))
	if lo > hi {
		return types.DArray{}, nil
	}
	return append(types.DArray{}, a[lo-1:hi]...), nil
}
