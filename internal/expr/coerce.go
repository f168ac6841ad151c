package expr

import "github.com/sluice-db/sluice/internal/types"

// numericRank orders the number types along Postgres's implicit casts:
// smallint → integer → bigint → numeric → double precision. real sits
// apart: real op real stays real, but real mixed with any other number
// becomes double precision (Postgres prefers float8 when it must convert).
func numericRank(t types.Type) int {
	switch t.ID {
	case types.Int16:
		return 1
	case types.Int32:
		return 2
	case types.Int64:
		return 3
	case types.Decimal:
		return 4
	case types.Float32:
		return 5
	case types.Float64:
		return 6
	}
	return 0
}

// datetimeRank orders date → timestamp → timestamptz.
func datetimeRank(t types.Type) int {
	switch t.ID {
	case types.Date:
		return 1
	case types.Timestamp:
		return 2
	case types.Timestamptz:
		return 3
	}
	return 0
}

// CanImplicitCast reports whether Postgres would convert from to to without
// being asked (in an expression or when unifying CASE/UNION branches).
// unknown (an untyped literal) converts to anything.
func CanImplicitCast(from, to types.Type) bool {
	if from == to || from.ID == types.Unknown {
		return true
	}
	if from.IsArray() || to.IsArray() {
		// int[] → bigint[] as int → bigint; an array never becomes a scalar.
		return from.IsArray() && to.IsArray() && CanImplicitCast(from.ElemType(), to.ElemType())
	}
	if rf, rt := numericRank(from), numericRank(to); rf > 0 && rt > 0 {
		// Every number widens to a later one; real widens only to double.
		return rf < rt && (from.ID != types.Float32 || to.ID == types.Float64)
	}
	if rf, rt := datetimeRank(from), datetimeRank(to); rf > 0 && rt > 0 {
		return rf < rt
	}
	return false
}

// CommonType returns the type two values are converted to when combined
// (arithmetic, comparison, CASE branches, COALESCE): the wider of the two
// along the implicit casts, with unknown taking the other's type. ok is
// false when there is none (integer vs boolean).
func CommonType(a, b types.Type) (types.Type, bool) {
	switch {
	case a == b:
		return a, true
	case a.ID == types.Unknown:
		return b, true
	case b.ID == types.Unknown:
		return a, true
	case a.IsArray() && b.IsArray():
		if e, ok := CommonType(a.ElemType(), b.ElemType()); ok {
			return types.ArrayOf(e), true
		}
		return types.Type{}, false
	}
	if ra, rb := numericRank(a), numericRank(b); ra > 0 && rb > 0 {
		if a.ID == types.Float32 || b.ID == types.Float32 {
			return types.TFloat64, true
		}
		if ra > rb {
			return a, true
		}
		return b, true
	}
	if ra, rb := datetimeRank(a), datetimeRank(b); ra > 0 && rb > 0 {
		if ra > rb {
			return a, true
		}
		return b, true
	}
	return types.Type{}, false
}

// CommonTypeOf folds CommonType over ts (unknown when ts is empty).
func CommonTypeOf(ts []types.Type) (types.Type, bool) {
	out := types.TUnknown
	for _, t := range ts {
		var ok bool
		if out, ok = CommonType(out, t); !ok {
			return types.Type{}, false
		}
	}
	return out, true
}

// CanCast reports whether an explicit CAST(from AS to) exists. Every type
// converts to and from text (through its Postgres text format); the other
// pairs follow Postgres's pg_cast.
func CanCast(from, to types.Type) bool {
	if !from.Valid() || !to.Valid() {
		return false
	}
	if from == to || from.ID == types.Unknown || from.ID == types.Varchar || to.ID == types.Varchar {
		return true
	}
	if from.IsArray() || to.IsArray() {
		return from.IsArray() && to.IsArray() && CanCast(from.ElemType(), to.ElemType())
	}
	if numericRank(from) > 0 && numericRank(to) > 0 {
		return true
	}
	if datetimeRank(from) > 0 && datetimeRank(to) > 0 {
		return true
	}
	switch {
	case from.ID == types.Bool && to.ID == types.Int32, from.ID == types.Int32 && to.ID == types.Bool:
		return true
	case (from.ID == types.Timestamp || from.ID == types.Timestamptz) && to.ID == types.Time:
		return true
	case from.ID == types.Time && to.ID == types.Interval, from.ID == types.Interval && to.ID == types.Time:
		return true
	}
	return false
}
